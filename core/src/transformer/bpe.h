#pragma once
// GPT-2's byte-level BPE (internal to the tokenizer, tokenizer.cpp). Text is
// cut into pieces ("pre-tokens") by a regex run by PCRE2 (pre_tokenizer.h);
// each piece's UTF-8 bytes become printable characters (bytes_to_unicode, so
// a space is Ġ); adjacent symbols are merged by the rank of their merge, the
// lowest first, as GPT-2's encoder.py does; the final symbols are looked up
// in the vocabulary. (Hugging Face merges one place at a time from a heap;
// that is the same whenever each merge's parts are made by lower-ranked
// merges, as in every trained tokenizer; for hand-made tables that break this,
// this follows encoder.py.) Two sources:
//   vocab.json + merges.txt   GPT-2's own files (text split by GPT-2's regex)
//   tokenizer.json            Hugging Face's: model.type "BPE" and a ByteLevel
//                             pre-tokenizer, alone or after Split regexes
//                             (Llama 3, Qwen2), plus added_tokens (special
//                             tokens such as <|endoftext|>, matched literally
//                             in the text first); or SentencePiece-style
//                             (metaspace.h: ▁ for spaces, characters as
//                             symbols, byte fallback), as Llama 2, Mistral
//                             and Gemma write it.
// Every error names the file and the line or entry.

#include "transformer/metaspace.h"
#include "transformer/pre_tokenizer.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace attention_lab::bpe {

// GPT-2's bytes_to_unicode(): the character standing for each byte (itself
// for the printable ones, U+0100 + n for the others: a space is Ġ U+0120, a
// newline Ċ U+010A), as UTF-8.
const std::array<std::string, 256>& byte_chars();
// The byte a character of byte_chars() stands for, or -1.
int char_byte(char32_t c);
// `bytes` written in those characters.
std::string to_byte_chars(std::string_view bytes);

class Encoder {
 public:
  // GPT-2's files: `vocab` is vocab.json's parsed object (token string → id),
  // `merges` merges.txt's text (one "a b" a line, the first line
  // "#version: …" optional). Ids must be below `vocab_size`.
  static std::unique_ptr<Encoder> from_vocab_and_merges(const nlohmann::json& vocab, const std::string& vocab_name,
                                                        std::string_view merges, const std::string& merges_name,
                                                        int vocab_size, std::string& error);
  // A parsed tokenizer.json.
  static std::unique_ptr<Encoder> from_tokenizer_json(const nlohmann::json& root, const std::string& name,
                                                      int vocab_size, std::string& error);

  // The ids of `text`, with the special tokens the post-processor puts around
  // a text (Llama 2's <s>), or false with `error` (text that is not UTF-8:
  // the offset of the first bad byte; a piece the vocabulary has no token for).
  bool encode(std::string_view text, std::vector<int>& ids, std::string& error) const;
  // The bytes the ids stand for: byte-level tokens turned back into bytes,
  // added tokens as they are; an id with no token gives U+FFFD.
  std::string decode(const std::vector<int>& ids) const;
  // The vocabulary string of `id` ("" when none): byte-level characters
  // ("Ġthe"), or an added token's text.
  const std::string& token(int id) const;
  // "byte-level BPE" or "SentencePiece-style BPE".
  std::string kind() const;

  Encoder(const Encoder&) = delete;
  Encoder& operator=(const Encoder&) = delete;
  ~Encoder();

 private:
  Encoder();
  struct Merge {
    int rank;
    int result;
  };
  struct AddedToken {
    std::string content;
    int id;
    bool lstrip, rstrip;
  };

  bool read_vocab(const nlohmann::json& vocab, const std::string& where, int vocab_size, std::string& error);
  bool add_merge(const std::string& a, const std::string& b, const std::string& where, std::string& error);
  bool add_token(const nlohmann::json& entry, const std::string& where, int vocab_size, std::string& error);
  void finish();
  // Appends the ids of one pre-token (raw bytes), through the cache.
  bool encode_piece(std::string_view piece, std::vector<int>& ids, std::string& error) const;
  // A SentencePiece-style piece's symbols before merging: a character's id,
  // else its bytes' fallback tokens, else the unknown token (fused runs).
  bool character_symbols(std::string_view piece, std::vector<int>& symbols, std::string& error) const;
  void merge_symbols(std::vector<int>& symbols) const;

  std::vector<std::string> strings_;               // id → token string ("" none)
  std::unordered_map<std::string, int> ids_;       // token string → id (the model's vocabulary)
  std::unordered_map<std::uint64_t, Merge> merges_;  // (left id << 32 | right id) → rank and result
  std::array<int, 256> byte_ids_{};                // id of each byte's character, -1 when not in the vocabulary
  std::vector<AddedToken> added_;                  // longest first
  std::vector<bool> is_added_;                     // id → an added token (decoded as its text)
  std::array<std::vector<std::size_t>, 256> added_by_first_byte_{};
  std::vector<PreTokenizerStep> steps_;
  bool ignore_merges_ = false;                     // a whole piece in the vocabulary is one token (Llama 3)
  int unk_id_ = -1;
  std::optional<Metaspace> metaspace_;             // set: SentencePiece-style, characters not bytes
  // The post-processor's special tokens around a text (Llama 2's <s> before
  // it): TemplateProcessing's "single", as transformers' tokenizer(text) adds them.
  std::vector<int> before_ids_, after_ids_;
  bool read_post_processor(const nlohmann::json& p, const std::string& where, int vocab_size, std::string& error);
  bool byte_fallback_ = false;                     // a missing character becomes its <0xXX> byte tokens
  bool fuse_unk_ = false;                          // a run of unknown characters is one unknown token
  std::array<int, 256> fallback_ids_{};            // id of <0xXX>, -1 when not in the vocabulary

  static constexpr std::size_t kMaxCacheEntries = 1 << 16;
  static constexpr std::size_t kMaxCachedPieceBytes = 256;
  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<int>> cache_;
};

}  // namespace attention_lab::bpe
