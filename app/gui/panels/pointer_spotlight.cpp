// Presenter mode: a soft ring around the mouse pointer, drawn over everything,
// so the back of a lecture hall can see what the presenter points at.

#include "panels/panels.h"

#include <imgui.h>

namespace attention_lab::gui {

void draw_pointer_spotlight(AppState& state) {
  const ImGuiIO& io = ImGui::GetIO();
  if (io.MouseDelta.x != 0.0f || io.MouseDelta.y != 0.0f) state.pointer_moved = true;
  // Nothing shows on a blanked screen, the ring included.
  if (!state.presenter || !state.pointer_spotlight || !state.pointer_moved || state.blank) return;
  const ImVec2 at = io.MousePos;
  if (!ImGui::IsMousePosValid(&at)) return;  // the pointer is outside the window
  const float em = gfx::em();
  const float radius = 22.0f * em;
  ImDrawList* dl = ImGui::GetForegroundDrawList();
  // A translucent disc lights up what is under the pointer without hiding it;
  // a dark outer edge keeps the ring visible on light and dark cells alike.
  dl->AddCircleFilled(at, radius, IM_COL32(255, 170, 0, 55), 48);
  dl->AddCircle(at, radius, IM_COL32(255, 140, 0, 235), 48, 4.0f * em);
  dl->AddCircle(at, radius + 2.5f * em, IM_COL32(60, 30, 0, 120), 48, 1.5f * em);
}

}  // namespace attention_lab::gui
