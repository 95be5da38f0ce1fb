// The "Unsaved changes" question: asked before quitting, and before opening
// something in place of unsaved work (a file, a model, a lesson; closing the
// model), which no undo could bring back. "Save and …", "… without saving"
// or Cancel; Esc cancels.

#include "panels/panels.h"

#include <cctype>
#include <utility>

namespace attention_lab::gui {

namespace {

std::string capitalized(std::string s) {
  if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  return s;
}

}  // namespace

void draw_unsaved_question(AppState& state) {
  if (!state.unsaved_question) return;
  if (!ImGui::IsPopupOpen("Unsaved changes")) ImGui::OpenPopup("Unsaved changes");
  if (!ImGui::BeginPopupModal("Unsaved changes", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return;
  const std::string verb = state.unsaved_question->verb;
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 36.0f);
  const bool modified = state.doc->modified();
  if (modified)
    ImGui::TextUnformatted(state.model.session ? ("Layer " + std::to_string(state.model.session->layer()) +
                                                  ", the focused one, has changes that are not saved.")
                                                     .c_str()
                                               : "The scenario has changes that are not saved.");
  if (!state.model.kept_layers.empty()) {
    // Kept per text and layer: say both, so the user can find them again.
    std::string kept;
    for (const auto& [key, doc] : state.model.kept_layers)
      kept += "\n  layer " + std::to_string(key.second) + " of the text \"" + key.first + "\"";
    ImGui::TextUnformatted(("Edits kept from earlier, not saved" + std::string(modified ? " either" : "") + ":" + kept +
                            "\nTo keep one, run its text, focus its layer (its edits come back) and use File > "
                            "Save as...")
                               .c_str());
  }
  if (verb != "quit") ImGui::TextDisabled("Undo cannot bring them back once you %s.", verb.c_str());
  ImGui::PopTextWrapPos();
  const auto go_on = [&state] {
    auto then = std::move(state.unsaved_question->then);
    state.unsaved_question.reset();
    ImGui::CloseCurrentPopup();
    then(state);
  };
  // Saving writes the focused document only: offered when it has changes.
  const std::string save_label = "Save and " + verb;
  const bool save = modified && ImGui::Button(save_label.c_str());
  if (modified) state.note_item("save and " + verb);  // (the probe's names, as the GUI tests ask for them)
  if (save) {
    if (state.file_path.empty()) {
      // No file yet: Save as… opens, and what waits runs once it has saved.
      state.after_save = std::move(state.unsaved_question->then);
      state.unsaved_question.reset();
      ImGui::CloseCurrentPopup();
      action_save(state);
    } else {
      action_save(state);
      if (!state.doc->modified()) go_on();  // (a failed save says so and keeps the work)
      else state.unsaved_question.reset(), ImGui::CloseCurrentPopup();
    }
    ImGui::EndPopup();
    return;
  }
  if (modified) ImGui::SameLine();
  const std::string drop_label = capitalized(verb) + " without saving";
  const bool drop = ImGui::Button(drop_label.c_str());
  state.note_item(verb + " without saving");
  if (drop) {
    go_on();
    ImGui::EndPopup();
    return;
  }
  ImGui::SameLine();
  if (ImGui::Button("Cancel") ||
      (!ImGui::IsWindowAppearing() && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false))) {
    state.unsaved_question.reset();
    ImGui::CloseCurrentPopup();
  }
  ImGui::EndPopup();
}

}  // namespace attention_lab::gui
