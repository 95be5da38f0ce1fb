#include "panels/panels.h"

#include "attention_lab/lesson.h"
#include "attention_lab/model_cache.h"
#include "attention_lab/presets.h"
#include "attention_lab/scenario_io.h"
#include "slide_export.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

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

void action_open_model_dialog(AppState& state) {
  state.file_dialog.mode = FileDialogMode::OpenModel;
  state.file_dialog.name[0] = '\0';
  state.file_dialog.just_opened = true;
}

void action_import_weights_dialog(AppState& state) {
  state.file_dialog.mode = FileDialogMode::ImportWeights;
  state.file_dialog.name[0] = '\0';
  state.file_dialog.just_opened = true;
}

void action_save_as_dialog(AppState& state) {
  state.file_dialog.mode = FileDialogMode::SaveAs;
  std::snprintf(state.file_dialog.name, sizeof state.file_dialog.name, "%s",
                state.file_path.empty() ? "scenario.json" : std::filesystem::path(state.file_path).filename().c_str());
  state.file_dialog.just_opened = true;
}

void action_export_png_dialog(AppState& state, ExportTarget target) {
  FileDialogState& fd = state.file_dialog;
  fd.mode = FileDialogMode::ExportPng;
  fd.export_target = target;
  fd.suggested_name = suggested_export_name(state, target);
  fd.just_opened = true;
}

void action_export_csv_dialog(AppState& state, StageId stage) {
  FileDialogState& fd = state.file_dialog;
  fd.mode = FileDialogMode::ExportCsv;
  fd.export_target = ExportTarget{ExportKind::Stage, stage};
  std::string name = stage_file_name(stage);
  fd.suggested_name = name.substr(0, name.size() - 4) + ".csv";
  fd.just_opened = true;
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

bool is_lesson_file(const std::string& path) {
  // The "format" key tells, before either is parsed in full.
  std::ifstream in(path, std::ios::binary);
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  return head.find("attention-lab/lesson") != std::string::npos;
}

std::filesystem::path find_lesson(const std::string& name_or_path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(name_or_path, ec)) return name_or_path;
  return lessons_dir() / (name_or_path + ".json");
}

std::string builtin_lesson_names() {
  std::string names;
  for (const auto& file : lesson_files(lessons_dir())) names += (names.empty() ? "" : ", ") + file.stem().string();
  return names.empty() ? "(none installed in " + lessons_dir().string() + ")" : names;
}

