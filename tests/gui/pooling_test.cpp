// Zoomed-out heatmaps: each block of cells becomes its most extreme value
// (sign kept), −∞ only when the whole block is masked, NaN always shown; and
// the same pass yields the colour range.

#include "logic/colormap.h"
#include "gui_test_support.h"
#include "logic/pooling.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

using namespace attention_lab;
using namespace attention_lab::gui;
using namespace attention_lab::gui_test;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// The definition, one block at a time.
float block_value(const Matrix& m, Eigen::Index R, Eigen::Index C, Eigen::Index f, Eigen::Index fc = 0) {
  if (fc == 0) fc = f;
  float best = -kInf;
  bool any = false, nan = false;
  for (Eigen::Index r = R * f; r < std::min(m.rows(), (R + 1) * f); ++r)
    for (Eigen::Index c = C * fc; c < std::min(m.cols(), (C + 1) * fc); ++c) {
      const float v = m(r, c);
      if (std::isnan(v)) nan = true;
      else if (v != -kInf && (!any || std::fabs(v) > std::fabs(best))) best = v, any = true;
    }
  return nan ? kNaN : best;
}

}  // namespace

TEST(Pooling, ABlockShowsItsValueOfLargestMagnitudeWithItsSign) {
  Matrix m(2, 4);
  m << 0.1f, -0.9f, 0.5f, 0.2f,
       0.3f, 0.4f, 0.6f, -0.1f;
  const Matrix p = pool_max_abs(m, 2);
  ASSERT_EQ(p.rows(), 1);
  ASSERT_EQ(p.cols(), 2);
  EXPECT_EQ(p(0, 0), -0.9f);
  EXPECT_EQ(p(0, 1), 0.6f);
}

TEST(Pooling, TiesGoToTheFirstCellInReadingOrder) {
  Matrix m(2, 2);
  m << 0.0f, 0.5f,
       -0.5f, 0.0f;
  EXPECT_EQ(pool_max_abs(m, 2)(0, 0), 0.5f);
  m << 0.0f, -0.5f,
       0.5f, 0.0f;
  EXPECT_EQ(pool_max_abs(m, 2)(0, 0), -0.5f);
}

TEST(Pooling, MaskedCellsShowOnlyWhenTheWholeBlockIsMasked) {
  Matrix m(2, 4);
  m << -kInf, -kInf, -kInf, 0.01f,
       -kInf, -kInf, -kInf, -kInf;
  const Matrix p = pool_max_abs(m, 2);
  EXPECT_EQ(p(0, 0), -kInf);
  EXPECT_EQ(p(0, 1), 0.01f);
}

TEST(Pooling, NaNIsNeverHidden) {
  Matrix m = Matrix::Constant(3, 3, 5.0f);
  m(2, 2) = kNaN;
  const Matrix p = pool_max_abs(m, 2);
  EXPECT_EQ(p(0, 0), 5.0f);
  EXPECT_TRUE(std::isnan(p(1, 1)));
}

TEST(Pooling, RaggedEdgesAndLargeMatricesMatchTheDefinition) {
  // 1000 × 777 takes the parallel path; factors that do not divide the sides.
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  Matrix m(1000, 777);
  for (Eigen::Index r = 0; r < m.rows(); ++r)
    for (Eigen::Index c = 0; c < m.cols(); ++c) m(r, c) = c > r + 200 ? -kInf : normal(rng);
  m(13, 700) = kNaN;
  m(500, 3) = kInf;
  for (int f : {1, 3, 7, 64}) {
    float largest = -1.0f;
    const Matrix p = pool_max_abs(m, f, &largest);
    ASSERT_EQ(p.rows(), (m.rows() + f - 1) / f);
    ASSERT_EQ(p.cols(), (m.cols() + f - 1) / f);
    for (Eigen::Index R = 0; R < p.rows(); ++R)
      for (Eigen::Index C = 0; C < p.cols(); ++C) {
        const float want = block_value(m, R, C, f);
        if (std::isnan(want)) ASSERT_TRUE(std::isnan(p(R, C))) << "factor " << f << " block " << R << "," << C;
        else ASSERT_EQ(p(R, C), want) << "factor " << f << " block " << R << "," << C;
      }
    // the colour range from the same pass: largest finite |v|, ∞ and NaN left out
    EXPECT_EQ(largest, colour_range(ValueDomain::Signed, m)) << "factor " << f;
  }
}

TEST(Pooling, BlocksMayBeTallerOrWiderThanSquare) {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal;
  Matrix m(37, 775);
  for (Eigen::Index r = 0; r < m.rows(); ++r)
    for (Eigen::Index c = 0; c < m.cols(); ++c) m(r, c) = normal(rng);
  for (const auto& [fr, fc] : {std::pair{1, 2}, std::pair{1, 7}, std::pair{3, 1}, std::pair{2, 5}}) {
    float largest = -1.0f;
    const Matrix p = pool_max_abs(m, fr, fc, &largest);
    ASSERT_EQ(p.rows(), (m.rows() + fr - 1) / fr);
    ASSERT_EQ(p.cols(), (m.cols() + fc - 1) / fc);
    for (Eigen::Index R = 0; R < p.rows(); ++R)
      for (Eigen::Index C = 0; C < p.cols(); ++C) ASSERT_EQ(p(R, C), block_value(m, R, C, fr, fc)) << fr << "×" << fc;
    EXPECT_EQ(largest, colour_range(ValueDomain::Signed, m));
  }
}
