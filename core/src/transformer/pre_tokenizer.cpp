#include "transformer/pre_tokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <cstdint>

namespace attention_lab::bpe {

namespace {

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  const int n = pcre2_get_error_message(code, buffer, sizeof buffer);
  if (n < 0) return "PCRE2 error " + std::to_string(code);
  return std::string(reinterpret_cast<const char*>(buffer), static_cast<std::size_t>(n));
}

// Per thread, reused by every match: the match data (only the whole match's
// offsets are read), and a JIT stack larger than PCRE2's default 32 KiB.
struct Matcher {
  pcre2_match_data* data = pcre2_match_data_create(1, nullptr);
  pcre2_match_context* context = pcre2_match_context_create(nullptr);
  pcre2_jit_stack* stack = pcre2_jit_stack_create(32 * 1024, 1024 * 1024, nullptr);
  Matcher() {
    if (context && stack) pcre2_jit_stack_assign(context, nullptr, stack);
  }
  ~Matcher() {
    pcre2_jit_stack_free(stack);
    pcre2_match_context_free(context);
    pcre2_match_data_free(data);
  }
  Matcher(const Matcher&) = delete;
  Matcher& operator=(const Matcher&) = delete;
};

Matcher& matcher() {
  thread_local Matcher m;
  return m;
}

std::size_t utf8_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  return 4;
}

}  // namespace

std::size_t invalid_utf8_at(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;          // overlong
      if (c == 0xED) hi = 0x9F;          // surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;          // overlong
      if (c == 0xF4) hi = 0x8F;          // past U+10FFFF
    } else {
      return i;                          // a continuation byte, C0, C1 or F5..FF
    }
    if (i + len > n) return i;
    if (s[i + 1] < lo || s[i + 1] > hi) return i;
    for (std::size_t k = 2; k < len; ++k)
      if (s[i + k] < 0x80 || s[i + k] > 0xBF) return i;
    i += len;
  }
  return std::string_view::npos;
}

std::size_t white_space_length(std::string_view text) {
  if (text.empty()) return 0;
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t len = utf8_length(s[0]);
  if (len > text.size()) return 0;
  // The lead byte's payload bits, then six from each continuation byte.
  char32_t c = len == 1 ? char32_t{s[0]} : char32_t{s[0]} & (char32_t{0xFF} >> (len + 1));
  for (std::size_t k = 1; k < len; ++k) c = (c << 6) | (char32_t{s[k]} & char32_t{0x3F});
  const bool space = (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
                     (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
                     c == 0x3000;
  return space ? len : 0;
}

struct Regex::Code {
  pcre2_code* code = nullptr;
  ~Code() { pcre2_code_free(code); }
};

Regex::Regex(std::unique_ptr<Code> code) : code_(std::move(code)) {}
Regex::~Regex() = default;

std::shared_ptr<const Regex> Regex::compile(std::string_view pattern, bool literal, std::string& error) {
  if (invalid_utf8_at(pattern) != std::string_view::npos) {
    error = "the pattern is not UTF-8";
    return nullptr;
  }
  int code = 0;
  PCRE2_SIZE offset = 0;
  const std::uint32_t options = PCRE2_UTF | PCRE2_NO_UTF_CHECK | (literal ? PCRE2_LITERAL : PCRE2_UCP);
  auto c = std::make_unique<Code>();
  c->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), options, &code, &offset, nullptr);
  if (!c->code) {
    error = "at offset " + std::to_string(offset) + ": " + pcre2_message(code);
    return nullptr;
  }
  pcre2_jit_compile(c->code, PCRE2_JIT_COMPLETE);  // the interpreter runs it when there is no JIT
  return std::shared_ptr<const Regex>(new Regex(std::move(c)));
}

bool Regex::split(std::string_view text, std::vector<std::string_view>& out, std::string& error) const {
  Matcher& m = matcher();
  if (!m.data) {
    error = "out of memory for the pre-tokenizer's regex";
    return false;
  }
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  const std::size_t n = text.size();
  std::size_t from = 0, last = 0;  // where the next search starts; the end of the last piece
  while (from <= n) {
    const int rc = pcre2_match(code_->code, subject, n, from, PCRE2_NO_UTF_CHECK, m.data, m.context);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      error = "the pre-tokenizer's regex failed at byte " + std::to_string(from) + ": " + pcre2_message(rc);
      return false;
    }
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(m.data);
    const std::size_t start = ovector[0], end = ovector[1];
    if (start > end || end > n || start < last) {  // \K can report such matches
      error = "the pre-tokenizer's regex reported a match it cannot cut at (\\K?) at byte " + std::to_string(start);
      return false;
    }
    if (start == end) {  // an empty match: search again one character on
      if (start >= n) break;
      from = start + utf8_length(static_cast<unsigned char>(text[start]));
      continue;
    }
    if (start > last) out.push_back(text.substr(last, start - last));
    out.push_back(text.substr(start, end - start));
    last = from = end;
  }
  if (last < n) out.push_back(text.substr(last));
  return true;
}

bool pre_tokenize(const std::vector<PreTokenizerStep>& steps, std::string_view text, std::deque<std::string>& storage,
                  std::vector<std::string_view>& pieces, std::string& error) {
  pieces.clear();
  if (text.empty()) return true;
  pieces.push_back(text);
  std::vector<std::string_view> next;
  for (const PreTokenizerStep& step : steps) {
    next.clear();
    for (std::string_view piece : pieces) {
      if (step.kind == PreTokenizerStep::Kind::ByteLevel && step.add_prefix_space && piece.front() != ' ') {
        storage.push_back(" " + std::string(piece));
        piece = storage.back();
      }
      if (!step.regex) {
        next.push_back(piece);
      } else if (!step.regex->split(piece, next, error)) {
        return false;
      }
    }
    pieces.swap(next);
  }
  return true;
}

}  // namespace attention_lab::bpe
