#pragma once
// CPU twins of the shader colormaps: for the colour bar, legends and tests.
// Keep in step with shaders/heatmap.frag.

#include "attention_lab/stage_info.h"

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

}  // namespace attention_lab::gui
