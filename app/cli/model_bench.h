#pragma once
// attention-lab-cli bench --model MODEL: what model mode costs on a real
// checkpoint. Times opening the model (load_model, twice: the second is the
// warm figure), the full forward of T seeded random token ids (run_model with
// the last row's logits), and, in a focused layer, one edit of its attention
// through the Document followed by the last row's next-token predictions
// (ModelSession::predictions), as the app does after every edit. Reports the
// peak resident memory against the weights plus what the session keeps.

#include <ostream>
#include <string>
#include <vector>

namespace attention_lab::cli {

// True when `args` (without "bench") ask for the model bench: --model is given.
bool wants_model_bench(const std::vector<std::string>& args);

// The part of `bench --help` about --model.
std::string model_bench_usage();

// `args` excludes "bench" itself. Exit codes as for run(): bad arguments,
// a model that does not open, a T or layer the model does not have are one
// line on `err` and exit 2.
int run_model_bench(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace attention_lab::cli
