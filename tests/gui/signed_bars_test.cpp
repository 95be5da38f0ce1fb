// Softmax up close draws a signed row around one zero line: positives up in
// red, negatives down in blue (the heatmaps' RdBu ends), −∞ as a stub.

#include "logic/signed_bars.h"
#include "gui_test_support.h"

#include <gtest/gtest.h>

#include <limits>

using namespace attention_lab;
using namespace attention_lab::gui;
using namespace attention_lab::gui_test;

namespace {
RowVector row(std::initializer_list<float> v) {
  RowVector r(static_cast<Eigen::Index>(v.size()));
  Eigen::Index i = 0;
  for (float x : v) r[i++] = x;
  return r;
}
}  // namespace

TEST(SignedBars, NegativesGoDownFromTheZeroLineAndPositivesUp) {
  const RowVector v = row({2.0f, -1.0f, 0.0f});
  const BarScale s = bar_scale(v, false);
  EXPECT_FLOAT_EQ(s.lo, -1.0f);
  EXPECT_FLOAT_EQ(s.hi, 2.0f);
  const float h = 30.0f;
  EXPECT_FLOAT_EQ(s.zero_at(h), 20.0f);
  const Bar up = bar_for(2.0f, s, h);
  EXPECT_EQ(up.kind, BarKind::Up);
  EXPECT_FLOAT_EQ(up.top, 0.0f);
  EXPECT_FLOAT_EQ(up.bottom, 20.0f);
  const Bar down = bar_for(-1.0f, s, h);
  EXPECT_EQ(down.kind, BarKind::Down);
  EXPECT_FLOAT_EQ(down.top, 20.0f);
  EXPECT_FLOAT_EQ(down.bottom, 30.0f);
  EXPECT_EQ(bar_for(0.0f, s, h).kind, BarKind::Flat);
}

TEST(SignedBars, MinusInfinityIsAStubWithNoBarAndDoesNotStretchTheScale) {
  const RowVector v = row({0.5f, -kInf, 0.25f});
  const BarScale s = bar_scale(v, false);
  EXPECT_FLOAT_EQ(s.lo, 0.0f);  // −∞ left out: the finite bars keep their height
  EXPECT_FLOAT_EQ(s.hi, 0.5f);
  const Bar b = bar_for(-kInf, s, 40.0f);
  EXPECT_EQ(b.kind, BarKind::MinusInfinity);
  EXPECT_FLOAT_EQ(b.top, b.bottom);  // no height at all
  EXPECT_EQ(bar_for(std::numeric_limits<float>::quiet_NaN(), s, 40.0f).kind, BarKind::NotANumber);
}

TEST(SignedBars, ARowOfOnlyMinusInfinityStillHasAScale) {
  const BarScale s = bar_scale(row({-kInf, -kInf}), false);
  EXPECT_GT(s.hi - s.lo, 0.0f);
}

TEST(SignedBars, ProbabilitiesSpanAtLeastZeroToOne) {
  const BarScale s = bar_scale(row({0.2f, 0.1f}), true);
  EXPECT_FLOAT_EQ(s.lo, 0.0f);
  EXPECT_FLOAT_EQ(s.hi, 1.0f);
}

TEST(SignedBars, ColoursAreTheDivergingMapsBlueForNegativeAndRedForPositive) {
  const Rgb neg = signed_bar_colour(-0.3f), pos = signed_bar_colour(4.0f);
  EXPECT_GT(neg.b, neg.r);
  EXPECT_GT(pos.r, pos.b);
  const Rgb blue = diverging(-0.8f);
  EXPECT_FLOAT_EQ(neg.r, blue.r);
  EXPECT_FLOAT_EQ(neg.g, blue.g);
  EXPECT_FLOAT_EQ(neg.b, blue.b);
}
