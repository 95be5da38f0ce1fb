#include "logic/head_view.h"

#include <algorithm>
#include <cmath>

namespace attention_lab::gui {

std::vector<AttentionLine> attention_lines(MatrixView w, int head, const HeadViewLayout& layout, float min_weight,
                                           int only_query, int only_key) {
  std::vector<AttentionLine> lines;
  const int last = std::min(static_cast<int>(w.rows()), layout.first_token + layout.token_count);
  for (int q = layout.first_token; q < last; ++q) {
    if (only_query >= 0 && q != only_query) continue;
    for (int k = layout.first_token; k < std::min(static_cast<int>(w.cols()), last); ++k) {
      if (only_key >= 0 && k != only_key) continue;
      const float v = w(q, k);
      if (!(v >= min_weight)) continue;  // also drops NaN
      lines.push_back({head, q, k, v, layout.left_x, layout.y_of(q), layout.right_x, layout.y_of(k)});
    }
  }
  std::sort(lines.begin(), lines.end(), [](const AttentionLine& a, const AttentionLine& b) { return a.weight < b.weight; });
  return lines;
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
