// Softmax up close: one row step by step, against the engine's own stages and
// against values worked out by hand, and the same row at other temperatures.

#include "attention_lab/softmax_breakdown.h"

#include "test_support.h"
#include "unit_support.h"

#include <cmath>
#include <limits>

using namespace attention_lab;
using attention_lab::test::preset;

namespace {

using attention_lab::test::kInf;

RowVector engine_row(const Document& doc, StageKind kind, int head, int row) {
  return doc.stage(StageId::of_head(kind, head)).row(row);
}

}  // namespace

TEST(SoftmaxBreakdown, TheRowOfCatMatchesTheHandWorkedNumbers) {
  const Document doc(preset("fat-cat"));  // causal, d_k = 4
  const SoftmaxBreakdown b = softmax_breakdown(doc, 0, 2);
  ASSERT_EQ(b.error, "");
  EXPECT_NEAR(b.scores[1], 2.91, 1e-5);
  EXPECT_DOUBLE_EQ(b.scale_divisor, 2.0);
  EXPECT_DOUBLE_EQ(b.temperature, 1.0);
  EXPECT_DOUBLE_EQ(b.divisor, 2.0);
  EXPECT_NEAR(b.scaled[1], 1.455, 1e-5);
  EXPECT_EQ(b.mask, (RowVector(7) << 1, 1, 1, 0, 0, 0, 0).finished());
  EXPECT_EQ(b.masked[3], -kInf);
  EXPECT_NEAR(b.max, 1.455, 1e-5);
  EXPECT_NEAR(b.shifted[0], 0.38795 - 1.455, 1e-5);
  EXPECT_EQ(b.shifted[1], 0.0f);
  EXPECT_EQ(b.shifted[6], -kInf);
  EXPECT_NEAR(b.exps[0], std::exp(0.38795 - 1.455), 1e-6);
  EXPECT_EQ(b.exps[1], 1.0f);
  EXPECT_EQ(b.exps[4], 0.0f);
  EXPECT_NEAR(b.sum, 1.62878, 1e-5);
  EXPECT_NEAR(b.weights[1], 1.0 / b.sum, 1e-7);
  EXPECT_NEAR(b.weights.sum(), 1.0f, 1e-6);
  EXPECT_EQ(b.allowed, 3);
  EXPECT_NEAR(b.max_entropy, std::log(3.0), 1e-12);
  double h = 0.0;
  for (int j = 0; j < 3; ++j) {
    const auto w = static_cast<double>(b.weights[j]);
    h -= w * std::log(w);
  }
  EXPECT_NEAR(b.entropy, h, 1e-9);
  EXPECT_NEAR(b.entropy, 0.9328, 1e-4);
  EXPECT_EQ(b.issue, RowIssue::None);
  EXPECT_FALSE(b.pinned());
}

TEST(SoftmaxBreakdown, EveryRowOfEveryHeadMatchesTheEngine) {
  for (const char* name : {"fat-cat", "book", "naive", "multi-head"}) {
    const Document doc(preset(name));
    for (int h = 0; h < doc.scenario().heads; ++h)
      for (int r = 0; r < doc.scenario().T(); ++r) {
        const SoftmaxBreakdown b = softmax_breakdown(doc, h, r);
        ASSERT_EQ(b.error, "");
        EXPECT_EQ(b.scores, engine_row(doc, StageKind::Scores, h, r)) << name;
        EXPECT_EQ(b.scaled, engine_row(doc, StageKind::Scaled, h, r)) << name;
        EXPECT_EQ(b.masked, engine_row(doc, StageKind::Masked, h, r)) << name;
        EXPECT_EQ(b.engine_weights, engine_row(doc, StageKind::Weights, h, r)) << name;
        EXPECT_TRUE(attention_lab::test::matrices_near(b.weights, b.engine_weights, 1e-6, 1e-7, name));
        // The same steps as softmax_row.
        RowVector expected(b.masked.size());
        EXPECT_EQ(softmax_row(b.masked, expected), b.issue);
        EXPECT_TRUE(attention_lab::test::matrices_near(b.weights, expected, 1e-6, 1e-7, name));
      }
  }
}

