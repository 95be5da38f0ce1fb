// A prompts file (core/src/interp/prompt_batch.cpp): one prompt a line, or a
// clean and a corrupted prompt a line, refused by line or read whole
// (checks/tokenizer_check.h, check_prompts_input).
#include "checks/tokenizer_check.h"
#include "fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attention_lab::fuzz;
  return report(check_prompts_input(as_text(data, size)), as_text(data, size));
}
