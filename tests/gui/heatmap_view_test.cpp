// Hit-testing, cell rectangles, zoom and pan of one heatmap: the screen point
// under the mouse and the cell the app edits must always agree.

#include "logic/heatmap_view.h"

#include <gtest/gtest.h>

using namespace attention_lab::gui;

namespace {

// A 5 × 7 matrix drawn 10 px per cell, away from the origin.
constexpr int kRows = 5, kCols = 7;
const Rect kRect{100.0f, 40.0f, 100.0f + 10.0f * kCols, 40.0f + 10.0f * kRows};

float centre_x(const Rect& r) { return (r.x0 + r.x1) * 0.5f; }
float centre_y(const Rect& r) { return (r.y0 + r.y1) * 0.5f; }

// Every cell whose centre is on screen hits itself; returns how many did.
int round_trip_every_visible_cell(const HeatmapView& view, int rows, int cols, bool transposed) {
  int visible = 0;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const Cell cell{r, c};
      const Rect on_screen = cell_rect(kRect, view, rows, cols, cell, transposed);
      const float x = centre_x(on_screen), y = centre_y(on_screen);
      const auto hit = hit_test(kRect, view, rows, cols, x, y, transposed);
      if (!kRect.contains(x, y)) {
        EXPECT_FALSE(hit.has_value()) << "cell " << r << "," << c << " is off screen";
        continue;
      }
      ++visible;
      EXPECT_EQ(hit, cell) << "cell " << r << "," << c << " at " << x << "," << y;
    }
  return visible;
}

}  // namespace

TEST(HeatmapView, AtZoomOneEveryCellIsTheRectOfItsGridPosition) {
  const HeatmapView view;
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kCols; ++c) {
      const Rect cell = cell_rect(kRect, view, kRows, kCols, {r, c});
      EXPECT_FLOAT_EQ(cell.x0, 100.0f + 10.0f * static_cast<float>(c));
      EXPECT_FLOAT_EQ(cell.y0, 40.0f + 10.0f * static_cast<float>(r));
      EXPECT_FLOAT_EQ(cell.width(), 10.0f);
      EXPECT_FLOAT_EQ(cell.height(), 10.0f);
    }
}

TEST(HeatmapView, HitTestAndCellRectRoundTripAtZoomOne) {
  EXPECT_EQ(round_trip_every_visible_cell(HeatmapView{}, kRows, kCols, false), kRows * kCols);
}

TEST(HeatmapView, HitTestFindsTheCellAtItsCornersNotJustItsCentre) {
  const HeatmapView view;
  // top-left corner belongs to the cell, the far edge to the next one
  EXPECT_EQ(hit_test(kRect, view, kRows, kCols, 100.0f + 30.0f, 40.0f + 20.0f), (Cell{2, 3}));
  EXPECT_EQ(hit_test(kRect, view, kRows, kCols, 100.0f + 39.9f, 40.0f + 29.9f), (Cell{2, 3}));
  EXPECT_EQ(hit_test(kRect, view, kRows, kCols, 100.0f + 40.0f, 40.0f + 30.0f), (Cell{3, 4}));
}

TEST(HeatmapView, HitTestAndCellRectRoundTripWhenZoomedAndPanned) {
  HeatmapView view;
  view.zoom_at(2.5f, 0.3f, 0.6f, kRows, kCols);
  view.pan_by(-7.0f, 4.0f, kRect, kRows, kCols);
  ASSERT_GT(view.zoom, 1.0f);
  const int visible = round_trip_every_visible_cell(view, kRows, kCols, false);
  EXPECT_GT(visible, 0);
  EXPECT_LT(visible, kRows * kCols);  // zoomed in: some cells are off screen
}

TEST(HeatmapView, ZoomedCellsAreLargerOnScreen) {
  HeatmapView view;
  view.zoom_at(4.0f, 0.5f, 0.5f, kRows, kCols);
  const Rect cell = cell_rect(kRect, view, kRows, kCols, {2, 3});
  EXPECT_FLOAT_EQ(cell.width(), 40.0f);
  EXPECT_FLOAT_EQ(cell.height(), 40.0f);
}

TEST(HeatmapView, ATransposedMatrixIsDrawnWithRowsAndColumnsSwapped) {
  // K is 7 × 5 (rows × cols) and is drawn as Kᵀ: 5 screen rows of 7 screen columns.
  const HeatmapView view;
  const Rect cell = cell_rect(kRect, view, kCols, kRows, {6, 1}, true);  // K[6,1] is Kᵀ[1,6]
  EXPECT_FLOAT_EQ(cell.x0, 100.0f + 60.0f);
  EXPECT_FLOAT_EQ(cell.y0, 40.0f + 10.0f);
  EXPECT_EQ(hit_test(kRect, view, kCols, kRows, centre_x(cell), centre_y(cell), true), (Cell{6, 1}));
  // the top-right screen cell is the last row, first column of K
  EXPECT_EQ(hit_test(kRect, view, kCols, kRows, kRect.x1 - 1.0f, kRect.y0 + 1.0f, true), (Cell{6, 0}));
}

TEST(HeatmapView, HitTestAndCellRectRoundTripForATransposedMatrixZoomedIn) {
  HeatmapView view;
  view.zoom_at(2.0f, 0.8f, 0.2f, kCols, kRows);  // the view is in screen (transposed) units
  EXPECT_GT(round_trip_every_visible_cell(view, kCols, kRows, true), 0);
}

