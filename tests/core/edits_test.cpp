// Each kind of edit: what it changes, what it refuses (with a message that
// names the thing), and that a refused edit changes nothing.

#include "attention_lab/document.h"
#include "attention_lab/edit.h"
#include "attention_lab/limits.h"

#include "test_support.h"
#include "unit_support.h"

#include <limits>

using namespace attention_lab;
using attention_lab::test::scenarios_identical;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
using attention_lab::test::kInf;

using attention_lab::test::in;

// Applies an edit that must fail; checks the message mentions `needle` and
// that the scenario is untouched.
void expect_refused(const Scenario& start, const Edit& edit, const std::string& needle) {
  Scenario s = start;
  const Applied a = apply_edit(s, edit);
  EXPECT_NE(a.error, "") << describe(edit);
  EXPECT_NE(a.error.find(needle), std::string::npos) << "'" << a.error << "' should mention '" << needle << "'";
  EXPECT_TRUE(scenarios_identical(s, start)) << describe(edit);
}

}  // namespace

// [SECTION] Cells

TEST(Edits, SetCellChangesExactlyOneInputCell) {
  Document doc(attention_lab::test::preset("book"));
  ASSERT_EQ(doc.apply(SetCell{in(StageKind::X), 1, 2, 0.125f}), "");
  EXPECT_EQ(doc.scenario().X(1, 2), 0.125f);
  Scenario expected = attention_lab::test::preset("book");
  expected.X(1, 2) = 0.125f;
  EXPECT_TRUE(scenarios_identical(doc.scenario(), expected));
  EXPECT_EQ(doc.stage(in(StageKind::X))(1, 2), 0.125f);
}

TEST(Edits, SetCellOutsideTheMatrixIsRefusedWithItsShape) {
  const Scenario s = attention_lab::test::preset("book");  // X is 6 x 3
  expect_refused(s, SetCell{in(StageKind::X), 6, 0, 1.0f}, "X[6][0]: expected a cell within 6 x 3, found row 6");
  expect_refused(s, SetCell{in(StageKind::X), 0, -1, 1.0f}, "column -1");
  expect_refused(s, SetCell{in(StageKind::W_q), 0, 2, 1.0f}, "W_q[0][2]");
}

TEST(Edits, SetCellRefusesNonFiniteValues) {
  const Scenario s = attention_lab::test::preset("book");
  expect_refused(s, SetCell{in(StageKind::W_k), 0, 0, kNaN}, "W_k[0][0]: expected a finite number, found nan");
  expect_refused(s, SetCell{in(StageKind::X), 0, 0, kInf}, "expected a finite number, found inf");
  expect_refused(s, SetCell{in(StageKind::X), 0, 0, -kInf}, "found -inf");
}

TEST(Edits, SetCellOnAComputedStageSaysToPinIt) {
  const Scenario s = attention_lab::test::preset("book");
  expect_refused(s, SetCell{StageId::of_head(StageKind::Scores, 0), 0, 0, 1.0f}, "pin it instead");
  expect_refused(s, SetCell{in(StageKind::Output), 0, 0, 1.0f}, "output");
}

TEST(Edits, SetCellOnAnInactiveInputSaysHowToTurnItOn) {
  const Scenario s = attention_lab::test::preset("book");  // no biases, no W_o
  expect_refused(s, SetCell{in(StageKind::b_q), 0, 0, 1.0f}, "b_q: the biases are off");
  expect_refused(s, SetCell{in(StageKind::W_o), 0, 0, 1.0f}, "W_o: the output projection W_o is off");
  expect_refused(s, SetCell{in(StageKind::b_o), 0, 0, 1.0f}, "b_o: the output bias b_o is off");
}

TEST(Edits, SetCellOnABiasAddsToEveryToken) {
  Document doc(attention_lab::test::preset("naive"));  // biases on
  const Matrix q = doc.stage(in(StageKind::Q));
  const float old = doc.scenario().b_q(0, 1);
  ASSERT_EQ(doc.apply(SetCell{in(StageKind::b_q), 0, 1, old + 1.0f}), "");
  const Matrix diff = doc.stage(in(StageKind::Q)) - q;
  for (Eigen::Index r = 0; r < diff.rows(); ++r) {
    EXPECT_NEAR(diff(r, 1), 1.0f, 1e-6f);
    EXPECT_EQ(diff(r, 0), 0.0f);
  }
}

