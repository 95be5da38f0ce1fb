#include "panels/panels.h"

#include "gfx/fonts.h"

#include "attention_lab/stage_info.h"
#include "attention_lab/version.h"
#include "logic/gesture.h"

#include <imgui.h>

#include <utility>

#include <algorithm>
#include <cmath>

#include <cstdarg>

namespace attention_lab::gui {

void draw_help_windows(AppState& state) {
  if (state.show_help) {
    // Sized to the viewport, never beyond it: the table wraps its descriptions
    // instead of running off the right edge (at 1280×720 and in presenter mode).
    const ImGuiViewport* vp = ImGui::GetMainViewport();
    const ImVec2 want(std::min(680.0f * gfx::em(), vp->WorkSize.x * 0.9f), vp->WorkSize.y * 0.85f);
    ImGui::SetNextWindowSize(want, ImGuiCond_Appearing);
    ImGui::SetNextWindowSizeConstraints(ImVec2(240, 160), ImVec2(vp->WorkSize.x, vp->WorkSize.y));
    ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.5f),
                            ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
    if (ImGui::Begin("Help — how to read this screen (F1)", &state.show_help)) {
      ImGui::PushTextWrapPos(0.0f);
      ImGui::TextUnformatted(
          "Each coloured grid is one matrix of self-attention, drawn in the order of the math and read left to right "
          "like an equation: X·W_q = Q, then for the focused head Q·Kᵀ = scores, ÷√d_k, + mask, softmax, · V = context, "
          "and finally the heads concatenated and multiplied by W_o.");
      ImGui::Spacing();
      ImGui::TextUnformatted(
          "Rows are tokens. Blue is negative, red positive, white zero; attention weights use a yellow-green-purple "
          "scale from 0 to 1 (right-click a weights heatmap, or the controls panel, for a log or per-row scale). "
          "Hatched grey cells are −∞: the mask forbids them. A magenta outline marks a pinned cell.");
      ImGui::Spacing();
      ImGui::TextUnformatted(
          "Hover a cell: the cells it is computed from light up, and the inspector shows the calculation with the real "
          "numbers. A label ending in … is cut to fit: hover it for the whole word.");
      ImGui::PopTextWrapPos();
      ImGui::Separator();
      // Every key and gesture the app handles (App::handle_shortcuts, the
      // heatmap widget, the lesson panel). One row per line: add yours here.
      static constexpr const char* kKeys[][2] = {
          {"Hover a cell", "show where its value comes from"},
          {"Click", "select (sticky); Esc clears"},
          {"Drag up/down", "change an input, or pin a computed cell (Shift: finer)"},
          {"Double-click / Enter", "type an exact value for the hovered / selected cell"},
          {"Double-click a token or feature label", "rename it in place (Enter applies, Esc cancels)"},
          {"Click a mask cell", "toggle it (switches to a custom mask)"},
          {"Wheel over a heatmap", "zoom it (when the wheel started over it; otherwise the page scrolls)"},
          {"Ctrl+drag", "pan a zoomed heatmap"},
          {"Right-click a heatmap", "reset zoom, colour scale, copy, export, unpin, randomize"},
          {"Right-click ▸ Export PNG…", "the heatmap with title, labels and colour bar at 1×, 2× or 4×"},
          {"File ▸ Export step / view as PNG…", "what the centre shows for this step / the whole centre view"},
          {"← / →", "previous / next step (in a lesson: previous / next lesson step)"},
          {"PageUp / PageDown", "previous / next step; in a lesson the slide's previous / next page, then step "
                                "(presentation clickers send these; they also close the value box and leave the quiz's answer box)"},
          {"Space", "play / pause the steps (in a lesson: next lesson step; Shift+Space or Backspace: previous)"},
          {"Esc", "clear the selection; close a dialog"},
          {"Ctrl+Z", "undo"},
          {"Ctrl+Shift+Z, Ctrl+Y", "redo"},
          {"Ctrl+O", "open a scenario or lesson (asks first when there are unsaved changes)"},
          {"Ctrl+S / Ctrl+Shift+S", "save / save as"},
          {"Ctrl+T", "take a snapshot to compare against (Compare)"},
          {"Ctrl+G", "the Pipeline shows values, gradients of the loss, or both"},
          {"Ctrl+= / Ctrl+-", "bigger / smaller text and cells"},
          {"Q (quiz)", "type the answer (or click the answer box); Enter checks"},
          {"H (quiz)", "hint after a wrong answer: the cells it is made from light up"},
          {"B or .", "blank (black) screen; B, . or PageDown/PageUp bring it back"},
          {"P (in a lesson)", "the step's slide / the whole pipeline to explore"},
          {"N (in a lesson)", "fold the step's text to one line / show it all (the slide folds it itself when it needs the room)"},
          {"C (in a lesson)", "carry the what-if the step change set aside (your edits of the last step) into this step"},
          {"Shift+C (in a lesson)", "carry every what-if on into the next steps / let each step start from the lesson's numbers"},
          {"L (presenter mode)", "the ring around the mouse pointer on / off"},
          {"F5", "presenter mode on / off (full screen, large text)"},
          {"F1", "this help"},
          {"Ctrl+Q", "quit (asks first when there are unsaved changes)"},
          {"attention-lab --recover", "restore, without asking, what a crashed or killed session left unsaved (autosaved "
                                      "a few seconds after each change; the next start offers it too)"},
      };
      if (ImGui::BeginTable("keys", 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp)) {
        // The key column as wide as its longest entry, the description wraps in the rest.
        float key_w = 0.0f;
        for (const auto& k : kKeys) key_w = std::max(key_w, ImGui::CalcTextSize(k[0]).x);
        ImGui::TableSetupColumn("key", ImGuiTableColumnFlags_WidthFixed, key_w);
        ImGui::TableSetupColumn("what", ImGuiTableColumnFlags_WidthStretch);
        for (const auto& k : kKeys) {
          ImGui::TableNextRow();
          ImGui::TableNextColumn();
          ImGui::TextUnformatted(k[0]);
          ImGui::TableNextColumn();
          ImGui::PushTextWrapPos(0.0f);
          ImGui::TextUnformatted(k[1]);
          ImGui::PopTextWrapPos();
        }
        ImGui::EndTable();
      }
    }
    ImGui::End();
  }
  if (state.show_about) {
    ImGui::OpenPopup("About Attention Lab");
    state.show_about = false;
  }
  if (ImGui::BeginPopupModal("About Attention Lab", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    ImGui::Text("Attention Lab %s", version());
    ImGui::TextUnformatted("Step through self-attention and change every number of it.");
    ImGui::TextDisabled("Dear ImGui %s, Eigen, GLFW, OpenGL 3.3", ImGui::GetVersion());
    if (ImGui::Button("Close")) ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
  }
}

void draw_typing_popup(AppState& state) {
  TypingState& t = state.typing;
  if (t.open_requested) {
    const float v = state.doc->stage(t.cell.stage)(t.cell.row, t.cell.col);
    std::snprintf(t.buffer, sizeof t.buffer, "%g", static_cast<double>(std::isfinite(v) ? v : 0.0f));
    t.error.clear();
    ImGui::OpenPopup("Set value");
    t.open_requested = false;
  }
  t.open = ImGui::BeginPopup("Set value");
  if (t.open) {
    const std::string what = cell_symbol(state.doc->scenario(), t.cell.stage, t.cell.row, t.cell.col);
    ImGui::Text("%s %s", is_input(t.cell.stage.kind) ? "Set" : "Pin", what.c_str());
    if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
    const bool enter = ImGui::InputText("##value", t.buffer, sizeof t.buffer, ImGuiInputTextFlags_EnterReturnsTrue |
                                                                                ImGuiInputTextFlags_AutoSelectAll);
    if (!t.error.empty()) text_colored(gfx::Accent::Error, "%s", t.error.c_str());
    if (std::exchange(t.close_requested, false)) ImGui::CloseCurrentPopup();
    if (ImGui::Button("OK") || enter || std::exchange(t.apply_requested, false)) {
      if (const auto v = parse_typed_value(t.buffer)) {
        // The same number again in an input changes nothing: no undo step, no
        // "modified". (In a computed stage it still pins the cell there.)
        const float current = state.doc->stage(t.cell.stage)(t.cell.row, t.cell.col);
        if (is_input(t.cell.stage.kind) && *v == current && std::signbit(*v) == std::signbit(current))
          ImGui::CloseCurrentPopup();
        else if (state.apply(cell_edit(t.cell.stage, t.cell.row, t.cell.col, *v))) ImGui::CloseCurrentPopup();
        else t.error = state.status;
      } else {
        t.error = std::string("expected a finite number, found '") + t.buffer + "'";
      }
    }
    ImGui::EndPopup();
  }
}

}  // namespace attention_lab::gui

