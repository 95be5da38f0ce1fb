// Pins override computed cells, survive upstream edits, flow downstream and
// go away cleanly.

#include "attention_lab/document.h"
#include "attention_lab/edit.h"
#include "attention_lab/softmax.h"

#include "test_support.h"
#include "unit_support.h"

using namespace attention_lab;
using attention_lab::test::scenarios_identical;

namespace {

using attention_lab::test::in;
using attention_lab::test::head;

// Softmax of one row, as the engine computes it.
RowVector softmax(const RowVector& x) {
  RowVector w(x.size());
  softmax_row(x, w);
  return w;
}

}  // namespace

TEST(Pins, APinnedScoreSurvivesAnEditOfX) {
  Document doc(attention_lab::test::preset("multi-head"));
  ASSERT_EQ(doc.apply(SetPin{{head(StageKind::Scores, 0), 2, 3}, 5.0f}), "");
  ASSERT_EQ(doc.apply(SetCell{in(StageKind::X), 2, 0, 0.5f}), "");
  ASSERT_EQ(doc.apply(SetCell{in(StageKind::X), 3, 4, -0.5f}), "");
  EXPECT_EQ(doc.stage(head(StageKind::Scores, 0))(2, 3), 5.0f);
  // the weights are the softmax of the pinned, scaled, masked row
  const Matrix scaled = doc.stage(head(StageKind::Scaled, 0));
  EXPECT_FLOAT_EQ(scaled(2, 3), 5.0f / 2.0f);  // d_k = 4
  const RowVector expected = softmax(doc.stage(head(StageKind::Masked, 0)).row(2));
  EXPECT_EQ(RowVector(doc.stage(head(StageKind::Weights, 0)).row(2)), expected);
  // multi-head is causal: (2, 3) is masked, so the pin shows in scores but gets no weight
  EXPECT_EQ(doc.stage(head(StageKind::Weights, 0))(2, 3), 0.0f);
}

TEST(Pins, APinnedScoreFlowsIntoWeightsContextAndOutput) {
  Document doc(attention_lab::test::preset("book"));  // no mask
  const Matrix context_before = doc.stage(head(StageKind::Context, 0));
  ASSERT_EQ(doc.apply(SetPin{{head(StageKind::Scores, 0), 1, 4}, 40.0f}), "");
  // 40 / √2 dwarfs the other scaled scores: row 1 attends (almost) only to token 4
  EXPECT_NEAR(doc.stage(head(StageKind::Weights, 0))(1, 4), 1.0f, 1e-6f);
  const auto v = doc.stage(head(StageKind::HeadV, 0));
  EXPECT_NEAR(doc.stage(head(StageKind::Context, 0))(1, 0), v(4, 0), 1e-5f);
  EXPECT_NEAR(doc.stage(in(StageKind::Output))(1, 1), v(4, 1), 1e-5f);
  // other rows are untouched
  EXPECT_EQ(Matrix(doc.stage(head(StageKind::Context, 0)).row(0)), Matrix(context_before.row(0)));
}

TEST(Pins, APinnedWeightIsUsedAsIsEvenIfRowsNoLongerSumToOne) {
  Document doc(attention_lab::test::preset("book"));
  ASSERT_EQ(doc.apply(SetPin{{head(StageKind::Weights, 0), 0, 0}, 2.0f}), "");
  const Matrix w = doc.stage(head(StageKind::Weights, 0));
  EXPECT_EQ(w(0, 0), 2.0f);
  const Matrix expected = w.row(0) * doc.stage(head(StageKind::HeadV, 0));
  EXPECT_TRUE(attention_lab::test::matrices_near(doc.stage(head(StageKind::Context, 0)).row(0), expected, 1e-6,
                                                 1e-7, "context row 0"));
}

TEST(Pins, PinsOnAHeadsQueryViewLandOnQ) {
  Document doc(attention_lab::test::preset("multi-head"));  // d_k = 4
  ASSERT_EQ(doc.apply(SetPin{{head(StageKind::HeadQ, 2), 1, 3}, 7.0f}), "");
  const PinKey stored{in(StageKind::Q), 1, 2 * 4 + 3};
  ASSERT_EQ(doc.scenario().pins.size(), 1u);
  EXPECT_EQ(doc.scenario().pins.begin()->first, stored);
  EXPECT_EQ(doc.stage(in(StageKind::Q))(1, 11), 7.0f);
  EXPECT_EQ(doc.stage(head(StageKind::HeadQ, 2))(1, 3), 7.0f);
  // and the scores of head 2 use it
  const Matrix expected = doc.stage(head(StageKind::HeadQ, 2)) * doc.stage(head(StageKind::HeadK, 2)).transpose();
  EXPECT_TRUE(attention_lab::test::matrices_near(doc.stage(head(StageKind::Scores, 2)), expected, 1e-6, 1e-6,
                                                 "scores[2]"));
}

