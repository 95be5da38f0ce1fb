#pragma once
// The tokenizer fuzz target's check (fuzz/targets/tokenizer.cpp), shared with
// the unit tests (tests/core/tokenizer_test.cpp runs the committed seeds and
// regression inputs through it). Returns "" when the input behaved, or what
// went wrong.
//
// The input is cut at NUL bytes:
//   VOCAB \0 MERGES \0 TEXT   vocab.json and merges.txt, then text to encode
//   TOKENIZER \0 TEXT         tokenizer.json, then text to encode
//   TEXT                      text for a small built-in GPT-2-like tokenizer
// "Behaved": the files were refused with a one-line message, or they loaded
// and the text was refused with a one-line message, or it gave ids below
// vocab_size, the same ids a second time (from the cache), and (all but
// tokenizer.json, whose added tokens may strip white space) decoding them
// gave back the text byte for byte.

#include <string>
#include <string_view>

namespace attention_lab::fuzz {

inline constexpr int kTokenizerFuzzVocabSize = 4096;

std::string check_tokenizer_input(std::string_view bytes);

// A tokenizer.model's bytes: refused with a one-line message, or loaded, and
// a fixed text (words, spaces, UTF-8 of several lengths, an emoji) encodes to
// ids below kTokenizerFuzzVocabSize starting with the BOS, and decodes.
std::string check_sentencepiece_input(std::string_view bytes);

// A prompts file (prompt_batch.h) read with the built-in tokenizer in each
// layout: refused with a one-line message naming the file, or prompts whose
// ids the model takes, in increasing line order, pairs of one length, a
// one-length batch of one length.
std::string check_prompts_input(std::string_view bytes);

}  // namespace attention_lab::fuzz
