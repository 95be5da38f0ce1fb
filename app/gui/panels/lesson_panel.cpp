#include "panels/panels.h"

#include <imgui.h>

namespace attention_lab::gui {

namespace {

const LessonStep& current(const LessonState& ls) {
  const int count = static_cast<int>(ls.lesson->steps.size());
  return ls.lesson->steps[static_cast<std::size_t>(std::clamp(ls.step, 0, count - 1))];
}

const char* view_button_label(const LessonState& ls) { return ls.whole_pipeline ? "Slide" : "Whole pipeline"; }
const char* fold_button_label(bool folded) { return folded ? "Show text" : "Hide text"; }

// Width of the buttons at the right end of the header row (both labels of
// the fold button take the same room, so the title never jumps).
float header_buttons_width(const LessonState& ls, const LessonStep& step) {
  const ImGuiStyle& style = ImGui::GetStyle();
  float w = ImGui::CalcTextSize("Close lesson").x + style.FramePadding.x * 2;
  w += std::max(ImGui::CalcTextSize(fold_button_label(true)).x, ImGui::CalcTextSize(fold_button_label(false)).x) +
       style.FramePadding.x * 2 + style.ItemSpacing.x;
  if (!step.show.empty()) w += ImGui::CalcTextSize(view_button_label(ls)).x + style.FramePadding.x * 2 + style.ItemSpacing.x;
  return w;
}

// "Step 3 of 9", and the page of a slide shown in pages.
std::string where_text(const AppState& state) {
  const LessonState& ls = state.lesson;
  std::string where = "Step " + std::to_string(ls.step + 1) + " of " + std::to_string(ls.lesson->steps.size());
  if (showing_slide(state) && state.slide.pages > 1)
    where += ", page " + std::to_string(state.slide.page + 1) + "/" + std::to_string(state.slide.pages);
  return where;
}

float header_left_width(const AppState& state) {
  const ImGuiStyle& style = ImGui::GetStyle();
  // Room for a page number whether or not the slide has pages now, so the
  // title's place (and the panel's height) never depends on it.
  const std::string where = "Step " + std::to_string(state.lesson.step + 1) + " of " +
                            std::to_string(state.lesson.lesson->steps.size()) + (showing_slide(state) ? ", page 0/0" : "");
  return 2 * ImGui::GetFrameHeight() + ImGui::CalcTextSize(where.c_str()).x + 3 * style.ItemSpacing.x;
}

// The step's title shares the header row when it fits before the buttons;
// otherwise it gets a line of its own (wrapped), never cut.
bool title_on_header(const AppState& state, const LessonStep& step, float inner_w) {
  const LessonState& ls = state.lesson;
  const float spacing = ImGui::GetStyle().ItemSpacing.x;
  return header_left_width(state) + ImGui::CalcTextSize(step.title.c_str()).x + 2 * spacing + header_buttons_width(ls, step) <=
         inner_w;
}

// Folded, the text is one line: its start, cut before " … N: more".
constexpr const char* kMore = "  … N: more";

std::string first_line(const LessonStep& step, float width) {
  const std::string& text = step.text;
  const char* end = text.c_str() + std::min(text.size(), text.find('\n'));
  const char* rest = nullptr;  // the first character past the room (whole UTF-8 characters)
  ImGui::GetFont()->CalcTextSizeA(ImGui::GetFontSize(), std::max(1.0f, width - ImGui::CalcTextSize(kMore).x), 0.0f,
                                  text.c_str(), end, &rest);
  std::string line(text.c_str(), rest);
  // Cut at a word when the line is cut at all.
  if (rest != text.c_str() + text.size())
    if (const auto space = line.find_last_of(' '); space != std::string::npos && space > line.size() / 2) line.resize(space);
  return line;
}

// A what-if the step change set aside, said where the room sees it (the
// status line is hidden in presenter mode); empty when there is none.
std::string what_if_note(const LessonState& ls) {
  if (ls.set_aside.summary.empty()) return {};
  if (ls.carried) return "Your change is carried into this step: " + ls.set_aside.summary + " (Ctrl+Z takes it out)";
  return "Your change was set aside: " + ls.set_aside.summary + " (C carries it into this step, Ctrl+Z goes back to it)";
}

}  // namespace

float lesson_panel_height(const AppState& state, float width, bool folded) {
  const LessonState& ls = state.lesson;
  if (!ls.lesson) return 0.0f;
  const LessonStep& step = current(ls);
  const ImGuiStyle& style = ImGui::GetStyle();
  const float inner_w = width - 2 * style.WindowPadding.x;
  const auto wrapped = [&](const std::string& text) {
    return ImGui::CalcTextSize(text.c_str(), nullptr, false, std::max(1.0f, inner_w)).y + style.ItemSpacing.y;
  };
  float h = 2 * style.WindowPadding.y + ImGui::GetFrameHeight() + style.ItemSpacing.y;
  if (!title_on_header(state, step, inner_w)) h += wrapped(step.title);
  if (const std::string note = what_if_note(ls); !note.empty()) h += wrapped(note);
  if (folded && !step.text.empty()) h += ImGui::GetTextLineHeightWithSpacing();
  if (!folded) {
    if (!step.formula.empty()) h += wrapped(step.formula);
    h += wrapped(step.text);
    if (!step.try_prompt.empty()) h += wrapped("Try this: " + step.try_prompt);
  }
  h -= style.ItemSpacing.y;  // none after the last line
  // What the panel measured last frame (it may hold more than this estimate
  // knows of; not when the text was just folded away).
  return folded ? h : std::max(h, ls.measured_text_h);
}

void draw_lesson_panel(AppState& state) {
  LessonState& ls = state.lesson;
  const Lesson& lesson = *ls.lesson;
  const LessonStep& step = current(ls);
  const float inner_w = ImGui::GetContentRegionAvail().x;
  if (ImGui::ArrowButton("lesson back", ImGuiDir_Left)) state.lesson_back();
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Back (PageUp or ←)");
  ImGui::SameLine();
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(where_text(state).c_str());
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", lesson.title.c_str());
  ImGui::SameLine();
  if (ImGui::ArrowButton("lesson next", ImGuiDir_Right)) state.lesson_next();
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Next (PageDown, → or a presentation clicker)");
  const bool title_here = title_on_header(state, step, inner_w);
  const bool folded = ls.folded_this_frame;  // as the frame sized the panel
  if (title_here) {
    ImGui::SameLine();
    text_colored(gfx::Accent::Highlight, "%s", step.title.c_str());
    // The lesson's title too, when there is room for it.
    const std::string lesson_title = "— " + lesson.title;
    const float room = ImGui::GetWindowContentRegionMax().x - ImGui::GetItemRectMax().x + ImGui::GetWindowPos().x -
                       header_buttons_width(ls, step) - 3 * ImGui::GetStyle().ItemSpacing.x;
    if (ImGui::CalcTextSize(lesson_title.c_str()).x <= room) {
      ImGui::SameLine();
      ImGui::TextDisabled("%s", lesson_title.c_str());
    }
  }
  ImGui::SameLine(ImGui::GetWindowContentRegionMax().x - header_buttons_width(ls, step));
  if (!step.show.empty()) {
    if (ImGui::SmallButton(view_button_label(ls))) {
      ls.whole_pipeline = !ls.whole_pipeline;
      state.scroll_to_step = ls.whole_pipeline;
    }
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(ls.whole_pipeline ? "Back to this step's slide (P)"
                                          : "Explore the whole pipeline, scrolling freely (P); press again for the slide");
    ImGui::SameLine();
  }
  if (ImGui::SmallButton(fold_button_label(folded))) {
    ls.text_folded = !folded;
    ls.text_kept_open = folded;
  }
  state.note_item("lesson fold text");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(folded ? "Show the step's text again (N); the slide may then page its equations"
                                     : "Fold the step's text away, so the slide gets the room: on a small projector\n"
                                       "its numbers grow big enough to read (N)");
  ImGui::SameLine();
  if (ImGui::SmallButton("Close lesson")) {
    ls = LessonState{};
    state.set_status("Lesson closed; the scenario stays as it is");
    return;
  }
  ImGui::PushTextWrapPos(0.0f);
  if (!title_here) text_colored(gfx::Accent::Highlight, "%s", step.title.c_str());
  if (const std::string note = what_if_note(ls); !note.empty()) text_colored(gfx::Accent::Status, "%s", note.c_str());
  if (folded && !step.text.empty()) {
    const std::string line = first_line(step, ImGui::GetContentRegionAvail().x);
    ImGui::TextUnformatted(line.c_str());
    ImGui::SameLine(0.0f, 0.0f);
    ImGui::TextDisabled("%s", line.size() < step.text.size() ? kMore : "  (N: more)");
  }
  if (!folded) {
    if (!step.formula.empty()) text_colored(gfx::Accent::Highlight, "%s", step.formula.c_str());
    ImGui::TextUnformatted(step.text.c_str());
    if (!step.try_prompt.empty()) text_colored(gfx::Accent::Status, "Try this: %s", step.try_prompt.c_str());
  }
  ImGui::PopTextWrapPos();
  // Everything drawn must be inside the panel; the frame sizes it from this.
  const float bottom = ImGui::GetItemRectMax().y;
  const float window_bottom = ImGui::GetWindowPos().y + ImGui::GetWindowHeight();
  // (Measured with the text shown: it is what the panel needs unfolded.)
  if (!folded) ls.measured_text_h = bottom - ImGui::GetWindowPos().y + ImGui::GetScrollY() + ImGui::GetStyle().WindowPadding.y;
  ls.text_clipped = bottom > window_bottom - ImGui::GetStyle().WindowPadding.y * 0.5f + 0.5f;
}

}  // namespace attention_lab::gui
