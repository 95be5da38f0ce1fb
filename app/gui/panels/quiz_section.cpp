#include "panels/panels.h"

#include "attention_lab/stage_info.h"
#include "logic/derivation.h"

#include <imgui.h>

#include <cfloat>

namespace attention_lab::gui {

namespace {

Rect last_item_rect() {
  return Rect{ImGui::GetItemRectMin().x, ImGui::GetItemRectMin().y, ImGui::GetItemRectMax().x, ImGui::GetItemRectMax().y};
}

// The answer box takes what a number is written with ("0.25", "-1.5",
// "−1.5", "0,25", "1e-3") and nothing else, so a stray letter (the Q that
// focused it) never lands in the answer.
int number_chars_only(ImGuiInputTextCallbackData* data) {
  const ImWchar c = data->EventChar;
  const bool ok = (c >= '0' && c <= '9') || c == '.' || c == ',' || c == '-' || c == '+' || c == 'e' || c == 'E' ||
                  c == ' ' || c == 0x2212;
  return ok ? 0 : 1;
}

void draw_answer_box(AppState& state) {
  QuizState& q = state.quiz;
  // Taking the keyboard selects what is there, so a retry types over the
  // wrong answer. Each round is a new widget: a box still active from the last question
  // (the clicker moved on while it had the keyboard) does not carry its text over.
  ImGui::PushID(static_cast<int>(q.picks));
  if (q.focus_answer) {
    ImGui::SetKeyboardFocusHere();
    q.focus_answer = false;
  }
  ImGui::SetNextItemWidth(-FLT_MIN);  // the whole inspector width: the hint text is never cut
  const bool enter = ImGui::InputTextWithHint("##answer", "press Q or click to answer", q.answer, sizeof q.answer,
                                              ImGuiInputTextFlags_EnterReturnsTrue | ImGuiInputTextFlags_CallbackCharFilter |
                                                  ImGuiInputTextFlags_AutoSelectAll,
                                              number_chars_only);
  q.answer_focused = ImGui::IsItemActive();
  q.answer_box = last_item_rect();
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Type the value and press Enter. Q puts the keyboard here;\n"
                      "PageDown/PageUp still move through a lesson while you type.");
  ImGui::PopID();
  if (ImGui::Button("Check") || enter) state.check_quiz_answer();
  ImGui::SameLine();
  if (ImGui::Button("Show answer")) state.show_quiz_answer();
  q.show_button = last_item_rect();
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Give the value and how it is computed (counts as not right at the first try)");
}

}  // namespace

void draw_quiz_section(AppState& state) {
  QuizState& q = state.quiz;
  q.answer_focused = false;
  q.answer_box = q.hint_button = q.show_button = Rect{};
  if (!q.round) {
    if (ImGui::Button("Quiz me")) state.start_quiz(std::nullopt);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Hide a cell of what is shown and ask for its value (a random one each time;\n"
                        "never an input, a −∞, or a copy of a number printed elsewhere)");
    if (q.tally.asked > 0) {
      ImGui::SameLine();
      ImGui::TextDisabled("%s", q.tally.text().c_str());
    }
    return;
  }
  const QuizRound& round = *q.round;
  const CellRef& cell = round.question.cell;
  const std::string& name = round.question.name;
  const StageInfo& info = state.stage_info(cell.stage);
  ImGui::PushTextWrapPos(0.0f);
  // The teacher's question, with the cell as a subtitle; else the cell itself.
  if (!round.question.text.empty()) {
    text_colored(gfx::Accent::Highlight, "Quiz: %s", round.question.text.c_str());
    ImGui::TextDisabled("%s — %s, the ? in the view.", name.c_str(), info.name.c_str());
  } else {
    text_colored(gfx::Accent::Highlight, "Quiz: what is %s?", name.c_str());
    ImGui::TextDisabled("%s; the cell is hidden (?) in the view. Work it out from the cells it is made from.",
                        info.name.c_str());
  }
  ImGui::PopTextWrapPos();

  if (!round.over()) {
    draw_answer_box(state);
    if (!q.message.empty()) {
      push_wrap_at_visible_edge();
      text_colored(gfx::Accent::Warning, "%s", q.message.c_str());
      ImGui::PopTextWrapPos();
    }
    if (round.hint_offered() && !q.hint) {
      if (ImGui::Button("Hint")) q.hint = true;
      q.hint_button = last_item_rect();
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Light up the cells %s is made from and show its formula without the result (H)", name.c_str());
    } else if (q.hint) {
      // The arithmetic with the real inputs, stopping before the result.
      const Derivation d = derive(*state.doc, cell.stage, cell.row, cell.col);
      ImGui::PushTextWrapPos(0.0f);
      ImGui::TextDisabled("Hint: it is made from the lit cells.");
      ImGui::Text("%s = %s", name.c_str(), d.formula.c_str());
      ImGui::Text("= %s", d.hint.c_str());
      ImGui::PopTextWrapPos();
    }
  } else {
    push_wrap_at_visible_edge();  // the message is longer than the inspector is wide
    if (round.solved)
      text_colored(gfx::Accent::Status, "%s", q.message.c_str());
    else
      text_colored(gfx::Accent::Highlight, "%s", round.solution().c_str());
    ImGui::PopTextWrapPos();
    // The derivation with the real numbers is in the inspector below: the
    // cell is selected now that it may be seen.
    if (ImGui::Button("Another")) state.start_quiz(std::nullopt);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("A random cell of what is shown");
    ImGui::SameLine();
    if (ImGui::Button("Stop")) q.round.reset();
  }
  ImGui::TextDisabled("%s", q.tally.text().c_str());
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Questions answered right at the first try, out of those answered or shown.\n"
                      "A retry after a wrong answer teaches but does not change the count.");
}

}  // namespace attention_lab::gui
