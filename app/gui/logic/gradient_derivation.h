#pragma once
// The inspector's text for a gradient cell, and the cells it is made of
// (provenance going backwards): the backward rule of that one cell with the
// real numbers, e.g.
//   ∂L/∂W_q[1,0] = Σᵢ X[i,1]·∂L/∂Q[i,0] = 0.50×0.12 + (−1.0)×0.03 + … = 0.041
// Its sources are later gradients (and the values the rule multiplies them
// by), so hovering walks the pipeline from the loss back to X.

#include "attention_lab/document.h"
#include "attention_lab/gradients.h"
#include "logic/derivation.h"
#include "logic/provenance.h"

#include <vector>

namespace attention_lab::gui {

struct GradientCell {
  Derivation text;
  std::vector<Lit> sources;
};

// Cell (row, col) of gradient stage `id` (role Gradient) of `doc`'s scenario,
// whose gradients are `g`. Empty text when `g` has no such cell.
GradientCell derive_gradient(const Document& doc, const Gradients& g, StageId id, int row, int col);

}  // namespace attention_lab::gui
