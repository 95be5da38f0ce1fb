// safetensors files (core/src/transformer/safetensors.cpp), parsed from memory:
// refused with a short message naming the file, or every tensor inside the
// data, sized to its shape, and converting to floats and doubles alike.
#include "fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attention_lab::fuzz;
  return report(check_safetensors(as_text(data, size)), as_text(data, size));
}