// [SECTION] The mask

TEST(Edits, EditingAMaskCellSwitchesToACustomMaskStartingFromTheShownOne) {
  Document doc(attention_lab::test::preset("fat-cat"));  // causal
  ASSERT_EQ(doc.apply(SetCell{in(StageKind::Mask), 0, 1, 1.0f}), "");
  EXPECT_EQ(doc.scenario().mask_kind, MaskKind::Custom);
  Matrix expected = Matrix::Zero(7, 7);
  expected.triangularView<Eigen::Lower>().setOnes();
  expected(0, 1) = 1.0f;
  EXPECT_EQ(doc.scenario().custom_mask.get(), expected);
  EXPECT_EQ(doc.stage(in(StageKind::Mask)), expected);
  EXPECT_GT(doc.stage(StageId::of_head(StageKind::Weights, 0))(0, 1), 0.0f);
}

TEST(Edits, TogglingACustomMaskCellIsUndoneByOneCellNotACopyOfTheMask) {
  Scenario s = attention_lab::test::preset("fat-cat");  // causal
  const Applied first = apply_edit(s, SetCell{in(StageKind::Mask), 0, 1, 1.0f});
  ASSERT_EQ(first.error, "");
  // leaving causal: the inverse brings the kind back
  ASSERT_TRUE(std::holds_alternative<SetMask>(first.inverse));
  EXPECT_EQ(std::get<SetMask>(first.inverse).kind, MaskKind::Causal);
  const Applied second = apply_edit(s, SetCell{in(StageKind::Mask), 3, 2, 0.0f});
  ASSERT_EQ(second.error, "");
  ASSERT_TRUE(std::holds_alternative<SetCell>(second.inverse));
  const SetCell back = std::get<SetCell>(second.inverse);
  EXPECT_EQ(back.row, 3);
  EXPECT_EQ(back.col, 2);
  EXPECT_EQ(back.value, 1.0f);
  // undoing both returns to the causal mask exactly
  ASSERT_EQ(apply_edit(s, second.inverse).error, "");
  ASSERT_EQ(apply_edit(s, first.inverse).error, "");
  EXPECT_EQ(s.mask_kind, MaskKind::Causal);
  EXPECT_TRUE(scenarios_identical(s, attention_lab::test::preset("fat-cat")));
}

TEST(Edits, MaskCellsMustBeZeroOrOne) {
  const Scenario s = attention_lab::test::preset("fat-cat");
  expect_refused(s, SetCell{in(StageKind::Mask), 0, 1, 0.5f}, "mask[0][1]: expected 0 or 1, found 0.5");
  expect_refused(s, SetCell{in(StageKind::Mask), 0, 1, kNaN}, "expected 0 or 1");
  expect_refused(s, SetCell{in(StageKind::Mask), 7, 0, 1.0f}, "expected a cell within 7 x 7");
}

TEST(Edits, SetMaskChecksTheCustomMatrix) {
  const Scenario s = attention_lab::test::preset("book");  // T = 6
  expect_refused(s, SetMask{MaskKind::Custom, Matrix::Ones(5, 6)}, "mask: expected 6 x 6 (T x T), found 5 x 6");
  Matrix two = Matrix::Ones(6, 6);
  two(2, 2) = 2.0f;
  expect_refused(s, SetMask{MaskKind::Custom, two}, "mask: expected only 0 and 1");
}

TEST(Edits, SetMaskCustomWithoutAMatrixStartsFromTheCausalPattern) {
  Document doc(attention_lab::test::preset("book"));
  ASSERT_EQ(doc.apply(SetMask{MaskKind::Custom, std::nullopt}), "");
  EXPECT_EQ(doc.scenario().mask_kind, MaskKind::Custom);
  EXPECT_EQ(validate(doc.scenario()), "");
  EXPECT_EQ(doc.scenario().custom_mask.rows(), 6);
}

TEST(Edits, SetMatrixOnTheMaskMakesItCustom) {
  Document doc(attention_lab::test::preset("book"));
  Matrix m = Matrix::Identity(6, 6);
  ASSERT_EQ(doc.apply(SetMatrix{in(StageKind::Mask), m}), "");
  EXPECT_EQ(doc.scenario().mask_kind, MaskKind::Custom);
  EXPECT_EQ(doc.stage(StageId::of_head(StageKind::Weights, 0)), m);  // each token sees only itself
}

