#include "panels/panels.h"

#include "attention_lab/stage_info.h"
#include "logic/derivation.h"
#include "logic/number_format.h"

#include <imgui.h>

namespace attention_lab::gui {

void draw_quiz_section(AppState& state) {
  QuizState& q = state.quiz;
  if (!q.question) {
    if (ImGui::Button("Quiz me")) state.start_quiz(std::nullopt);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Hide a cell of the current step and ask for its value (a random one each time)");
    if (q.tally.asked > 0) {
      ImGui::SameLine();
      ImGui::TextDisabled("%s", q.tally.text().c_str());
    }
    return;
  }
  const CellRef& cell = q.question->cell;
  const StageInfo info = describe_stage(state.doc->scenario(), cell.stage);
  std::string where = info.symbol + "[" + std::to_string(cell.row) + "," + std::to_string(cell.col) + "]";
  ImGui::PushTextWrapPos(0.0f);
  text_colored(gfx::Accent::Highlight, "Quiz: what is %s?", where.c_str());
  ImGui::TextDisabled("%s; the cell is hidden (?) in the pipeline. Work it out from the cells it is made from.",
                      info.name.c_str());
  ImGui::PopTextWrapPos();
  if (!q.result) {
    if (q.focus_answer) {
      ImGui::SetKeyboardFocusHere();
      q.focus_answer = false;
    }
    ImGui::SetNextItemWidth(140);
    const bool enter = ImGui::InputText("##answer", q.answer, sizeof q.answer, ImGuiInputTextFlags_EnterReturnsTrue);
    ImGui::SameLine();
    if (ImGui::Button("Check") || enter) state.check_quiz_answer();
    ImGui::SameLine();
    if (ImGui::Button("Give up")) {
      q.result = AnswerCheck{};
      q.result->message = "The answer is " + format_number(static_cast<float>(q.question->truth), 4) + ".";
      ++q.tally.asked;
      state.selected = cell;
    }
  } else {
    push_wrap_at_visible_edge();  // the message is longer than the inspector is wide
    text_colored(q.result->correct ? gfx::Accent::Status : gfx::Accent::Warning, "%s", q.result->message.c_str());
    ImGui::PopTextWrapPos();
    // The derivation with the real numbers, now that it may be seen.
    const Derivation d = derive(*state.doc, cell.stage, cell.row, cell.col);
    ImGui::PushTextWrapPos(0.0f);
    ImGui::Text("= %s", d.formula.c_str());
    ImGui::Text("= %s", d.numbers.c_str());
    ImGui::PopTextWrapPos();
    if (ImGui::Button("Another")) state.start_quiz(std::nullopt);
    ImGui::SameLine();
    if (ImGui::Button("Stop")) q.question.reset();
  }
  ImGui::TextDisabled("%s", q.tally.text().c_str());
}

}  // namespace attention_lab::gui