TEST(HeatmapView, PointsOutsideTheRectHitNothing) {
  const HeatmapView view;
  EXPECT_FALSE(hit_test(kRect, view, kRows, kCols, kRect.x0 - 0.5f, 50.0f));
  EXPECT_FALSE(hit_test(kRect, view, kRows, kCols, 150.0f, kRect.y0 - 0.5f));
  EXPECT_FALSE(hit_test(kRect, view, kRows, kCols, kRect.x1, 50.0f));  // the right edge is outside
  EXPECT_FALSE(hit_test(kRect, view, kRows, kCols, 150.0f, kRect.y1));  // so is the bottom edge
  EXPECT_FALSE(hit_test(kRect, view, kRows, kCols, -1e6f, 1e6f));
}

TEST(HeatmapView, AnEmptyMatrixHitsNothing) {
  const HeatmapView view;
  EXPECT_FALSE(hit_test(kRect, view, 0, kCols, 150.0f, 50.0f));
  EXPECT_FALSE(hit_test(kRect, view, kRows, 0, 150.0f, 50.0f));
}

TEST(HeatmapView, ZoomAtKeepsThePointUnderTheCursorFixed) {
  const float fx = 0.37f, fy = 0.71f;
  const float x = kRect.x0 + fx * kRect.width(), y = kRect.y0 + fy * kRect.height();
  HeatmapView view;
  for (const float factor : {1.25f, 1.25f, 2.0f, 0.8f, 3.0f}) {
    float before[4], after[4];
    view.visible(kRows, kCols, before);
    const auto cell = hit_test(kRect, view, kRows, kCols, x, y);
    view.zoom_at(factor, fx, fy, kRows, kCols);
    view.visible(kRows, kCols, after);
    // the matrix coordinate under the cursor, in cell units, does not move
    EXPECT_NEAR(before[0] + fx * (before[2] - before[0]), after[0] + fx * (after[2] - after[0]), 1e-4f);
    EXPECT_NEAR(before[1] + fy * (before[3] - before[1]), after[1] + fy * (after[3] - after[1]), 1e-4f);
    EXPECT_EQ(hit_test(kRect, view, kRows, kCols, x, y), cell) << "after zooming by " << factor;
  }
  EXPECT_GT(view.zoom, 1.0f);
}

TEST(HeatmapView, ZoomStaysBetweenOneAndTheMaximum) {
  HeatmapView view;
  view.zoom_at(0.25f, 0.5f, 0.5f, kRows, kCols);
  EXPECT_TRUE(view.is_reset());  // cannot zoom out past the whole matrix
  for (int i = 0; i < 40; ++i) view.zoom_at(2.0f, 0.5f, 0.5f, kRows, kCols);
  EXPECT_EQ(view.zoom, HeatmapView::kMaxZoom);
}

TEST(HeatmapView, PanCannotMoveTheMatrixOffScreen) {
  HeatmapView view;
  view.pan_by(-500.0f, -500.0f, kRect, kRows, kCols);
  EXPECT_TRUE(view.is_reset()) << "at zoom 1 the whole matrix is shown and there is nowhere to pan";

  view.zoom_at(2.0f, 0.5f, 0.5f, kRows, kCols);
  float v[4];
  view.pan_by(-1e5f, -1e5f, kRect, kRows, kCols);  // drag far left and up: show the bottom-right corner
  view.visible(kRows, kCols, v);
  EXPECT_FLOAT_EQ(v[2], static_cast<float>(kCols));
  EXPECT_FLOAT_EQ(v[3], static_cast<float>(kRows));
  EXPECT_EQ(hit_test(kRect, view, kRows, kCols, kRect.x1 - 1.0f, kRect.y1 - 1.0f), (Cell{kRows - 1, kCols - 1}));

  view.pan_by(1e5f, 1e5f, kRect, kRows, kCols);  // and back past the top-left corner
  view.visible(kRows, kCols, v);
  EXPECT_FLOAT_EQ(v[0], 0.0f);
  EXPECT_FLOAT_EQ(v[1], 0.0f);
  EXPECT_EQ(hit_test(kRect, view, kRows, kCols, kRect.x0, kRect.y0), (Cell{0, 0}));
}

TEST(HeatmapView, PanningFollowsTheMouse) {
  HeatmapView view;
  view.zoom_at(2.0f, 0.5f, 0.5f, kRows, kCols);
  const auto before = hit_test(kRect, view, kRows, kCols, 130.0f, 60.0f);
  ASSERT_TRUE(before);
  // drag the content 20 px (one zoomed cell) left: the point now shows the next cell to the right
  view.pan_by(-20.0f, 0.0f, kRect, kRows, kCols);
  EXPECT_EQ(hit_test(kRect, view, kRows, kCols, 130.0f, 60.0f), (Cell{before->row, before->col + 1}));
}

TEST(HeatmapView, ResetShowsTheWholeMatrixAgain) {
  HeatmapView view;
  view.zoom_at(3.0f, 0.9f, 0.9f, kRows, kCols);
  ASSERT_FALSE(view.is_reset());
  view.reset();
  EXPECT_TRUE(view.is_reset());
  EXPECT_EQ(round_trip_every_visible_cell(view, kRows, kCols, false), kRows * kCols);
}
