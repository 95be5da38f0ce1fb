// The Interpret tab's logit lens: what the model would predict after each
// layer at the predicted row — the residual stream through the final norm
// and the unembedding — as a table of the k likeliest tokens a layer, each
// cell shaded by its probability, and one token followed through the layers
// (its probability and rank; by default the model's own prediction).

#include "panels/panels.h"

#include "logic/colormap.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace attention_lab::gui {

namespace {

// A cell's background: viridis of the probability, drawn dim enough for its text.
ImU32 shade(float p) {
  const Rgb c = viridis(std::clamp(p, 0.0f, 1.0f));
  return IM_COL32(static_cast<int>(c.r * 255), static_cast<int>(c.g * 255), static_cast<int>(c.b * 255), 150);
}

}  // namespace

void draw_logit_lens(AppState& state) {
  InterpState& in = state.interp;
  const std::shared_ptr<ModelSession>& session = state.model.session;
  const ModelSession& s = *session;
  const Tokenizer& t = s.tokenizer();
  std::string error;
  if (auto r = in.lens_task.take(error)) in.lens = std::move(*r), in.lens_error.clear();
  else if (!error.empty()) in.lens_error = error;

  const int row = state.model.predicted_row();
  ImGui::Text("Logit lens");
  push_wrap_at_visible_edge();
  ImGui::TextDisabled("What the model would predict after '%s' (%d) if it stopped after each layer: the residual stream "
                      "through the final norm and the unembedding. The last row is the model's own prediction.",
                      t.label(s.ids()[static_cast<std::size_t>(row)]).c_str(), row);
  ImGui::PopTextWrapPos();
  ImGui::SetNextItemWidth(100.0f * gfx::em());
  ImGui::SliderInt("tokens a layer##lens", &in.lens_k, 1, 10, "%d", ImGuiSliderFlags_AlwaysClamp);
  state.note_item("interp lens k");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(160.0f * gfx::em());
  ImGui::InputTextWithHint("follow##lens", "the prediction", &in.lens_track, ImGuiInputTextFlags_AutoSelectAll);
  state.note_item("interp lens track");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("A token whose probability and rank after each layer are shown (empty: the model's prediction).");
  int track = -1;
  const std::string problem = in.lens_track.empty() ? std::string() : t.single_token(in.lens_track, track);
  if (!problem.empty()) {
    push_wrap_at_visible_edge();
    text_colored(gfx::Accent::Warning, "follow: %s", problem.c_str());
    ImGui::PopTextWrapPos();
  }
  // Run again when the text, the row, k or the token followed changed.
  const bool current = in.lens && same_model_and_text(*in.lens->session, s) && in.lens->row == row && in.lens->k == in.lens_k &&
                       !in.lens->layers.empty() && (track < 0 || in.lens->layers[0].tracked.id == track);
  if (!current && problem.empty() && !in.lens_task.running() && in.lens_error.empty()) {
    in.lens_task.start([session, row, k = in.lens_k, track](const auto&) {
      const TransformerModel& m = session->model();
      // Unnamed: the model's own prediction, followed from the embeddings on.
      int followed = track;
      if (followed < 0) followed = logit_lens(m, session->ids(), row, 1).back().top[0].id;
      return LensOutcome{session, row, k, logit_lens(m, session->ids(), row, k, followed)};
    });
  }
  if (!in.lens_error.empty()) text_colored(gfx::Accent::Error, "%s", in.lens_error.c_str());
  if (!in.lens || !same_model_and_text(*in.lens->session, s) || in.lens->row >= s.T()) return;
  const LensOutcome& lens = *in.lens;
  const int followed = lens.layers.back().tracked.id;
  // Each cell is a token over its probability. The columns that fit the view
  // are drawn (the token followed first, then the likeliest), and a note says
  // when fewer than asked for fit.
  const ImGuiStyle& style = ImGui::GetStyle();
  const float pad = 2.0f * style.CellPadding.x + 2.0f;
  const float after_w = ImGui::CalcTextSize("embeddings").x + pad;
  const float follow_w = std::max(ImGui::CalcTextSize(("'" + t.label(followed) + "'").c_str()).x,
                                   ImGui::CalcTextSize("0.0000, rank 0000").x) + pad;
  float room = visible_width_left() - after_w - follow_w - style.ItemSpacing.x;
  int shown = 0;
  for (int i = 0; i < lens.k; ++i) {
    float w = ImGui::CalcTextSize("0.000").x;
    for (const LensLayer& l : lens.layers)
      if (static_cast<std::size_t>(i) < l.top.size())
        w = std::max(w, ImGui::CalcTextSize(("'" + t.label(l.top[static_cast<std::size_t>(i)].id) + "'").c_str()).x);
    room -= w + pad;
    if (room < 0.0f && shown > 0) break;
    ++shown;
  }
  if (shown < lens.k) {
    push_wrap_at_visible_edge();
    text_colored(gfx::Accent::Warning, "The %d likeliest of %d shown: the others do not fit this width (a wider window, or "
                 "`attention-lab-cli logit-lens`, shows them).", shown, lens.k);
    ImGui::PopTextWrapPos();
  }
  const ImGuiTableFlags flags = ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("logit lens", shown + 2, flags)) return;
  ImGui::TableSetupColumn("after");
  ImGui::TableSetupColumn(("'" + t.label(followed) + "'").c_str());
  for (int i = 0; i < shown; ++i) ImGui::TableSetupColumn(std::to_string(i + 1).c_str());
  ImGui::TableHeadersRow();
  for (const LensLayer& l : lens.layers) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(l.after == 0 ? "embeddings" : ("layer " + std::to_string(l.after - 1)).c_str());
    ImGui::TableNextColumn();
    ImGui::TableSetBgColor(ImGuiTableBgTarget_CellBg, shade(l.tracked.probability));
    ImGui::Text("%.4f, rank %d", static_cast<double>(l.tracked.probability), l.tracked_rank + 1);
    for (std::size_t i = 0; i < l.top.size() && static_cast<int>(i) < shown; ++i) {
      const LensPrediction& p = l.top[i];
      ImGui::TableNextColumn();
      ImGui::TableSetBgColor(ImGuiTableBgTarget_CellBg, shade(p.probability));
      ImGui::BeginGroup();
      ImGui::Text("'%s'", t.label(p.id).c_str());
      ImGui::Text("%.3f", static_cast<double>(p.probability));
      ImGui::EndGroup();
      state.note_item("lens " + std::to_string(l.after) + " " + std::to_string(i));
      if (ImGui::IsItemHovered()) {
        ImGui::SetTooltip("%s, rank %zu: '%s' (id %d)\nlogit %.4f, probability %.4f", l.after == 0 ? "embeddings" :
                          ("after layer " + std::to_string(l.after - 1)).c_str(), i + 1, t.label(p.id).c_str(), p.id,
                          static_cast<double>(p.logit), static_cast<double>(p.probability));
        in.hovered = "lens " + std::to_string(l.after) + " " + std::to_string(i);
      }
    }
  }
  ImGui::EndTable();
}

}  // namespace attention_lab::gui
