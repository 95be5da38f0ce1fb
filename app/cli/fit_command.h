#pragma once
// attention-lab-cli fit: trains a scenario's matrices on its "loss" (training.h),
// one JSON line per step, the trained scenario to -o.

#include <ostream>
#include <string>
#include <vector>

namespace attention_lab::cli {

int cmd_fit(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace attention_lab::cli
