// The CPU colormaps (twins of shaders/heatmap.frag): which colour a value gets,
// which colormap a stage uses and the range its colours span.

#include "logic/colormap.h"
#include "gui_test_support.h"

#include "attention_lab/presets.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace attention_lab;
using namespace attention_lab::gui;
using namespace attention_lab::gui_test;

namespace {


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

// Colour scales for attention weights.
TEST(ColourScale, LinearIsTheWeightItself) {
  EXPECT_FLOAT_EQ(scaled_weight(0.25f, ColourScale::Linear, 0.5f, 4), 0.25f);
  EXPECT_FLOAT_EQ(scaled_weight(1.0f, ColourScale::Linear, 1.0f, 4), 1.0f);
  EXPECT_FLOAT_EQ(scaled_weight(0.0f, ColourScale::Linear, 1.0f, 4), 0.0f);
}

TEST(ColourScale, LogSpreadsDecadesEvenlyAndPutsZeroAtTheBottom) {
  const int decades = 4;  // 10⁻⁴ … 1
  EXPECT_FLOAT_EQ(scaled_weight(1.0f, ColourScale::Log, 1.0f, decades), 1.0f);
  EXPECT_FLOAT_EQ(scaled_weight(0.1f, ColourScale::Log, 1.0f, decades), 0.75f);
  EXPECT_FLOAT_EQ(scaled_weight(0.01f, ColourScale::Log, 1.0f, decades), 0.5f);
  EXPECT_FLOAT_EQ(scaled_weight(1e-4f, ColourScale::Log, 1.0f, decades), 0.0f);
  EXPECT_FLOAT_EQ(scaled_weight(1e-9f, ColourScale::Log, 1.0f, decades), 0.0f);  // below the range: clamped
  EXPECT_FLOAT_EQ(scaled_weight(0.0f, ColourScale::Log, 1.0f, decades), 0.0f);   // a masked key
}

TEST(ColourScale, PerRowMakesEachRowsLargestWeightTheTop) {
  EXPECT_FLOAT_EQ(scaled_weight(0.002f, ColourScale::PerRow, 0.004f, 4), 0.5f);
  EXPECT_FLOAT_EQ(scaled_weight(0.004f, ColourScale::PerRow, 0.004f, 4), 1.0f);
  EXPECT_FLOAT_EQ(scaled_weight(0.0f, ColourScale::PerRow, 0.0f, 4), 0.0f);  // a row that attends to nothing
}

TEST(ColourScale, NaNStaysNaNOnEveryScale) {
  for (ColourScale s : kColourScales)
    EXPECT_TRUE(std::isnan(scaled_weight(std::numeric_limits<float>::quiet_NaN(), s, 1.0f, 4))) << to_string(s);
}

TEST(ColourScale, AUniformRowOf1024TokensIsDarkLinearlyButVisibleOnTheOtherScales) {
  Matrix w = Matrix::Constant(3, 1024, 1.0f / 1024.0f);
  w(1, 5) = 0.5f;  // one row with a favourite key
  const int decades = log_decades(1024);
  EXPECT_EQ(decades, 5);
  const Matrix lin = scaled_weights(w, ColourScale::Linear, decades);
  const Matrix log = scaled_weights(w, ColourScale::Log, decades);
  const Matrix row = scaled_weights(w, ColourScale::PerRow, decades);
  EXPECT_LT(lin(0, 0), 0.001f);
  EXPECT_NEAR(log(0, 0), 1.0f - std::log10(1024.0f) / 5.0f, 1e-6f);  // ~0.4: mid-scale
  EXPECT_GT(log(0, 0), 0.3f);
  EXPECT_FLOAT_EQ(row(0, 0), 1.0f);  // a uniform row: every key is its row's largest
  EXPECT_FLOAT_EQ(row(1, 5), 1.0f);
  EXPECT_NEAR(row(1, 0), (1.0f / 1024.0f) / 0.5f, 1e-7f);
  for (Eigen::Index r = 0; r < 3; ++r)
    for (Eigen::Index c = 0; c < 1024; ++c) {
      EXPECT_GE(log(r, c), 0.0f);
      EXPECT_LE(log(r, c), 1.0f);
    }
}

TEST(ColourScale, TheColourBarSaysWhichScaleItShows) {
  EXPECT_EQ(colour_bar_ends(ColourScale::Linear, 4), (std::pair<std::string, std::string>{"0", "1"}));
  EXPECT_EQ(colour_bar_ends(ColourScale::Log, 4), (std::pair<std::string, std::string>{"≤10⁻⁴", "1"}));
  EXPECT_EQ(colour_bar_ends(ColourScale::Log, 12).first, "≤10⁻¹²");
  EXPECT_EQ(colour_bar_ends(ColourScale::PerRow, 4), (std::pair<std::string, std::string>{"0", "row max"}));
}

TEST(ColourBarLabels, SideBySideWhenBothFitElseStackedNeverOverlapping) {
  const auto wide = colour_bar_labels(160.0f, 40.0f, 35.0f, 8.0f);
  EXPECT_FALSE(wide.stacked);
  EXPECT_FLOAT_EQ(wide.hi_x, 125.0f);
  EXPECT_GE(wide.hi_x, 40.0f + 8.0f);  // the high label starts after the low one ends
  const auto narrow = colour_bar_labels(60.0f, 40.0f, 35.0f, 8.0f);  // "−1.80" + "1.80" in presenter fonts
  EXPECT_TRUE(narrow.stacked);
  EXPECT_FLOAT_EQ(narrow.hi_x, 25.0f);
  const auto tiny = colour_bar_labels(20.0f, 40.0f, 35.0f, 8.0f);
  EXPECT_TRUE(tiny.stacked);
  EXPECT_FLOAT_EQ(tiny.hi_x, 0.0f);
}
