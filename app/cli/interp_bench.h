#pragma once
// attention-lab-cli bench --model MODEL --interp: what the interpretability
// operations cost on a checkpoint. Times a residual-stream patching sweep
// (every layer × position) and a per-head sweep (every layer × head) at T
// tokens, each against its peer in the same run — the same patched runs each
// computed from layer 0, as a plain implementation would — and the head
// detectors of every head at a longer T against the forward pass alone.

#include <ostream>
#include <string>
#include <vector>

namespace attention_lab::cli {

// True when `args` (without "bench") contain --interp.
bool wants_interp_bench(const std::vector<std::string>& args);

std::string interp_bench_usage();

// Exit codes as for run(): bad arguments and a model that does not open are
// one line on `err` and exit 2.
int run_interp_bench(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace attention_lab::cli
