// Double-clicking a label renames what it names: the hit test over the label
// strips (scrolled and zoomed like the cells) and the token/feature it means.

#include "logic/label_hit.h"

#include "attention_lab/presets.h"

#include <gtest/gtest.h>

using namespace attention_lab;
using namespace attention_lab::gui;

namespace {

const Rect kCells{100, 50, 400, 350};  // 6 × 6 cells of 50 px, labels 60 px wide and 16 px high
const float kWhole[4] = {0, 0, 6, 6};

Scenario book() { return *make_preset("book"); }

}  // namespace

TEST(LabelHit, TheRowStripLeftOfTheCellsGivesTheRowUnderTheMouse) {
  const auto hit = label_at(kCells, 60, 16, kWhole, 6, 6, 70, 50 + 2 * 50 + 10);
  ASSERT_TRUE(hit);
  EXPECT_TRUE(hit->row);
  EXPECT_EQ(hit->index, 2);
}

TEST(LabelHit, TheColumnStripAboveTheCellsGivesTheColumnUnderTheMouse) {
  const auto hit = label_at(kCells, 60, 16, kWhole, 6, 6, 100 + 5 * 50 + 1, 40);
  ASSERT_TRUE(hit);
  EXPECT_FALSE(hit->row);
  EXPECT_EQ(hit->index, 5);
}

TEST(LabelHit, TheCellsTheCornerAndBeyondTheStripsAreNoLabel) {
  EXPECT_FALSE(label_at(kCells, 60, 16, kWhole, 6, 6, 200, 200));  // a cell
  EXPECT_FALSE(label_at(kCells, 60, 16, kWhole, 6, 6, 80, 40));    // the corner above the row labels
  EXPECT_FALSE(label_at(kCells, 60, 16, kWhole, 6, 6, 30, 100));   // left of the row strip
  EXPECT_FALSE(label_at(kCells, 60, 16, kWhole, 6, 6, 200, 20));   // above the column strip
  EXPECT_FALSE(label_at(kCells, 60, 16, kWhole, 6, 6, 70, 360));   // below the last row
}

TEST(LabelHit, AZoomedViewMapsTheStripToTheVisibleRows) {
  const float zoomed[4] = {2, 3, 4, 5};  // columns 2–4, rows 3–5: 150 px a cell
  const auto row = label_at(kCells, 60, 16, zoomed, 6, 6, 70, 50 + 160);
  ASSERT_TRUE(row);
  EXPECT_EQ(row->index, 4);
  const auto col = label_at(kCells, 60, 16, zoomed, 6, 6, 100 + 10, 45);
  ASSERT_TRUE(col);
  EXPECT_EQ(col->index, 2);
}

TEST(LabelHit, TokenLabelsNameTokensOnEitherSideOfTheWeights) {
  const Scenario s = book();
  const StageInfo a = describe_stage(s, StageId::of_head(StageKind::Weights, 0));
  const auto row = label_name(a, false, LabelHit{true, 3});
  ASSERT_TRUE(row);
  EXPECT_EQ(row->kind, LabelKind::Token);
  EXPECT_EQ(row->index, 3);
  const auto col = label_name(a, false, LabelHit{false, 1});
  ASSERT_TRUE(col);
  EXPECT_EQ(col->kind, LabelKind::Token);
  EXPECT_EQ(col->index, 1);
}

TEST(LabelHit, FeatureLabelsAreTheColumnsOfXAndTheRowsOfTheWeights) {
  const Scenario s = book();
  const auto x = label_name(describe_stage(s, StageId::input(StageKind::X)), false, LabelHit{false, 2});
  ASSERT_TRUE(x);
  EXPECT_EQ(x->kind, LabelKind::Feature);
  EXPECT_EQ(x->index, 2);
  const auto w = label_name(describe_stage(s, StageId::input(StageKind::W_q)), false, LabelHit{true, 1});
  ASSERT_TRUE(w);
  EXPECT_EQ(w->kind, LabelKind::Feature);
}

TEST(LabelHit, IndexLabelsNameNothingToRename) {
  const Scenario s = book();
  EXPECT_FALSE(label_name(describe_stage(s, StageId::input(StageKind::Q)), false, LabelHit{false, 0}));
  EXPECT_FALSE(label_name(describe_stage(s, StageId::input(StageKind::W_q)), false, LabelHit{false, 0}));
}

TEST(LabelHit, ATransposedDrawingSwapsTheSides) {
  const Scenario s = book();
  // Kᵀ: its rows are K's columns (indices), its columns K's rows (tokens).
  const StageInfo k = describe_stage(s, StageId::input(StageKind::K));
  EXPECT_FALSE(label_name(k, true, LabelHit{true, 0}));
  const auto col = label_name(k, true, LabelHit{false, 4});
  ASSERT_TRUE(col);
  EXPECT_EQ(col->kind, LabelKind::Token);
  EXPECT_EQ(col->index, 4);
  EXPECT_FALSE(label_name(k, true, LabelHit{false, 6}));  // beyond the tokens
}

TEST(LabelHit, CrossAttentionKeyLabelsNameTheRowsOfXkv) {
  const Scenario s = *make_preset("translate");  // 4 French queries over 5 English keys
  const StageInfo a = describe_stage(s, StageId::of_head(StageKind::Weights, 0));
  const auto row = label_name(a, false, LabelHit{true, 1});
  ASSERT_TRUE(row);
  EXPECT_EQ(row->kind, LabelKind::Token);
  const auto col = label_name(a, false, LabelHit{false, 4});
  ASSERT_TRUE(col);
  EXPECT_EQ(col->kind, LabelKind::KeyToken);
  EXPECT_EQ(col->index, 4);
  EXPECT_FALSE(label_name(a, false, LabelHit{false, 5}));  // past T_k
}
