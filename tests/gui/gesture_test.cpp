// Widget gestures become edits: the edit a drag, click or typed number makes,
// and what it really does to a Document, undo included.

#include "logic/gesture.h"
#include "gui_test_support.h"

#include "attention_lab/document.h"
#include "attention_lab/presets.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace attention_lab;
using namespace attention_lab::gui;
using namespace attention_lab::gui_test;

namespace {



}  // namespace

// [SECTION] Which edit a gesture makes

TEST(Gesture, SettingAnInputCellIsARealEdit) {
  for (const StageKind k : {StageKind::X, StageKind::W_q, StageKind::W_k, StageKind::W_v, StageKind::W_o,
                            StageKind::b_q, StageKind::b_o}) {
    const Edit e = cell_edit(in(k), 1, 2, 0.5f);
    const auto* cell = std::get_if<SetCell>(&e);
    ASSERT_NE(cell, nullptr) << kind_name(k);
    EXPECT_EQ(cell->target, in(k));
    EXPECT_EQ(cell->row, 1);
    EXPECT_EQ(cell->col, 2);
    EXPECT_EQ(cell->value, 0.5f);
  }
}

TEST(Gesture, SettingAComputedCellPinsIt) {
  for (const StageId id : {in(StageKind::Q), head(StageKind::HeadK, 1), head(StageKind::Scores, 2),
                           head(StageKind::Scaled, 0), head(StageKind::Masked, 0), head(StageKind::Weights, 3),
                           head(StageKind::Context, 1), in(StageKind::Output)}) {
    const Edit e = cell_edit(id, 3, 1, -2.0f);
    const auto* pin = std::get_if<SetPin>(&e);
    ASSERT_NE(pin, nullptr) << to_string(id);
    EXPECT_EQ(pin->key, (PinKey{id, 3, 1}));
    ASSERT_TRUE(pin->value.has_value());
    EXPECT_EQ(*pin->value, -2.0f);
  }
}

TEST(Gesture, ClickingAMaskCellFlipsIt) {
  for (const auto& [current, flipped] : {std::pair{0.0f, 1.0f}, std::pair{1.0f, 0.0f}}) {
    const Edit e = mask_toggle(2, 5, current);
    const auto* cell = std::get_if<SetCell>(&e);
    ASSERT_NE(cell, nullptr);
    EXPECT_EQ(cell->target, in(StageKind::Mask));
    EXPECT_EQ(cell->row, 2);
    EXPECT_EQ(cell->col, 5);
    EXPECT_EQ(cell->value, flipped);
  }
}

// [SECTION] Dragging

TEST(Gesture, DraggingUpIncreasesAndDownDecreases) {
  for (const float start : {-50.0f, -1.0f, -0.3f, 0.0f, 0.004f, 0.5f, 2.0f, 1000.0f}) {
    for (const bool fine : {false, true}) {
      EXPECT_GT(dragged_value(start, 1.0f, fine), start) << start << (fine ? " fine" : "");
      EXPECT_GT(dragged_value(start, 40.0f, fine), dragged_value(start, 1.0f, fine)) << start;
      EXPECT_LT(dragged_value(start, -1.0f, fine), start) << start << (fine ? " fine" : "");
      EXPECT_LT(dragged_value(start, -40.0f, fine), dragged_value(start, -1.0f, fine)) << start;
    }
  }
}

TEST(Gesture, ShiftMakesTheDragTenTimesFiner) {
  for (const float start : {0.0f, 0.5f, -3.0f, 20.0f}) {
    const float coarse = dragged_value(start, 20.0f, false) - start;
    const float fine = dragged_value(start, 20.0f, true) - start;
    EXPECT_NEAR(fine * 10.0f, coarse, std::fabs(coarse) * 1e-3f) << start;
  }
}

TEST(Gesture, DraggingFromZeroMovesTheValue) {
  EXPECT_NEAR(dragged_value(0.0f, 10.0f, false), 0.05f, 1e-6f);
  EXPECT_NEAR(dragged_value(0.0f, -10.0f, false), -0.05f, 1e-6f);
  EXPECT_NEAR(dragged_value(0.0f, 1.0f, true), 0.0005f, 1e-7f);
}

TEST(Gesture, TheDragStepFollowsTheSizeOfTheValue) {
  // 1 % of the magnitude per pixel: 100 moves by 1 per pixel, 0.5 by the 0.005 minimum
  EXPECT_NEAR(dragged_value(100.0f, 3.0f, false), 103.0f, 1e-3f);
  EXPECT_NEAR(dragged_value(0.5f, 2.0f, false), 0.51f, 1e-6f);
}

