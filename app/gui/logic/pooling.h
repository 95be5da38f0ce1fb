#pragma once
// Zoomed-out heatmaps stay truthful: when several cells fall on one pixel,
// the pixel shows the most extreme of them instead of whichever cell a
// sampler happened to hit (a moiré of skipped cells hides the one large score).

#include "attention_lab/matrix.h"

namespace attention_lab::gui {

// Each factor × factor block becomes its entry of largest magnitude, sign
// kept (for weights, the maximum). −∞ only when the whole block is −∞ (fully
// masked); NaN wins over everything so it is never hidden. With
// `largest_finite`, also the largest finite |value| of all of m (0 when
// there is none): the colour range, from the same pass over the cells.
Matrix pool_max_abs(MatrixView m, int factor, float* largest_finite = nullptr);
// The same with blocks of row_factor rows × col_factor columns (a wide,
// short matrix drawn with cells taller than wide).
Matrix pool_max_abs(MatrixView m, int row_factor, int col_factor, float* largest_finite = nullptr);

}  // namespace attention_lab::gui
