// Tokenizer files and text (core/src/transformer/bpe.cpp, pre_tokenizer.cpp):
// vocab.json + merges.txt or tokenizer.json, cut from the input at NUL bytes,
// then text encoded with them and decoded again (checks/tokenizer_check.h).
#include "checks/tokenizer_check.h"
#include "fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attention_lab::fuzz;
  return report(check_tokenizer_input(as_text(data, size)), as_text(data, size));
}
