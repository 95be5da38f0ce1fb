#pragma once
// The inspector's text: how one cell was computed, with the real numbers.
//   scores₀[2,3] = q₂·k₃ = 0.12×0.40 + (−0.31)×0.05 + … = 0.52

#include "attention_lab/document.h"

#include <string>

namespace attention_lab::gui {

struct Derivation {
  std::string title;    // "S₀[2,3]  ('cat' → 'fat')"
  std::string formula;  // the general rule: "q₂·k₃"
  std::string numbers;  // the rule with this cell's numbers
  std::string note;     // pinned, masked, what it means
  // A quiz hint: the rule with this cell's inputs, stopping before the result
  // ("0.12×0.40 + (−0.31)×0.05 + … = ?"); it never prints the cell's own value.
  std::string hint;
};

// Sums longer than this show their first terms and "…".
inline constexpr int kMaxTermsShown = 6;
// A quiz hint is there to be summed by hand: it shows up to this many terms.
inline constexpr int kMaxHintTerms = 16;

Derivation derive(const Document& doc, StageId stage, int row, int col);

}  // namespace attention_lab::gui