TEST(Gesture, DraggingAHugeValueStaysFinite) {
  // Rounding to 0.001 must not overflow: v / 0.001 is beyond float for v ≳ 3.4e35.
  for (const float start : {1e30f, 3e36f, -3e36f, 1e38f}) {
    const float up = dragged_value(start, 1.0f, false);
    EXPECT_TRUE(std::isfinite(up)) << start;
    EXPECT_GT(up, start) << start;
    EXPECT_TRUE(std::isfinite(dragged_value(start, -1.0f, true))) << start;
  }
}

// [SECTION] Typing a number

TEST(Gesture, TypedNumbersAreParsed) {
  EXPECT_EQ(parse_typed_value("0.5"), 0.5f);
  EXPECT_EQ(parse_typed_value("-1e-3"), -1e-3f);
  EXPECT_EQ(parse_typed_value("3"), 3.0f);
  EXPECT_EQ(parse_typed_value(" 2.25 "), 2.25f);
}

TEST(Gesture, TheTrueMinusSignTheAppPrintsIsAccepted) {
  EXPECT_EQ(parse_typed_value("\xE2\x88\x92" "2"), -2.0f);  // "−2", U+2212
  EXPECT_EQ(parse_typed_value("−0.31"), -0.31f);
}

TEST(Gesture, ADecimalCommaIsAccepted) {
  EXPECT_EQ(parse_typed_value("1,5"), 1.5f);
  EXPECT_EQ(parse_typed_value("−0,25"), -0.25f);
}

TEST(Gesture, TextThatIsNotOneFiniteNumberIsRefused) {
  for (const char* text : {"", " ", "abc", "inf", "-inf", "−inf", "nan", "NaN", "1.2.3", "1e", "2x", "1,000.5",
                           "1e99"})
    EXPECT_FALSE(parse_typed_value(text).has_value()) << "'" << text << "'";
}

// [SECTION] Applying what gestures make

TEST(Gesture, ADraggedInputCellChangesTheDocumentAndUndoRestoresIt) {
  Document doc = open("fat-cat");
  const float before = doc.stage(in(StageKind::X))(2, 1);
  const Matrix q_before = doc.stage(in(StageKind::Q));
  const std::uint64_t gesture = doc.begin_gesture();
  for (const float up : {3.0f, 10.0f, 25.0f})  // one drag, several frames
    ASSERT_EQ(doc.apply(cell_edit(in(StageKind::X), 2, 1, dragged_value(before, up, false)), gesture), "");
  EXPECT_EQ(doc.stage(in(StageKind::X))(2, 1), dragged_value(before, 25.0f, false));
  EXPECT_NE(Matrix(doc.stage(in(StageKind::Q)).row(2)), Matrix(q_before.row(2)));  // recomputed downstream
  ASSERT_TRUE(doc.undo());  // the whole drag in one step
  EXPECT_EQ(doc.stage(in(StageKind::X))(2, 1), before);
  EXPECT_EQ(Matrix(doc.stage(in(StageKind::Q))), q_before);
  EXPECT_FALSE(doc.can_undo());
}

TEST(Gesture, ATypedValueOnAComputedCellPinsItAndUndoUnpinsIt) {
  Document doc = open("book");
  const StageId scores = head(StageKind::Scores, 0);
  const float computed = doc.stage(scores)(1, 4);
  const auto typed = parse_typed_value("−2,5");
  ASSERT_TRUE(typed);
  ASSERT_EQ(doc.apply(cell_edit(scores, 1, 4, *typed)), "");
  EXPECT_EQ(doc.stage(scores)(1, 4), -2.5f);
  ASSERT_EQ(doc.scenario().pins.size(), 1u);
  EXPECT_EQ(doc.scenario().pins.begin()->first, (PinKey{scores, 1, 4}));
  EXPECT_EQ(doc.scenario().pins.begin()->second, -2.5f);
  ASSERT_TRUE(doc.undo());
  EXPECT_TRUE(doc.scenario().pins.empty());
  EXPECT_EQ(doc.stage(scores)(1, 4), computed);
}

