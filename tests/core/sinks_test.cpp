// Attention sinks: one logit per head joins every softmax row as an extra key
// whose share is dropped. Shares and weights against the definition, a row
// the mask empties, edits of a sink, toggling, resizing heads, files.

#include "attention_lab/document.h"
#include "attention_lab/edit.h"
#include "attention_lab/scenario_io.h"
#include "attention_lab/softmax.h"
#include "attention_lab/stage_info.h"
#include "random_edits.h"
#include "test_support.h"
#include "unit_support.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace attention_lab;
using attention_lab::test::preset;

namespace {

Scenario with_sinks(const char* name, std::vector<float> logits) {
  Scenario s = preset(name);
  s.use_sinks = true;
  s.sinks = Matrix(1, s.heads);
  for (int h = 0; h < s.heads; ++h) s.sinks(0, h) = logits[static_cast<std::size_t>(h) % logits.size()];
  return s;
}

using attention_lab::test::head;

}  // namespace

TEST(Sinks, EachRowIsASoftmaxOverItsKeysAndTheSinkWhoseShareIsDropped) {
  const Document doc(with_sinks("multi-head", {0.5f, -1.0f, 2.0f, 0.0f}));
  for (int h = 0; h < doc.scenario().heads; ++h) {
    const double sink = doc.scenario().sinks(0, h);
    const MatrixView masked = doc.stage(head(StageKind::Masked, h));
    const MatrixView w = doc.stage(head(StageKind::Weights, h));
    const MatrixView share = doc.stage(head(StageKind::SinkShare, h));
    ASSERT_EQ(share.cols(), 1);
    for (Eigen::Index i = 0; i < w.rows(); ++i) {
      double z = std::exp(sink);
      for (Eigen::Index j = 0; j < w.cols(); ++j) z += std::exp(static_cast<double>(masked(i, j)));
      for (Eigen::Index j = 0; j < w.cols(); ++j)
        EXPECT_NEAR(w(i, j), std::exp(static_cast<double>(masked(i, j))) / z, 1e-6) << h << ": " << i << "," << j;
      EXPECT_NEAR(share(i, 0), std::exp(sink) / z, 1e-6) << h << ": " << i;
      EXPECT_NEAR(w.row(i).sum() + share(i, 0), 1.0f, 1e-5f) << h << ": " << i;
    }
  }
}

TEST(Sinks, ARowTheMaskEmptiesGivesEverythingToTheSinkWithoutAWarning) {
  Scenario s = with_sinks("book", {0.0f});
  s.mask_kind = MaskKind::Custom;
  s.custom_mask = Matrix::Ones(s.T(), s.T());
  s.custom_mask.edit().row(2).setZero();
  const Document doc(s);
  EXPECT_EQ(doc.stage(head(StageKind::Weights, 0)).row(2).sum(), 0.0f);
  EXPECT_FLOAT_EQ(doc.stage(head(StageKind::SinkShare, 0))(2, 0), 1.0f);
  EXPECT_TRUE(doc.engine().warnings().empty());
}

TEST(Sinks, EditingASinkMatchesAFullRecomputeAndUndoes) {
  Document doc(with_sinks("multi-head", {0.0f}));
  const Scenario before = doc.scenario();
  ASSERT_EQ(doc.apply(SetCell{StageId::input(StageKind::Sinks), 0, 2, 3.0f}), "");
  Engine fresh;
  fresh.recompute_all(doc.scenario());
  EXPECT_TRUE(attention_lab::test::engines_near(doc.engine(), fresh));
  EXPECT_GT(doc.stage(head(StageKind::SinkShare, 2))(5, 0), doc.stage(head(StageKind::SinkShare, 1))(5, 0));
  ASSERT_TRUE(doc.undo());
  EXPECT_TRUE(attention_lab::test::scenarios_identical(doc.scenario(), before));
}

TEST(Sinks, TurningThemOnStartsAtZeroAndHeadsKeepTheirsOnAResize) {
  Document doc(preset("multi-head"));
  ASSERT_EQ(doc.apply(SetToggle{Toggle::Sinks, true}), "");
  EXPECT_EQ(doc.scenario().sinks.get(), Matrix::Zero(1, 4));
  ASSERT_EQ(doc.apply(SetCell{StageId::input(StageKind::Sinks), 0, 1, 1.5f}), "");
  ASSERT_EQ(doc.apply(SetDimension{Dimension::heads, 2}), "");
  EXPECT_EQ(doc.scenario().sinks.cols(), 2);
  EXPECT_EQ(doc.scenario().sinks(0, 1), 1.5f);
  ASSERT_EQ(doc.apply(SetDimension{Dimension::heads, 3}), "");
  EXPECT_EQ(doc.scenario().sinks(0, 2), 0.0f);
  EXPECT_EQ(validate(doc.scenario()), "");
  const auto p = pipeline(doc.scenario());
  EXPECT_NE(std::find(p.begin(), p.end(), head(StageKind::SinkShare, 2)), p.end());
  EXPECT_EQ(describe_stage(doc.scenario(), head(StageKind::Weights, 0)).formula, "A₀ = softmax(Ŝ₀, sink s₀)");
}

TEST(Sinks, FilesHoldOneLogitPerHead) {
  const Scenario s = with_sinks("multi-head", {0.25f, -2.0f});
  const std::string text = scenario_to_json(s);
  const LoadResult back = parse_scenario(text);
  ASSERT_TRUE(back.scenario) << back.error;
  EXPECT_TRUE(attention_lab::test::scenarios_identical(*back.scenario, s));

  std::string bad = text;
  const auto at = bad.find("\"sinks\": [");
  ASSERT_NE(at, std::string::npos);
  bad.replace(at, 10, "\"sinks\": [1, ");
  EXPECT_EQ(parse_scenario(bad).error, "sinks: expected 4 numbers (heads: one logit per head), found 5");
}

TEST(Sinks, TheSoftmaxWithASinkIsTheSoftmaxOfTheLongerRowWithoutItsLastEntry) {
  const RowVector x = (RowVector(3) << 0.5f, -1.0f, 2.0f).finished();
  RowVector w(3), longer(4), wl(4);
  longer << x, 1.25f;
  float share = -1.0f;
  EXPECT_EQ(softmax_row_with_sink(x, 1.25f, w, share), RowIssue::None);
  softmax_row(longer, wl);
  for (int j = 0; j < 3; ++j) EXPECT_NEAR(w[j], wl[j], 1e-6f);
  EXPECT_NEAR(share, wl[3], 1e-6f);
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(softmax_row_with_sink(RowVector::Constant(3, -inf), 0.0f, w, share), RowIssue::None);
  EXPECT_EQ(share, 1.0f);
  EXPECT_EQ(w.sum(), 0.0f);
  EXPECT_EQ(softmax_row_with_sink(x, -inf, w, share), RowIssue::None);  // no sink
  EXPECT_EQ(share, 0.0f);
  EXPECT_NEAR(w.sum(), 1.0f, 1e-6f);
}

TEST(Sinks, RandomEditsWithSinksMatchAFullRecompute) {
  for (std::uint32_t seed : {31u, 32u, 33u}) {
    attention_lab::test::RandomOptions o;
    o.T = 9;
    o.heads = 3;
    o.mask = static_cast<MaskKind>(seed % 4);
    Scenario s = attention_lab::test::random_scenario(seed, o);
    s.use_sinks = true;
    s.sinks = (Matrix(1, 3) << 0.5f, -0.5f, 1.5f).finished();
    EXPECT_TRUE(attention_lab::test::random_edits_match_full_recompute(s, seed, 80));
  }
}
