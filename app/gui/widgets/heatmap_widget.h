#pragma once
// One matrix as an interactive heatmap: symbol and shape, token/dimension
// labels, the shader-coloured cells, values printed when they fit, pins
// outlined, and a colour bar. It never edits the document: gestures come back
// as Edits in HeatmapEvents, and the app applies them.

#include "app_state.h"
#include "attention_lab/snapshot.h"

namespace attention_lab::gui {

struct HeatmapOptions {
  float cell_px = 30.0f;      // on-screen size of one cell at zoom 1
  float max_px = 440.0f;      // big matrices shrink to this (cells become sub-pixel and are pooled)
  bool transposed = false;    // draw as the transpose (Kᵀ in Q·Kᵀ)
  bool show_labels = true;
  bool show_colour_bar = true;
  // Labels are written whole where the layout leaves them room (a slide, an
  // export): row labels as wide as the longest word, column tokens too wide
  // for their cells upwards above them, rather than cut to "jo…".
  bool whole_labels = false;
  // At least this much height for the column labels: heatmaps side by side
  // in one equation keep their cells level when one writes words upwards.
  float column_band = 0.0f;
  bool interactive = true;    // false: a thumbnail (the all-heads grid)
  float dim = 1.0f;           // < 1: a stage the step-through has not reached
  int reveal = -1;            // cells shown so far by a step animation
  const char* title_override = nullptr;
  bool editable = true;       // false: hover and select only
  // A thumbnail: while a drag keeps changing the document it shows its last
  // texture and catches up when the drag ends (at T=1024 refreshing twelve
  // heads' weights every frame of a drag would cost tens of milliseconds).
  bool hold_while_dragging = false;
  // Compare: draw this stage's change since the snapshot instead of its values.
  const StageDiff* difference = nullptr;
  std::uint64_t difference_version = 0;  // changes whenever the difference does
  // A gradient: the stage id drawn is a gradient id ("grad.scores[0]") and
  // these its numbers (GradientStore), signed and read-only.
  const Matrix* gradient = nullptr;
  std::uint64_t gradient_version = 0;  // changes whenever the gradients do
};

struct HeatmapEvents {
  std::optional<CellRef> hovered;
  bool clicked = false;       // a click without drag (thumbnails: "focus this head")
  // What the user's gestures ask of the document this frame (a dragged cell,
  // a mask cell toggled, a pin removed, a matrix randomized), each with the
  // gesture it belongs to (0: an undo entry of its own). The widget never
  // applies them: apply_heatmap_edits (or the caller) does.
  struct Requested {
    Edit edit;
    std::uint64_t gesture = 0;
  };
  std::vector<Requested> edits;
};

HeatmapEvents draw_heatmap(AppState& state, StageId stage, const HeatmapOptions& options);

// Applies the edits a heatmap's gestures asked for, in order, through the
// document (so undo and the dirty tracking see them); returns the events.
HeatmapEvents apply_heatmap_edits(AppState& state, HeatmapEvents events);

// Compare: stage `id`'s change since the snapshot (`d`, of version
// `version`), drawn like its value (`value_opt`) as a signed heatmap, and
// counted among the difference heatmaps on screen. Sets state.hovered when a
// cell of it is hovered.
void draw_difference_heatmap(AppState& state, StageId id, const HeatmapOptions& value_opt, const StageDiff& d,
                             std::uint64_t version);

// The width of the row-label strip left of a heatmap's cells: room for a word
// when the rows shown are named (tokens, or features once one has a name),
// as wide as the widest index (or a bias row's one word) otherwise. Both grow with the font, so a
// presenter's larger labels are not cut to two letters.
// The loss's gradient of stage `value_id` (gradient `g`, of version
// `version`), drawn like its value (`value_opt`) under the id
// "grad.<stage>"; hovering a cell of it sets state.hovered to that id.
void draw_gradient_heatmap(AppState& state, StageId value_id, const HeatmapOptions& value_opt, const Matrix& g,
                           std::uint64_t version);

float row_label_width(const StageInfo& info, const Scenario& scenario, bool transposed, bool whole_words = false);

// With whole_labels, a heatmap whose cells are narrower than `turn_below`
// writes its column words upwards in a band `band` tall above the cells
// (0, 0: its column labels are indices, never turned). A slide's layout
// reserves that band for cells that small (SlideBox::turn_below).
struct ColumnWords {
  float turn_below = 0.0f;
  float band = 0.0f;
};
ColumnWords column_words(const std::vector<std::string>& labels);

// The width of the colour bar under a heatmap whose cells are `cells_w`
// wide: the cells' width, kept between 100 and 160 (at a 16 px font), so its
// two limits always have room.
float colour_bar_width(float cells_w);

// The on-screen cell size of a rows × cols matrix: `cell_px`, unless that
// would make it larger than `max_px` on its longer side.
float displayed_cell_px(float cell_px, float max_px, int rows, int cols);

}  // namespace attention_lab::gui