TEST(Gesture, DraggingAHeadsQueryViewPinsTheCellOfQ) {
  Document doc = open("multi-head");  // d_k = 4
  const float start = doc.stage(head(StageKind::HeadQ, 1))(0, 2);
  const float dragged = dragged_value(start, 12.0f, true);
  ASSERT_EQ(doc.apply(cell_edit(head(StageKind::HeadQ, 1), 0, 2, dragged)), "");
  EXPECT_EQ(doc.stage(head(StageKind::HeadQ, 1))(0, 2), dragged);
  EXPECT_EQ(doc.stage(in(StageKind::Q))(0, 4 + 2), dragged);
  ASSERT_TRUE(doc.undo());
  EXPECT_EQ(doc.stage(head(StageKind::HeadQ, 1))(0, 2), start);
  EXPECT_TRUE(doc.scenario().pins.empty());
}

TEST(Gesture, ClickingAMaskCellLetsATokenLookAheadAndUndoForbidsItAgain) {
  Document doc = open("fat-cat");  // causal: 'the' (0) may not look at 'fat' (1)
  const StageId mask = in(StageKind::Mask);
  const StageId masked = head(StageKind::Masked, 0);
  ASSERT_EQ(doc.stage(mask)(0, 1), 0.0f);
  ASSERT_EQ(doc.stage(masked)(0, 1), -std::numeric_limits<float>::infinity());
  ASSERT_EQ(doc.apply(mask_toggle(0, 1, doc.stage(mask)(0, 1))), "");
  EXPECT_EQ(doc.stage(mask)(0, 1), 1.0f);
  EXPECT_EQ(doc.stage(masked)(0, 1), doc.stage(head(StageKind::Scaled, 0))(0, 1));
  EXPECT_GT(doc.stage(head(StageKind::Weights, 0))(0, 1), 0.0f);
  // a second click flips it back
  ASSERT_EQ(doc.apply(mask_toggle(0, 1, doc.stage(mask)(0, 1))), "");
  EXPECT_EQ(doc.stage(mask)(0, 1), 0.0f);
  ASSERT_TRUE(doc.undo());
  ASSERT_TRUE(doc.undo());
  EXPECT_EQ(doc.scenario().mask_kind, MaskKind::Causal);
  EXPECT_EQ(doc.stage(masked)(0, 1), -std::numeric_limits<float>::infinity());
}

// The wheel: a gesture keeps the owner it began with.
TEST(WheelGesture, AWheelThatStartsOverAHeatmapZoomsIt) {
  WheelGesture g;
  EXPECT_TRUE(g.would_zoom(7, 10.0));
  EXPECT_TRUE(g.wheel(7, 10.0));
  EXPECT_TRUE(g.wheel(7, 10.1));
  EXPECT_EQ(g.owner(), 7u);
}

TEST(WheelGesture, AHeatmapThatSlidesUnderThePointerWhileThePageScrollsDoesNotZoom) {
  WheelGesture g;
  EXPECT_FALSE(g.wheel(WheelGesture::kPage, 10.0));  // scrolling the page
  EXPECT_FALSE(g.would_zoom(7, 10.05));              // a heatmap arrives under the pointer
  EXPECT_FALSE(g.wheel(7, 10.1));                    // the next notches still scroll
  EXPECT_FALSE(g.wheel(7, 10.35));
  EXPECT_FALSE(g.wheel(7, 10.6));                    // as long as the notches keep coming
}

TEST(WheelGesture, APauseStartsANewGestureOverWhateverIsUnderThePointer) {
  WheelGesture g;
  EXPECT_FALSE(g.wheel(WheelGesture::kPage, 10.0));
  EXPECT_FALSE(g.would_zoom(7, 10.2));
  EXPECT_TRUE(g.would_zoom(7, 10.0 + WheelGesture::kPause + 0.01));
  EXPECT_TRUE(g.wheel(7, 10.0 + WheelGesture::kPause + 0.01));
}

TEST(WheelGesture, AZoomDoesNotPassToAnotherHeatmapOrThePageMidGesture) {
  WheelGesture g;
  EXPECT_TRUE(g.wheel(7, 10.0));
  EXPECT_FALSE(g.would_zoom(9, 10.1));  // the pointer moved onto another heatmap
  EXPECT_FALSE(g.wheel(9, 10.1));
  EXPECT_TRUE(g.would_zoom(7, 10.2));   // and back
  EXPECT_TRUE(g.wheel(7, 10.2));
}

TEST(WheelGesture, TheHeatmapAndThePageSeeingTheSameNotchCountOnce) {
  WheelGesture g;
  EXPECT_TRUE(g.wheel(7, 10.0));
  EXPECT_FALSE(g.wheel(WheelGesture::kPage, 10.0));  // the app reports the frame's notch too
  EXPECT_EQ(g.owner(), 7u);
  EXPECT_TRUE(g.wheel(7, 10.1));
}
