#include "attention_lab/excerpt.h"

#include <algorithm>
#include <cstdio>

namespace attention_lab {

namespace {

// Length of the valid UTF-8 sequence starting at text[i], or 0 when the bytes
// there are not one (overlong forms and surrogates count as invalid).
std::size_t utf8_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b = byte(i);
  std::size_t n = 0;
  if (b < 0x80) return 1;
  if (b >= 0xC2 && b <= 0xDF) n = 2;
  else if (b >= 0xE0 && b <= 0xEF) n = 3;
  else if (b >= 0xF0 && b <= 0xF4) n = 4;
  else return 0;
  if (i + n > text.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  if (n == 3 && b == 0xE0 && byte(i + 1) < 0xA0) return 0;   // overlong
  if (n == 3 && b == 0xED && byte(i + 1) >= 0xA0) return 0;  // surrogate
  if (n == 4 && b == 0xF0 && byte(i + 1) < 0x90) return 0;   // overlong
  if (n == 4 && b == 0xF4 && byte(i + 1) >= 0x90) return 0;  // above U+10FFFF
  return n;
}

// Appends the character at text[i] in printable form; returns the bytes it used.
std::size_t append_printable(std::string& out, std::string_view text, std::size_t i) {
  const auto b = static_cast<unsigned char>(text[i]);
  char buf[8];
  switch (b) {
    case '\n': out += "\\n"; return 1;
    case '\r': out += "\\r"; return 1;
    case '\t': out += "\\t"; return 1;
    case '\\': out += "\\\\"; return 1;
    default: break;
  }
  if (b < 0x20 || b == 0x7F) {
    std::snprintf(buf, sizeof buf, "\\u%04x", b);
    out += buf;
    return 1;
  }
  const std::size_t n = utf8_length(text, i);
  if (n == 0) {
    std::snprintf(buf, sizeof buf, "\\x%02x", b);
    out += buf;
    return 1;
  }
  // C1 controls (U+0080…U+009F) act on terminals like C0 ones.
  if (n == 2 && b == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0) {
    std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(text[i + 1]));
    out += buf;
    return 2;
  }
  out.append(text.substr(i, n));
  return n;
}

}  // namespace

std::string excerpt(std::string_view text, std::size_t max_bytes) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t n = std::max<std::size_t>(1, utf8_length(text, i));
    if (i + n > max_bytes) return out + "…";
    i += append_printable(out, text, i);
  }
  return out;
}

std::string excerpt_tail(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return excerpt(text, max_bytes);
  std::size_t start = text.size() - max_bytes;
  // Start on a character boundary: skip UTF-8 continuation bytes (at most 3).
  for (int k = 0; k < 3 && start < text.size() && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80; ++k)
    ++start;
  return "…" + excerpt(text.substr(start), max_bytes);
}

std::string json_error_message(std::string_view what) {
  // "[json.exception.parse_error.101] " names nlohmann's exception class, not the problem.
  if (!what.empty() && what.front() == '[')
    if (const auto p = what.find("] "); p != std::string_view::npos) what.remove_prefix(p + 2);
  constexpr std::string_view kLastRead = "last read: '";
  const auto at = what.find(kLastRead);
  if (at == std::string_view::npos) return excerpt(what, 200);  // "number overflow parsing '1111…"
  const auto token_begin = at + kLastRead.size();
  auto token_end = what.rfind('\'');
  if (token_end == std::string_view::npos || token_end < token_begin) token_end = what.size();
  std::string out = excerpt(what.substr(0, token_begin), 200);
  out += excerpt_tail(what.substr(token_begin, token_end - token_begin), 40);
  out += excerpt(what.substr(token_end), 100);
  return out;
}

std::string cap_message(std::string message) {
  if (message.size() <= kMaxErrorMessageBytes) return message;
  // The parts were escaped when they were put in: only cut, at a character boundary.
  std::size_t cut = kMaxErrorMessageBytes;
  while (cut > 0 && (static_cast<unsigned char>(message[cut]) & 0xC0) == 0x80) --cut;
  message.resize(cut);
  return message + "…";
}

}  // namespace attention_lab
