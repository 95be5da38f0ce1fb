#pragma once
// Zoom, pan and hit-testing of one heatmap, in plain numbers (no ImGui).

#include <optional>

namespace attention_lab::gui {

struct Rect {
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  float width() const { return x1 - x0; }
  float height() const { return y1 - y0; }
  bool contains(float x, float y) const { return x >= x0 && x < x1 && y >= y0 && y < y1; }
};

struct Cell {
  int row = -1;
  int col = -1;
  friend bool operator==(const Cell&, const Cell&) = default;
};

// What part of a rows × cols matrix is on screen: zoom 1 shows it all, zoom 2
// half of each axis starting at (pan_col, pan_row).
struct HeatmapView {
  float zoom = 1.0f;
  float pan_col = 0.0f;
  float pan_row = 0.0f;

  static constexpr float kMaxZoom = 64.0f;

  // (col0, row0, col1, row1) in cell units, as the shader's u_view.
  void visible(int rows, int cols, float out[4]) const;
  // Zooms by `factor` keeping the cell under (fx, fy) (fractions of the rect) in place.
  void zoom_at(float factor, float fx, float fy, int rows, int cols);
  // Pans by a screen delta, given the rect size.
  void pan_by(float dx_px, float dy_px, const Rect& rect, int rows, int cols);
  void reset() { *this = HeatmapView{}; }
  bool is_reset() const { return zoom == 1.0f && pan_col == 0.0f && pan_row == 0.0f; }

 private:
  void clamp(int rows, int cols);
};

// The cell of a rows × cols matrix under screen point (x, y), if any.
// `transposed`: the matrix is drawn as its transpose (Kᵀ).
std::optional<Cell> hit_test(const Rect& rect, const HeatmapView& view, int rows, int cols, float x, float y,
                             bool transposed = false);

// The screen rectangle of a cell (inverse of hit_test), for overlays.
Rect cell_rect(const Rect& rect, const HeatmapView& view, int rows, int cols, Cell cell, bool transposed = false);

}  // namespace attention_lab::gui
