#pragma once
// attention-lab-cli bench --train: training steps per second of the tiny GPT
// (tiny_gpt.h) at two sizes, against PyTorch doing the same steps in the same
// run (bench/torch_train_peer.py) and against the GEMM-bound limit (the
// step's products at this machine's measured GEMM rate).

#include <ostream>
#include <string>
#include <vector>

namespace attention_lab::cli {

// True when `args` (without "bench") contain --train.
bool wants_train_bench(const std::vector<std::string>& args);

int run_train_bench(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace attention_lab::cli
