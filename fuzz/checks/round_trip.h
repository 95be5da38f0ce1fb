#pragma once
// What every fuzz target checks about an input it was given, shared with the
// unit tests (tests/core/fuzz_corpus_test.cpp runs the committed seeds and
// every input a fuzzer once crashed on through the same functions, in the
// normal build). Each returns "" when the input behaved, or what went wrong.
//
// "Behaved" means: the parser refused it with a short one-line message, or
// accepted it and then every stage of the engine could be computed, the
// result saved and loaded again gave the same scenario, and computing that
// gave the same numbers bit for bit. Crashes, sanitizer reports and hangs are
// caught by the fuzzer itself.

#include <filesystem>
#include <string>
#include <string_view>

namespace attention_lab::fuzz {

// A scenario file (scenario_io): parse → compute every stage → save → reload → compare.
std::string check_scenario_file(std::string_view bytes);

// A lesson file (lesson.h): sniff the format, parse with `folder` as the
// lesson's folder, check it the way the app does (validate_lesson), then
// every step's scenario as check_scenario_file does.
std::string check_lesson_file(std::string_view bytes, const std::filesystem::path& folder);

// The trace written for a scenario file (trace_io): strict JSON whose every
// matrix holds exactly the engine's numbers.
std::string check_trace_of(std::string_view scenario_bytes);

// A safetensors file (core/src/transformer/safetensors.cpp), parsed from
// memory: refused with a short message naming the file, or accepted with every
// tensor inside the data, in order, not overlapping, sized to its shape; then
// every tensor's bytes are the input's and it converts (read_floats and
// read_doubles agree; f32_in_place is the same floats; BOOL is refused).
std::string check_safetensors(std::string_view bytes);

// A Hugging Face config.json (parse_model_config): refused with a short
// message, or a config whose sizes fit together (heads a multiple of the K/V
// heads, GPT-2's d_model = heads·d_head, an even d_head for RoPE, …).
std::string check_model_config(std::string_view bytes);

// A training run's JSON (parse_tiny_train_config): refused with a short
// message naming run.json, or a run whose sizes fit together (a shape
// tiny_gpt_shape_problem accepts, the context the task makes).
std::string check_train_run(std::string_view bytes);

// Settings every target applies first: one thread (Eigen and OpenMP), so a
// run is repeatable, and a small memory budget, so a file asking for a huge
// size is refused by the same check users get instead of tripping the
// fuzzer's memory limit.
void configure_for_fuzzing();

}  // namespace attention_lab::fuzz