namespace attention_lab::gui {

namespace {
// The right edge of what the window shows, in window coordinates.
float visible_right_edge() {
  const ImGuiStyle& style = ImGui::GetStyle();
  const float scrollbar = ImGui::GetScrollMaxY() > 0.0f ? style.ScrollbarSize : 0.0f;
  return ImGui::GetScrollX() + ImGui::GetWindowWidth() - style.WindowPadding.x - scrollbar;
}
}  // namespace

void push_wrap_at_visible_edge() { ImGui::PushTextWrapPos(visible_right_edge()); }

float visible_width_left() { return std::max(0.0f, visible_right_edge() - ImGui::GetCursorPosX()); }

void same_line_if_fits(float width) {
  const float after_last = ImGui::GetItemRectMax().x - ImGui::GetWindowPos().x + ImGui::GetScrollX();
  if (after_last + ImGui::GetStyle().ItemSpacing.x + width <= visible_right_edge()) ImGui::SameLine();
}

void text_colored(gfx::Accent which, const char* fmt, ...) {
  const gfx::AccentColor c = gfx::accent(which);
  va_list args;
  va_start(args, fmt);
  ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(c.r, c.g, c.b, c.a));
  ImGui::TextV(fmt, args);
  ImGui::PopStyleColor();
  va_end(args);
}

}  // namespace attention_lab::gui
