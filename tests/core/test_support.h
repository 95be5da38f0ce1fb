#pragma once
// Helpers shared by the core tests.

#include "attention_lab/document.h"
#include "attention_lab/presets.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace attention_lab::test {

inline Scenario preset(const char* name) {
  auto s = make_preset(name);
  if (!s) throw std::runtime_error(std::string("no preset ") + name);
  return *s;
}

// |a − b| ≤ rel·|b| + abs_tol for every cell; reports the first bad cell with its label.
inline ::testing::AssertionResult matrices_near(MatrixView a, MatrixView b, double rel, double abs_tol,
                                                const std::string& label) {
  if (a.rows() != b.rows() || a.cols() != b.cols())
    return ::testing::AssertionFailure() << label << ": shape " << a.rows() << "x" << a.cols() << " vs " << b.rows()
                                         << "x" << b.cols();
  for (Eigen::Index r = 0; r < a.rows(); ++r)
    for (Eigen::Index c = 0; c < a.cols(); ++c) {
      const double x = a(r, c), y = b(r, c);
      if (std::isinf(x) || std::isinf(y)) {
        if (x != y) return ::testing::AssertionFailure() << label << "[" << r << "][" << c << "]: " << x << " vs " << y;
        continue;
      }
      if (!(std::abs(x - y) <= rel * std::abs(y) + abs_tol))
        return ::testing::AssertionFailure() << label << "[" << r << "][" << c << "]: " << x << " vs " << y;
    }
  return ::testing::AssertionSuccess();
}

// Within 1e-4 of `want`'s largest finite magnitude: how intermediates are
// checked against their float64 references (model fixtures, recorded
// activations, imported weights).
inline ::testing::AssertionResult near_reference(MatrixView got, const Matrix& want, const std::string& what) {
  const double scale = std::max(
      1e-6, static_cast<double>(want.unaryExpr([](float x) { return std::isinf(x) ? 0.0f : std::abs(x); }).maxCoeff()));
  return matrices_near(got, want, 0.0, 1e-4 * scale, what);
}

}  // namespace attention_lab::test
