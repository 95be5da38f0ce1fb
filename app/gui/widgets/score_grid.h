#pragma once
// A grid of numbers with labelled rows and columns — head detector scores,
// activation patching results, logit attributions: each cell coloured by its
// value and, where the cell is wide enough, printed; hovering a cell shows
// its tooltip; a click reports the cell. Row labels are drawn whole (a
// column as wide as the widest), so a token is never cut.

#include "app_state.h"

#include <Eigen/Core>

#include <functional>
#include <string>
#include <vector>

namespace attention_lab::gui {

struct ScoreGrid {
  std::string id;  // ImGui id, and the probe items' prefix ("<id> <row> <col>")
  Eigen::MatrixXd values;  // NaN: not computed (drawn grey, printed "—")
  std::vector<std::string> row_labels, col_labels;
  // Colours: Unit maps [0, 1] to viridis; Diverging maps [−range, range] to
  // blue–white–red (values beyond it take the end colours).
  enum class Colours { Unit, Diverging } colours = Colours::Unit;
  double range = 1.0;
  int decimals = 2;
  float min_cell_px = 12.0f;  // at the base font: a T × T pattern may go smaller (its numbers then in the tooltip)
  std::function<std::string(int row, int col)> tooltip;  // empty: none
  std::function<bool(int row, int col)> outlined;        // a cell to frame (the focused head); empty: none
  std::function<void(int row, int col)> context_menu;    // draws a right-click menu's items for the cell; empty: none
};

struct GridCell {
  int row = -1, col = -1;
  bool valid() const { return row >= 0; }
};

// Draws the grid at the cursor, as wide as the space it has allows (cells
// between 12 and 40 px at the base font); returns the clicked cell (if any)
// and sets `hovered`.
GridCell draw_score_grid(AppState& state, const ScoreGrid& grid, GridCell* hovered = nullptr);

}  // namespace attention_lab::gui
