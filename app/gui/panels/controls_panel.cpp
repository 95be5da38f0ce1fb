#include "panels/panels.h"

#include "attention_lab/limits.h"
#include "attention_lab/presets.h"
#include "attention_lab/stage_info.h"
#include "widgets/heatmap_widget.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>

namespace attention_lab::gui {

namespace {

// An integer setting with −/+ buttons; applies a SetDimension when it changes.
void dimension_input(AppState& state, const char* label, Dimension which, int value, int max, const char* tip) {
  int v = value;
  ImGui::SetNextItemWidth(110);
  // Enter or the ± buttons apply; typing alone does not resize on every keystroke.
  if (ImGui::InputInt(label, &v, 1, 4, ImGuiInputTextFlags_EnterReturnsTrue) && v != value)
    state.apply(SetDimension{which, std::clamp(v, 1, max)});
  state.note_item(label);
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip(state.model.open() ? "%s\nFixed by the model at %d (File > Close model to change the sizes)" : "%s (1 to %d)",
                      tip, state.model.open() ? value : max);
}

void toggle(AppState& state, const char* label, Toggle which, bool value, const char* tip) {
  bool v = value;
  if (ImGui::Checkbox(label, &v)) state.apply(SetToggle{which, v});
  state.note_item(label);  // where it is, for the GUI tests (the panel's layout changes)
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tip);
}

// RoPE on/off, its θ and which dimensions it pairs.
void draw_rope_controls(AppState& state, const Scenario& s, const Dims& d) {
  bool on = s.rope.on;
  ImGui::BeginDisabled(d.d_k % 2 != 0 && !on);
  if (ImGui::Checkbox("RoPE (rotary positions)", &on)) {
    Rope r = s.rope;
    r.on = on;
    state.apply(SetRope{r});
  }
  ImGui::EndDisabled();
  state.note_item("RoPE");
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip(d.d_k % 2 != 0 && !on
                          ? "RoPE turns pairs of dimensions: make d_k even first (d_k is %d)"
                          : "Turn each query and key by an angle that grows with its position (Llama, Mistral, Qwen):\n"
                            "the score of two tokens then depends on how far apart they are.",
                      d.d_k);
  if (!s.rope.on) return;
  ImGui::Indent();
  float theta = s.rope.theta;
  if (ImGui::InputFloat("θ (base)", &theta, 0.0f, 0.0f, "%.0f", ImGuiInputTextFlags_EnterReturnsTrue) &&
      theta != s.rope.theta) {
    Rope r = s.rope;
    r.theta = std::max(theta, 1.5f);
    state.apply(SetRope{r});
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Pair k turns by position·θ^(−2k/d_k): a small θ turns fast (short range),\n"
                      "10000 is the paper's and Llama 2's, Llama 3 uses 500000. Enter applies.");
  int pairs = static_cast<int>(s.rope.pairs);
  const char* names[] = {"half", "interleaved"};
  {
    // wide enough for "interleaved" in a narrow panel, as long as the label still fits
    const ImGuiStyle& style = ImGui::GetStyle();
    const float needed = ImGui::CalcTextSize("interleaved").x + ImGui::GetFrameHeight() + 2.0f * style.FramePadding.x;
    const float room = ImGui::GetContentRegionAvail().x - ImGui::CalcTextSize("pairs").x - style.ItemInnerSpacing.x;
    ImGui::SetNextItemWidth(std::max(ImGui::CalcItemWidth(), std::min(needed, room)));
  }
  if (ImGui::Combo("pairs", &pairs, names, 2)) {
    Rope r = s.rope;
    r.pairs = static_cast<RopePairs>(pairs);
    state.apply(SetRope{r});
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Which dimensions turn together: i with i + d_k/2 (HF Llama's rotate_half)\n"
                      "or 2i with 2i + 1 (GPT-J, the RoFormer paper).");
  if (d.rotary_dims() < d.d_k) {  // partial rotary (GPT-NeoX), set by the checkpoint or the file
    ImGui::TextWrapped("turns %d of each head's %d dimensions", d.rotary_dims(), d.d_k);
    state.note_item("RoPE dims");
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Partial rotary (GPT-NeoX, Pythia): only the first %d dimensions of each head turn,\n"
                        "with the frequencies of a head that wide; the other %d pass into the scores unchanged.",
                        d.rotary_dims(), d.d_k - d.rotary_dims());
  }
  if (s.rope.scaling != RopeScaling::None) {
    // Set by the checkpoint (or the scenario file); shown so no angle is a surprise.
    ImGui::TextWrapped("%s scaling ×%g", s.rope.scaling == RopeScaling::Llama3 ? "Llama 3" : "linear",
                       static_cast<double>(s.rope.factor));
    state.note_item("RoPE scaling");
    if (ImGui::IsItemHovered() && s.rope.scaling == RopeScaling::Llama3)
      ImGui::SetTooltip("The model stretches RoPE for a longer context than it was trained on:\n"
                        "frequencies whose wavelength is over %d/%g positions are divided by %g,\n"
                        "those under %d/%g kept, those between blended. Hover the φ stage for each pair's.",
                        s.rope.original_max_positions, static_cast<double>(s.rope.low_freq_factor),
                        static_cast<double>(s.rope.factor), s.rope.original_max_positions,
                        static_cast<double>(s.rope.high_freq_factor));
    else if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Every frequency is divided by %g (linear scaling).", static_cast<double>(s.rope.factor));
  }
  ImGui::Unindent();
}

// Gemma 2's soft-cap of the scaled scores: on or off, and its c.
void draw_softcap_controls(AppState& state, const Scenario& s) {
  bool on = s.softcap > 0.0f;
  if (ImGui::Checkbox("soft-cap scores", &on)) state.apply(SetSoftcap{on ? 50.0f : 0.0f});
  state.note_item("soft-cap");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Squeeze every scaled score into (−c, c) with c·tanh(s/c) before the mask (Gemma 2):\n"
                      "small scores pass almost unchanged, a huge one stops near c, so no key takes a whole row.");
  if (!on) return;
  ImGui::Indent();
  float c = s.softcap;
  if (ImGui::InputFloat("c", &c, 0.0f, 0.0f, "%.3g", ImGuiInputTextFlags_EnterReturnsTrue) && c != s.softcap && c > 0.0f)
    state.apply(SetSoftcap{c});
  state.note_item("soft-cap c");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("The cap: no score passes ±c (Gemma 2 uses 50). Enter applies.");
  ImGui::Unindent();
}

