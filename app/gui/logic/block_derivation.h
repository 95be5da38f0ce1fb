#pragma once
// The inspector's text for a cell of the block around the attention
// (embeddings, norms, residual sums, the MLP), with the real numbers:
//   n₁[2,5] = (x − μ₁)/√(σ²₁ + ε)·γ + β = (0.51 − 0.02)/√(0.33 + 1e-05)·1.02 + 0.01 = 0.87

#include "attention_lab/block_stages.h"
#include "logic/derivation.h"

#include <string>
#include <vector>

namespace attention_lab::gui {

// `tokens` label the rows; `unedited_attention` (may be empty) is the
// attention output before the edits, so a changed cell says by how much.
Derivation derive_block(const BlockTrace& trace, BlockStage stage, int row, int col,
                        const std::vector<std::string>& tokens, const Matrix& unedited_attention);

// A number in these derivations: four significant digits (a variance of
// 0.0017 must not read 0.002, or the arithmetic shown would not add up),
// a true minus sign, also in exponents ("1.000e−05").
std::string block_number(float v);

// How many products a matrix-product cell lists: the largest by magnitude.
inline constexpr int kLargestProductsShown = 4;

}  // namespace attention_lab::gui
