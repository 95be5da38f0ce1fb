#version 330 core
// Colours one matrix: value → colormap, −∞ and NaN cells, grid lines, and the
// provenance highlights (lit row, lit column, hovered and selected cells).
in vec2 v_uv;
out vec4 frag_color;

uniform sampler2D u_values;   // R32F, one texel per cell (x = column, y = row)
uniform ivec2 u_size;         // (columns, rows)
uniform vec4 u_view;          // visible cells: (col0, row0, col1, row1), zoom and pan
uniform float u_range;        // diverging: ±u_range; sequential: [0, u_range]
uniform int u_colormap;       // 0 diverging around 0, 1 sequential, 2 binary mask
uniform float u_cell_px;      // on-screen pixels per cell, for grid lines
uniform int u_lit_row;        // a whole row that feeds the hovered cell (−1: none)
uniform int u_lit_col;        // a whole column that feeds it (−1: none)
uniform ivec2 u_hover;        // (col, row) of the hovered cell (−1: none)
uniform ivec2 u_selected;     // (col, row) of the selected cell (−1: none)
uniform int u_reveal;         // cells shown so far in row-major order (−1: all)
uniform float u_dim;          // 1 normal, < 1 faded (a stage not reached yet)
uniform vec3 u_fade_to;       // the background a faded stage sinks into (black, or white on the light theme)
uniform int u_transpose;      // 1: draw the matrix as its transpose (Kᵀ)

// ColorBrewer RdBu (colour-blind safe), blue for negative, red for positive.
vec3 diverging(float t) {  // t in [-1, 1]
  const vec3 neg2 = vec3(0.129, 0.400, 0.675);
  const vec3 neg1 = vec3(0.573, 0.773, 0.871);
  const vec3 mid = vec3(0.969, 0.969, 0.969);
  const vec3 pos1 = vec3(0.957, 0.647, 0.510);
  const vec3 pos2 = vec3(0.698, 0.094, 0.169);
  t = clamp(t, -1.0, 1.0);
  if (t < -0.5) return mix(neg2, neg1, (t + 1.0) * 2.0);
  if (t < 0.0) return mix(neg1, mid, (t + 0.5) * 2.0);
  if (t < 0.5) return mix(mid, pos1, t * 2.0);
  return mix(pos1, pos2, (t - 0.5) * 2.0);
}

// Viridis (perceptually uniform, colour-blind safe), polynomial fit.
vec3 viridis(float t) {
  t = clamp(t, 0.0, 1.0);
  const vec3 c0 = vec3(0.2777273272234177, 0.005407344544966578, 0.3340998053353061);
  const vec3 c1 = vec3(0.1050930431085774, 1.404613529898575, 1.384590162594685);
  const vec3 c2 = vec3(-0.3308618287255563, 0.214847559468213, 0.09509516302823659);
  const vec3 c3 = vec3(-4.634230498983486, -5.799100973351585, -19.33244095627987);
  const vec3 c4 = vec3(6.228269936347081, 14.17993336680509, 56.69055260068105);
  const vec3 c5 = vec3(4.776384997670288, -13.74514537774601, -65.35303263337234);
  const vec3 c6 = vec3(-5.435455855934631, 4.645852612178535, 26.3124352495832);
  return c0 + t * (c1 + t * (c2 + t * (c3 + t * (c4 + t * (c5 + t * c6)))));
}

void main() {
  vec2 cell_f = mix(u_view.xy, u_view.zw, v_uv);
  ivec2 shown = ivec2(floor(cell_f));               // cell on screen
  ivec2 shown_size = u_transpose == 1 ? u_size.yx : u_size;
  ivec2 cell = u_transpose == 1 ? shown.yx : shown;  // cell of the matrix
  if (shown.x < 0 || shown.y < 0 || shown.x >= shown_size.x || shown.y >= shown_size.y) {
    frag_color = vec4(0.16, 0.16, 0.18, 1.0);
    return;
  }
  float v = texelFetch(u_values, cell, 0).r;
  vec3 color;
  if (isnan(v)) {
    color = vec3(0.85, 0.0, 0.85);
  } else if (isinf(v) && v < 0.0) {
    // −∞ (masked): dark slate with diagonal hatching, unmistakable for a value.
    vec2 p = gl_FragCoord.xy;
    float stripe = step(0.5, fract((p.x + p.y) / 8.0));
    color = mix(vec3(0.22, 0.24, 0.28), vec3(0.30, 0.32, 0.37), stripe);
  } else if (isinf(v)) {
    color = vec3(1.0, 0.85, 0.0);
  } else if (u_colormap == 1) {
    color = viridis(v / max(u_range, 1e-30));
  } else if (u_colormap == 2) {
    color = v != 0.0 ? vec3(0.93, 0.93, 0.90) : vec3(0.22, 0.24, 0.28);
  } else {
    color = diverging(v / max(u_range, 1e-30));
  }

  int index = shown.y * shown_size.x + shown.x;
  bool unrevealed = u_reveal >= 0 && index >= u_reveal;
  if (unrevealed) color = mix(color, vec3(0.12, 0.12, 0.14), 0.85);

  // Provenance: lit rows/columns get a warm glow, the others fade a little.
  bool lit = cell.y == u_lit_row || cell.x == u_lit_col;
  bool any_lit = u_lit_row >= 0 || u_lit_col >= 0;
  if (any_lit && !lit) color *= 0.55;
  if (lit) color = mix(color, vec3(1.0, 0.85, 0.2), 0.18);

  vec2 in_cell = fract(cell_f);
  float edge_px = min(min(in_cell.x, 1.0 - in_cell.x), min(in_cell.y, 1.0 - in_cell.y)) * u_cell_px;
  if (u_cell_px >= 6.0 && edge_px < 0.6) color *= 0.75;  // grid lines when cells are big enough

  // The hovered cell: a yellow ring with a dark one inside, seen on any colour
  // (yellow alone vanished on viridis's bright end).
  if (cell == u_hover && edge_px < 2.5) color = vec3(1.0, 0.85, 0.1);
  else if (cell == u_hover && edge_px < 3.5) color = vec3(0.0);
  if (cell == u_selected && edge_px < 2.5) color = vec3(1.0, 1.0, 1.0);
  if (cell == u_selected && edge_px >= 2.5 && edge_px < 3.5) color = vec3(0.0);
  frag_color = vec4(mix(u_fade_to, color, u_dim), 1.0);
}
