#pragma once
// Helpers the app-logic tests share. One place for them, also because the
// suite is compiled in batches of files (a unity build), where two files'
// helpers of one name would collide.

#include "logic/pipeline_layout.h"

#include "attention_lab/document.h"
#include "attention_lab/presets.h"

#include <limits>
#include <string>
#include <vector>

namespace attention_lab::gui_test {

inline constexpr float kInf = std::numeric_limits<float>::infinity();

inline Scenario preset(const char* name) { return *make_preset(name); }
inline Document open(const char* name) { return Document(*make_preset(name)); }
inline StageId in(StageKind k) { return StageId::input(k); }
inline StageId head(StageKind k, int h) { return StageId::of_head(k, h); }

inline bool ends_with(const std::string& text, const std::string& end) {
  return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

// "Q[0] · K[0]ᵀ = scores[0] ÷ √4  = scaled[0] …": matrices by id, operators as drawn.
inline std::string equation_text(const gui::EquationLine& line) {
  std::string s;
  for (const gui::Term& t : line.terms) {
    if (!s.empty()) s += ' ';
    s += t.kind == gui::Term::Kind::Matrix ? to_string(t.stage) + (t.transposed ? "ᵀ" : "") : t.text;
  }
  return s;
}

// One line per equation.
inline std::string equation_text(const std::vector<gui::EquationLine>& lines) {
  std::string s;
  for (const auto& line : lines) s += equation_text(line) + "\n";
  return s;
}

}  // namespace attention_lab::gui_test