// The q/k norm: off, per head or over the whole row, and its ε.
void draw_qk_norm_controls(AppState& state, const Scenario& s) {
  bool on = s.qk_norm.on();
  if (ImGui::Checkbox("q/k norm", &on)) {
    QkNorm n = s.qk_norm;
    n.scope = on ? QkNormScope::PerHead : QkNormScope::Off;
    state.apply(SetQkNorm{n});
  }
  state.note_item("q/k norm");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Divide each query and key by its root mean square and multiply by learned gains\n"
                      "before RoPE (Qwen3, Gemma 3, OLMo-2): no score can grow large enough to saturate\n"
                      "the softmax. New gains start at 1; edit them in q_norm and k_norm.");
  if (!s.qk_norm.on()) return;
  ImGui::Indent();
  int scope = s.qk_norm.scope == QkNormScope::Whole ? 1 : 0;
  const char* names[] = {"per head", "whole row"};
  if (ImGui::Combo("over", &scope, names, 2)) {
    QkNorm n = s.qk_norm;
    n.scope = scope == 1 ? QkNormScope::Whole : QkNormScope::PerHead;
    state.apply(SetQkNorm{n});
  }
  state.note_item("q/k norm over");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Per head: the mean square of each head's d_k values, one d_k gain vector for every head (Qwen3).\n"
                      "Whole row: the mean square of all heads' values together, a gain per column (OLMo-2).");
  float eps = s.qk_norm.eps;
  if (ImGui::InputFloat("ε", &eps, 0.0f, 0.0f, "%.0e", ImGuiInputTextFlags_EnterReturnsTrue) && eps != s.qk_norm.eps) {
    QkNorm n = s.qk_norm;
    n.eps = std::max(eps, 0.0f);
    state.apply(SetQkNorm{n});
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Added to the mean square so a zero row stays finite. Enter applies.");
  ImGui::Unindent();
}

