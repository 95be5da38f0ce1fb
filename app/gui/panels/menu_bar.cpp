#include "panels/panels.h"

#include "attention_lab/scenario_io.h"

#include <imgui.h>

namespace attention_lab::gui {

namespace {
// Above this a file takes long enough to parse and compute to need the background.
constexpr std::uintmax_t kBackgroundLoadBytes = 2u << 20;
}  // namespace

void action_open_dialog(AppState& state) {
  state.file_dialog.mode = FileDialogMode::Open;
  state.file_dialog.name[0] = '\0';
  state.file_dialog.just_opened = true;
}

void action_save_as_dialog(AppState& state) {
  state.file_dialog.mode = FileDialogMode::SaveAs;
  std::snprintf(state.file_dialog.name, sizeof state.file_dialog.name, "%s",
                state.file_path.empty() ? "scenario.json" : std::filesystem::path(state.file_path).filename().c_str());
  state.file_dialog.just_opened = true;
}

void action_save(AppState& state) {
  if (state.file_path.empty()) return action_save_as_dialog(state);
  if (auto err = save_scenario(state.doc->scenario(), state.file_path); !err.empty()) {
    state.error_popup = "Could not save.\n\n" + err + "\n\nThe previous file is unchanged.";
    return;
  }
  state.doc->mark_saved();
  state.set_status("Saved " + state.file_path);
}

bool load_file_into(AppState& state, const std::string& path) {
  if (state.busy()) {
    state.set_status("Busy: " + state.job->what());
    return false;
  }
  // Big files (a real model's layer) load and compute on a worker thread.
  std::error_code ec;
  if (std::filesystem::file_size(path, ec) > kBackgroundLoadBytes && !ec) {
    state.job = std::make_unique<BackgroundJob>("Opening " + path, path);
    return true;
  }
  LoadResult r = load_scenario(path);
  if (!r.scenario) {
    state.error_popup = "Could not open " + path + "\n\n" + r.error + "\n\nThe current scenario is unchanged.";
    return false;
  }
  state.open_document(std::move(*r.scenario), path);
  state.settings.add_recent(path);
  state.settings.save();
  state.set_status("Opened " + path);
  return true;
}

void draw_menu_bar(AppState& state) {
  if (!ImGui::BeginMenuBar()) return;
  if (ImGui::BeginMenu("File")) {
    if (ImGui::MenuItem("Open…", "Ctrl+O")) action_open_dialog(state);
    if (ImGui::BeginMenu("Open recent", !state.settings.recent_files.empty())) {
      for (const auto& f : state.settings.recent_files)
        if (ImGui::MenuItem(f.c_str())) {
          load_file_into(state, f);
          break;
        }
      ImGui::EndMenu();
    }
    if (ImGui::MenuItem("Save", "Ctrl+S")) action_save(state);
    if (ImGui::MenuItem("Save as…", "Ctrl+Shift+S")) action_save_as_dialog(state);
    ImGui::Separator();
    if (ImGui::MenuItem("Export window as PNG…")) {
      state.selected.reset();
      state.file_dialog.mode = FileDialogMode::ExportPng;
      state.file_dialog.just_opened = true;
    }
    if (ImGui::MenuItem("Export selected matrix as CSV…", nullptr, false, state.selected.has_value())) {
      state.file_dialog.mode = FileDialogMode::ExportCsv;
      state.file_dialog.just_opened = true;
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Quit", "Ctrl+Q")) state.confirm_quit = state.doc->modified(), state.quit = !state.doc->modified();
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Edit")) {
    const std::string undo = "Undo " + state.doc->undo_label();
    const std::string redo = "Redo " + state.doc->redo_label();
    if (ImGui::MenuItem(undo.c_str(), "Ctrl+Z", false, state.doc->can_undo())) state.undo();
    if (ImGui::MenuItem(redo.c_str(), "Ctrl+Shift+Z", false, state.doc->can_redo())) state.redo();
    ImGui::Separator();
    if (ImGui::MenuItem("Clear pins", nullptr, false, !state.doc->scenario().pins.empty())) state.apply(SetPins{});
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("View")) {
    if (ImGui::MenuItem("Bigger cells", "Ctrl+=")) state.cell_px = std::min(state.cell_px * 1.2f, 80.0f);
    if (ImGui::MenuItem("Smaller cells", "Ctrl+-")) state.cell_px = std::max(state.cell_px / 1.2f, 6.0f);
    if (ImGui::MenuItem("Reset all zoom")) state.views.clear();
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Help")) {
    if (ImGui::MenuItem("How to read this screen", "F1")) state.show_help = true;
    if (ImGui::MenuItem("About")) state.show_about = true;
    ImGui::EndMenu();
  }
  const std::string where = (state.file_path.empty() ? std::string("unsaved scenario") : state.file_path) +
                            (state.doc->modified() ? "  •  modified" : "");
  ImGui::SameLine(ImGui::GetWindowWidth() - ImGui::CalcTextSize(where.c_str()).x - 20);
  ImGui::TextDisabled("%s", where.c_str());
  ImGui::EndMenuBar();
}

}  // namespace attention_lab::gui