TEST(Pins, PinsOnKeyAndValueViewsLandOnKAndV) {
  Document doc(attention_lab::test::preset("multi-head"));
  ASSERT_EQ(doc.apply(SetPin{{head(StageKind::HeadK, 1), 0, 0}, 1.0f}), "");
  ASSERT_EQ(doc.apply(SetPin{{head(StageKind::HeadV, 3), 2, 1}, -1.0f}), "");
  EXPECT_EQ(doc.scenario().pins.count({in(StageKind::K), 0, 4}), 1u);
  EXPECT_EQ(doc.scenario().pins.count({in(StageKind::V), 2, 13}), 1u);
  EXPECT_EQ(doc.stage(in(StageKind::V))(2, 13), -1.0f);
}

TEST(Pins, PinsOnConcatLandOnTheHeadsContext) {
  Document doc(attention_lab::test::preset("multi-head"));  // d_v = 4
  ASSERT_EQ(doc.apply(SetPin{{in(StageKind::Concat), 5, 9}, 3.0f}), "");
  EXPECT_EQ(doc.scenario().pins.count({head(StageKind::Context, 2), 5, 1}), 1u);
  EXPECT_EQ(doc.stage(head(StageKind::Context, 2))(5, 1), 3.0f);
  EXPECT_EQ(doc.stage(in(StageKind::Concat))(5, 9), 3.0f);
}

TEST(Pins, PinsOnInputsAreRefused) {
  Document doc(attention_lab::test::preset("book"));
  const std::string err = doc.apply(SetPin{{in(StageKind::X), 0, 0}, 1.0f});
  EXPECT_NE(err.find("X: inputs are edited, not pinned"), std::string::npos) << err;
}

TEST(Pins, PinsOutsideTheStageAreRefusedWithTheShape) {
  Document doc(attention_lab::test::preset("book"));  // T = 6, d_k = d_v = 2
  std::string err = doc.apply(SetPin{{head(StageKind::Scores, 0), 6, 0}, 1.0f});
  EXPECT_NE(err.find("pin on scores[0]: expected a cell within 6 x 6, found row 6"), std::string::npos) << err;
  err = doc.apply(SetPin{{head(StageKind::Scores, 1), 0, 0}, 1.0f});
  EXPECT_NE(err.find("pin: expected a head from 0 to 0, found 1"), std::string::npos) << err;
  err = doc.apply(SetPin{{head(StageKind::Context, 0), 0, 2}, 1.0f});
  EXPECT_NE(err.find("within 6 x 2"), std::string::npos) << err;
  err = doc.apply(SetPin{{head(StageKind::Scores, 0), 0, 0}, std::numeric_limits<float>::infinity()});
  EXPECT_NE(err.find("expected a finite number"), std::string::npos) << err;
  EXPECT_FALSE(doc.can_undo());
}

TEST(Pins, UnpinningRestoresTheComputedValue) {
  Document doc(attention_lab::test::preset("book"));
  const Matrix scores = doc.stage(head(StageKind::Scores, 0));
  const Matrix output = doc.stage(in(StageKind::Output));
  ASSERT_EQ(doc.apply(SetPin{{head(StageKind::Scores, 0), 0, 0}, 9.0f}), "");
  ASSERT_EQ(doc.apply(SetPin{{head(StageKind::Scores, 0), 0, 0}, std::nullopt}), "");
  EXPECT_TRUE(doc.scenario().pins.empty());
  EXPECT_EQ(doc.stage(head(StageKind::Scores, 0)), scores);
  EXPECT_EQ(doc.stage(in(StageKind::Output)), output);
}

TEST(Pins, ClearingAllPinsRestoresEveryComputedValue) {
  Document doc(attention_lab::test::preset("multi-head"));
  const Scenario original = doc.scenario();
  Engine before;
  before.recompute_all(original);
  ASSERT_EQ(doc.apply(SetPin{{head(StageKind::Scores, 0), 2, 1}, 5.0f}), "");
  ASSERT_EQ(doc.apply(SetPin{{in(StageKind::K), 3, 6}, -2.0f}), "");
  ASSERT_EQ(doc.apply(SetPin{{head(StageKind::Weights, 3), 4, 4}, 0.0f}), "");
  ASSERT_EQ(doc.apply(SetPin{{in(StageKind::Output), 1, 2}, 8.0f}), "");
  ASSERT_EQ(doc.apply(SetPins{}), "");
  EXPECT_TRUE(doc.scenario().pins.empty());
  // The K pin updated every softmax row of its head incrementally (rounding
  // differently from a fresh computation), so within 1e-5, not bit for bit.
  EXPECT_TRUE(attention_lab::test::engines_near(doc.engine(), before, 1e-5));
  EXPECT_EQ(doc.undo_label(), "clear pins");
  ASSERT_TRUE(doc.undo());
  EXPECT_EQ(doc.scenario().pins.size(), 4u);
  EXPECT_EQ(doc.stage(in(StageKind::Output))(1, 2), 8.0f);
}

