#pragma once
// Fitting text into a width without lying about it: a label that is too long
// ends in "…" (never cut inside a UTF-8 character), and a derivation wraps
// only between its terms (never inside "1.51" or "S₀[2,3]", which ImGui's own
// wrapping breaks after any '.' or ',').
//
// Widths come from a `measure` function so the logic is testable without a
// font: the app passes ImGui::CalcTextSize, the tests a fixed-advance font.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace attention_lab::gui {

using TextMeasure = std::function<float(std::string_view)>;

inline constexpr std::string_view kEllipsis = "…";

// `text` if it fits `max_width`; otherwise its longest prefix (whole code
// points) followed by "…" that fits; "" when not even "…" fits.
std::string ellipsize(std::string_view text, float max_width, const TextMeasure& measure);

// Byte length of the longest prefix of `text` made of whole UTF-8 code points
// and at most `max_bytes` long.
std::size_t utf8_prefix(std::string_view text, std::size_t max_bytes);

// Splits a formula such as "0.12×0.40 + (−0.31)×0.05 = 0.52" into the pieces
// a line may break between: words at spaces, with an operator ("+", "−", "=",
// "/", "×", "·", ";", "→", "|") glued to the word after it, so a wrapped line
// starts with its operator and never ends with one:
//   {"0.12×0.40", "+ (−0.31)×0.05", "= 0.52"}
// A short group in parentheses (up to 40 bytes) is one piece: "e^(Ŝ₅ⱼ − 0.041)".
std::vector<std::string> formula_tokens(std::string_view text);

// Greedy wrap of `tokens` (joined by single spaces) into lines no wider than
// `width`. A token wider than `width` breaks at its own spaces, and a word
// still too wide between its characters: no line runs past the edge.
std::vector<std::string> wrap_tokens(const std::vector<std::string>& tokens, float width, const TextMeasure& measure);

}  // namespace attention_lab::gui
