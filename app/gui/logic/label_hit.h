#pragma once
// Which label of a heatmap is under the mouse, and what renaming it means.
// The row labels sit in a strip left of the cells, the column labels in a
// strip above them; both scroll and zoom with the cells.

#include "attention_lab/stage_info.h"
#include "logic/heatmap_view.h"

#include <optional>

namespace attention_lab::gui {

struct LabelHit {
  bool row = true;  // a row label (left of the cells); else a column label (above them)
  int index = 0;    // the row or column as drawn (of the transpose when transposed)
};

// The label at (x, y): `cells` is where the cells are drawn, `label_w` the
// width of the row-label strip, `label_h` the height of the column-label
// strip, `view` the visible range (col0, row0, col1, row1) in cells.
std::optional<LabelHit> label_at(const Rect& cells, float label_w, float label_h, const float view[4], int shown_rows,
                                 int shown_cols, float x, float y);

// What a label names: a token or a feature of the scenario (which an edit
// can rename), or nothing for an index label.
struct LabelName {
  LabelKind kind = LabelKind::Token;
  int index = 0;
};
std::optional<LabelName> label_name(const StageInfo& info, bool transposed, const LabelHit& hit);

}  // namespace attention_lab::gui
