#pragma once
// The parts of one heatmap drawing (heatmap_widget.h), in the order
// draw_heatmap puts them together: labels (heatmap_labels.cpp); the cells,
// their printed numbers, marks and colour bar (heatmap_cells.cpp); the
// title, the input and the menu (heatmap_widget.cpp). What they share is one
// HeatmapDrawing, built once a frame per drawing.

#include "widgets/heatmap_widget.h"

#include <imgui.h>

#include <optional>

namespace attention_lab::gui {

// One drawing of a stage this frame: what it shows and where.
struct HeatmapDrawing {
  AppState& state;
  StageId id;
  const HeatmapOptions& opt;
  const StageInfo& info;
  bool showing_difference = false;  // Compare's Δ
  bool showing_gradient = false;    // ∂L/∂stage
  bool signed_overlay = false;      // either: signed numbers of the stage's shape that are not its values
  // The matrix drawn (values, difference or gradient), fetched only when
  // something reads it: a derived stage costs an exp per cell to materialize.
  const MatrixView& values() const;
  int rows = 0, cols = 0;              // of that matrix
  int shown_rows = 0, shown_cols = 0;  // as drawn (transposed or not)
  HeatmapView& view;
  float vis[4] = {0, 0, 0, 0};  // the part on screen, in cells (HeatmapView::visible)
  float px_per_cell = 0.0f;
  float label_w = 0.0f;      // the row labels' strip left of the cells
  float col_label_h = 0.0f;  // the column labels' band above them
  ImDrawList* dl = nullptr;
  ImVec2 origin, p0, p1;  // the group's top left; the cells' corners
  Rect rect;              // the cells
  bool on_screen = true;  // (scrolled away: no uploads, no colour range)

  HeatmapDrawing(AppState& s, StageId stage, const HeatmapOptions& o, const StageInfo& i, HeatmapView& v)
      : state(s), id(stage), opt(o), info(i), view(v) {}
  int first_row() const { return static_cast<int>(vis[1]); }
  int end_row() const;  // one past the last row on screen
  int first_col() const { return static_cast<int>(vis[0]); }
  int end_col() const;

 private:
  mutable std::optional<MatrixView> fetched_;
};

// Column labels written upwards (a slide's tokens wider than their columns):
// whether, the band above the cells they take, and their text size.
struct TurnedLabels {
  bool on = false;
  float band = 0.0f;     // height above the cells
  float text_px = 0.0f;  // font size: a line of it fits the column's width
};
TurnedLabels turned_labels(const std::vector<std::string>& labels, float px_per_cell);

// The row and column labels (tokens or indices) where there is room to read
// them; returns how many were drawn cut or left out (whole in a tooltip only).
int draw_heatmap_labels(const HeatmapDrawing& h, const TurnedLabels& turned);

// How the cells are coloured: the texture's pooling, the colormap and its range.
struct HeatmapColours {
  int pool = 1;         // cells per texel side (several cells per pixel: max |v| of each block)
  ColourScale scale = ColourScale::Linear;
  int decades = 0;      // of a log scale
  int colormap = 0;     // 0 diverging, 1 viridis, 2 the mask's two colours
  float range = 1.0f;   // |v| at either end of a signed colormap
};

// The cells: uploads the texture when the matrix (or its scale) changed, and
// draws it with the selection, the lit cells and the hover ring.
HeatmapColours draw_heatmap_cells(HeatmapDrawing& h);

// The numbers printed in cells big enough for them, counted in `drawn` (may
// be null); cells hiding the quiz's answer go into `hidden` instead.
void draw_cell_values(const HeatmapDrawing& h, const HeatmapColours& colours, float print_scale, DrawnHeatmap* drawn,
                      std::vector<Rect>& hidden);

// Pins outlined, the quiz's "?" over `hidden` cells, the presenter's hovered
// cell with its number, and "zoom" when zoomed.
void draw_cell_marks(const HeatmapDrawing& h, std::vector<Rect>& hidden);

// The colour bar under the cells with its range (and how pooled pixels read),
// or a small gap where there is none.
void draw_heatmap_legend(const HeatmapDrawing& h, const HeatmapColours& colours);

}  // namespace attention_lab::gui
