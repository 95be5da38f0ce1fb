#include "panels/panels.h"

#include "gfx/fonts.h"

#include "attention_lab/stage_info.h"
#include "logic/derivation.h"
#include "logic/number_format.h"

#include <imgui.h>

namespace attention_lab::gui {

void draw_inspector_panel(AppState& state) {
  const Document& doc = *state.doc;
  const std::optional<CellRef> cell = state.hovered ? state.hovered : state.selected;
  draw_quiz_section(state);
  if (state.quiz.round) ImGui::Separator();
  ImGui::TextDisabled("Inspector");
  if (cell && state.quiz_hides(cell->stage, cell->row, cell->col)) {
    ImGui::TextUnformatted("This cell is the quiz: its value and derivation stay hidden until you answer.");
  } else if (!cell) {
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted("Hover a cell to see where its number comes from. Click to keep it selected (Esc clears).");
    ImGui::TextDisabled("Drag a cell up or down to change it; double-click or Enter to type a value.");
    ImGui::PopTextWrapPos();
  } else {
    const Derivation d = derive(doc, cell->stage, cell->row, cell->col);
    const StageInfo info = describe_stage(doc.scenario(), cell->stage);
    ImGui::PushTextWrapPos(0.0f);
    text_colored(gfx::Accent::Highlight, "%s", d.title.c_str());
    ImGui::TextDisabled("%s", info.name.c_str());
    ImGui::Text("= %s", d.formula.c_str());
    ImGui::Text("= %s", d.numbers.c_str());
    if (!d.note.empty()) text_colored(gfx::Accent::Pin, "%s", d.note.c_str());
    ImGui::Spacing();
    ImGui::TextDisabled("%s", info.explanation.c_str());
    ImGui::PopTextWrapPos();
  }

  ImGui::Separator();
  const auto& pins = doc.scenario().pins;
  ImGui::TextDisabled("Pins (%zu)", pins.size());
  if (pins.empty()) {
    ImGui::TextDisabled("Drag a computed cell to pin it.");
  } else {
    for (const auto& [key, value] : pins) {
      const std::string label = to_string(key.stage) + "[" + std::to_string(key.row) + "," + std::to_string(key.col) +
                                "] = " + format_number(value, 3);
      ImGui::PushID(label.c_str());
      if (ImGui::SmallButton("x")) {
        state.apply(SetPin{key, std::nullopt});
        ImGui::PopID();
        break;  // the map changed under the loop
      }
      ImGui::SameLine();
      if (ImGui::Selectable(label.c_str())) state.selected = CellRef{key.stage, key.row, key.col};
      ImGui::PopID();
    }
    if (ImGui::Button("Clear pins")) state.apply(SetPins{});
  }

  const auto& warnings = doc.engine().warnings();
  if (!warnings.empty()) {
    ImGui::Separator();
    text_colored(gfx::Accent::Warning, "Warnings (%zu)", warnings.size());
    ImGui::PushTextWrapPos(0.0f);
    for (std::size_t i = 0; i < warnings.size() && i < 20; ++i) ImGui::BulletText("%s", warnings[i].message.c_str());
    ImGui::PopTextWrapPos();
  }
}

}  // namespace attention_lab::gui
