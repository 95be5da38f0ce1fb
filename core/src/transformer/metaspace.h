#pragma once
// SentencePiece's way of writing text for BPE, as Hugging Face's
// tokenizer.json describes it for Llama 2, Mistral and Gemma (internal to the
// tokenizer, bpe.cpp): a space is ▁ (U+2581), a ▁ goes before the text,
// the symbols BPE merges are characters (not bytes), and a character the
// vocabulary lacks falls back to its UTF-8 bytes as tokens <0xE2> <0x96> …
// (byte_fallback). Two spellings of the same thing are read:
//   normalizer  Sequence of Prepend("▁") and Replace(" " → "▁"), no pre_tokenizer
//               (the Llama 2 and Mistral conversions; Gemma's has no Prepend)
//   pre_tokenizer  Metaspace {replacement "▁", prepend_scheme always | first |
//               never, split}, no normalizer (newer conversions)
// and the decoder that turns it back (Replace ▁ → " ", ByteFallback, Fuse,
// Strip one leading space; or a Metaspace decoder). Any other component, or a
// setting of these this reader does not compute, is refused by name.

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace attention_lab::bpe {

inline constexpr std::string_view kMetaspace = "\xE2\x96\x81";  // ▁

struct Metaspace {
  enum class Prepend { Never, Always, First };
  Prepend prepend = Prepend::Never;  // a ▁ before each stretch of text (First: only the one at the text's start)
  bool split = false;                // each ▁ starts a piece of its own (Metaspace split: true)
  bool strip_decoded_space = false;  // the decoder drops the space the ▁ before the text became
};

// Does this tokenizer.json write its text SentencePiece's way (a normalizer or
// pre-tokenizer that turns spaces into ▁)?
bool writes_metaspace(const nlohmann::json& root);

// Reads the normalizer, pre_tokenizer and decoder of such a tokenizer.json
// (`name` names it in errors); false with `error` naming the component.
bool read_metaspace(const nlohmann::json& root, const std::string& name, Metaspace& out, std::string& error);

// A stretch of text as BPE sees it, cut into pieces: spaces as ▁, a ▁ before
// it as the settings say (`at_start`: the stretch begins the text; an empty
// stretch stays empty, as HF's Prepend leaves it).
std::vector<std::string> metaspace_pieces(const Metaspace& m, std::string_view text, bool at_start);

// The byte a fallback token stands for ("<0x0A>" → 10), or −1.
int fallback_byte(std::string_view token);

}  // namespace attention_lab::bpe
