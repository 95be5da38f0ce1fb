#include "panels/panels.h"

#include "gfx/fonts.h"

#include "attention_lab/stage_info.h"
#include "logic/steps.h"
#include "logic/text_fit.h"

#include <imgui.h>

namespace attention_lab::gui {

void step_to(AppState& state, int step) {
  const int last = static_cast<int>(steps().size()) - 1;
  state.step = std::clamp(step, -1, last);
  state.step_started = state.clock.now();
  state.scroll_to_step = state.step >= 0;
}

void draw_step_bar(AppState& state) {
  const auto& list = steps();
  const int last = static_cast<int>(list.size()) - 1;
  if (ImGui::ArrowButton("prev", ImGuiDir_Left)) step_to(state, state.step < 0 ? last : state.step - 1);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Previous step (←)");
  ImGui::SameLine();
  if (ImGui::Button(state.playing ? "Pause" : "Play")) {
    state.playing = !state.playing;
    if (state.playing && (state.step < 0 || state.step == last)) step_to(state, 0);
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Play through the steps (Space)");
  ImGui::SameLine();
  if (ImGui::ArrowButton("next", ImGuiDir_Right)) step_to(state, state.step >= last ? -1 : state.step + 1);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Next step (→)");
  ImGui::SameLine();
  if (ImGui::Button("Show all")) step_to(state, -1);
  ImGui::SameLine();
  for (int i = 0; i <= last; ++i) {
    ImGui::SameLine(0, 2);
    const bool current = i == state.step;
    if (current) ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetStyleColorVec4(ImGuiCol_ButtonActive));
    if (ImGui::Button(std::to_string(i + 1).c_str())) step_to(state, i);
    if (current) ImGui::PopStyleColor();
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", list[static_cast<std::size_t>(i)].title.c_str());
  }
  // The status line shares the buttons' row, right-aligned, for a few seconds;
  // where it does not fit beside them (presenter fonts, a narrow window) it
  // ends in "…" and the whole of it is in a tooltip; hovering it keeps it.
  const float buttons_end = ImGui::GetItemRectMax().x - ImGui::GetWindowPos().x;
  if (!state.status.empty() && state.clock.now() - state.status_time < 8.0) {
    const float room = ImGui::GetWindowWidth() - 16 - (buttons_end + 20);
    const TextMeasure measure = [](std::string_view t) { return ImGui::CalcTextSize(t.data(), t.data() + t.size()).x; };
    const std::string shown = ellipsize(state.status, room, measure);
    if (!shown.empty()) {
      ImGui::SameLine(ImGui::GetWindowWidth() - measure(shown) - 16);
      text_colored(gfx::Accent::Status, "%s", shown.c_str());
      if (ImGui::IsItemHovered()) {
        state.status_time = state.clock.now();  // read while hovered: it stays
        if (shown != state.status) ImGui::SetTooltip("%s", state.status.c_str());
      }
    }
  }

  if (state.step < 0) {
    ImGui::TextUnformatted("All stages shown.");
    ImGui::TextDisabled("Press → or Space to walk through attention one step at a time.");
    return;
  }
  const Step& step = list[static_cast<std::size_t>(state.step)];
  const StageId focus = is_per_head(step.focus) ? StageId::of_head(step.focus, state.focused_head)
                                                : StageId::input(step.focus);
  const StageInfo& info = state.stage_info(focus);
  ImGui::Text("Step %d of %d: %s", state.step + 1, last + 1, step.title.c_str());
  ImGui::SameLine(0, 20);
  text_colored(gfx::Accent::Highlight, "%s", info.formula.c_str());
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextDisabled("%s", info.explanation.c_str());
  ImGui::PopTextWrapPos();
}

}  // namespace attention_lab::gui
