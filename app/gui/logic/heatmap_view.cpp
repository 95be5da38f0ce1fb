#include "logic/heatmap_view.h"

#include <algorithm>
#include <cmath>

namespace attention_lab::gui {

void HeatmapView::visible(int rows, int cols, float out[4]) const {
  out[0] = pan_col;
  out[1] = pan_row;
  out[2] = pan_col + static_cast<float>(cols) / zoom;
  out[3] = pan_row + static_cast<float>(rows) / zoom;
}

void HeatmapView::clamp(int rows, int cols) {
  zoom = std::clamp(zoom, 1.0f, kMaxZoom);
  pan_col = std::clamp(pan_col, 0.0f, static_cast<float>(cols) - static_cast<float>(cols) / zoom);
  pan_row = std::clamp(pan_row, 0.0f, static_cast<float>(rows) - static_cast<float>(rows) / zoom);
}

void HeatmapView::zoom_at(float factor, float fx, float fy, int rows, int cols) {
  const float col_at = pan_col + fx * static_cast<float>(cols) / zoom;
  const float row_at = pan_row + fy * static_cast<float>(rows) / zoom;
  zoom *= factor;
  zoom = std::clamp(zoom, 1.0f, kMaxZoom);
  pan_col = col_at - fx * static_cast<float>(cols) / zoom;
  pan_row = row_at - fy * static_cast<float>(rows) / zoom;
  clamp(rows, cols);
}

void HeatmapView::pan_by(float dx, float dy, const Rect& rect, int rows, int cols) {
  pan_col -= dx / rect.width() * static_cast<float>(cols) / zoom;
  pan_row -= dy / rect.height() * static_cast<float>(rows) / zoom;
  clamp(rows, cols);
}

std::optional<Cell> hit_test(const Rect& rect, const HeatmapView& view, int rows, int cols, float x, float y,
                             bool transposed) {
  if (!rect.contains(x, y) || rows <= 0 || cols <= 0) return std::nullopt;
  const int shown_rows = transposed ? cols : rows, shown_cols = transposed ? rows : cols;
  float v[4];
  view.visible(shown_rows, shown_cols, v);
  const float fx = (x - rect.x0) / rect.width(), fy = (y - rect.y0) / rect.height();
  const int c = static_cast<int>(std::floor(v[0] + fx * (v[2] - v[0])));
  const int r = static_cast<int>(std::floor(v[1] + fy * (v[3] - v[1])));
  if (r < 0 || c < 0 || r >= shown_rows || c >= shown_cols) return std::nullopt;
  return transposed ? Cell{c, r} : Cell{r, c};
}

Rect cell_rect(const Rect& rect, const HeatmapView& view, int rows, int cols, Cell cell, bool transposed) {
  const int shown_rows = transposed ? cols : rows, shown_cols = transposed ? rows : cols;
  const int r = transposed ? cell.col : cell.row, c = transposed ? cell.row : cell.col;
  float v[4];
  view.visible(shown_rows, shown_cols, v);
  const float sx = rect.width() / (v[2] - v[0]), sy = rect.height() / (v[3] - v[1]);
  return {rect.x0 + (static_cast<float>(c) - v[0]) * sx, rect.y0 + (static_cast<float>(r) - v[1]) * sy,
          rect.x0 + (static_cast<float>(c + 1) - v[0]) * sx, rect.y0 + (static_cast<float>(r + 1) - v[1]) * sy};
}

}  // namespace attention_lab::gui
