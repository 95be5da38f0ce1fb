#include "logic/head_view.h"

#include <algorithm>
#include <cmath>

namespace attention_lab::gui {

std::vector<AttentionLine> attention_lines(MatrixView w, int head, const HeadViewLayout& layout, float min_weight,
                                           int only_query, int only_key, int first_row) {
  std::vector<AttentionLine> lines;
  const int end = layout.first_token + layout.token_count;
  const int last_query = std::min(first_row + static_cast<int>(w.rows()), end);
  const int last_key = std::min(static_cast<int>(w.cols()), end);
  for (int q = std::max(layout.first_token, first_row); q < last_query; ++q) {
    if (only_query >= 0 && q != only_query) continue;
    for (int k = layout.first_token; k < last_key; ++k) {
      if (only_key >= 0 && k != only_key) continue;
      const float v = w(q - first_row, k);
      if (!(v >= min_weight)) continue;  // also drops NaN
      lines.push_back({head, q, k, v, layout.left_x, layout.y_of(q), layout.right_x, layout.y_of(k)});
    }
  }
  std::sort(lines.begin(), lines.end(), [](const AttentionLine& a, const AttentionLine& b) { return a.weight < b.weight; });
  return lines;
}

Rgb head_colour(int head) {
  static const Rgb okabe_ito[8] = {{0.00f, 0.45f, 0.70f}, {0.90f, 0.62f, 0.00f}, {0.00f, 0.62f, 0.45f},
                                   {0.80f, 0.40f, 0.00f}, {0.34f, 0.71f, 0.91f}, {0.80f, 0.47f, 0.65f},
                                   {0.94f, 0.89f, 0.26f}, {0.50f, 0.50f, 0.50f}};
  const int h = head < 0 ? 0 : head % 24;
  const Rgb c = okabe_ito[h % 8];
  const int shade = h / 8;  // 0 as is, 1 halfway to white, 2 40 % of the way to black
  if (shade == 1) return {0.5f + 0.5f * c.r, 0.5f + 0.5f * c.g, 0.5f + 0.5f * c.b};
  if (shade == 2) return {0.6f * c.r, 0.6f * c.g, 0.6f * c.b};
  return c;
}

float distance_to_segment(float px, float py, float x0, float y0, float x1, float y1) {
  const float dx = x1 - x0, dy = y1 - y0;
  const float len2 = dx * dx + dy * dy;
  float t = len2 > 0 ? ((px - x0) * dx + (py - y0) * dy) / len2 : 0.0f;
  t = std::clamp(t, 0.0f, 1.0f);
  const float cx = x0 + t * dx - px, cy = y0 + t * dy - py;
  return std::sqrt(cx * cx + cy * cy);
}

std::optional<AttentionLine> pick_line(const std::vector<AttentionLine>& lines, float x, float y, float tolerance) {
  std::optional<AttentionLine> best;
  float best_score = 0;
  for (const AttentionLine& l : lines) {
    const float d = distance_to_segment(x, y, l.x0, l.y0, l.x1, l.y1);
    if (d > tolerance) continue;
    // Nearer wins; among equally near ones the heavier (the one drawn on top).
    const float score = (tolerance - d) + l.weight;
    if (!best || score > best_score) best = l, best_score = score;
  }
  return best;
}

}  // namespace attention_lab::gui
