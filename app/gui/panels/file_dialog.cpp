#include "panels/panels.h"

#include "gfx/fonts.h"

#include "attention_lab/model_cache.h"
#include "attention_lab/weight_import.h"
#include "attention_lab/scenario_io.h"
#include "attention_lab/stage_info.h"
#include "logic/matrix_csv.h"

#include <imgui.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <utility>

namespace attention_lab::gui {

namespace fs = std::filesystem;

namespace {

const char* title_of(FileDialogMode mode) {
  switch (mode) {
    case FileDialogMode::Open: return "Open scenario";
    case FileDialogMode::OpenModel: return "Open model";
    case FileDialogMode::ImportWeights: return "Import weights";
    case FileDialogMode::SaveAs: return "Save scenario as";
    case FileDialogMode::ExportCsv: return "Export matrix as CSV";
    case FileDialogMode::ExportPng: return "Export PNG";
    case FileDialogMode::OpenPrompts: return "Open prompts (one a line)";
    case FileDialogMode::OpenTrainingText: return "Open a text to train on (UTF-8)";
    case FileDialogMode::Closed: break;
  }
  return "";
}

// What a .npy array can become, in the order of FileDialogState::import_target.
constexpr StageKind kImportTargets[] = {StageKind::X, StageKind::W_q, StageKind::W_k, StageKind::W_v, StageKind::W_o};
constexpr const char* kImportTargetNames[] = {"X", "W_q", "W_k", "W_v", "W_o"};

const char* extension_of(FileDialogMode mode);

// Dialogs that read a file (the others write one and suggest a name).
bool reads_a_file(FileDialogMode mode) {
  return mode == FileDialogMode::Open || mode == FileDialogMode::OpenModel || mode == FileDialogMode::ImportWeights ||
         mode == FileDialogMode::OpenPrompts || mode == FileDialogMode::OpenTrainingText;
}

// The files a dialog lists.
bool lists_file(FileDialogMode mode, const fs::path& path) {
  if (mode == FileDialogMode::ImportWeights) return path.extension() == ".safetensors" || path.extension() == ".npy";
  return path.extension() == extension_of(mode);
}

const char* extension_of(FileDialogMode mode) {
  switch (mode) {
    case FileDialogMode::ExportCsv: return ".csv";
    case FileDialogMode::ExportPng: return ".png";
    case FileDialogMode::OpenModel: return ".safetensors";
    case FileDialogMode::OpenPrompts: case FileDialogMode::OpenTrainingText: return ".txt";
    default: return ".json";
  }
}

// Runs the dialog's action on `path`; returns an error message or "".
std::string finish(AppState& state, const std::string& path) {
  switch (state.file_dialog.mode) {
    case FileDialogMode::Open: {
      // The error stays in the dialog, where the name can be corrected, the
      // same for the Open button, Enter and a double-click. (As a "Problem"
      // popup it replaced the dialog, and the Enter that opened it closed it
      // again in the same frame: Enter on a bad file failed silently.)
      if (load_file_into(state, path)) return {};
      std::string error = state.error_popup.empty() ? "Could not open " + path : state.error_popup;
      state.error_popup.clear();
      return error;
    }
    case FileDialogMode::OpenModel: {
      std::error_code ec;
      if (!fs::exists(path, ec)) return path + ": no such file or folder";
      if (fs::is_directory(path, ec) && !is_model_folder(path))
        return path + ": expected a model folder (config.json with model.safetensors or model.safetensors.index.json)";
      if (state.busy()) return "Busy: " + state.job->what() + " (wait, or press Cancel)";
      state.centre_when_model_opens = CentreView::Model;  // a model opens on its layers × heads
      state.open_model(ModelRequest::open(path));  // errors come as a popup when it is in
      return {};
    }
    case FileDialogMode::ImportWeights: {
      const FileDialogState& fd = state.file_dialog;
      const bool npy = fs::path(path).extension() == ".npy";
      ImportResult r = npy ? import_npy(state.doc->scenario(), path, kImportTargets[fd.import_target], fd.import_transposed)
                           : import_safetensors(state.doc->scenario(), path, fd.import_layer);
      if (!r.scenario) return r.error;
      const std::string name = fs::path(path).filename().string();
      if (!state.apply(ReplaceScenario{std::make_shared<const Scenario>(std::move(*r.scenario)), "import " + name}))
        return "Could not apply the imported weights (see the status bar)";
      std::string report;
      for (const auto& line : r.imported) report += line + "\n";
      for (const auto& line : r.notes) report += line + "\n";
      state.set_status("Imported " + name + (r.notes.empty() ? "" : " (" + r.notes.front() + ")") + "; Ctrl+Z undoes it");
      state.import_report = "Imported from " + path + ":\n\n" + report;
      return {};
    }
    case FileDialogMode::SaveAs: {
      if (auto err = save_scenario(state.doc->scenario(), path); !err.empty()) return err;
      state.file_path = path;
      state.doc->mark_saved();
      state.settings.add_recent(path);
      state.settings.save();
      state.set_status("Saved " + path);
      // "Save and quit" (or open…) of a scenario with no file: after the dialog has closed
      state.next_frame = std::exchange(state.after_save, nullptr);
      return {};
    }
    case FileDialogMode::ExportCsv: {
      const StageId id = state.file_dialog.export_target.stage;
      const StageInfo& info = state.stage_info(id);
      if (auto err = write_file_atomically(path, matrix_to_csv(state.doc->stage(id), info.row_labels, info.col_labels));
          !err.empty())
        return err;
      state.set_status("Exported " + to_string(id) + " to " + path);
      return {};
    }
    case FileDialogMode::OpenPrompts: return load_prompts(state, path);
    case FileDialogMode::OpenTrainingText: {
      TinyTrainConfig& c = state.train.model_config;
      std::string error;
      auto corpus = load_text_corpus(path, c.length, error);
      if (!corpus) return error;
      c.task = TrainTask::Text;
      c.shape.vocab = static_cast<int>(corpus->alphabet.size());
      c.corpus = std::move(corpus);
      state.set_status("Training text: " + path);
      return {};
    }
    case FileDialogMode::ExportPng:
      // Rendered off screen after this frame: the dialog is never in the picture.
      state.pending_export = ExportRequest{state.file_dialog.export_target, path, state.file_dialog.export_scale,
                                           state.file_dialog.export_highlights};
      return {};
    case FileDialogMode::Closed: break;
  }
  return {};
}

}  // namespace

namespace {

// The models the Hugging Face libraries downloaded: one click opens one.
void draw_cached_models(AppState& state) {
  const fs::path hub = huggingface_hub_dir();
  const std::vector<CachedModel>& models = state.file_dialog.cached_models;
  ImGui::TextDisabled("Hugging Face cache: %s", hub.string().c_str());
  if (models.empty()) {
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextDisabled("No models with safetensors weights there (the README says how to get GPT-2 small and "
                        "SmolLM-135M). Or pick a folder below.");
    ImGui::PopTextWrapPos();
  }
  for (const auto& m : models) {
    if (ImGui::Selectable(m.name.c_str())) {
      state.file_dialog.error = finish(state, m.folder.string());
      if (state.file_dialog.error.empty()) state.file_dialog.mode = FileDialogMode::Closed, ImGui::CloseCurrentPopup();
    }
    state.note_item("cached " + m.name);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", m.folder.string().c_str());
  }
  ImGui::Separator();
}

// Import weights: which layer of a checkpoint, and where one .npy array goes.
void draw_import_options(FileDialogState& fd) {
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextDisabled("A .safetensors checkpoint: its attention weights (GPT-2 c_attn/c_proj, Llama q/k/v/o_proj, "
                      "nn.MultiheadAttention in_proj/out_proj, or X, W_q, W_k, W_v, W_o). A .npy array: one matrix.");
  ImGui::PopTextWrapPos();
  ImGui::SetNextItemWidth(120);
  ImGui::InputInt("layer of the checkpoint (-1: the only one)", &fd.import_layer);
  fd.import_layer = std::max(fd.import_layer, -1);
  ImGui::SetNextItemWidth(120);
  ImGui::Combo(".npy goes into", &fd.import_target, kImportTargetNames, IM_ARRAYSIZE(kImportTargetNames));
  ImGui::SameLine();
  ImGui::Checkbox("stored [out, in] (nn.Linear)", &fd.import_transposed);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("PyTorch's nn.Linear keeps a weight as [out, in]; the scenario holds it as [in, out].");
  ImGui::Separator();
}

}  // namespace

void draw_file_dialog(AppState& state) {
  FileDialogState& fd = state.file_dialog;
  if (fd.mode == FileDialogMode::Closed) return;
  const char* title = title_of(fd.mode);
  if (fd.just_opened) {
    if (fd.directory.empty() || !fs::is_directory(fd.directory)) {
      std::error_code ec;
      fd.directory = state.file_path.empty() ? fs::current_path(ec).string()
                                             : fs::absolute(state.file_path, ec).parent_path().string();
    }
    if (!fd.suggested_name.empty()) {
      std::snprintf(fd.name, sizeof fd.name, "%s", fd.suggested_name.c_str());
      fd.suggested_name.clear();
    } else if (!reads_a_file(fd.mode) && fd.name[0] == '\0') {
      const std::string def = std::string("attention") + extension_of(fd.mode);
      std::snprintf(fd.name, sizeof fd.name, "%s", def.c_str());
    }
    fd.error.clear();
    if (fd.mode == FileDialogMode::OpenModel) fd.cached_models = find_cached_models(huggingface_hub_dir());
    ImGui::OpenPopup(title);
    fd.just_opened = false;
  }
  ImGui::SetNextWindowSize(ImVec2(560, 420), ImGuiCond_Appearing);
  bool open = true;
  if (!ImGui::BeginPopupModal(title, &open)) {
    if (!open) fd.mode = FileDialogMode::Closed;
    return;
  }
  if (fd.mode == FileDialogMode::OpenModel) draw_cached_models(state);
  if (fd.mode == FileDialogMode::ImportWeights) draw_import_options(fd);
  ImGui::TextWrapped("Folder: %s", fd.directory.c_str());
  if (ImGui::Button("Up")) fd.directory = fs::path(fd.directory).parent_path().string();
  const bool png = fd.mode == FileDialogMode::ExportPng;
  // Room under the list for the scale (PNG), the name, the buttons and the whole error message.
  const float wrap_w = ImGui::GetContentRegionAvail().x;
  const float error_h = fd.error.empty() ? 0.0f : ImGui::CalcTextSize(fd.error.c_str(), nullptr, false, wrap_w).y;
  // What a model's layer saves as: an ordinary scenario of this layer (its
  // input the normed residual stream), not the model or its other layers.
  const std::string layer_note =
      fd.mode == FileDialogMode::SaveAs && state.model.session
          ? "Saves layer " + std::to_string(state.model.session->layer()) +
                "'s attention, with its edits, as a scenario file: its input is the normed residual stream of this "
                "text. The model, the text and edits kept on other layers are not part of it; opening it later "
                "shows this layer on its own, without predictions."
          : std::string();
  const float note_h = layer_note.empty() ? 0.0f
                                          : ImGui::CalcTextSize(layer_note.c_str(), nullptr, false, wrap_w).y +
                                                ImGui::GetStyle().ItemSpacing.y;
  ImGui::BeginChild("entries",
                    ImVec2(0, -(ImGui::GetFrameHeightWithSpacing() * (png ? 5.0f : 3.0f) + error_h + note_h)), true);
  std::error_code ec;
  std::vector<fs::directory_entry> entries;
  for (auto it = fs::directory_iterator(fd.directory, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::directory_iterator(); it.increment(ec))
    if (it->path().filename().string()[0] != '.') entries.push_back(*it);
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    if (a.is_directory() != b.is_directory()) return a.is_directory();
    return a.path().filename() < b.path().filename();
  });
  for (const auto& e : entries) {
    const std::string name = e.path().filename().string();
    if (e.is_directory() && fd.mode == FileDialogMode::OpenModel && is_model_folder(e.path())) {
      // A model folder is opened whole: a click picks it, a double-click opens it.
      if (ImGui::Selectable((name + "/  (model)").c_str(), name == fd.name, ImGuiSelectableFlags_AllowDoubleClick)) {
        std::snprintf(fd.name, sizeof fd.name, "%s", name.c_str());
        if (ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) {
          fd.error = finish(state, e.path().string());
          if (fd.error.empty()) fd.mode = FileDialogMode::Closed, ImGui::CloseCurrentPopup();
        }
      }
    } else if (e.is_directory()) {
      if (ImGui::Selectable((name + "/").c_str(), false, ImGuiSelectableFlags_AllowDoubleClick) &&
          ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left))
        fd.directory = e.path().string();
    } else if (lists_file(fd.mode, e.path())) {
      if (ImGui::Selectable(name.c_str(), name == fd.name, ImGuiSelectableFlags_AllowDoubleClick)) {
        std::snprintf(fd.name, sizeof fd.name, "%s", name.c_str());
        if (ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) {
          fd.error = finish(state, (fs::path(fd.directory) / name).string());
          if (fd.error.empty()) fd.mode = FileDialogMode::Closed, ImGui::CloseCurrentPopup();
        }
      }
    }
  }
  ImGui::EndChild();
  if (png) {
    const ExportTarget& t = fd.export_target;
    if (t.kind == ExportKind::Stage) {
      const StageInfo& info = state.stage_info(t.stage);
      ImGui::TextDisabled("%s  %d×%d — %s", info.symbol.c_str(), info.rows, info.cols, info.name.c_str());
    } else {
      ImGui::TextDisabled("%s", t.kind == ExportKind::Step ? "What the centre shows for this step"
                                                           : "The whole centre view, not only what is scrolled into view");
    }
    // The picture is drawn again off screen, K pixels per on-screen pixel: sharp on a slide.
    ImGui::TextUnformatted("Scale");
    for (int k : kExportScales) {
      ImGui::SameLine();
      const std::string label = std::to_string(k) + "×";
      if (ImGui::RadioButton(label.c_str(), fd.export_scale == k)) fd.export_scale = k;
      state.note_item("scale " + label);
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%d pixels for each pixel on screen, with title, labels and colour bar", k);
    }
    ImGui::Checkbox("with highlights", &fd.export_highlights);
    state.note_item("export with highlights");
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Keep the selection, the lit cells, a lesson's highlight outlines and the quiz's \"?\".\n"
                        "Off: a clean picture for a handout, every number printed.");
  }
  if (!layer_note.empty()) {
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextDisabled("%s", layer_note.c_str());
    ImGui::PopTextWrapPos();
  }
  ImGui::SetNextItemWidth(-1);
  // Type a name at once, Enter opens or saves; after a failed Enter, correct it at once.
  if (ImGui::IsWindowAppearing() || fd.focus_name) ImGui::SetKeyboardFocusHere();
  fd.focus_name = false;
  const bool enter = ImGui::InputText("##name", fd.name, sizeof fd.name, ImGuiInputTextFlags_EnterReturnsTrue);
  if (!fd.error.empty()) {
    ImGui::PushTextWrapPos(0.0f);
    text_colored(gfx::Accent::Error, "%s", fd.error.c_str());
    ImGui::PopTextWrapPos();
  }
  const bool opening = reads_a_file(fd.mode);
  const bool go = ImGui::Button(fd.mode == FileDialogMode::ImportWeights ? "Import" : opening ? "Open" : "Save") || enter;
  // Open model with no name opens the folder shown, when it is a model.
  if (go && fd.mode == FileDialogMode::OpenModel && !fd.name[0]) {
    fd.error = is_model_folder(fd.directory) ? finish(state, fd.directory)
                                             : "Pick a model folder or a .safetensors file (or type its path)";
    if (fd.error.empty()) fd.mode = FileDialogMode::Closed, ImGui::CloseCurrentPopup();
  } else if (go && fd.name[0]) {
    fs::path p = fs::path(fd.name).is_absolute() ? fs::path(fd.name) : fs::path(fd.directory) / fd.name;
    if (!opening && p.extension().empty()) p += extension_of(fd.mode);
    fd.error = finish(state, p.string());
    if (fd.error.empty()) fd.mode = FileDialogMode::Closed, ImGui::CloseCurrentPopup();
    else if (enter) fd.focus_name = true;  // Enter left the field: back into it
  }
  ImGui::SameLine();
  if (ImGui::Button("Cancel") || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) {
    fd.mode = FileDialogMode::Closed;
    state.after_save = nullptr;  // cancelling the save of "Save and quit" keeps the app open (and the work)
    ImGui::CloseCurrentPopup();
  }
  ImGui::EndPopup();
}

}  // namespace attention_lab::gui