// The model's predictions (model mode), the title and the presets.
void draw_scenario_section(AppState& state) {
  const Scenario& s = state.doc->scenario();
  if (state.model.open()) {
    draw_model_predictions_section(state);
    ImGui::Separator();
  }
  ImGui::TextDisabled(state.model.open() ? "Focused layer" : "Scenario");
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(s.title.empty() ? "(untitled)" : s.title.c_str());
  ImGui::PopTextWrapPos();
  ImGui::SetNextItemWidth(-1);
  // In model mode the document is the focused layer: a preset would replace it (File ▸ Open leaves the model).
  if (!state.model.open() && ImGui::BeginCombo("##preset", "Open a preset…")) {
    for (const auto& p : presets()) {
      if (ImGui::Selectable(p.title.c_str())) {
        if (auto sc = make_preset(p.name)) state.apply(ReplaceScenario{std::make_shared<const Scenario>(*sc), "preset " + p.name});
      }
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", p.summary.c_str());
    }
    ImGui::EndCombo();
  }
}

// T, d_model, heads, K/V heads, d_k, d_v (and d_out, T_k, d_kv where they exist).
void draw_sizes_section(AppState& state) {
  const Scenario& s = state.doc->scenario();
  const Dims d = s.dims();
  ImGui::TextDisabled("Sizes");
  // A model's layer has the model's sizes: a changed one would cut the layer
  // off from the rest of the network (no predictions until undone), and a
  // button moving under the pointer made that easy to do by accident.
  ImGui::BeginDisabled(state.model.open());
  using namespace limits;
  dimension_input(state, "T (tokens)", Dimension::T, d.T, kMaxTokens, "Number of tokens: rows of X");
  dimension_input(state, "d_model", Dimension::d_model, d.d_model, kMaxModelDim, "Width of each token's embedding");
  dimension_input(state, "heads", Dimension::heads, d.heads, kMaxHeads, "Number of attention heads");
  dimension_input(state, "K/V heads", Dimension::kv_heads, d.kv_heads, d.heads,
                  "Heads of K and V (must divide heads).\nFewer than heads is grouped-query attention: each K/V head\n"
                  "is shared by heads / kv_heads query heads, as in Llama, Mistral and Qwen;\n1 is multi-query.\n");
  state.note_item("K/V heads");
  dimension_input(state, "d_k", Dimension::d_k, d.d_k, kMaxHeadDim, "Width of each head's queries and keys");
  dimension_input(state, "d_v", Dimension::d_v, d.d_v, kMaxHeadDim, "Width of each head's values");
  if (s.use_w_o) dimension_input(state, "d_out", Dimension::d_out, d.d_out, kMaxModelDim, "Columns of W_o");
  if (s.cross()) {
    dimension_input(state, "T_k (keys)", Dimension::T_k, d.T_k, kMaxTokens,
                    "Cross-attention: rows of X_kv, the sequence the queries read from\n(the scores' columns; a custom mask "
                    "keeps what fits)");
    state.note_item("T_k");
    dimension_input(state, "d_kv", Dimension::d_kv, d.d_kv, kMaxModelDim,
                    "Cross-attention: width of X_kv's rows, and rows of W_k and W_v");
  }
  ImGui::EndDisabled();
}

