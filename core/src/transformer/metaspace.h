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
  // The normalizer: Prepend("▁") puts a ▁ before every stretch of text;
  // Replace turns its spaces into ▁.
  bool normalizer_prepend = false;
  bool normalizer_replace = false;
  // A Metaspace pre-tokenizer: spaces to ▁, a ▁ before a stretch that does not
  // start with one (prepend_scheme always, or first: only the stretch that
  // begins the text), and with split each ▁ starts a piece of its own.
  bool pre_tokenizer = false;
  Prepend prepend = Prepend::Always;
  bool split = true;
  // The decoder: fallback bytes turned back into bytes (ByteFallback; bytes
  // that are not UTF-8 become U+FFFD each), one leading space stripped from the
  // text (Strip after Fuse), or every ▁ of the first token dropped (a
  // Metaspace decoder that prepends).
  bool decode_bytes = false;
  bool strip_decoded_space = false;
  bool drop_first_token_spaces = false;

  bool has_normalizer() const { return normalizer_prepend || normalizer_replace; }
};

// Does this tokenizer.json write its text SentencePiece's way (a normalizer or
// pre-tokenizer that turns spaces into ▁)?
bool writes_metaspace(const nlohmann::json& root);

// Reads the normalizer, pre_tokenizer and decoder of such a tokenizer.json
// (`name` names it in errors); false with `error` naming the component.
bool read_metaspace(const nlohmann::json& root, const std::string& name, Metaspace& out, std::string& error);

// A stretch of text between added tokens as BPE sees it, cut into pieces:
// the normalizer, then the pre-tokenizer (`at_start`: the stretch begins the
// text; an empty stretch stays empty, as HF leaves it).
std::vector<std::string> metaspace_pieces(const Metaspace& m, std::string_view text, bool at_start);

// The byte a fallback token stands for ("<0x0A>" → 10), or −1.
int fallback_byte(std::string_view token);

// The text of a sequence of token strings (`added[i]`: token i is an added
// token, kept as it is), as the decoder writes it.
std::string metaspace_decode(const Metaspace& m, const std::vector<std::string_view>& tokens, const std::vector<bool>& added);

}  // namespace attention_lab::bpe