TEST(SoftmaxBreakdown, WithoutScalingTheDivisorIsTheTemperatureAlone) {
  Document doc(preset("fat-cat"));
  ASSERT_EQ(doc.apply(SetToggle{Toggle::Scale, false}), "");
  ASSERT_EQ(doc.apply(SetTemperature{0.5f}), "");
  const SoftmaxBreakdown b = softmax_breakdown(doc, 0, 2);
  EXPECT_DOUBLE_EQ(b.scale_divisor, 1.0);
  EXPECT_DOUBLE_EQ(b.divisor, 0.5);
  EXPECT_NEAR(b.scaled[1], 2.91 / 0.5, 1e-4);
}

TEST(SoftmaxBreakdown, TheFirstRowOfACausalMaskPutsEverythingOnItself) {
  const Document doc(preset("fat-cat"));
  const SoftmaxBreakdown b = softmax_breakdown(doc, 0, 0);
  EXPECT_EQ(b.weights[0], 1.0f);
  EXPECT_EQ(b.sum, 1.0);
  EXPECT_EQ(b.entropy, 0.0);
  EXPECT_EQ(b.max_entropy, 0.0);
  EXPECT_EQ(b.allowed, 1);
}

TEST(SoftmaxBreakdown, ARowWithNoAllowedKeyHasZeroWeightsAndSaysWhy) {
  Document doc(preset("fat-cat"));
  ASSERT_EQ(doc.apply(SetCell{StageId::input(StageKind::Mask), 0, 0, 0.0f}), "");
  const SoftmaxBreakdown b = softmax_breakdown(doc, 0, 0);
  EXPECT_EQ(b.issue, RowIssue::NoAllowedKey);
  EXPECT_EQ(b.max, -kInf);
  EXPECT_EQ(b.weights, RowVector::Zero(7));
  EXPECT_EQ(b.exps, RowVector::Zero(7));
  EXPECT_EQ(b.sum, 0.0);
  EXPECT_EQ(b.allowed, 0);
  EXPECT_EQ(b.entropy, 0.0);
  EXPECT_EQ(b.weights, b.engine_weights);
}

TEST(SoftmaxBreakdown, AHeadOrRowThatDoesNotExistIsAnError) {
  const Document doc(preset("multi-head"));
  EXPECT_EQ(softmax_breakdown(doc, 4, 0).error, "head: expected 0 to 3, found 4");
  EXPECT_EQ(softmax_breakdown(doc, -1, 0).error, "head: expected 0 to 3, found -1");
  EXPECT_EQ(softmax_breakdown(doc, 0, 8).error, "row: expected 0 to 7, found 8");
  const SoftmaxBreakdown b = softmax_breakdown(doc, 0, 8);
  EXPECT_EQ(b.scores.size(), 0);
  EXPECT_EQ(weights_at_temperature(b, 1.0).size(), 0);
}

TEST(SoftmaxBreakdown, AtTheDocumentsTemperatureThePreviewIsTheEnginesRow) {
  for (const char* name : {"fat-cat", "multi-head"}) {
    const Document doc(preset(name));
    for (int h = 0; h < doc.scenario().heads; ++h)
      for (int r = 0; r < doc.scenario().T(); ++r) {
        const SoftmaxBreakdown b = softmax_breakdown(doc, h, r);
        EXPECT_TRUE(attention_lab::test::matrices_near(weights_at_temperature(b, 1.0), b.engine_weights, 1e-6, 1e-7, name));
      }
  }
}

TEST(SoftmaxBreakdown, WithAlibiTheBiasIsItsOwnRowAndThePreviewKeepsIt) {
  Scenario s = preset("multi-head");
  s.alibi = true;
  const Document doc(s);
  for (int h = 0; h < s.heads; ++h)
    for (int r = 0; r < s.T(); ++r) {
      const SoftmaxBreakdown b = softmax_breakdown(doc, h, r);
      ASSERT_EQ(b.position_bias.size(), s.T());
      EXPECT_TRUE(attention_lab::test::matrices_near(
          b.position_bias, doc.stage(StageId::of_head(StageKind::PositionBias, h)).row(r), 0, 0, "bias"));
      EXPECT_TRUE(attention_lab::test::matrices_near(weights_at_temperature(b, 1.0), b.engine_weights, 1e-6, 1e-7,
                                                     "head " + std::to_string(h) + " row " + std::to_string(r)));
    }
  EXPECT_EQ(softmax_breakdown(Document(preset("multi-head")), 0, 3).position_bias.size(), 0);
}

