#pragma once
// A colour of our colormaps (logic/colormap.h, GL- and ImGui-free) as the
// packed colour ImGui's draw lists take.

#include "logic/colormap.h"

#include <imgui.h>

namespace attention_lab::gui {

inline ImU32 to_u32(Rgb c, float alpha = 1.0f) { return ImGui::ColorConvertFloat4ToU32(ImVec4(c.r, c.g, c.b, alpha)); }

}  // namespace attention_lab::gui
