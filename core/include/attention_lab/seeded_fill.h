#pragma once
// Deterministic values for cells that did not exist before (a dimension grew,
// a matrix was randomized). A cell's value depends only on the seed, the
// matrix and its position, so growing, shrinking and growing again gives the
// same numbers back.

#include "attention_lab/matrix.h"
#include "attention_lab/stage_id.h"

#include <cstdint>

namespace attention_lab {

// Uniform in [-1, 1).
float seeded_uniform(std::uint64_t seed, StageKind matrix, int row, int col);

// The spread a fresh cell of `matrix` gets: inputs O(1), weights ~1/√fan_in so
// projections stay O(1), biases small.
float fresh_scale(StageKind matrix, int fan_in);

// A rows × cols matrix of fresh values (mask: lower-triangular ones).
Matrix seeded_matrix(std::uint64_t seed, StageKind matrix, int rows, int cols, int fan_in);

// A rows × cols matrix holding what fits of `old` and fresh values elsewhere:
// what a resize or an import does around the cells it keeps. Column blocks
// (heads) are kept block by block: block b of `old` (old_block wide) lands in
// block b of the new matrix (new_block wide); 0 for either: no blocks.
Matrix regrow_seeded(const Matrix& old, int rows, int cols, int old_block, int new_block, std::uint64_t seed,
                     StageKind matrix, int fan_in);

}  // namespace attention_lab