TEST(SoftmaxBreakdown, ThePreviewAtATemperatureIsWhatTheEngineComputesThere) {
  for (const float tau : {0.05f, 0.3f, 2.0f, 7.5f}) {
    Document doc(preset("multi-head"));
    const SoftmaxBreakdown b = softmax_breakdown(doc, 2, 7);
    const RowVector preview = weights_at_temperature(b, static_cast<double>(tau));
    ASSERT_EQ(doc.apply(SetTemperature{tau}), "");
    EXPECT_TRUE(attention_lab::test::matrices_near(preview, engine_row(doc, StageKind::Weights, 2, 7), 1e-5, 1e-7,
                                                   "tau " + std::to_string(tau)));
  }
}

TEST(SoftmaxBreakdown, ThePreviewKeepsThePinsOfTheRow) {
  Document doc(preset("fat-cat"));
  const StageId scaled = StageId::of_head(StageKind::Scaled, 0);
  const StageId masked = StageId::of_head(StageKind::Masked, 0);
  const StageId weights = StageId::of_head(StageKind::Weights, 0);
  ASSERT_EQ(doc.apply(SetPin{PinKey{scaled, 4, 0}, 2.0f}), "");
  ASSERT_EQ(doc.apply(SetPin{PinKey{masked, 4, 6}, 0.5f}), "");  // a pin can reopen a masked cell
  ASSERT_EQ(doc.apply(SetPin{PinKey{weights, 4, 1}, 0.25f}), "");
  ASSERT_EQ(doc.apply(SetPin{PinKey{scaled, 3, 0}, 9.0f}), "");  // another row: not this one's
  const SoftmaxBreakdown b = softmax_breakdown(doc, 0, 4);
  EXPECT_TRUE(b.pinned());
  EXPECT_EQ(b.scaled_pins, (std::vector<std::pair<int, float>>{{0, 2.0f}}));
  EXPECT_EQ(b.masked_pins, (std::vector<std::pair<int, float>>{{6, 0.5f}}));
  EXPECT_EQ(b.weight_pins, (std::vector<std::pair<int, float>>{{1, 0.25f}}));
  EXPECT_EQ(b.allowed, 6);  // five keys of the causal row, and the reopened one
  EXPECT_TRUE(attention_lab::test::matrices_near(b.weights, b.engine_weights, 1e-6, 1e-7, "pinned row"));
  EXPECT_EQ(b.weights[1], 0.25f);
  const RowVector preview = weights_at_temperature(b, 0.4);
  ASSERT_EQ(doc.apply(SetTemperature{0.4f}), "");
  EXPECT_TRUE(attention_lab::test::matrices_near(preview, engine_row(doc, StageKind::Weights, 0, 4), 1e-5, 1e-7, "pinned"));
  EXPECT_EQ(preview[1], 0.25f);
}

TEST(SoftmaxBreakdown, LowerTemperaturesSharpenAndHigherOnesFlatten) {
  const Document doc(preset("fat-cat"));
  const SoftmaxBreakdown b = softmax_breakdown(doc, 0, 6);
  double last = -1.0;
  for (const double tau : {0.1, 0.3, 1.0, 3.0, 10.0}) {
    const RowVector w = weights_at_temperature(b, tau);
    EXPECT_NEAR(w.sum(), 1.0f, 1e-5);
    const double h = entropy_of(w);
    EXPECT_GT(h, last) << tau;
    last = h;
  }
  EXPECT_NEAR(last, std::log(7.0), 0.01);  // τ = 10: nearly uniform
  EXPECT_EQ(weights_at_temperature(b, 0.0).size(), 0);
  EXPECT_EQ(weights_at_temperature(b, -1.0).size(), 0);
}

TEST(SoftmaxBreakdown, EntropyIsZeroForOneKeyAndLogNForEvenWeights) {
  EXPECT_EQ(entropy_of((RowVector(3) << 0, 1, 0).finished()), 0.0);
  EXPECT_NEAR(entropy_of(RowVector::Constant(8, 0.125f)), std::log(8.0), 1e-7);
  EXPECT_NEAR(entropy_of((RowVector(2) << 0.5f, 0.5f).finished()), std::log(2.0), 1e-7);
}
