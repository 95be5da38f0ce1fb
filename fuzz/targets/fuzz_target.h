#pragma once
// The body of every fuzz target: run one check from checks/round_trip.h on
// libFuzzer's input and stop with the check's message when it fails, so the
// fuzzer saves the input as a crash.

#include "checks/round_trip.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace attention_lab::fuzz {

inline int report(const std::string& problem, std::string_view input) {
  if (problem.empty()) return 0;
  std::fprintf(stderr, "\nFUZZ CHECK FAILED: %s\n(input of %zu bytes)\n", problem.c_str(), input.size());
  std::abort();
}

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace attention_lab::fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  attention_lab::fuzz::configure_for_fuzzing();
  return 0;
}
