// A folder's tokenizer.model (core/src/transformer/sentencepiece_model.cpp,
// read by libsentencepiece): the input is the file; it is refused with a
// one-line message or encodes a fixed text to ids below the vocabulary
// (checks/tokenizer_check.h).
#include "checks/tokenizer_check.h"
#include "fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attention_lab::fuzz;
  return report(check_sentencepiece_input(as_text(data, size)), as_text(data, size));
}