// [SECTION] Whole matrices, settings, labels

TEST(Edits, SetMatrixMustKeepTheShapeAndBeFinite) {
  const Scenario s = attention_lab::test::preset("book");
  expect_refused(s, SetMatrix{in(StageKind::X), Matrix::Zero(6, 4)}, "X: expected 6 x 3, found 6 x 4");
  Matrix bad = Matrix::Zero(6, 3);
  bad(1, 1) = kNaN;
  expect_refused(s, SetMatrix{in(StageKind::X), bad}, "X: expected finite numbers only");
  expect_refused(s, SetMatrix{in(StageKind::Q), Matrix::Zero(6, 2)}, "computed stages cannot be set");
  expect_refused(s, SetMatrix{in(StageKind::W_o), Matrix::Zero(2, 2)}, "W_o: the output projection W_o is off");
}

TEST(Edits, TemperatureMustBeFiniteAndPositive) {
  const Scenario s = attention_lab::test::preset("book");
  for (float t : {0.0f, -1.0f, kNaN, kInf, -0.0f})
    expect_refused(s, SetTemperature{t}, "temperature: expected a finite number greater than 0");
  Scenario ok = s;
  EXPECT_EQ(apply_edit(ok, SetTemperature{0.5f}).error, "");
  EXPECT_EQ(ok.temperature, 0.5f);
}

TEST(Edits, TogglesTurnFeaturesOnWithValidFreshValues) {
  Document doc(attention_lab::test::preset("book"));
  for (Toggle t : {Toggle::Bias, Toggle::OutputProjection, Toggle::OutputBias}) {
    ASSERT_EQ(doc.apply(SetToggle{t, true}), "") << to_string(t);
    EXPECT_EQ(validate(doc.scenario()), "") << to_string(t);
  }
  EXPECT_TRUE(doc.scenario().use_bias);
  EXPECT_TRUE(doc.scenario().use_w_o);
  EXPECT_TRUE(doc.scenario().use_output_bias);
  // W_o maps back to d_model by default
  EXPECT_EQ(doc.engine().dims().d_out, 3);
  EXPECT_EQ(doc.stage(in(StageKind::Output)).cols(), 3);
  ASSERT_EQ(doc.apply(SetToggle{Toggle::Scale, false}), "");
  EXPECT_EQ(doc.stage(StageId::of_head(StageKind::Scaled, 0)), doc.stage(StageId::of_head(StageKind::Scores, 0)));
}

TEST(Edits, TokenLabelsAreCheckedAndShown) {
  const Scenario s = attention_lab::test::preset("book");
  expect_refused(s, SetTokenLabel{6, "x"}, "token label: expected an index from 0 to 5, found 6");
  expect_refused(s, SetTokenLabel{-1, "x"}, "found -1");
  expect_refused(s, SetTokenLabel{0, std::string(limits::kMaxTokenLabelLength + 1, 'a')}, "expected at most 64");
  Scenario t = s;
  EXPECT_EQ(apply_edit(t, SetTokenLabel{1, "trip"}).error, "");
  EXPECT_EQ(t.token_label(1), "trip");
  EXPECT_EQ(apply_edit(t, SetTokenLabel{1, ""}).error, "");
  EXPECT_EQ(t.token_label(1), "t1");
}

TEST(Edits, FeatureNamesAreCheckedAndShown) {
  const Scenario s = attention_lab::test::preset("book");  // d_model = 3, no names
  expect_refused(s, SetFeatureLabel{3, "x"}, "feature name: expected an index from 0 to 2, found 3 (d_model = 3)");
  expect_refused(s, SetFeatureLabel{-1, "x"}, "found -1");
  expect_refused(s, SetFeatureLabel{0, std::string(limits::kMaxTokenLabelLength + 1, 'a')}, "expected at most 64");
  Scenario t = s;
  const Applied first = apply_edit(t, SetFeatureLabel{2, "colour"});
  ASSERT_EQ(first.error, "");
  EXPECT_EQ(t.features, (std::vector<std::string>{"", "", "colour"}));
  EXPECT_EQ(t.feature_label(2), "colour");
  EXPECT_EQ(t.feature_label(0), "0");
  // The first name's inverse is "no names", a list, not a copy of the scenario.
  const auto* inverse = std::get_if<SetLabels>(&first.inverse);
  ASSERT_NE(inverse, nullptr);
  EXPECT_EQ(inverse->which, LabelList::Features);
  EXPECT_TRUE(inverse->labels.empty());
  const Applied second = apply_edit(t, SetFeatureLabel{2, "hue"});
  ASSERT_EQ(second.error, "");
  const auto* one = std::get_if<SetFeatureLabel>(&second.inverse);
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(one->label, "colour");
  // Names change no number.
  EXPECT_FALSE(second.stale.everything());
  EXPECT_TRUE(second.stale.entries().empty());
}

