#pragma once
// A read-only heatmap of any matrix (the block around the attention: norms,
// residual sums, the MLP), with the pipeline's shaders, colours and pooling.
// Cells may be taller than wide, so a 7 × 768 activation reads as seven rows.
// Gestures come back as a hovered or clicked cell; it changes nothing.

#include "app_state.h"

#include <optional>
#include <string>
#include <vector>

namespace attention_lab::gui {

struct MatrixHeatmap {
  std::string key;      // ImGui ID and texture cache; unique per drawn matrix
  std::string title;    // shown above the cells ("n₁  7×768")
  std::string tooltip;  // on the title: name, formula, what it means
  const Matrix* values = nullptr;
  std::uint64_t version = 0;  // changes whenever the values do (never 0)
  bool non_negative = false;  // sequential colours from 0 (variances), else diverging around 0
  const std::vector<std::string>* row_labels = nullptr;
  float max_cell_w = 30.0f, max_cell_h = 30.0f;  // at the base font
  float max_w = 440.0f, max_h = 200.0f;
  std::optional<Cell> hovered, selected;  // outlined
  int lit_row = -1, lit_col = -1;         // this matrix's cells that feed the hovered one (-1: none)
};

struct MatrixHeatmapEvents {
  std::optional<Cell> hovered;
  bool clicked = false;
  Rect cells;  // where the cells were drawn
};

MatrixHeatmapEvents draw_matrix_heatmap(AppState& state, const MatrixHeatmap& h);

// The on-screen size of one cell of a rows × cols matrix: at most
// max_cell_w × max_cell_h, and small enough that the whole matrix fits max_w × max_h.
ImVec2 matrix_cell_size(int rows, int cols, ImVec2 max_cell, float max_w, float max_h);

}  // namespace attention_lab::gui