TEST(Pins, SetPinsRefusesViewsAndBadCells) {
  Document doc(attention_lab::test::preset("book"));
  std::string err = doc.apply(SetPins{{{{head(StageKind::HeadQ, 0), 0, 0}, 1.0f}}});
  EXPECT_NE(err.find("Q[0]: cannot hold pins"), std::string::npos) << err;
  err = doc.apply(SetPins{{{{head(StageKind::Weights, 0), 0, 9}, 1.0f}}});
  EXPECT_NE(err.find("pin on weights[0]"), std::string::npos) << err;
  EXPECT_TRUE(doc.scenario().pins.empty());
}

TEST(Pins, PinsOutOfRangeAfterAShrinkAreDroppedAndUndoBringsThemBack) {
  Document doc(attention_lab::test::preset("fat-cat"));  // T = 7
  ASSERT_EQ(doc.apply(SetPin{{head(StageKind::Scores, 0), 6, 2}, 4.0f}), "");
  ASSERT_EQ(doc.apply(SetPin{{head(StageKind::Scores, 0), 1, 1}, 2.0f}), "");
  const Scenario pinned = doc.scenario();
  ASSERT_EQ(doc.apply(SetDimension{Dimension::T, 4}), "");
  ASSERT_EQ(doc.scenario().pins.size(), 1u);
  EXPECT_EQ(doc.scenario().pins.begin()->first, (PinKey{head(StageKind::Scores, 0), 1, 1}));
  EXPECT_EQ(doc.stage(head(StageKind::Scores, 0))(1, 1), 2.0f);
  ASSERT_TRUE(doc.undo());
  EXPECT_TRUE(scenarios_identical(doc.scenario(), pinned));
  EXPECT_EQ(doc.stage(head(StageKind::Scores, 0))(6, 2), 4.0f);
}

TEST(Pins, PinsOfARemovedHeadAreDropped) {
  Document doc(attention_lab::test::preset("multi-head"));
  ASSERT_EQ(doc.apply(SetPin{{head(StageKind::Weights, 3), 0, 0}, 0.5f}), "");
  ASSERT_EQ(doc.apply(SetPin{{in(StageKind::V), 0, 15}, 0.5f}), "");  // head 3's block of V
  ASSERT_EQ(doc.apply(SetPin{{head(StageKind::Weights, 0), 0, 0}, 0.5f}), "");
  ASSERT_EQ(doc.apply(SetDimension{Dimension::heads, 2}), "");
  ASSERT_EQ(doc.scenario().pins.size(), 1u);
  EXPECT_EQ(doc.scenario().pins.begin()->first.stage, head(StageKind::Weights, 0));
}

// A pin addresses a cell of a head: when d_k grows, the pin moves with its head block.
TEST(Pins, APinOnQStaysInItsHeadWhenDkChanges) {
  Document doc(attention_lab::test::preset("multi-head"));  // d_k = 4
  ASSERT_EQ(doc.apply(SetPin{{head(StageKind::HeadQ, 1), 2, 3}, 6.0f}), "");  // Q column 7
  ASSERT_EQ(doc.apply(SetDimension{Dimension::d_k, 5}), "");
  EXPECT_EQ(doc.stage(head(StageKind::HeadQ, 1))(2, 3), 6.0f);
  EXPECT_EQ(doc.scenario().pins.count({in(StageKind::Q), 2, 5 + 3}), 1u);
  ASSERT_EQ(doc.apply(SetDimension{Dimension::d_k, 3}), "");  // column 3 of the head is gone
  EXPECT_TRUE(doc.scenario().pins.empty());
}

TEST(Pins, APinOnALayerStageIgnoresTheHeadField) {
  Document doc(attention_lab::test::preset("book"));
  ASSERT_EQ(doc.apply(SetPin{{StageId{StageKind::Output, 3}, 0, 0}, 1.5f}), "");
  EXPECT_EQ(doc.stage(in(StageKind::Output))(0, 0), 1.5f);
  EXPECT_EQ(doc.scenario().pins.count({in(StageKind::Output), 0, 0}), 1u);
}

TEST(Pins, APinOnTheMaskedStageCanUnmaskACell) {
  Document doc(attention_lab::test::preset("fat-cat"));  // causal
  ASSERT_EQ(doc.apply(SetPin{{head(StageKind::Masked, 0), 0, 3}, 0.0f}), "");
  EXPECT_GT(doc.stage(head(StageKind::Weights, 0))(0, 3), 0.0f);
  EXPECT_NEAR(doc.stage(head(StageKind::Weights, 0)).row(0).sum(), 1.0f, 1e-6f);
}
