#pragma once
// attention-lab-cli train: a tiny GPT trained from scratch on a task
// (tiny_training.h), one JSON line per logged step, saved as a Hugging Face
// GPT-2 folder that model mode opens.

#include <ostream>
#include <string>
#include <vector>

namespace attention_lab::cli {

int cmd_train(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace attention_lab::cli
