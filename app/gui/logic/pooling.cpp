#include "logic/pooling.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace attention_lab::gui {

Matrix pool_max_abs(MatrixView m, int factor, float* largest_finite) {
  return pool_max_abs(m, factor, factor, largest_finite);
}

Matrix pool_max_abs(MatrixView m, int row_factor, int col_factor, float* largest_finite) {
  const auto f = static_cast<Eigen::Index>(std::max(row_factor, 1));
  const auto fc = static_cast<Eigen::Index>(std::max(col_factor, 1));
  const Eigen::Index n = m.cols();
  const Eigen::Index rows = (m.rows() + f - 1) / f, cols = (n + fc - 1) / fc;
  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  Matrix out(rows, cols);
  float largest = 0.0f;
  // A cell's rank is |v|, but −∞ (masked) ranks below every value, so it
  // shows only when the whole block is masked; NaN is flagged and wins.
  // Per output row: first down the block's rows, column by column (a
  // straight, vectorizable pass over every cell), then across each block's
  // columns (1/f of the cells).
#pragma omp parallel for schedule(static) reduction(max : largest) if (m.size() > (1 << 16))
  for (Eigen::Index R = 0; R < rows; ++R) {
    thread_local std::vector<float> rank, best, big;
    thread_local std::vector<std::uint8_t> nan;
    rank.assign(static_cast<std::size_t>(n), -2.0f);
    best.assign(static_cast<std::size_t>(n), -kInf);
    nan.assign(static_cast<std::size_t>(n), 0);
    big.assign(static_cast<std::size_t>(n), 0.0f);
    float* lg = big.data();  // per column, so the pass has no loop-carried reduction
    float* rk = rank.data();
    float* bv = best.data();
    std::uint8_t* nn = nan.data();
    const Eigen::Index width = n;  // a local: the loop bound must not be re-read through a pointer
    for (Eigen::Index r = R * f; r < std::min(m.rows(), (R + 1) * f); ++r) {
      const float* row = m.row(r).data();
      for (Eigen::Index c = 0; c < width; ++c) {
        const float v = row[c];
        const float a = std::fabs(v);
        nn[c] |= static_cast<std::uint8_t>(v != v);
        lg[c] = std::max(lg[c], a < kInf ? a : 0.0f);  // (false for NaN too)
        const float key = v == -kInf ? -1.0f : a;         // NaN: never greater, never chosen
        const bool better = key > rk[c];
        rk[c] = better ? key : rk[c];
        bv[c] = better ? v : bv[c];
      }
    }
    for (Eigen::Index c = 0; c < n; ++c) largest = std::max(largest, lg[c]);
    for (Eigen::Index C = 0; C < cols; ++C) {
      float top = -2.0f, value = -kInf;
      bool any_nan = false, tie = false;
      const Eigen::Index c0 = C * fc, c1 = std::min(width, (C + 1) * fc);
      for (Eigen::Index c = c0; c < c1; ++c) {
        any_nan = any_nan || nn[c];
        const bool better = rk[c] > top;  // selects: random data would mispredict a branch
        tie = better ? false : (tie || (rk[c] == top && bv[c] != value));
        top = better ? rk[c] : top;
        value = better ? bv[c] : value;
      }
      if (tie && !any_nan) {
        // +v and −v equally large in different columns: the first in reading
        // order wins, as a block read row by row would choose (rare: rescan)
        bool found = false;
        for (Eigen::Index r = R * f; r < std::min(m.rows(), (R + 1) * f) && !found; ++r)
          for (Eigen::Index c = c0; c < c1 && !found; ++c) {
            const float v = m(r, c);
            if ((v == -kInf ? -1.0f : std::fabs(v)) == top) value = v, found = true;
          }
      }
      out(R, C) = any_nan ? kNaN : value;
    }
  }
  if (largest_finite) *largest_finite = largest;
  return out;
}

}  // namespace attention_lab::gui
