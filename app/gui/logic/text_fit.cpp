#include "logic/text_fit.h"

#include <algorithm>
#include <array>

namespace attention_lab::gui {

namespace {

bool is_continuation_byte(unsigned char c) { return (c & 0xC0u) == 0x80u; }

// A word that is only an operator: it belongs to the term after it.
bool is_operator(std::string_view word) {
  static constexpr std::array<std::string_view, 14> ops = {"+", "-", "−", "=", "/", "÷", "×", "·", ";", "→",
                                                           "|", "≈", "*", ":"};
  return std::find(ops.begin(), ops.end(), word) != ops.end();
}

}  // namespace

std::size_t utf8_prefix(std::string_view text, std::size_t max_bytes) {
  if (max_bytes >= text.size()) return text.size();
  std::size_t n = max_bytes;
  // Back up to the first byte of the code point that would be cut.
  while (n > 0 && is_continuation_byte(static_cast<unsigned char>(text[n]))) --n;
  return n;
}

std::string ellipsize(std::string_view text, float max_width, const TextMeasure& measure) {
  if (measure(text) <= max_width) return std::string(text);
  if (measure(kEllipsis) > max_width) return {};
  // Binary search on the number of bytes kept, snapped to code point starts:
  // width grows with the prefix, so the largest fitting prefix is found in
  // log(n) measurements (a 1000-byte label costs ten, not a thousand).
  std::size_t lo = 0, hi = text.size();  // lo fits (with "…"), hi does not
  while (hi - lo > 1) {
    const std::size_t mid = (lo + hi) / 2;
    const std::size_t cut = utf8_prefix(text, mid);
    if (cut <= lo) {  // mid fell inside the code point that starts at lo
      lo = mid;
      continue;
    }
    const std::string candidate = std::string(text.substr(0, cut)) + std::string(kEllipsis);
    if (measure(candidate) <= max_width) lo = mid;
    else hi = mid;
  }
  return std::string(text.substr(0, utf8_prefix(text, lo))) + std::string(kEllipsis);
}

std::vector<std::string> formula_tokens(std::string_view text) {
  std::vector<std::string> tokens;
  std::string pending;  // operators waiting for the word they belong to
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] == ' ') {
      ++i;
      continue;
    }
    const std::size_t end = std::min(text.find(' ', i), text.size());
    const std::string_view word = text.substr(i, end - i);
    i = end;
    if (is_operator(word)) {
      pending += (pending.empty() ? "" : " ") + std::string(word);
      continue;
    }
    std::string token = pending.empty() ? std::string(word) : pending + " " + std::string(word);
    pending.clear();
    // A short group in parentheses stays whole: "e^(Ŝ₅ⱼ − 0.041)" broken
    // inside reads as two formulas. (A long one still breaks, so it never
    // overflows the line.)
    constexpr std::size_t kMaxGroup = 40;
    int depth = 0;
    for (const char c : word) depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    while (depth > 0 && i < text.size() && token.size() < kMaxGroup) {
      while (i < text.size() && text[i] == ' ') ++i;
      const std::size_t next_end = std::min(text.find(' ', i), text.size());
      const std::string_view next = text.substr(i, next_end - i);
      if (next.empty() || token.size() + 1 + next.size() > kMaxGroup) break;
      for (const char c : next) depth += c == '(' ? 1 : c == ')' ? -1 : 0;
      token += " " + std::string(next);
      i = next_end;
    }
    tokens.push_back(std::move(token));
  }
  if (!pending.empty()) {  // a trailing operator stays with the last term
    if (tokens.empty()) tokens.push_back(pending);
    else tokens.back() += " " + pending;
  }
  return tokens;
}

namespace {

// A piece too wide for a line, in pieces that fit: at its spaces (a group in
// parentheses), and a word still too wide between its characters.
std::vector<std::string> split_wide(const std::string& t, float width, const TextMeasure& measure) {
  std::vector<std::string> pieces;
  for (std::size_t i = 0; i < t.size();) {
    const std::size_t end = std::min(t.find(' ', i), t.size());
    std::string word = t.substr(i, end - i);
    i = end + 1;
    if (word.empty()) continue;
    if (measure(word) <= width) {
      pieces.push_back(std::move(word));
      continue;
    }
    std::string part;
    for (std::size_t k = 0; k < word.size();) {
      // one UTF-8 character
      std::size_t n = 1;
      while (k + n < word.size() && (static_cast<unsigned char>(word[k + n]) & 0xC0) == 0x80) ++n;
      const std::string ch = word.substr(k, n);
      if (!part.empty() && measure(part + ch) > width) pieces.push_back(std::move(part)), part.clear();
      part += ch;
      k += n;
    }
    if (!part.empty()) pieces.push_back(std::move(part));
  }
  return pieces;
}

}  // namespace

std::vector<std::string> wrap_tokens(const std::vector<std::string>& tokens, float width, const TextMeasure& measure) {
  std::vector<std::string> lines;
  const auto add = [&](const std::string& t) {
    if (!lines.empty()) {
      std::string longer = lines.back() + " " + t;
      if (measure(longer) <= width) {
        lines.back() = std::move(longer);
        return;
      }
    }
    lines.push_back(t);
  };
  for (const std::string& t : tokens) {
    if (measure(t) <= width) {
      add(t);
      continue;
    }
    // wider than a line: broken, rather than cut off by the panel's edge
    for (const std::string& piece : split_wide(t, width, measure)) add(piece);
  }
  return lines;
}

}  // namespace attention_lab::gui
