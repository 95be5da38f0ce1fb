// A training run's JSON (core/src/train/tiny_training.cpp, `attention-lab-cli
// train RUN.json`): refused by name, or a run whose sizes fit together
// (checks/round_trip.h, check_train_run).
#include "checks/round_trip.h"
#include "fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attention_lab::fuzz;
  return report(check_train_run(as_text(data, size)), as_text(data, size));
}
