#include "panels/panels.h"

#include "gfx/fonts.h"

#include "attention_lab/version.h"
#include "logic/gesture.h"

#include <imgui.h>

#include <cmath>

#include <cstdarg>

namespace attention_lab::gui {

void draw_help_windows(AppState& state) {
  if (state.show_help) {
    ImGui::SetNextWindowSize(ImVec2(620, 520), ImGuiCond_FirstUseEver);
    if (ImGui::Begin("Help — how to read this screen (F1)", &state.show_help)) {
      ImGui::PushTextWrapPos(0.0f);
      ImGui::TextUnformatted(
          "Each coloured grid is one matrix of self-attention, drawn in the order of the math and read left to right "
          "like an equation: X·W_q = Q, then for the focused head Q·Kᵀ = scores, ÷√d_k, + mask, softmax, · V = context, "
          "and finally the heads concatenated and multiplied by W_o.");
      ImGui::Spacing();
      ImGui::TextUnformatted(
          "Rows are tokens. Blue is negative, red positive, white zero; attention weights use a yellow-green-purple "
          "scale from 0 to 1. Hatched grey cells are −∞: the mask forbids them. A magenta outline marks a pinned cell.");
      ImGui::Spacing();
      ImGui::TextUnformatted(
          "Hover a cell: the cells it is computed from light up, and the inspector shows the calculation with the real "
          "numbers.");
      ImGui::PopTextWrapPos();
      ImGui::Separator();
      if (ImGui::BeginTable("keys", 2, ImGuiTableFlags_RowBg)) {
        const char* keys[][2] = {
            {"Hover a cell", "show where its value comes from"},
            {"Click", "select (sticky); Esc clears"},
            {"Drag up/down", "change an input, or pin a computed cell (Shift: finer)"},
            {"Double-click / Enter", "type an exact value"},
            {"Click a mask cell", "toggle it (switches to a custom mask)"},
            {"Wheel over a heatmap", "zoom; Ctrl+drag pans; right-click for reset, export, copy"},
            {"Right-click ▸ Export PNG…", "the heatmap with title, labels and colour bar at 1×, 2× or 4×"},
            {"File ▸ Export step / view as PNG…", "what the centre shows for this step / the whole centre view"},
            {"← / →", "previous / next step"},
            {"Space", "play / pause the steps"},
            {"Ctrl+Z", "undo"},
            {"Ctrl+Shift+Z, Ctrl+Y", "redo"},
            {"Ctrl+O / Ctrl+S / Ctrl+Shift+S", "open / save / save as"},
            {"Ctrl+= / Ctrl+-", "bigger / smaller cells"},
            {"Q (quiz)", "type the answer (or click the answer box); Enter checks"},
            {"H (quiz)", "hint after a wrong answer: the cells it is made from light up"},
            {"B or .", "blank (black) screen; B, . or PageDown/PageUp bring it back"},
            {"F1", "this help"},
        };
        for (const auto& k : keys) {
          ImGui::TableNextRow();
          ImGui::TableNextColumn();
          ImGui::TextUnformatted(k[0]);
          ImGui::TableNextColumn();
          ImGui::TextUnformatted(k[1]);
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
    const std::string what = to_string(t.cell.stage) + "[" + std::to_string(t.cell.row) + "," +
                             std::to_string(t.cell.col) + "]";
    ImGui::Text("%s %s", is_input(t.cell.stage.kind) ? "Set" : "Pin", what.c_str());
    if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
    const bool enter = ImGui::InputText("##value", t.buffer, sizeof t.buffer, ImGuiInputTextFlags_EnterReturnsTrue |
                                                                                ImGuiInputTextFlags_AutoSelectAll);
    if (!t.error.empty()) text_colored(gfx::Accent::Error, "%s", t.error.c_str());
    if (enter || ImGui::Button("OK")) {
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

void push_wrap_at_visible_edge() {
  const ImGuiStyle& style = ImGui::GetStyle();
  const float scrollbar = ImGui::GetScrollMaxY() > 0.0f ? style.ScrollbarSize : 0.0f;
  ImGui::PushTextWrapPos(ImGui::GetScrollX() + ImGui::GetWindowWidth() - style.WindowPadding.x - scrollbar);
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
