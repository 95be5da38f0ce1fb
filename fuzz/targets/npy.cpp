// .npy arrays (core/src/io/npy.cpp) imported onto a scenario
// (core/src/io/weight_import.cpp, import_npy_bytes): refused with a short
// message naming the file, or a valid scenario the engine computes
// (checks/npy_check.h).
#include "checks/npy_check.h"
#include "fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attention_lab::fuzz;
  return report(check_npy_import(as_text(data, size)), as_text(data, size));
}
