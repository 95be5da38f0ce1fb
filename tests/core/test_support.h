#pragma once
// Helpers shared by the core tests.

#include "attention_lab/document.h"
#include "attention_lab/presets.h"

#include <gtest/gtest.h>

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

}  // namespace attention_lab::test
