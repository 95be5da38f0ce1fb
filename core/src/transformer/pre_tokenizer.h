#pragma once
// Cutting text into the pieces BPE merges within (internal to bpe.cpp): the
// regexes of GPT-2, Llama 3 and Qwen2 use \p{L}, \p{N} and lookahead, which
// std::regex cannot do, so PCRE2 runs them (8-bit, UTF + UCP, JIT when the
// machine has it). PCRE2 is told not to check UTF-8 (it would check the whole
// text at every match): the text must be valid UTF-8, see invalid_utf8_at.

#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace attention_lab::bpe {

// GPT-2's pattern (encoder.py), also Hugging Face's ByteLevel pre-tokenizer's.
inline constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// The offset of the first byte of `text` that does not belong to a valid
// UTF-8 character (overlong forms, surrogates and code points past U+10FFFF
// are not valid), or npos.
std::size_t invalid_utf8_at(std::string_view text);

// Unicode White_Space (Rust's char::is_whitespace, what Hugging Face's
// lstrip/rstrip of added tokens strip): the length of the white-space
// character starting `text`, or 0.
std::size_t white_space_length(std::string_view text);

class Regex {
 public:
  // `pattern` as a regex (or, `literal`, as plain text); nullptr and `error`
  // ("at offset N: …", PCRE2's message) when PCRE2 cannot compile it.
  static std::shared_ptr<const Regex> compile(std::string_view pattern, bool literal, std::string& error);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // Appends the pieces of `text` (valid UTF-8) to `out`: every match and
  // every stretch between matches (Hugging Face's "Isolated" behaviour; an
  // empty match cuts nothing). False with `error` when PCRE2 gives up (its
  // match or stack limit).
  bool split(std::string_view text, std::vector<std::string_view>& out, std::string& error) const;

 private:
  struct Code;
  explicit Regex(std::unique_ptr<Code> code);
  std::unique_ptr<Code> code_;
};

// One step of a pre-tokenizer, applied to every piece of the step before.
struct PreTokenizerStep {
  // Split: cut by `regex`. ByteLevel: first, with add_prefix_space, a space
  // before each piece that does not start with one; then cut by `regex`
  // (GPT-2's) when it uses one.
  enum class Kind { Split, ByteLevel } kind = Kind::ByteLevel;
  std::shared_ptr<const Regex> regex;
  bool add_prefix_space = false;
};

// The pieces of `text` after every step; a piece is a view of `text` or of a
// string in `storage` (a piece with a space put before it).
bool pre_tokenize(const std::vector<PreTokenizerStep>& steps, std::string_view text, std::deque<std::string>& storage,
                  std::vector<std::string_view>& pieces, std::string& error);

}  // namespace attention_lab::bpe
