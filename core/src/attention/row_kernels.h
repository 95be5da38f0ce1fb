#pragma once
// Vector loops over rows that the engine's incremental paths share
// (incremental.cpp): each does in one pass what Eigen expressions did in
// two or three, and finds the largest |value| on the way, NaN kept apart
// (GCC's vector types: the compiler does not vectorize such a max itself).
// Not a public header.

#include <Eigen/Core>

namespace attention_lab::engine_detail {

// One head's segments of kGroupRows rows of R after a key's change,
// seg += a·y_old + b·y_new, each added to its output row times the row's
// scale for the head (or written, for the first head: First) in the same
// pass. R is what an edit of X streams: each of its floats is loaded and
// stored once, and y_old, y_new (read from L2, twice R's bytes per row) are
// loaded once for the group of rows. Rows of R and of the output never
// overlap.
constexpr int kGroupRows = 4;
template <bool First>
void sum_output_segments(float* const* seg, const float* y_old, const float* y_new, const float* a, const float* b,
                         const float* scale, float* const* out, Eigen::Index n);

// The same for one row; y_old null: the segment is only added.
void sum_output_segment(float* seg, const float* y_old, const float* y_new, float a, float b, float scale,
                        float* out, Eigen::Index n, bool first);

// block += a·bᵀ for a row-major block (rows × cols, rows `stride` floats
// apart); returns its largest |entry| after the update and sets `nan` when
// an entry is NaN.
float add_outer_product(float* block, Eigen::Index stride, const float* a, const float* b, Eigen::Index rows,
                        Eigen::Index cols, bool& nan);

// One head's U_i after key r's term changed, u += v_new·en − v_old·eo (or
// v_new·(en − eo) when v_old is null: V_r did not change), and its concat,
// u·scale, in one pass; returns the largest |u| after the update, NaN when
// an entry is NaN.
float update_context_row(float* u, const float* v_new, const float* v_old, float en, float eo, float scale,
                         float* concat, Eigen::Index n);

}  // namespace attention_lab::engine_detail
