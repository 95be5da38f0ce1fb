// Lesson files (core/src/teach/lesson.cpp): sniff, parse, validate, then every step's
// scenario as the scenario target does. "scenario" paths resolve against
// fuzz/lesson-folder/, which holds one scenario file.
#include "fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attention_lab::fuzz;
  return report(check_lesson_file(as_text(data, size), ATTENTION_LAB_FUZZ_DIR "/lesson-folder"), as_text(data, size));
}
