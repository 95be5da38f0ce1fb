#include "logic/pooling.h"

#include <cmath>
#include <limits>

namespace attention_lab::gui {

Matrix pool_max_abs(MatrixView m, int factor) {
  const auto f = static_cast<Eigen::Index>(std::max(factor, 1));
  const Eigen::Index rows = (m.rows() + f - 1) / f, cols = (m.cols() + f - 1) / f;
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  Matrix out(rows, cols);
  for (Eigen::Index R = 0; R < rows; ++R)
    for (Eigen::Index C = 0; C < cols; ++C) {
      float best = kNegInf;
      bool finite_seen = false, nan_seen = false;
      const Eigen::Index r_end = std::min(m.rows(), (R + 1) * f), c_end = std::min(m.cols(), (C + 1) * f);
      for (Eigen::Index r = R * f; r < r_end; ++r)
        for (Eigen::Index c = C * f; c < c_end; ++c) {
          const float v = m(r, c);
          if (std::isnan(v)) nan_seen = true;
          else if (v == kNegInf) continue;  // masked: shown only if nothing else is there
          else if (!finite_seen || std::fabs(v) > std::fabs(best)) best = v, finite_seen = true;
        }
      out(R, C) = nan_seen ? std::numeric_limits<float>::quiet_NaN() : best;
    }
  return out;
}

}  // namespace attention_lab::gui
