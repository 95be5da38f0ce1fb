// Trace files (core/src/io/trace_io.cpp, written by `attention-lab-cli trace`) from
// any scenario that loads: strict JSON holding exactly the engine's numbers.
#include "fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attention_lab::fuzz;
  return report(check_trace_of(as_text(data, size)), as_text(data, size));
}
