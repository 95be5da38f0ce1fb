// The start-up question after a crash: what a dead session left unsaved, and
// when; Restore, Discard or Not now (kept for the next start).

#include "autosave.h"
#include "panels/panels.h"

#include <chrono>
#include <utility>
#include <imgui.h>

namespace attention_lab::gui {

void draw_recovery_dialog(AppState& state) {
  RecoveryState& r = state.recovery;
  if (r.offered.empty()) return;
  const char* const kTitle = kRecoveryDialogTitle;
  if (!ImGui::IsPopupOpen(kTitle)) ImGui::OpenPopup(kTitle);
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.45f),
                          ImGuiCond_Always, ImVec2(0.5f, 0.5f));
  if (!ImGui::BeginPopupModal(kTitle, nullptr, ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoMove)) return;
  const Orphan& o = r.offered.front();
  const float wrap = std::min(560.0f * ImGui::GetFontSize() / gfx::kBaseFontSize, vp->WorkSize.x * 0.8f);
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + wrap);
  ImGui::TextUnformatted("Attention Lab did not quit normally (a crash, a kill or a power cut) and left changes that were "
                         "not saved:");
  ImGui::Spacing();
  if (!o.error.empty()) {
    text_colored(gfx::Accent::Error, "This recovery file cannot be read: %s", o.error.c_str());
  } else {
    const RecoveryInfo& info = o.info;
    ImGui::Text("Scenario:  %s", info.title.empty() ? "(untitled)" : info.title.c_str());
    ImGui::Text("File:  %s", info.file_path.empty() ? "never saved" : info.file_path.c_str());
    if (!info.lesson_path.empty())
      ImGui::Text("Lesson:  %s, step %d", std::filesystem::path(info.lesson_path).stem().c_str(), info.lesson_step + 1);
    ImGui::Text("Size:  T = %d tokens, d_model = %d, %d head%s", info.T, info.d_model, info.heads, info.heads == 1 ? "" : "s");
    const auto now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    ImGui::Text("Autosaved:  %s", describe_saved_time(info.saved_unix, now).c_str());
  }
  if (r.offered.size() > 1)
    ImGui::TextDisabled("1 of %zu sessions with unsaved work; the others follow (or, after Restore, are offered at the next start).",
                        r.offered.size());
  ImGui::TextDisabled("Kept in %s until you decide.", o.file.parent_path().c_str());
  // A lecturer may have only a clicker in hand.
  ImGui::TextDisabled("PageDown, → or Enter: %s · PageUp, ← or Esc: Not now", o.error.empty() ? "Restore" : "Not now");
  ImGui::PopTextWrapPos();
  ImGui::Spacing();
  ImGui::BeginDisabled(!o.error.empty());
  const bool restore = ImGui::Button("Restore");
  state.note_item("recovery restore");
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("Open this work in this window, unsaved, with its file name (Ctrl+S saves it there)");
  ImGui::SameLine();
  const bool discard = ImGui::Button("Discard");
  state.note_item("recovery discard");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Delete this recovery file: the changes are lost");
  ImGui::SameLine();
  const bool later = ImGui::Button("Not now");
  state.note_item("recovery later");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Keep the file and ask again at the next start");
  // A key's answer (app.cpp): forward restores what can be restored, back keeps it for later.
  const int key = std::exchange(r.key_answer, 0);
  if (restore || (key > 0 && o.error.empty())) restore_orphan(state, 0);
  if (discard) {
    discard_orphan(r.offered.front());
    r.offered.erase(r.offered.begin());
  }
  if (later || key < 0 || (key > 0 && !o.error.empty())) {
    for (Orphan& left : r.offered) left.lock.release();
    r.offered.clear();
  }
  if (r.offered.empty()) ImGui::CloseCurrentPopup();
  ImGui::EndPopup();
}

}  // namespace attention_lab::gui
