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
};

struct EquationLine {
  std::vector<Term> terms;
};

// Equations for the layer-wide stages and for head `head` (the focused one).
std::vector<EquationLine> pipeline_equations(const Scenario& scenario, int head);

}  // namespace attention_lab::gui
