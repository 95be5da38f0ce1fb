// The CPU colormaps (twins of shaders/heatmap.frag): which colour a value gets,
// which colormap a stage uses and the range its colours span.

#include "logic/colormap.h"

#include "attention_lab/presets.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace attention_lab;
using namespace attention_lab::gui;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

float brightness(Rgb c) { return 0.299f * c.r + 0.587f * c.g + 0.114f * c.b; }

bool same(Rgb a, Rgb b) { return a.r == b.r && a.g == b.g && a.b == b.b; }

Matrix values(std::initializer_list<std::initializer_list<float>> rows) {
  Matrix m(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(rows.begin()->size()));
  Eigen::Index i = 0;
  for (const auto& row : rows) {
    Eigen::Index j = 0;
    for (float v : row) m(i, j++) = v;
    ++i;
  }
  return m;
}

}  // namespace

TEST(Colormap, DivergingZeroIsTheLightNeutralMiddle) {
  const Rgb mid = diverging(0.0f);
  EXPECT_NEAR(mid.r, 0.969f, 1e-6f);
  EXPECT_NEAR(mid.g, 0.969f, 1e-6f);
  EXPECT_NEAR(mid.b, 0.969f, 1e-6f);
  // the middle is the lightest colour of the map
  for (float t = -1.0f; t <= 1.0f; t += 0.125f) EXPECT_LE(brightness(diverging(t)), brightness(mid)) << t;
}

TEST(Colormap, DivergingNegativesAreBlueAndPositivesRed) {
  for (const float t : {-1.0f, -0.75f, -0.5f, -0.25f, -0.05f}) {
    const Rgb c = diverging(t);
    EXPECT_GT(c.b, c.r) << t;
  }
  for (const float t : {0.05f, 0.25f, 0.5f, 0.75f, 1.0f}) {
    const Rgb c = diverging(t);
    EXPECT_GT(c.r, c.b) << t;
  }
}

TEST(Colormap, DivergingGetsDarkerAwayFromZero) {
  for (float t = 0.0f; t < 1.0f; t += 0.125f) {
    EXPECT_GT(brightness(diverging(t)), brightness(diverging(t + 0.125f))) << t;
    EXPECT_GT(brightness(diverging(-t)), brightness(diverging(-t - 0.125f))) << -t;
  }
}

TEST(Colormap, DivergingClampsValuesOutsideMinusOneToOne) {
  EXPECT_TRUE(same(diverging(5.0f), diverging(1.0f)));
  EXPECT_TRUE(same(diverging(-5.0f), diverging(-1.0f)));
  EXPECT_TRUE(same(diverging(kInf), diverging(1.0f)));
  EXPECT_TRUE(same(diverging(-kInf), diverging(-1.0f)));
  // the ends are ColorBrewer RdBu's darkest blue and red
  EXPECT_NEAR(diverging(-1.0f).b, 0.675f, 1e-6f);
  EXPECT_NEAR(diverging(1.0f).r, 0.698f, 1e-6f);
}

TEST(Colormap, ViridisRunsFromDarkPurpleToYellow) {
  const Rgb lo = viridis(0.0f), hi = viridis(1.0f);
  // dark purple: blue and red over green, and dark
  EXPECT_NEAR(lo.r, 0.267f, 0.02f);
  EXPECT_NEAR(lo.g, 0.005f, 0.02f);
  EXPECT_NEAR(lo.b, 0.329f, 0.02f);
  // yellow: red and green high, blue low
  EXPECT_NEAR(hi.r, 0.993f, 0.02f);
  EXPECT_NEAR(hi.g, 0.906f, 0.02f);
  EXPECT_NEAR(hi.b, 0.144f, 0.02f);
  EXPECT_LT(brightness(lo), 0.2f);
  EXPECT_GT(brightness(hi), 0.8f);
}

TEST(Colormap, ViridisGetsBrighterWithTheValueAndClamps) {
  for (float t = 0.0f; t < 1.0f; t += 0.0625f) EXPECT_LT(brightness(viridis(t)), brightness(viridis(t + 0.0625f))) << t;
  EXPECT_TRUE(same(viridis(-1.0f), viridis(0.0f)));
  EXPECT_TRUE(same(viridis(2.0f), viridis(1.0f)));
  for (float t = 0.0f; t <= 1.0f; t += 0.03125f) {
    const Rgb c = viridis(t);
    for (const float ch : {c.r, c.g, c.b}) {
      EXPECT_GE(ch, 0.0f);
      EXPECT_LE(ch, 1.0f);
    }
  }
}

TEST(Colormap, EachValueDomainHasItsOwnColormap) {
  EXPECT_EQ(colormap_for(ValueDomain::Signed), 0);       // diverging
  EXPECT_EQ(colormap_for(ValueDomain::Probability), 1);  // viridis
  EXPECT_EQ(colormap_for(ValueDomain::Binary), 2);       // the mask's two colours
}

TEST(Colormap, StagesGetTheColormapOfWhatTheirNumbersMean) {
  const Scenario s = *make_preset("fat-cat");
  EXPECT_EQ(colormap_for(describe_stage(s, StageId::of_head(StageKind::Scores, 0)).domain), 0);
  EXPECT_EQ(colormap_for(describe_stage(s, StageId::of_head(StageKind::Weights, 0)).domain), 1);
  EXPECT_EQ(colormap_for(describe_stage(s, StageId::input(StageKind::Mask)).domain), 2);
  EXPECT_EQ(colormap_for(describe_stage(s, StageId::input(StageKind::X)).domain), 0);
}

TEST(Colormap, SignedRangeIsTheLargestMagnitudeSoZeroStaysInTheMiddle) {
  EXPECT_EQ(colour_range(ValueDomain::Signed, values({{0.5f, -3.0f}, {2.0f, 1.0f}})), 3.0f);
  EXPECT_EQ(colour_range(ValueDomain::Signed, values({{0.5f, -1.0f}, {2.5f, 1.0f}})), 2.5f);
}

TEST(Colormap, SignedRangeIgnoresMaskedMinusInfinityAndNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(colour_range(ValueDomain::Signed, values({{0.5f, -kInf}, {-1.5f, kInf}})), 1.5f);
  EXPECT_EQ(colour_range(ValueDomain::Signed, values({{nan, -0.25f}})), 0.25f);
}

TEST(Colormap, SignedRangeFallsBackToOneWhenThereIsNothingToScale) {
  EXPECT_EQ(colour_range(ValueDomain::Signed, values({{0.0f, 0.0f}})), 1.0f);
  EXPECT_EQ(colour_range(ValueDomain::Signed, values({{-kInf, -kInf}})), 1.0f);
  EXPECT_EQ(colour_range(ValueDomain::Signed, Matrix(0, 0)), 1.0f);
}

TEST(Colormap, ProbabilitiesAndMasksAlwaysSpanZeroToOne) {
  const Matrix m = values({{0.1f, 0.2f}, {0.3f, 0.4f}});
  EXPECT_EQ(colour_range(ValueDomain::Probability, m), 1.0f);
  EXPECT_EQ(colour_range(ValueDomain::Binary, m), 1.0f);
  EXPECT_EQ(colour_range(ValueDomain::Probability, values({{7.0f}})), 1.0f);  // even for a pinned 7
}