TEST(Edits, SetLabelsReplacesAWholeListOrClearsIt) {
  const Scenario s = attention_lab::test::preset("book");
  expect_refused(s, SetLabels{LabelList::Tokens, {"a", "b"}}, "tokens: expected 6 labels (T) or none, found 2");
  expect_refused(s, SetLabels{LabelList::Features, {"a", "b", std::string(65, 'x')}},
                 "features[2]: expected at most 64 bytes (UTF-8), found 65");
  Scenario t = s;
  ASSERT_EQ(apply_edit(t, SetLabels{LabelList::Tokens, {}}).error, "");
  EXPECT_EQ(t.token_label(1), "t1");
  ASSERT_EQ(apply_edit(t, SetLabels{LabelList::Features, {"x", "y", "z"}}).error, "");
  EXPECT_EQ(t.feature_label(1), "y");
}

TEST(Edits, ReplaceScenarioRefusesAnInvalidOne) {
  Scenario bad = attention_lab::test::preset("book");
  bad.heads = 0;
  expect_refused(attention_lab::test::preset("book"), ReplaceScenario{std::make_shared<const Scenario>(bad)},
                 "heads: expected at least 1, found 0");
  expect_refused(attention_lab::test::preset("book"), ReplaceScenario{nullptr}, "no scenario given");
}

TEST(Edits, ReplaceScenarioSwapsEverything) {
  Document doc(attention_lab::test::preset("book"));
  const Scenario next = attention_lab::test::preset("multi-head");
  ASSERT_EQ(doc.apply(ReplaceScenario{std::make_shared<const Scenario>(next), "load preset"}), "");
  EXPECT_TRUE(scenarios_identical(doc.scenario(), next));
  EXPECT_EQ(doc.engine().dims().heads, 4);
  EXPECT_EQ(doc.undo_label(), "load preset");
}

// [SECTION] Descriptions

TEST(Edits, DescriptionsReadLikeMenuItems) {
  EXPECT_EQ(describe(SetCell{in(StageKind::X), 2, 1, 0.5f}), "X[2][1] = 0.5");
  EXPECT_EQ(describe(SetDimension{Dimension::heads, 4}), "heads = 4");
  EXPECT_EQ(describe(SetPin{{StageId::of_head(StageKind::Scores, 0), 2, 3}, 5.0f}), "pin scores[0][2][3] = 5");
  EXPECT_EQ(describe(SetPin{{StageId::of_head(StageKind::Scores, 0), 2, 3}, std::nullopt}), "unpin scores[0][2][3]");
  EXPECT_EQ(describe(SetPins{}), "clear pins");
  EXPECT_EQ(describe(SetMask{MaskKind::Causal, std::nullopt}), "mask = causal");
  EXPECT_EQ(describe(SetToggle{Toggle::OutputProjection, false}), "W_o off");
  EXPECT_EQ(describe(SetTemperature{0.25f}), "temperature = 0.25");
  EXPECT_EQ(describe(SetTokenLabel{1, "cat"}), "token 1 = \"cat\"");
  EXPECT_EQ(describe(SetFeatureLabel{0, "size"}), "feature 0 = \"size\"");
  EXPECT_EQ(describe(SetLabels{LabelList::Features, {}}), "clear feature names");
}

TEST(Edits, ARefusedEditLeavesTheDocumentAlone) {
  Document doc(attention_lab::test::preset("fat-cat"));
  const Scenario before = doc.scenario();
  EXPECT_NE(doc.apply(SetCell{in(StageKind::X), 99, 0, 1.0f}), "");
  EXPECT_NE(doc.apply(SetDimension{Dimension::T, 0}), "");
  EXPECT_FALSE(doc.can_undo());
  EXPECT_FALSE(doc.modified());
  EXPECT_TRUE(scenarios_identical(doc.scenario(), before));
}
