#pragma once
// Quoting text from a file in an error message. A file from a stranger may
// hold a 10 MB line, control characters (a terminal escape, a NUL) or bytes
// that are not UTF-8: an error message shows at most a short, printable
// excerpt of it, so it stays one readable line and cannot flood a terminal
// or a dialog.

#include <cstddef>
#include <string>
#include <string_view>

namespace attention_lab {

// At most `max_bytes` bytes of `text` (cut at a character boundary, "…"
// marking the cut), with control characters written as \n, \t, \u0001… and
// bytes that are not UTF-8 as \xff. Not quoted.
std::string excerpt(std::string_view text, std::size_t max_bytes = 40);

// The same, keeping the END of the text (a parser error is about where it
// stopped): "…" then the last `max_bytes` bytes.
std::string excerpt_tail(std::string_view text, std::size_t max_bytes = 40);

// A JSON parser's exception text ("[json.exception.parse_error.101] parse
// error at line 1, column 9: syntax error …; last read: '…'") as a short
// message: without the exception id, the "last read" token cut to its last
// 40 bytes and escaped.
std::string json_error_message(std::string_view what);

// Whole error messages are capped too (a last line of defence: a message
// built from many short excerpts stays readable).
inline constexpr std::size_t kMaxErrorMessageBytes = 600;
std::string cap_message(std::string message);

}  // namespace attention_lab
