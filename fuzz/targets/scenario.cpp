// Scenario files (core/src/io/scenario_io.cpp): parse, compute, save, reload, compare.
#include "fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attention_lab::fuzz;
  return report(check_scenario_file(as_text(data, size)), as_text(data, size));
}
