#include "panels/panels.h"

#include "attention_lab/sqrt_dk_experiment.h"
#include "logic/number_format.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace attention_lab::gui {

namespace {

// Bars of one histogram in a box, with its x range under it.
void draw_histogram(const char* title, const Histogram& h, ImU32 colour, ImVec2 size) {
  ImGui::TextUnformatted(title);
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::Dummy(size);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRect(p0, ImVec2(p0.x + size.x, p0.y + size.y), ImGui::GetColorU32(ImGuiCol_Border));
  const int top = std::max(1, *std::max_element(h.counts.begin(), h.counts.end()));
  const float bw = size.x / static_cast<float>(h.counts.size());
  for (std::size_t i = 0; i < h.counts.size(); ++i) {
    const float bh = (size.y - 2) * static_cast<float>(h.counts[i]) / static_cast<float>(top);
    const float x = p0.x + bw * static_cast<float>(i);
    dl->AddRectFilled(ImVec2(x + 0.5f, p0.y + size.y - bh), ImVec2(x + bw - 0.5f, p0.y + size.y), colour);
  }
  // Zero, and the axis range.
  const double lo = h.edges.front(), hi = h.edges.back();
  const float zero_x = p0.x + size.x * static_cast<float>((0.0 - lo) / (hi - lo));
  dl->AddLine(ImVec2(zero_x, p0.y), ImVec2(zero_x, p0.y + size.y), ImGui::GetColorU32(ImGuiCol_TextDisabled));
  const std::string l = format_number(static_cast<float>(lo), 1), r = format_number(static_cast<float>(hi), 1);
  ImGui::TextDisabled("%s", l.c_str());
  ImGui::SameLine(std::max(0.0f, size.x - ImGui::CalcTextSize(r.c_str()).x));
  ImGui::TextDisabled("%s", r.c_str());
  if (const int outside = h.below + h.above; outside > 0)
    ImGui::TextDisabled(outside == 1 ? "%d sample falls outside the axis" : "%d samples fall outside the axis", outside);
}

}  // namespace

// The experiment as training: two runs from the same start, with and without 1/√d_k.
void draw_sqrt_dk_training(AppState& state) {
  SqrtDkState& x = state.sqrt_dk;
  SqrtDkTrainingOptions& o = x.train_options;
  push_wrap_at_visible_edge();
  ImGui::TextUnformatted(
      "Teach one head to look at the word before (judged by its output, through V) by gradient descent on W_q and "
      "W_k, twice from the same start: with the scores divided by √d_k and without. Try d_k = 4, then 64.");
  ImGui::PopTextWrapPos();
  bool changed = x.train_result.scaled.loss.empty() && x.train_result.error.empty();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 14);
  changed |= ImGui::SliderInt("d_k##train", &o.d_k, 1, 256, "%d", ImGuiSliderFlags_Logarithmic);
  state.note_item("sqrt dk train d_k");
  for (const int preset : {4, 64}) {
    ImGui::SameLine();
    if (ImGui::SmallButton(("d_k = " + std::to_string(preset)).c_str())) o.d_k = preset, changed = true;
    state.note_item("sqrt dk train " + std::to_string(preset));
  }
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 14);
  changed |= ImGui::SliderInt("steps##train", &o.steps, 10, 1000, "%d", ImGuiSliderFlags_Logarithmic);
  same_line_if_fits(ImGui::GetFontSize() * 22);
  float lr = static_cast<float>(o.learning_rate);
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 10);
  if (ImGui::SliderFloat("learning rate##train", &lr, 1e-3f, 1.0f, "%.3g", ImGuiSliderFlags_Logarithmic))
    o.learning_rate = static_cast<double>(lr), changed = true;
  ImGui::SameLine();
  if (ImGui::SmallButton("Other start")) ++o.seed, changed = true;
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Other random X and weights (seed %llu)", static_cast<unsigned long long>(o.seed + 1));
  if (changed) x.train_result = run_sqrt_dk_training(o);  // two small runs: milliseconds
  const SqrtDkTrainingResult& r = x.train_result;
  if (!r.error.empty()) {
    text_colored(gfx::Accent::Error, "%s", r.error.c_str());
    return;
  }
  const auto curve = [](const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); };
  const float em = ImGui::GetFontSize(), w = std::min(em * 16, (visible_width_left() - em * 24) * 0.5f);
  const struct {
    const char* what;
    const std::vector<double>& scaled;
    const std::vector<double>& unscaled;
  } rows[] = {{"loss", r.scaled.loss, r.unscaled.loss},
              {"entropy of the weights rows", r.scaled.entropy, r.unscaled.entropy},
              {"gradient through the softmax", r.scaled.softmax_gradient, r.unscaled.softmax_gradient}};
  for (const auto& row : rows) {
    ImGui::BeginGroup();
    draw_curve((std::string(row.what) + ", scaled").c_str(), curve(row.scaled), w, em * 3.5f);
    ImGui::EndGroup();
    same_line_if_fits(w + em * 16);
    ImGui::BeginGroup();
    draw_curve((std::string(row.what) + ", not scaled").c_str(), curve(row.unscaled), w, em * 3.5f);
    ImGui::EndGroup();
  }
  state.note_item("sqrt dk train curves");
  push_wrap_at_visible_edge();
  ImGui::TextUnformatted(r.summary.c_str());
  for (const SqrtDkTrainingRun* run : {&r.scaled, &r.unscaled})
    if (!run->error.empty()) text_colored(gfx::Accent::Warning, "%s: %s", run == &r.scaled ? "scaled" : "not scaled", run->error.c_str());
  ImGui::PopTextWrapPos();
}

