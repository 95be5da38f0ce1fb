#include "panels/panels.h"

#include <imgui.h>

namespace attention_lab::gui {

// A clicker's "blank screen" (B or '.'): the whole window black, in front of
// everything, and a window that takes the mouse so no hidden widget reacts to
// a click the room cannot see.
void draw_blank_screen(AppState& state) {
  if (!state.blank) return;
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(vp->Pos);
  ImGui::SetNextWindowSize(vp->Size);
  ImGui::SetNextWindowFocus();
  ImGui::PushStyleColor(ImGuiCol_WindowBg, IM_COL32(0, 0, 0, 255));
  ImGui::Begin("##blank screen", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                   ImGuiWindowFlags_NoNav);
  ImGui::End();
  ImGui::PopStyleColor();
  ImGui::GetForegroundDrawList()->AddRectFilled(vp->Pos, ImVec2(vp->Pos.x + vp->Size.x, vp->Pos.y + vp->Size.y),
                                                IM_COL32(0, 0, 0, 255));
}

}  // namespace attention_lab::gui
