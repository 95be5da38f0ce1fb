#pragma once
// The pipeline as equations, built from the engine's stage descriptions:
//   X · W_q = Q      Q₀ · K₀ᵀ = S₀ ÷ √4 = S′₀ + M = Ŝ₀ softmax = A₀ · V₀ = C₀ …
// A line is a chain of terms; each computed stage continues the chain when
// its first input is the previous result, and starts a new line otherwise.

#include "attention_lab/scenario.h"
#include "attention_lab/stage_id.h"

#include <string>
#include <vector>

namespace attention_lab::gui {

struct Term {
  enum class Kind { Matrix, Operator } kind = Kind::Operator;
  StageId stage;          // for Matrix
  bool transposed = false;
  std::string text;       // for Operator: "·", "=", "÷ √4", "softmax"
  // A slide's page that repeats this matrix for context, smaller: another
  // page of the same statement shows it at full size (slide_panel.cpp).
  bool demoted = false;

  static Term matrix(StageId id, bool transposed = false) { return {Kind::Matrix, id, transposed, {}}; }
  static Term op(std::string text) { return {Kind::Operator, {}, false, std::move(text)}; }
};

struct EquationLine {
  std::vector<Term> terms;
};

// Equations for the layer-wide stages and for head `head` (the focused one).
std::vector<EquationLine> pipeline_equations(const Scenario& scenario, int head);

// The stage the equations show for a step about `focus`: the focus itself,
// except Concat with one head, whose line is skipped as a no-op (C = [C₀]
// is the head's context: that one is shown).
StageKind shown_focus(const Scenario& scenario, StageKind focus);

// Where an equation too wide for one row continues on the next: only before
// an operator, so every continuation starts with its operator ("= Ŝ₀ …",
// "+ mask M = Ŝ₀") and no row ends with one. (Breaking before a matrix made
// "S′₀ + mask" end a row and "M = Ŝ₀" start the next: a false equation.)
// A note such as "(no W_o)" stays with what it follows.
bool may_break_before(const Term& term);

// The indices of the terms that start each row (the first is 0), greedily
// filling rows of `row_width` given each term's drawn width (spacing included).
std::vector<std::size_t> equation_rows(const EquationLine& line, const std::vector<float>& widths, float row_width);

}  // namespace attention_lab::gui
