// The Words section of the controls panel: every token and every feature name
// as a text field. Leaving a field (Enter, Tab or a click elsewhere) applies
// one rename edit; the scenario is never written from here.

#include "panels/panels.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace attention_lab::gui {

namespace {

void name_list(AppState& state, LabelKind kind) {
  const Scenario& s = state.doc->scenario();
  const bool tokens = kind == LabelKind::Token;
  const int count = tokens ? s.T() : s.d_model();
  const auto& names = tokens ? s.tokens : s.features;
  const float row_h = ImGui::GetFrameHeightWithSpacing();
  // Long lists scroll inside a box of at most eight rows.
  const float box_h = row_h * static_cast<float>(std::min(count, 8)) + ImGui::GetStyle().WindowPadding.y;
  ImGui::BeginChild(tokens ? "token names" : "feature names", ImVec2(0, box_h), false);
  const float index_w = ImGui::CalcTextSize(tokens ? "t0000" : "0000").x;
  ImGuiListClipper clipper;
  clipper.Begin(count, row_h);
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      ImGui::PushID(i);
      const std::string index = tokens ? "t" + std::to_string(i) : std::to_string(i);
      ImGui::AlignTextToFramePadding();
      ImGui::TextDisabled("%s", index.c_str());
      ImGui::SameLine(index_w + ImGui::GetStyle().ItemSpacing.x);
      const std::string current =
          static_cast<std::size_t>(i) < names.size() ? names[static_cast<std::size_t>(i)] : std::string();
      auto& field = state.words_field;
      const bool mine = field && field->kind == kind && field->index == i;
      char text[limits::kMaxTokenLabelLength + 1];
      std::snprintf(text, sizeof text, "%s", mine ? field->buffer : current.c_str());
      ImGui::SetNextItemWidth(-1);
      ImGui::InputTextWithHint("##name", index.c_str(), text, sizeof text);
      if (ImGui::IsItemHovered() && !ImGui::IsItemActive())
        ImGui::SetTooltip(tokens ? "Token %d: type a name; Enter applies (Ctrl+Z undoes). Empty shows 't%d'."
                                 : "Feature %d (column of X, row of W_q, W_k, W_v): type a name; Enter applies. "
                                   "Empty shows '%d'.",
                          i, i);
      if (ImGui::IsItemActive()) {
        field = WordsField{kind, i, {}};
        std::memcpy(field->buffer, text, sizeof text);
      }
      if (ImGui::IsItemDeactivatedAfterEdit()) {
        field.reset();
        if (current != text) state.apply(rename_edit(kind, i, text));
      } else if (mine && !ImGui::IsItemActive()) {
        field.reset();
      }
      ImGui::PopID();
    }
  }
  ImGui::EndChild();
}

}  // namespace

void draw_words_section(AppState& state) {
  const Scenario& s = state.doc->scenario();
  // Folded by default: open, its lists would push the attention settings
  // below the fold of a 720-pixel window.
  const bool open = ImGui::TreeNode("Words");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Rename the tokens (rows of X) and the features (columns of X).\n"
                      "Or double-click a label on a heatmap to rename it there.");
  if (!open) return;
  ImGui::Text("Tokens");
  if (!s.tokens.empty()) {
    ImGui::SameLine();
    if (ImGui::SmallButton("clear##tokens")) state.apply(SetLabels{LabelList::Tokens, {}});
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Forget every token's name: show t0, t1, … (undoable)");
  }
  name_list(state, LabelKind::Token);
  ImGui::Text("Features");
  if (!s.features.empty()) {
    ImGui::SameLine();
    if (ImGui::SmallButton("clear##features")) state.apply(SetLabels{LabelList::Features, {}});
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Forget every feature's name: show 0, 1, … (undoable)");
  }
  name_list(state, LabelKind::Feature);
  ImGui::TreePop();
}

}  // namespace attention_lab::gui
