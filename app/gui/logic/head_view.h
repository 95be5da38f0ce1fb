#pragma once
// The head view: two columns of tokens, a line from each query token (left)
// to each key token (right), as thick and opaque as its attention weight.

#include "attention_lab/matrix.h"
#include "logic/colormap.h"
#include "logic/heatmap_view.h"

#include <optional>
#include <vector>

namespace attention_lab::gui {

struct AttentionLine {
  int head = 0;
  int query = 0;  // row of the weights
  int key = 0;    // column
  float weight = 0.0f;
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // screen coordinates
};

struct HeadViewLayout {
  float left_x = 0, right_x = 0;  // where the lines start and end
  float top = 0, row_height = 20;
  int first_token = 0, token_count = 0;  // the window of tokens shown (long sequences scroll)
  float y_of(int token) const { return top + (static_cast<float>(token - first_token) + 0.5f) * row_height; }
};

// Lines of one head's weights within the layout's token window, weakest
// first so strong lines are drawn on top; weights below `min_weight` are left
// out (they would be invisible anyway). `only_query` / `only_key` restrict to
// one token's lines (hovering a token). Row 0 of `weights` is query token
// `first_row`: a long sequence passes only the rows of the window.
std::vector<AttentionLine> attention_lines(MatrixView weights, int head, const HeadViewLayout& layout,
                                           float min_weight = 0.01f, int only_query = -1, int only_key = -1,
                                           int first_row = 0);

// The colour of a head's lines: the eight Okabe–Ito colours (told apart with
// every common colour-vision deficiency) for heads 0–7, the same hues lighter
// for 8–15 and darker for 16–23, so a GPT-2 layer's 12 heads all differ;
// beyond 24 the colours repeat (the legend and tooltips name the head).
Rgb head_colour(int head);

// The line nearest to (x, y) within `tolerance` pixels, preferring the
// heavier line when several are close.
std::optional<AttentionLine> pick_line(const std::vector<AttentionLine>& lines, float x, float y, float tolerance = 4.0f);

// Distance from a point to a segment.
float distance_to_segment(float px, float py, float x0, float y0, float x1, float y1);

}  // namespace attention_lab::gui
