#pragma once
// Draws matrices with the heatmap shaders inside ImGui's draw lists: each
// heatmap adds a draw callback, so it is layered and clipped like any widget.

#include "gfx/shader_program.h"

#include <imgui.h>

#include <deque>
#include <string>

namespace attention_lab::gfx {

// What the shader needs to colour one heatmap this frame.
struct HeatmapDraw {
  GLuint texture = 0;
  int rows = 0, cols = 0;
  ImVec2 min, max;                   // screen rectangle
  float view[4] = {0, 0, 1, 1};      // visible cells (col0, row0, col1, row1)
  float range = 1.0f;                // ±range (diverging) or [0, range] (sequential)
  int colormap = 0;                  // 0 diverging, 1 sequential, 2 binary
  float cell_px = 10.0f;
  int lit_row = -1, lit_col = -1;
  int hover_row = -1, hover_col = -1;
  int selected_row = -1, selected_col = -1;
  int reveal = -1;                   // cells revealed (row-major) during a step animation
  float dim = 1.0f;
  bool transposed = false;
};

class HeatmapRenderer {
 public:
  HeatmapRenderer() = default;
  ~HeatmapRenderer();
  HeatmapRenderer(const HeatmapRenderer&) = delete;
  HeatmapRenderer& operator=(const HeatmapRenderer&) = delete;

  // Compiles the shaders; returns "" or the compile errors (file:line).
  std::string init();
  // Forgets last frame's parameters; call once per frame before any draw().
  void begin_frame() { pending_.clear(); }
  void draw(ImDrawList* list, const HeatmapDraw& params);

 private:
  struct Pending {
    HeatmapRenderer* self;
    HeatmapDraw params;
  };
  static void render_callback(const ImDrawList* list, const ImDrawCmd* cmd);
  void render(const HeatmapDraw& p, const ImDrawCmd* cmd);

  ShaderProgram program_;
  GLuint vao_ = 0;
  struct {
    GLint rect, values, size, view, range, colormap, cell_px, lit_row, lit_col, hover, selected, reveal, dim, fade_to, transpose;
  } loc_{};
  std::deque<Pending> pending_;  // deque: stable addresses for the callbacks
};

}  // namespace attention_lab::gfx
