#pragma once
// A lesson step as a slide: the stages the step lists, laid out together as
// their equations ("A₀ · V₀ = C₀"; four heads' weights side by side) and
// scaled so that everything fits the centre area. Two pure parts, no ImGui:
//  1. slide_equations: which equation pieces show the wanted stages;
//  2. layout_slide: the cell size and the position of every box, given the
//     boxes' fixed (text) sizes, their sizes in cells, and the rectangle.

#include "attention_lab/scenario.h"
#include "attention_lab/stage_id.h"
#include "logic/pipeline_layout.h"

#include <vector>

namespace attention_lab::gui {

// With one head (and one K/V head) a head's block Q[0] is the whole Q: one
// matrix under two names. The whole matrix's id (Q for Q[0]), or `id` itself
// when the scenario has more heads or `id` is not a head's block.
StageId whole_matrix(const Scenario& s, StageId id);

// The equations that show `wanted` (in the order a step lists them; each
// wanted stage appears at least once). Each piece is cut from the pipeline's
// own equations (pipeline_equations), so it reads the same as there:
//  - a wanted operand brings its equation ("W_q" gives "X · W_q = Q");
//  - stages between two wanted ones stay when the equation needs them as
//    operands, and a run of results nobody asked for becomes "→ … →"
//    ("S₀ → … → Ŝ₀ softmax → A₀");
//  - a head's Q/K/V block asked for without its scores is shown as the split
//    of the whole matrix: "Q = Q₀ | Q₁ | Q₂ | Q₃";
//  - a stage in no equation stands alone.
// Lines come in the order of their first wanted stage in `wanted`.
std::vector<EquationLine> slide_equations(const Scenario& scenario, const std::vector<StageId>& wanted);

// A box on the slide: its size is fixed pixels (labels, title, colour bar,
// operator text) plus a number of cells times the cell size. Boxes line up
// on the vertical centre of their cells.
struct SlideBox {
  float fixed_w = 0.0f;  // width that does not scale (row labels, operator text)
  float cells_w = 0.0f;  // columns of cells
  float min_w = 0.0f;    // never narrower than this (a colour bar under a small matrix)
  float above = 0.0f;    // fixed height above the cells (title, column labels)
  float cells_h = 0.0f;  // rows of cells
  float below = 0.0f;    // fixed height below the cells (colour bar)
  bool operator_box = false;  // a row may start with an operator ("= Ŝ₀"), never end an equation early
  // A stage the step is not about (an operand the equation needs, such as the
  // mask in "S + mask = Ŝ") may be drawn with smaller cells: this times the slide's.
  float cell_scale = 1.0f;
  // Column words wider than cells under `turn_below` px are written upwards
  // (heatmap_widget.cpp): `above` is then `turned_above`, their band included.
  float turn_below = 0.0f;
  float turned_above = 0.0f;
  float width(float cell) const;
  float above_at(float cell) const { return cell * cell_scale < turn_below ? turned_above : above; }
  float height(float cell) const { return above_at(cell) + cells_h * cell * cell_scale + below; }
};

// Boxes of one equation stay on one row when they fit; a long one wraps
// before an operator, so each row reads as a true statement ("= Ŝ₀ …").
struct SlideGroup {
  std::vector<SlideBox> boxes;
};

// The smallest cell whose number a slide prints readably at the presenter's
// default text size (it grows with larger text: slide_panel.cpp).
inline constexpr float kReadableCellPx = 22.0f;

struct SlideSpacing {
  float box_gap = 6.0f;    // between boxes of one equation
  float group_gap = 40.0f; // between equations on one row
  float row_gap = 16.0f;   // between rows
  float min_cell = 2.0f;   // smaller cells are not worth it: the slide then overflows (fits = false)
  float max_cell = 96.0f;  // a 2×2 matrix should not fill a projector
};

struct SlideArea {
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  float width() const { return x1 - x0; }
  float height() const { return y1 - y0; }
};

struct PlacedBox {
  int group = 0, box = 0;
  float x = 0, y = 0;   // top-left of the box
  float w = 0, h = 0;
  float cell = 0;       // this box's cell size (the slide's, times its cell_scale)
};

struct SlideLayout {
  float cell = 0.0f;          // the one cell size of every matrix on the slide
  bool fits = false;          // everything inside the area at that size
  std::vector<PlacedBox> boxes;  // in group order, then box order
  SlideArea bounds;           // what the boxes cover, centred in the area
  int rows = 0;
};

// The largest cell size (up to spacing.max_cell) at which the groups, flowed
// into rows, fit inside `area`; then centres every row and the whole block.
SlideLayout layout_slide(const std::vector<SlideGroup>& groups, const SlideArea& area, const SlideSpacing& spacing = {});

// A line cut where it can go on as a statement of its own: before a relation
// ("=", "→") that follows a result ("… = Ŝ₀ softmax → A₀" gives "… = Ŝ₀" and "Ŝ₀ softmax →
// A₀"; "X · W_q = Q = Q₀ | …" gives "X · W_q = Q" and "Q = Q₀ | …"). The
// result is repeated at the start of the next piece, so each reads alone.
std::vector<EquationLine> split_statements(const EquationLine& line);

// Slides too big for one screen at a readable size are shown in pages: each
// page is a run of consecutive groups (in order) that fits `area` with cells of
// at least `least`. A group that cannot fit alone still gets a page of its own.
// One page holding every group when they all fit.
std::vector<std::vector<int>> page_groups(const std::vector<SlideGroup>& groups, const SlideArea& area, float least,
                                          const SlideSpacing& spacing = {});

}  // namespace attention_lab::gui
