// Renaming a token or a feature in place: a double-click on its label opens a
// small popup with its name; Enter applies (one undoable edit), Esc cancels.

#include "panels/panels.h"

#include <cstdio>

namespace attention_lab::gui {

namespace {

const std::vector<std::string>& names_of(const Scenario& s, LabelKind kind) {
  return kind == LabelKind::Feature ? s.features : kind == LabelKind::KeyToken ? s.tokens_kv : s.tokens;
}
int count_of(const Scenario& s, LabelKind kind) {
  return kind == LabelKind::Feature ? s.d_model() : kind == LabelKind::KeyToken ? static_cast<int>(s.X_kv.rows()) : s.T();
}

}  // namespace

void AppState::start_rename(LabelKind kind, int index) {
  if (kind == LabelKind::Index) return;
  const auto& names = names_of(doc->scenario(), kind);
  const std::string current = index >= 0 && static_cast<std::size_t>(index) < names.size()
                                  ? names[static_cast<std::size_t>(index)]
                                  : std::string();
  rename.kind = kind;
  rename.index = index;
  std::snprintf(rename.buffer, sizeof rename.buffer, "%s", current.c_str());
  rename.error.clear();
  rename.open_requested = true;
}

Edit rename_edit(LabelKind kind, int index, std::string name) {
  if (kind == LabelKind::Feature) return SetFeatureLabel{index, std::move(name)};
  return SetTokenLabel{index, std::move(name), kind == LabelKind::KeyToken};
}

void draw_rename_popup(AppState& state) {
  RenameState& r = state.rename;
  if (r.open_requested) {
    ImGui::OpenPopup("Rename");
    r.open_requested = false;
  }
  r.open = ImGui::BeginPopup("Rename");
  if (!r.open) return;
  const Scenario& s = state.doc->scenario();
  if (r.index < 0 || r.index >= count_of(s, r.kind)) {  // an undo took it away meanwhile
    ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
    r.open = false;
    return;
  }
  const bool token = r.kind != LabelKind::Feature;
  const std::string shown = r.kind == LabelKind::KeyToken ? s.key_label(r.index)
                            : token                       ? s.token_label(r.index)
                                                          : s.feature_label(r.index);
  const char* what = r.kind == LabelKind::KeyToken ? "key token (X_kv row)" : token ? "token" : "feature";
  ImGui::Text("Rename %s %d ('%s')", what, r.index, shown.c_str());
  if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
  // The hint is what an empty name shows: the index.
  const std::string hint = token ? "t" + std::to_string(r.index) : std::to_string(r.index);
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 14.0f);
  const bool enter = ImGui::InputTextWithHint("##name", hint.c_str(), r.buffer, sizeof r.buffer,
                                              ImGuiInputTextFlags_EnterReturnsTrue | ImGuiInputTextFlags_AutoSelectAll);
  r.editing = ImGui::IsItemActive();
  ImGui::TextDisabled("Enter applies, Esc cancels. Empty shows the index.");
  if (!r.error.empty()) text_colored(gfx::Accent::Error, "%s", r.error.c_str());
  const bool ok = ImGui::Button("OK");
  ImGui::SameLine();
  const bool cancel = ImGui::Button("Cancel") || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape));
  if (cancel) {
    ImGui::CloseCurrentPopup();
  } else if (enter || ok) {
    const auto& names = names_of(s, r.kind);
    const std::string current =
        static_cast<std::size_t>(r.index) < names.size() ? names[static_cast<std::size_t>(r.index)] : std::string();
    // The same name again changes nothing: no undo step, no "modified".
    if (current == r.buffer || state.apply(rename_edit(r.kind, r.index, r.buffer)))
      ImGui::CloseCurrentPopup();
    else
      r.error = state.status;
  }
  ImGui::EndPopup();
}

}  // namespace attention_lab::gui