bool load_file_into(AppState& state, const std::string& path) {
  if (state.busy()) {
    state.set_status("Busy: " + state.job->what());
    return false;
  }
  // A checkpoint opens as a model (it is not a scenario: its JSON header
  // would read as "invalid JSON" at the first byte).
  if (std::filesystem::path(path).extension() == ".safetensors") {
    state.centre_when_model_opens = CentreView::Model;  // a model opens on its layers × heads
    state.open_model(ModelRequest::open(path));  // errors come as a popup when it is in
    return true;
  }
  // Big files (a real model's layer) load and compute on a worker thread.
  std::error_code ec;
  if (std::filesystem::file_size(path, ec) > kBackgroundLoadBytes && !ec) {
    state.job = std::make_unique<BackgroundJob>("Opening " + path, path);
    return true;
  }
  {
    if (is_lesson_file(path)) {
      LoadedLesson l = load_lesson(path);
      if (!l.lesson) {
        state.error_popup = "Could not open the lesson " + path + "\n\n" + l.error + "\n\nThe current scenario is unchanged.";
        return false;
      }
      state.open_lesson(std::move(*l.lesson), path, 0);
      state.settings.add_recent(path);
      state.settings.save();
      return true;
    }
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
  const bool file_menu = ImGui::BeginMenu("File");
  state.note_item("menu File");  // where the menu's title is (the GUI tests open it with a click)
  if (file_menu) {
    if (ImGui::MenuItem("Open…", "Ctrl+O")) state.unless_unsaved_work("open", action_open_dialog);
    if (ImGui::MenuItem("Open model…", "Ctrl+Shift+O")) state.unless_unsaved_work("open", action_open_model_dialog);
    state.note_item("Open model…");
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("A Hugging Face model folder (config.json + model.safetensors), a .safetensors file,\n"
                        "or a model from the Hugging Face cache: GPT-2, minGPT/nanoGPT, Llama, Mistral, Qwen2, Qwen3, OLMo-2, Granite, Gemma 2 and 3, GPT-NeoX/Pythia, Phi-3, StarCoder2, SmolLM, SmolLM3");
    if (ImGui::MenuItem("Close model", nullptr, false, state.model.open() && !state.busy()))
      state.unless_unsaved_work("close the model", [](AppState& s) {
        const std::string name = model_display_name(s.model.path);
        s.open_document(*make_preset(kDefaultPreset), "");  // leaves model mode
        s.set_status("Closed " + name);
      });
    state.note_item("Close model");
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Back to the default scenario (the edits of the focused layer and of layers kept aside are dropped)");
    if (ImGui::MenuItem("Import weights…", nullptr, false, !state.model.open()))
      action_import_weights_dialog(state);
    state.note_item("Import weights…");
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
      ImGui::SetTooltip(state.model.open()
                            ? "The focused layer's weights are the model's: edit them in the pipeline instead"
                            : "Put a real layer's W_q, W_k, W_v and W_o onto this scenario: from a .safetensors\n"
                              "checkpoint (GPT-2, minGPT, Llama, nn.MultiheadAttention) or one .npy array.\n"
                              "Undo takes it back.");
    if (ImGui::BeginMenu("Open recent", !state.settings.recent_files.empty())) {
      for (const auto& f : state.settings.recent_files)
        if (ImGui::MenuItem(f.c_str())) {
          state.unless_unsaved_work("open", [f](AppState& s) { load_file_into(s, f); });
          break;
        }
      ImGui::EndMenu();
    }
    if (ImGui::BeginMenu("Lessons")) {
      for (const auto& file : lesson_files(lessons_dir())) {
        const std::string name = file.stem().string();
        if (ImGui::MenuItem(name.c_str())) {
          state.unless_unsaved_work("open", [path = file.string()](AppState& s) { load_file_into(s, path); });
          break;
        }
      }
      ImGui::EndMenu();
    }
    if (ImGui::MenuItem("Save", "Ctrl+S")) action_save(state);
    if (ImGui::MenuItem("Save as…", "Ctrl+Shift+S")) action_save_as_dialog(state);
    ImGui::Separator();
    if (ImGui::MenuItem("Export step as PNG…")) action_export_png_dialog(state, ExportTarget{ExportKind::Step, {}});
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("What the centre shows for this step, drawn off screen at 1×, 2× or 4×");
    if (ImGui::MenuItem("Export view as PNG…")) action_export_png_dialog(state, ExportTarget{ExportKind::View, {}});
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("The whole centre view (all of the pipeline, not only what is scrolled into view)");
    // (a gradient is drawn, not exported: its numbers are in `trace --grad`)
    const bool value_selected = state.selected && state.selected->stage.role == Role::Value;
    if (ImGui::MenuItem("Export selected matrix as PNG…", nullptr, false, value_selected))
      action_export_png_dialog(state, ExportTarget{ExportKind::Stage, state.selected->stage});
    if (ImGui::MenuItem("Export selected matrix as CSV…", nullptr, false, value_selected))
      action_export_csv_dialog(state, state.selected->stage);
    ImGui::Separator();
    if (ImGui::MenuItem("Quit", "Ctrl+Q")) state.unless_unsaved_work("quit", [](AppState& s) { s.quit = true; });
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Edit")) {
    const std::string undo = "Undo " + state.undo_label();
    const std::string redo = "Redo " + state.redo_label();
    if (ImGui::MenuItem(undo.c_str(), "Ctrl+Z", false, state.can_undo())) state.undo();
    if (ImGui::MenuItem(redo.c_str(), "Ctrl+Shift+Z", false, state.can_redo())) state.redo();
    ImGui::Separator();
    if (ImGui::MenuItem("Clear pins", nullptr, false, !state.doc->scenario().pins.empty())) state.apply(SetPins{});
    ImGui::Separator();
    if (ImGui::MenuItem("Take snapshot", "Ctrl+T")) state.take_snapshot();
    if (ImGui::MenuItem("Show differences to the snapshot", nullptr, &state.compare.show, state.compare.snapshot.has_value())) {}
    if (ImGui::MenuItem("Restore snapshot", nullptr, false, state.compare.snapshot.has_value()))
      state.restore_snapshot();
    if (ImGui::MenuItem("Forget snapshot", nullptr, false, state.compare.snapshot.has_value())) {
      state.compare = CompareState{};
    }
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("View")) {
    // Every mode of the centre, with its shortcut where it has one.
    const auto centre_item = [&](const char* label, CentreView view) {
      if (ImGui::MenuItem(label, nullptr, state.centre == view)) state.centre = view, state.select_centre_tab = true;
    };
    for (const CentreViewEntry& v : kCentreViews)
      if (!v.needs_model || state.model.open()) centre_item(v.label, v.view);
    ImGui::Separator();
    if (ImGui::MenuItem("Presenter mode", "F5", state.presenter)) state.toggle_presenter_requested = true;
    if (ImGui::BeginMenu("Pipeline shows")) {
      for (const GradientView v : {GradientView::Values, GradientView::Gradients, GradientView::Both})
        if (ImGui::MenuItem(to_string(v), v == next_gradient_view(state.gradient_view) ? "Ctrl+G" : nullptr,
                            state.gradient_view == v))
          state.gradient_view = v;
      ImGui::EndMenu();
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Each stage's values, the loss's gradient of it (∂L/∂stage), or both");
    if (ImGui::MenuItem("Compare: take snapshot", "Ctrl+T")) state.take_snapshot();
    ImGui::MenuItem("Compare: show differences", nullptr, &state.compare.show, state.compare.snapshot.has_value());
    ImGui::Separator();
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
  // In model mode the document is the focused layer of a model, not a file.
  const std::string source =
      state.model.open() ? "model " + model_display_name(state.model.path) + ", layer " +
                               std::to_string(state.model.session->layer())
      : state.file_path.empty() ? std::string("unsaved scenario")
                                : state.file_path;
  const std::string where = source + (state.doc->modified() ? (state.model.open() ? "  •  edited" : "  •  modified") : "");
  ImGui::SameLine(ImGui::GetWindowWidth() - ImGui::CalcTextSize(where.c_str()).x - 20);
  ImGui::TextDisabled("%s", where.c_str());
  ImGui::EndMenuBar();
}

}  // namespace attention_lab::gui