void draw_sqrt_dk_panel(AppState& state) {
  SqrtDkState& x = state.sqrt_dk;
  if (ImGui::RadioButton("dot products", !x.training)) x.training = false;
  state.note_item("sqrt dk products");
  ImGui::SameLine();
  if (ImGui::RadioButton("as training", x.training)) x.training = true;
  state.note_item("sqrt dk training");
  ImGui::Separator();
  if (x.training) return draw_sqrt_dk_training(state);
  push_wrap_at_visible_edge();
  ImGui::TextUnformatted(
      "Draw many random query and key vectors of length d with entries from N(0, 1) and look at their dot products. "
      "Without scaling, q·k spreads out like √d, and softmax over such scores puts nearly all the weight on one key. "
      "Dividing by √d keeps the spread at 1 for every d.");
  ImGui::PopTextWrapPos();
  bool changed = x.result.rows == 0;
  ImGui::SetNextItemWidth(260);
  changed |= ImGui::SliderInt("d (vector length)", &x.options.d, 1, 1024, "%d", ImGuiSliderFlags_Logarithmic);
  ImGui::SetNextItemWidth(260);
  changed |= ImGui::SliderInt("keys per query (n)", &x.options.keys_per_row, 2, 256, "%d", ImGuiSliderFlags_Logarithmic);
  // The button and the checkbox follow on the same line when they fit (a
  // projector's large text on a small screen puts them below).
  const ImGuiStyle& style = ImGui::GetStyle();
  same_line_if_fits(ImGui::CalcTextSize("Draw again").x + 2 * style.FramePadding.x);
  if (ImGui::Button("Draw again")) ++x.options.seed, changed = true;
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("New random vectors (seed %llu)", static_cast<unsigned long long>(x.options.seed + 1));
  same_line_if_fits(ImGui::GetFrameHeight() + style.ItemInnerSpacing.x + ImGui::CalcTextSize("same axis for both").x);
  ImGui::Checkbox("same axis for both", &x.same_axis);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("On: both on ±4√d, so the scaled products show how much narrower they are.\nOff: each on its own axis, to see their shapes.");
  if (changed) {
    x.options.range = 0.0;  // both histograms on the unscaled one's ±4√d
    x.result = run_sqrt_dk_experiment(x.options);
    // The same scaled products again, binned on their own ±4 axis (no second draw).
    x.scaled_own_axis = make_histogram(x.result.scaled.values, -4.0, 4.0, x.options.bins);
  }
  if (!x.result.error.empty()) {
    text_colored(gfx::Accent::Error, "%s", x.result.error.c_str());
    return;
  }
  const SqrtDkResult& r = x.result;
  const float w = std::min((visible_width_left() - 24.0f) * 0.5f, 460.0f);
  // Tall enough to read, short enough that what is under them (their axis
  // labels, the table of variances, largest weights and entropies, and the
  // verdict under it) stays on a small screen: a lesson's text talks about it.
  const float em = gfx::em();
  const float line = ImGui::GetTextLineHeightWithSpacing();
  const float table_h = 6.0f * (ImGui::GetTextLineHeight() + 2.0f * style.CellPadding.y) + style.ItemSpacing.y;
  const float under = 3.0f * line + table_h + 2.0f * line;
  const ImVec2 size(w, std::clamp(ImGui::GetContentRegionAvail().y - under, 40.0f * em, 160.0f * em));
  ImGui::BeginGroup();
  draw_histogram("q·k (not scaled)", r.unscaled.histogram, IM_COL32(230, 159, 0, 255), size);
  ImGui::EndGroup();
  ImGui::SameLine(0, 24);
  ImGui::BeginGroup();
  draw_histogram("q·k / √d (scaled)", x.same_axis ? r.scaled.histogram : x.scaled_own_axis,
                 IM_COL32(0, 114, 178, 255), size);
  ImGui::EndGroup();

  if (ImGui::BeginTable("stats", 3, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) {
    ImGui::TableSetupColumn("");
    ImGui::TableSetupColumn("not scaled");
    ImGui::TableSetupColumn("scaled by 1/√d");
    ImGui::TableHeadersRow();
    const auto row = [](const char* name, const std::string& a, const std::string& b) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(name);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(a.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(b.c_str());
    };
    const auto f = [](double v, int digits = 3) { return format_number(static_cast<float>(v), digits); };
    row("variance, measured", f(r.unscaled.variance), f(r.scaled.variance));
    row("variance, theory", f(r.unscaled.theory_variance, 0) + " (= d)", "1");
    row("largest softmax weight (mean)", f(r.unscaled.softmax.mean_max_weight),
        f(r.scaled.softmax.mean_max_weight));
    row("entropy of a row (nats)", f(r.unscaled.softmax.mean_entropy), f(r.scaled.softmax.mean_entropy));
    row("uniform row: weight, entropy", f(r.uniform_weight) + ", " + f(r.max_entropy),
        f(r.uniform_weight) + ", " + f(r.max_entropy));
    ImGui::EndTable();
  }
  push_wrap_at_visible_edge();
  const double top = r.unscaled.softmax.mean_max_weight;
  if (top > 0.8)
    text_colored(gfx::Accent::Warning,
                 "Without scaling the softmax is saturated: on average one key takes %.0f %% of the weight, so the "
                 "query barely mixes in the others and the gradients through the other keys nearly vanish.",
                 top * 100.0);
  else
    ImGui::TextDisabled("Slide d up and watch the unscaled softmax saturate while the scaled one stays soft.");
  const auto seed = static_cast<unsigned long long>(x.options.seed);
  if (const int in_rows = r.rows * x.options.keys_per_row; in_rows == x.options.samples)
    ImGui::TextDisabled("%d products in %d rows of %d keys, seed %llu.", x.options.samples, r.rows, x.options.keys_per_row, seed);
  else  // the last, partial row has no softmax of its own
    ImGui::TextDisabled("%d products, seed %llu; the softmax statistics use the %d full rows of %d keys (%d products).",
                        x.options.samples, seed, r.rows, x.options.keys_per_row, in_rows);
  ImGui::TextDisabled("How they are drawn: for a given q, q·k is a sum of d normal terms, so it is normal with "
                      "variance ‖q‖², and ‖q‖² is itself a sum of d squares (about d). Each product is drawn that "
                      "way, exactly as if every key had been built, at the same cost for every d.");
  ImGui::PopTextWrapPos();
}

}  // namespace attention_lab::gui
