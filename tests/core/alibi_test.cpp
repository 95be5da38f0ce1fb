// ALiBi: per-head slopes from the paper, the position bias m_h·(j − i) as its
// own stage, masked = scaled + bias (−∞ where the mask forbids), pins and
// edits under it, and what may not be done to it.

#include "attention_lab/document.h"
#include "attention_lab/edit.h"
#include "attention_lab/scenario_io.h"
#include "attention_lab/stage_info.h"
#include "random_edits.h"
#include "test_support.h"
#include "unit_support.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace attention_lab;
using attention_lab::test::preset;

namespace {

Scenario with_alibi(const char* name) {
  Scenario s = preset(name);
  s.alibi = true;
  return s;
}

using attention_lab::test::head;

}  // namespace

TEST(AlibiSlopes, AreThePapersGeometricSequence) {
  EXPECT_EQ(alibi_slopes(1), (std::vector<double>{std::exp2(-8.0)}));
  EXPECT_EQ(alibi_slopes(4), (std::vector<double>{0.25, 1.0 / 16, 1.0 / 64, 1.0 / 256}));
  const auto eight = alibi_slopes(8);
  for (int h = 0; h < 8; ++h) EXPECT_EQ(eight[static_cast<std::size_t>(h)], std::exp2(-(h + 1.0)));
  // Not a power of two: the 2 of n = 2, then every other slope of n = 4.
  EXPECT_EQ(alibi_slopes(3), (std::vector<double>{1.0 / 16, 1.0 / 256, 0.25}));
  const auto twelve = alibi_slopes(12);
  ASSERT_EQ(twelve.size(), 12u);
  for (int h = 0; h < 8; ++h) EXPECT_EQ(twelve[static_cast<std::size_t>(h)], std::exp2(-(h + 1.0)));
  for (int k = 0; k < 4; ++k) EXPECT_DOUBLE_EQ(twelve[static_cast<std::size_t>(8 + k)], std::exp2(-0.5 - k));
  EXPECT_TRUE(alibi_slopes(0).empty());
}

TEST(Alibi, TheBiasIsTheSlopeTimesTheSignedDistanceAndMaskedAddsIt) {
  const Document doc(with_alibi("multi-head"));
  const auto slopes = alibi_slopes(doc.scenario().heads);
  for (int h = 0; h < doc.scenario().heads; ++h) {
    const MatrixView bias = doc.stage(head(StageKind::PositionBias, h));
    const MatrixView scaled = doc.stage(head(StageKind::Scaled, h));
    const MatrixView masked = doc.stage(head(StageKind::Masked, h));
    const float m = static_cast<float>(slopes[static_cast<std::size_t>(h)]);
    for (Eigen::Index i = 0; i < bias.rows(); ++i)
      for (Eigen::Index j = 0; j < bias.cols(); ++j) {
        EXPECT_EQ(bias(i, j), m * static_cast<float>(j - i)) << h << ": " << i << "," << j;
        if (j <= i) EXPECT_EQ(masked(i, j), scaled(i, j) + bias(i, j)) << h << ": " << i << "," << j;
        else EXPECT_EQ(masked(i, j), -std::numeric_limits<float>::infinity());
      }
  }
}

TEST(Alibi, IsInTheMaskedFormulaAndItsStageOnlyWhenOn) {
  const Scenario on = with_alibi("fat-cat");
  EXPECT_EQ(describe_stage(on, head(StageKind::Masked, 0)).formula, "Ŝ₀ = S′₀ + B₀ + mask (−∞ where M = 0)");
  const auto p = pipeline(on);
  EXPECT_NE(std::find(p.begin(), p.end(), head(StageKind::PositionBias, 0)), p.end());
  const auto off = pipeline(preset("fat-cat"));
  EXPECT_EQ(std::find(off.begin(), off.end(), head(StageKind::PositionBias, 0)), off.end());
  EXPECT_EQ(describe_stage(on, head(StageKind::PositionBias, 0)).editability, Editability::ReadOnly);
}

TEST(Alibi, TurningItOnAndOffIsOneUndoableEdit) {
  Document doc(preset("multi-head"));
  Engine before;
  before.recompute_all(doc.scenario());
  ASSERT_EQ(doc.apply(SetToggle{Toggle::Alibi, true}), "");
  EXPECT_TRUE(doc.scenario().alibi);
  Engine fresh;
  fresh.recompute_all(doc.scenario());
  EXPECT_TRUE(attention_lab::test::engines_near(doc.engine(), fresh));
  ASSERT_TRUE(doc.undo());
  EXPECT_FALSE(doc.scenario().alibi);
  EXPECT_TRUE(attention_lab::test::engines_near(doc.engine(), before));
}

TEST(Alibi, APinOnScaledStillGetsTheBiasAndThePositionBiasCannotBePinned) {
  Document doc(with_alibi("fat-cat"));
  ASSERT_EQ(doc.apply(SetPin{PinKey{head(StageKind::Scaled, 0), 3, 1}, 2.0f}), "");
  const float bias = doc.stage(head(StageKind::PositionBias, 0))(3, 1);
  EXPECT_EQ(doc.stage(head(StageKind::Masked, 0))(3, 1), 2.0f + bias);
  const std::string err = doc.apply(SetPin{PinKey{head(StageKind::PositionBias, 0), 3, 1}, 1.0f});
  EXPECT_NE(err.find("position_bias[0]: it is computed from the positions alone"), std::string::npos) << err;
}

TEST(Alibi, FilesSayItAndRefuseWhatIsNotABoolean) {
  const Scenario s = with_alibi("book");
  const std::string text = scenario_to_json(s);
  EXPECT_NE(text.find("\"alibi\": true"), std::string::npos);
  const LoadResult back = parse_scenario(text);
  ASSERT_TRUE(back.scenario) << back.error;
  EXPECT_TRUE(attention_lab::test::scenarios_identical(*back.scenario, s));
  EXPECT_EQ(scenario_to_json(preset("book")).find("alibi"), std::string::npos);  // off: not written

  std::string bad = text;
  bad.replace(bad.find("\"alibi\": true"), 13, "\"alibi\": 1");
  EXPECT_EQ(parse_scenario(bad).error, "alibi: expected true or false, found 1");
}

TEST(Alibi, RandomEditsUnderItMatchAFullRecompute) {
  for (std::uint32_t seed : {21u, 22u, 23u}) {
    attention_lab::test::RandomOptions o;
    o.T = 10;
    o.heads = 3;
    o.mask = static_cast<MaskKind>(seed % 3);
    Scenario s = attention_lab::test::random_scenario(seed, o);
    s.alibi = true;
    EXPECT_TRUE(attention_lab::test::random_edits_match_full_recompute(s, seed, 80));
  }
}
