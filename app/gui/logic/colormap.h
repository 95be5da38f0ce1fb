#pragma once
// CPU twins of the shader colormaps: for the colour bar, legends and tests.
// Keep in step with shaders/heatmap.frag.

#include "attention_lab/stage_info.h"

#include <string>

namespace attention_lab::gui {

struct Rgb {
  float r, g, b;
};

Rgb diverging(float t);  // t in [-1, 1]: blue → white → red (ColorBrewer RdBu)
Rgb viridis(float t);    // t in [0, 1]

// Which colormap (0 diverging, 1 sequential, 2 binary) a stage uses, and the
// symmetric range its colours span, from its finite values.
int colormap_for(ValueDomain domain);
float colour_range(ValueDomain domain, MatrixView values);

// How attention weights (values in [0, 1]) map onto their colormap. At
// T=1024 a row's weights are ~0.001 each: on a linear 0–1 scale everything is
// the darkest colour. Log shows orders of magnitude; per row divides each row
// by its largest weight, so every row's favourite key is the brightest.
enum class ColourScale { Linear, Log, PerRow };
inline constexpr ColourScale kColourScales[] = {ColourScale::Linear, ColourScale::Log, ColourScale::PerRow};
const char* to_string(ColourScale scale);  // "linear", "log", "per row"

// Decades a log scale spans for rows of `T` weights: down to a tenth of the
// uniform weight 1/T, so a uniform row sits one decade above the bottom.
int log_decades(int T);

// Where a weight lands on the colormap, in [0, 1]. `row_max`: the largest
// weight of its row (PerRow); NaN stays NaN.
float scaled_weight(float v, ColourScale scale, float row_max, int decades);

// The whole matrix mapped with scaled_weight (what the shader is given).
Matrix scaled_weights(MatrixView weights, ColourScale scale, int decades);

// The colour bar's two ends: "0" and "1", "10⁻⁴" and "1", "0" and "row max".
std::pair<std::string, std::string> colour_bar_ends(ColourScale scale, int decades);

// Where the colour bar's two end labels go: side by side under the bar when
// both fit its width with a gap; otherwise the high end drops to the line
// under the low one (never overlapping, as "−1.801.80" did).
struct ColourBarLabels {
  bool stacked = false;
  float hi_x = 0.0f;  // offset of the high label from the bar's left edge
};
ColourBarLabels colour_bar_labels(float bar_width, float lo_width, float hi_width, float gap);

}  // namespace attention_lab::gui
