#pragma once
// Slide-quality PNGs: a heatmap, the current step or the whole centre view,
// drawn by the same panel code into a separate Dear ImGui context (no input,
// light theme, fonts rasterized at K× their size) and rendered into an
// off-screen framebuffer of K× the logical size. Nothing on screen (a dialog,
// a tooltip, the pointer) can reach the picture.

#include "app_state.h"
#include "logic/export_names.h"

#include <string>

namespace attention_lab::gui {

struct ExportResult {
  std::string error;       // "" when the PNG was written
  int width = 0, height = 0;  // pixels written (K × the logical size)
};

// Call between frames with the GL context current (after the window's frame
// was rendered): it switches ImGui contexts and back.
ExportResult render_export(AppState& state, const ExportRequest& request);

// The file name an export of `target` suggests for the current state.
std::string suggested_export_name(const AppState& state, const ExportTarget& target);

}  // namespace attention_lab::gui
