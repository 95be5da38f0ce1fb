#include "panels/panels.h"

#include <imgui.h>

namespace attention_lab::gui {

void draw_lesson_panel(AppState& state) {
  LessonState& ls = state.lesson;
  const Lesson& lesson = *ls.lesson;
  const int count = static_cast<int>(lesson.steps.size());
  const LessonStep& step = lesson.steps[static_cast<std::size_t>(std::clamp(ls.step, 0, count - 1))];
  if (ImGui::ArrowButton("lesson back", ImGuiDir_Left)) state.go_to_lesson_step(ls.step - 1);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Back (PageUp or ←)");
  ImGui::SameLine();
  ImGui::Text("Step %d of %d", ls.step + 1, count);
  ImGui::SameLine();
  if (ImGui::ArrowButton("lesson next", ImGuiDir_Right)) state.go_to_lesson_step(ls.step + 1);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Next (PageDown, → or a presentation clicker)");
  ImGui::SameLine();
  text_colored(gfx::Accent::Highlight, "%s", step.title.c_str());
  ImGui::SameLine();
  ImGui::TextDisabled("— %s", lesson.title.c_str());
  ImGui::SameLine(ImGui::GetWindowWidth() - ImGui::CalcTextSize("Close lesson").x - 24);
  if (ImGui::SmallButton("Close lesson")) {
    ls = LessonState{};
    state.set_status("Lesson closed; the scenario stays as it is");
    return;
  }
  ImGui::PushTextWrapPos(0.0f);
  if (!step.formula.empty()) text_colored(gfx::Accent::Highlight, "%s", step.formula.c_str());
  ImGui::TextUnformatted(step.text.c_str());
  if (!step.try_prompt.empty()) text_colored(gfx::Accent::Status, "Try this: %s", step.try_prompt.c_str());
  ImGui::PopTextWrapPos();
}

}  // namespace attention_lab::gui
