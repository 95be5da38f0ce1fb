// Hugging Face config.json files (core/src/transformer/model_config.cpp):
// refused with a short message, or a ModelConfig whose sizes fit together.
#include "fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attention_lab::fuzz;
  return report(check_model_config(as_text(data, size)), as_text(data, size));
}
