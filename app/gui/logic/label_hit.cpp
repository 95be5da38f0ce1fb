#include "logic/label_hit.h"

#include <cmath>

namespace attention_lab::gui {

std::optional<LabelHit> label_at(const Rect& cells, float label_w, float label_h, const float view[4], int shown_rows,
                                 int shown_cols, float x, float y) {
  const float cols_seen = view[2] - view[0], rows_seen = view[3] - view[1];
  if (cols_seen <= 0.0f || rows_seen <= 0.0f || cells.width() <= 0.0f || cells.height() <= 0.0f) return std::nullopt;
  const Rect row_strip{cells.x0 - label_w, cells.y0, cells.x0, cells.y1};
  const Rect col_strip{cells.x0, cells.y0 - label_h, cells.x1, cells.y0};
  if (row_strip.contains(x, y)) {
    const int r = static_cast<int>(std::floor(view[1] + (y - cells.y0) / cells.height() * rows_seen));
    if (r >= 0 && r < shown_rows) return LabelHit{true, r};
  } else if (col_strip.contains(x, y)) {
    const int c = static_cast<int>(std::floor(view[0] + (x - cells.x0) / cells.width() * cols_seen));
    if (c >= 0 && c < shown_cols) return LabelHit{false, c};
  }
  return std::nullopt;
}

std::optional<LabelName> label_name(const StageInfo& info, bool transposed, const LabelHit& hit) {
  // A transposed drawing (Kᵀ) shows the stage's columns as its rows.
  const bool stage_row = hit.row != transposed;
  const LabelKind kind = stage_row ? info.row_label_kind : info.col_label_kind;
  const int count = stage_row ? info.rows : info.cols;
  if (kind == LabelKind::Index || hit.index < 0 || hit.index >= count) return std::nullopt;
  return LabelName{kind, hit.index};
}

}  // namespace attention_lab::gui