// The mask, the scale, sinks, ALiBi, q/k norm, soft-cap, RoPE, temperature, biases, W_o and the weights' colours.
void draw_attention_section(AppState& state) {
  const Scenario& s = state.doc->scenario();
  const Dims d = s.dims();
  ImGui::TextDisabled("Attention");
  // In the order of MaskKind.
  const char* kinds[] = {"none", "causal", "window", "custom"};
  int kind = static_cast<int>(s.mask_kind);
  // A window keeps its width across kind changes; the first one sees half the tokens.
  const int default_window = s.window >= 1 ? s.window : std::max(1, s.T() / 2);
  // Causal and window masks end at the diagonal: with cross-attention of
  // T_q ≠ T_k there is none, so they are shown but cannot be chosen.
  const bool no_diagonal = s.cross() && d.T != d.T_k;
  if (ImGui::BeginCombo("mask", kinds[kind])) {
    for (int k = 0; k < IM_ARRAYSIZE(kinds); ++k) {
      const bool needs_diagonal = k == static_cast<int>(MaskKind::Causal) || k == static_cast<int>(MaskKind::Window);
      const bool refused = no_diagonal && needs_diagonal;
      if (ImGui::Selectable(kinds[k], k == kind, refused ? ImGuiSelectableFlags_Disabled : 0) && k != kind)
        state.apply(SetMask{static_cast<MaskKind>(k), std::nullopt, default_window});
      if (refused && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip("Needs as many queries as keys: T = %d queries, T_k = %d keys (choose none or custom)", d.T,
                          d.T_k);
    }
    ImGui::EndCombo();
  }
  state.note_item("mask");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("causal: each token sees only itself and earlier tokens.\n"
                      "window (sliding): itself and the W − 1 tokens before it.\n"
                      "custom: click mask cells to toggle them.");
  if (s.mask_kind == MaskKind::Window) {
    int w = s.window;
    if (ImGui::InputInt("window W", &w, 1, 4) && w != s.window)
      state.apply(SetMask{MaskKind::Window, std::nullopt, std::clamp(w, 1, std::max(1, s.T()))});
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Keys each token sees, itself included (1 to T)");
  }
  if (s.score_scale > 0.0f) {  // the model's own factor (Granite, Gemma): named with its value
    char label[64];
    std::snprintf(label, sizeof label, "scale by %.4g", static_cast<double>(s.score_scale));
    toggle(state, label, Toggle::Scale, s.scale,
           "Multiply the scores by the factor the model's configuration sets, instead of dividing them by √d_k");
  } else {
    toggle(state, "scale by 1/√d_k", Toggle::Scale, s.scale, "Divide the scores by √d_k before softmax");
  }
  toggle(state, "attention sinks", Toggle::Sinks, s.use_sinks,
         "Give each head's softmax one more key, a learned logit whose share is dropped: rows may sum to less than 1");
  toggle(state, "ALiBi position bias", Toggle::Alibi, s.alibi,
         "Add m·(j − i) to each head's scaled scores: a penalty that grows with distance, a different slope m per head");
  draw_qk_norm_controls(state, s);
  draw_softcap_controls(state, s);
  draw_rope_controls(state, s, d);
  float t = s.temperature;
  const bool changed = ImGui::SliderFloat("temperature", &t, 0.05f, 5.0f, "%.2f", ImGuiSliderFlags_Logarithmic);
  if (ImGui::IsItemActivated()) state.temperature_gesture = state.doc->begin_gesture();
  if (changed) state.apply(SetTemperature{t}, state.temperature_gesture);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Divides the scores: below 1 sharpens the weights, above 1 flattens them.\nCtrl+click to type a value.");
  toggle(state, "biases b_q, b_k, b_v", Toggle::Bias, s.use_bias, "Add a learned bias to each projection");
  toggle(state, "output projection W_o", Toggle::OutputProjection, s.use_w_o, "Mix the heads with W_o after concatenating");
  if (s.use_w_o) toggle(state, "output bias b_o", Toggle::OutputBias, s.use_output_bias, "Add b_o to the output");

  // How the weights are coloured: at T=1024 they are ~0.001 and a linear 0–1
  // scale is uniformly dark. Sets every weights heatmap (each one's context menu
  // can still choose its own).
  int scale = static_cast<int>(state.weights_scale);
  const char* scales[] = {to_string(ColourScale::Linear), to_string(ColourScale::Log), to_string(ColourScale::PerRow)};
  if (ImGui::Combo("weights colour", &scale, scales, 3)) {
    state.weights_scale = static_cast<ColourScale>(scale);
    state.colour_scales.clear();
  }
  state.note_item("weights colour");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("How attention weights map to colours:\nlinear: 0 to 1\nlog: orders of magnitude (for many tokens)\n"
                      "per row: each row divided by its largest weight\nRight-click a weights heatmap to set it alone.");
}

// A thumbnail of every head's weights (grouped by K/V head): a click focuses the head.
void draw_heads_section(AppState& state) {
  const Scenario& s = state.doc->scenario();
  const Dims d = s.dims();
  ImGui::TextDisabled("Heads (click one to focus it)");
  // As many thumbnails per row as fit the panel.
  const float thumb = 56.0f;
  const int per_row = std::max(1, static_cast<int>(ImGui::GetContentRegionAvail().x / (thumb + 40.0f)));
  const bool grouped = d.kv_heads != d.heads;
  const int per_group = std::max(1, d.heads / std::max(1, d.kv_heads));
  for (int h = 0; h < s.heads; ++h) {
    // grouped-query heads: one line per K/V head, with the query heads that share it
    if (grouped && h % per_group == 0) {
      ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
      ImGui::TextWrapped("K/V head %s: query heads %s to %s", s.shown_index(d.kv_head(h)).c_str(), s.shown_index(h).c_str(),
                         s.shown_index(h + per_group - 1).c_str());
      ImGui::PopStyleColor();
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("These query heads read the same keys and values, yet attend differently:\n"
                          "each asks its own question (its own columns of W_q).");
    } else if ((grouped ? h % per_group : h) % per_row) {
      ImGui::SameLine();
    }
    HeatmapOptions opt;
    opt.cell_px = thumb / static_cast<float>(std::max(1, d.T));
    opt.max_px = thumb;
    opt.show_labels = false;
    opt.show_colour_bar = false;
    opt.interactive = false;
    opt.hold_while_dragging = true;
    const std::string label = state.stage_info(StageId::of_head(StageKind::Weights, h)).symbol + (h == state.focused_head ? " ◀" : "");
    opt.title_override = label.c_str();
    if (apply_heatmap_edits(state, draw_heatmap(state, StageId::of_head(StageKind::Weights, h), opt)).clicked) state.focused_head = h;
  }
}

// Take a snapshot, restore it, show the differences, and of what it is.
void draw_compare_section(AppState& state) {
  ImGui::TextDisabled("Compare");
  if (ImGui::Button("Take snapshot")) state.take_snapshot();
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Ctrl+T: remember every stage now; each stage then shows what changed since");
  if (state.compare.snapshot) {
    ImGui::SameLine();
    if (ImGui::Button("Restore")) state.restore_snapshot();
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Go back to the snapshot (undoable)");
    ImGui::Checkbox("show differences", &state.compare.show);
    // Of what, and where the shapes differ (those stages have no differences to show).
    const CompareState& c = state.compare;
    const bool other_text = state.model.open() && c.ids != state.model.session->ids();
    ImGui::PushTextWrapPos(0.0f);
    if (!c.of_text.empty()) ImGui::TextDisabled("Snapshot of %s", c.of_text.c_str());
    else if (other_text) ImGui::TextDisabled("Snapshot of another text (%zu tokens)", c.ids.size());
    else if (state.model.open() && c.layer != state.model.session->layer()) ImGui::TextDisabled("Snapshot of layer %d", c.layer);
    if (c.snapshot->scenario->T() != state.doc->scenario().T())
      text_colored(gfx::Accent::Warning, "The snapshot has %d tokens and this text %d: stages of another shape show no differences.",
                   c.snapshot->scenario->T(), state.doc->scenario().T());
    ImGui::PopTextWrapPos();
  }
}

}  // namespace

void draw_controls_panel(AppState& state) {
  ImGui::PushItemWidth(ImGui::GetContentRegionAvail().x * 0.5f);
  draw_scenario_section(state);
  ImGui::Separator();
  draw_sizes_section(state);
  ImGui::Separator();
  draw_words_section(state);
  ImGui::Separator();
  draw_attention_section(state);
  ImGui::Separator();
  draw_heads_section(state);
  ImGui::PopItemWidth();
  ImGui::Separator();
  draw_compare_section(state);
  ImGui::Separator();
  if (ImGui::Button("Undo") && state.doc->can_undo()) state.undo();
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Ctrl+Z: %s", state.doc->can_undo() ? state.doc->undo_label().c_str() : "nothing to undo");
  ImGui::SameLine();
  if (ImGui::Button("Redo") && state.doc->can_redo()) state.redo();
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Ctrl+Shift+Z / Ctrl+Y: %s", state.doc->can_redo() ? state.doc->redo_label().c_str() : "nothing to redo");
}

}  // namespace attention_lab::gui
