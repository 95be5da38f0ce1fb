#include "panels/panels.h"

#include "attention_lab/stage_info.h"
#include "logic/derivation.h"

#include <imgui.h>

#include <cfloat>
#include <optional>
#include <string>

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

// Text that wraps only at spaces, never inside a number: ImGui's own wrap
// may break after the point of "0.20". Each word is an item placed on the
// line when it fits.
void flow_text(const std::string& text, std::optional<gfx::Accent> colour = std::nullopt) {
  if (colour) {
    const gfx::AccentColor c = gfx::accent(*colour);
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(c.r, c.g, c.b, 1.0f));
  }
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  const float space = ImGui::CalcTextSize(" ").x;
  bool first = true;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(at, end - at);
    at = end + 1;
    if (word.empty()) continue;
    if (!first) {
      ImGui::SameLine(0.0f, space);
      if (ImGui::GetCursorScreenPos().x + ImGui::CalcTextSize(word.c_str()).x > right) ImGui::NewLine();
    }
    ImGui::TextUnformatted(word.c_str());
    first = false;
  }
  if (colour) ImGui::PopStyleColor();
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
    state.note_item("Quiz me");
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Hide a cell of what is shown and ask for its value (a random one each time;\n"
                        "never an input, a −∞, or a copy of a number printed elsewhere)");
    if (q.tally.asked > 0) {
      // beside the button when it fits, else under it: never cut at the panel's edge
      const std::string tally = q.tally.text();
      same_line_if_fits(ImGui::CalcTextSize(tally.c_str()).x);
      push_wrap_at_visible_edge();
      ImGui::TextDisabled("%s", tally.c_str());
      ImGui::PopTextWrapPos();
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
    if (!q.message.empty()) flow_text(q.message, gfx::Accent::Warning);
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
      flow_text(name + " = " + d.formula);
      flow_text("= " + d.hint);
      ImGui::PopTextWrapPos();
    }
    // A new verdict and the Hint button under it, in view (a short panel,
    // 720p presenter mode, left them below its edge)
    if (q.message != q.message_in_view) {
      if (!q.message.empty()) ImGui::SetScrollHereY(1.0f);
      q.message_in_view = q.message;
    }
  } else {
    if (round.solved)
      flow_text(q.message, gfx::Accent::Status);
    else
      flow_text(round.solution(), gfx::Accent::Highlight);
    // The derivation with the real numbers is in the inspector below: the
    // cell is selected now that it may be seen.
    if (ImGui::Button("Another")) state.start_quiz(std::nullopt);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("A random cell of what is shown");
    ImGui::SameLine();
    if (ImGui::Button("Stop")) q.round.reset();
  }
  push_wrap_at_visible_edge();
  ImGui::TextDisabled("%s", q.tally.text().c_str());
  ImGui::PopTextWrapPos();
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Questions answered right at the first try, out of those answered or shown.\n"
                      "A retry after a wrong answer teaches but does not change the count.");
}

}  // namespace attention_lab::gui
