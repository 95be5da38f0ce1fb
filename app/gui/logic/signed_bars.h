#pragma once
// Bars of a signed row (Softmax up close): one shared zero line, positive
// values up from it, negative ones down from it, and −∞ (a masked key) as a
// marked stub with no bar, because no finite height can stand for it.

#include "attention_lab/matrix.h"
#include "logic/colormap.h"

namespace attention_lab::gui {

// The value range a row of bars spans: always includes 0 (the zero line),
// and [0, 1] at least for probabilities. Infinite and NaN entries are left out.
struct BarScale {
  float lo = 0.0f, hi = 1.0f;
  float zero_at(float height) const;  // y of the zero line below the top, for a plot `height` tall
};
BarScale bar_scale(Eigen::Ref<const RowVector> values, bool probability);

enum class BarKind {
  Up,           // a value > 0: from the zero line up
  Down,         // a value < 0: from the zero line down
  Flat,         // exactly 0: only the zero line
  MinusInfinity,  // −∞: a stub marked "−∞", no bar
  NotANumber,   // NaN or +∞: nothing drawn but its label
};

struct Bar {
  BarKind kind = BarKind::Flat;
  float top = 0.0f, bottom = 0.0f;  // y below the plot's top edge (top < bottom)
};
Bar bar_for(float value, const BarScale& scale, float height);

// The colour of a signed bar: the ends of the heatmaps' diverging map (RdBu),
// so blue means negative and red positive here as in every heatmap.
Rgb signed_bar_colour(float value);

}  // namespace attention_lab::gui
