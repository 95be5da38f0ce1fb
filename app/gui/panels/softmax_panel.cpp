#include "panels/panels.h"

#include "attention_lab/quiz.h"
#include "attention_lab/softmax_breakdown.h"
#include "attention_lab/stage_info.h"
#include "attention_lab/stage_registry.h"
#include "logic/number_format.h"
#include "logic/signed_bars.h"
#include "logic/text_fit.h"
#include "widgets/rgb_colour.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <string>

namespace attention_lab::gui {

namespace {

std::string bar_label(float value) { return std::isinf(value) && value < 0 ? "−∞" : format_number(value, 3); }

// The widest number printed under any bar, so bars are wide enough that
// neighbouring numbers ("9.727e-04") never run into each other.
float widest_bar_label(std::initializer_list<const RowVector*> rows) {
  float widest = ImGui::CalcTextSize("−0.000").x;
  for (const RowVector* v : rows)
    for (Eigen::Index i = 0; i < v->size(); ++i) widest = std::max(widest, ImGui::CalcTextSize(bar_label((*v)[i]).c_str()).x);
  return widest;
}

// A masked key (−∞): no bar, since no height can stand for it, but a short
// hatched stub hanging from the zero line, so the eye sees "forbidden", not
// "missing" and not "very large".
void minus_infinity_stub(ImDrawList* dl, float x0, float x1, float zero_y) {
  const float stub = 7.0f * gfx::em();
  const ImU32 grey = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  dl->PushClipRect(ImVec2(x0, zero_y), ImVec2(x1, zero_y + stub), true);
  for (float x = x0 - stub; x < x1; x += 4.0f) dl->AddLine(ImVec2(x, zero_y + stub), ImVec2(x + stub, zero_y), grey);
  dl->PopClipRect();
  dl->AddRect(ImVec2(x0, zero_y), ImVec2(x1, zero_y + stub), grey);
}

// One vector as a row of labelled bars around one zero line: positive values
// up in red, negative ones down in blue (the heatmaps' colours), probabilities
// in `prob_colour`, −∞ as a stub; every number printed under its bar.
// Column `hidden` (−1: none) is the quiz's answer: a "?" instead of its bar
// and number.
void bar_row(const char* label, const RowVector& v, float bar_w, ImU32 prob_colour, bool probability,
             int hidden = -1) {
  push_wrap_at_visible_edge();
  ImGui::TextUnformatted(label);
  ImGui::PopTextWrapPos();
  const BarScale scale = bar_scale(v, probability);
  const float h = 46.0f * gfx::em();
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float zero_y = p0.y + scale.zero_at(h);
  for (Eigen::Index i = 0; i < v.size(); ++i) {
    const float x = p0.x + bar_w * static_cast<float>(i);
    const float value = v[i];
    if (i == hidden) {
      const float top = p0.y + h * 0.25f;
      dl->AddRectFilled(ImVec2(x + 2, top), ImVec2(x + bar_w - 2, p0.y + h + ImGui::GetTextLineHeight() + 2),
                        IM_COL32(250, 200, 40, 255));
      const float qw = ImGui::CalcTextSize("?").x;
      dl->AddText(ImVec2(x + (bar_w - qw) * 0.5f, top + (h * 0.75f - ImGui::GetTextLineHeight()) * 0.5f + 4),
                  IM_COL32(0, 0, 0, 255), "?");
      continue;
    }
    const Bar bar = bar_for(value, scale, h);
    const bool neg_inf = bar.kind == BarKind::MinusInfinity;
    if (neg_inf) {
      minus_infinity_stub(dl, x + 2, x + bar_w - 2, zero_y);
    } else if (bar.kind == BarKind::Up || bar.kind == BarKind::Down) {
      const ImU32 colour = probability ? prob_colour : to_u32(signed_bar_colour(value));
      dl->AddRectFilled(ImVec2(x + 2, p0.y + bar.top), ImVec2(x + bar_w - 2, p0.y + bar.bottom + 1), colour);
    }
    const std::string t = bar_label(value);
    const float tw = ImGui::CalcTextSize(t.c_str()).x;
    dl->AddText(ImVec2(x + (bar_w - tw) * 0.5f, p0.y + h + 2),
                ImGui::GetColorU32(neg_inf ? ImGuiCol_TextDisabled : ImGuiCol_Text), t.c_str());
  }
  dl->AddLine(ImVec2(p0.x, zero_y), ImVec2(p0.x + bar_w * static_cast<float>(v.size()), zero_y),
              ImGui::GetColorU32(ImGuiCol_TextDisabled));
  ImGui::Dummy(ImVec2(bar_w * static_cast<float>(v.size()), h + ImGui::GetTextLineHeightWithSpacing() + 4));
}

// Stages whose rows are the tokens (queries, for the mask and the T×T stages).
bool has_token_rows(StageKind kind) { return spec(kind).row_labels == SideLabels::Token; }

}  // namespace

void draw_softmax_panel(AppState& state) {
  const Document& doc = *state.doc;
  const Scenario& s = doc.scenario();
  SoftmaxCloseUp& sc = state.softmax;
  sc.row = std::clamp(sc.row, 0, s.T() - 1);
  // Follow the selection: a selected cell of any stage with a row per token
  // (X, Q, the scores, the context, the output, …) shows that token's row
  // here, and a per-head stage's cell that head.
  if (state.selected && sc.follow_selection && state.selected->stage.role == Role::Value && has_token_rows(state.selected->stage.kind) &&
      state.selected->row >= 0 && state.selected->row < s.T()) {
    sc.row = state.selected->row;
    if (is_per_head(state.selected->stage.kind)) state.focused_head = state.selected->stage.head;
  }
  const int head = std::clamp(state.focused_head, 0, s.heads - 1);
  ImGui::SetNextItemWidth(220);
  if (ImGui::SliderInt("row (query token)", &sc.row, 0, s.T() - 1)) sc.follow_selection = false;
  const std::string which = "'" + s.token_label(sc.row) + "', head " + s.shown_index(head);
  same_line_if_fits(ImGui::CalcTextSize(which.c_str()).x);
  ImGui::TextUnformatted(which.c_str());
  same_line_if_fits(ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x +
                    ImGui::CalcTextSize("follow the selected cell").x);
  ImGui::Checkbox("follow the selected cell", &sc.follow_selection);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Show the row of the token whose cell is selected anywhere (X, Q, scores, weights, output, …)");

  const SoftmaxBreakdown b = softmax_breakdown(doc, head, sc.row);
  if (!b.error.empty()) {
    text_colored(gfx::Accent::Error, "%s", b.error.c_str());
    return;
  }
  const int n = static_cast<int>(b.scores.size());
  if (sc.preview_temperature <= 0.0f) sc.preview_temperature = s.temperature;
  RowVector preview = weights_at_temperature(b, sc.preview_temperature);
  const float widest = widest_bar_label({&b.scores, &b.scaled, &b.masked, &b.shifted, &b.exps, &b.weights, &preview});
  const float bar_w = std::max(widest + 8, std::min((visible_width_left() - 20) / static_cast<float>(std::max(n, 1)), 90.0f));
  if (n > 40) ImGui::TextDisabled("Long row: scroll sideways to see every key.");

  // Column headers: the key tokens.
  {
    const ImVec2 p0 = ImGui::GetCursorScreenPos();
    const auto width_of = [](std::string_view text) { return ImGui::CalcTextSize(text.data(), text.data() + text.size()).x; };
    const float line = ImGui::GetTextLineHeight();
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    for (int i = 0; i < n; ++i) {
      // A token wider than its bar ends in "…"; hovering it shows it whole.
      const std::string full = s.key_label(i);
      const std::string t = ellipsize(full, bar_w - 4, width_of);
      const float tw = width_of(t);
      const float x = p0.x + bar_w * static_cast<float>(i);
      ImGui::GetWindowDrawList()->AddText(ImVec2(x + (bar_w - tw) * 0.5f, p0.y), ImGui::GetColorU32(ImGuiCol_TextDisabled),
                                          t.c_str());
      if (t != full && ImGui::IsWindowHovered() && mouse.x >= x && mouse.x < x + bar_w && mouse.y >= p0.y &&
          mouse.y < p0.y + line)
        ImGui::SetTooltip("key %s: '%s'", s.shown_index(i).c_str(), full.c_str());
    }
    ImGui::Dummy(ImVec2(bar_w * static_cast<float>(n), ImGui::GetTextLineHeightWithSpacing()));
  }
  // The quiz's answer stays hidden here too, by the pipeline's rule (the
  // asked cell and its copies), and its shift by the row max.
  const auto hidden_in = [&](StageKind kind) {
    if (!state.quiz.asking()) return -1;
    const CellRef& quiz = state.quiz.round->question.cell;
    if (quiz.row != sc.row) return -1;
    return state.quiz_hides(StageId::of_head(kind, head), quiz.row, quiz.col) ? quiz.col : -1;
  };
  const int hide_scaled = hidden_in(StageKind::Scaled), hide_masked = hidden_in(StageKind::Masked);
  const int hide_weights = hidden_in(StageKind::Weights);
  const int hide_shifted = hide_masked;  // Ŝ − max, with the max printed beside it
  const ImU32 prob_colour = IM_COL32(33, 145, 140, 255);
  // Where each numbered row ends, as a scroll position that shows it whole.
  float scroll_at_row[7] = {};
  const auto row_end = [&](int numbered) {
    scroll_at_row[numbered] = std::max(0.0f, ImGui::GetCursorPosY() - ImGui::GetWindowHeight() + ImGui::GetStyle().WindowPadding.y * 2);
  };
  bar_row("1. scores  S = q·kⱼ", b.scores, bar_w, prob_colour, false, hidden_in(StageKind::Scores));
  row_end(1);
  char divided[96];
  std::snprintf(divided, sizeof divided, "2. scaled  S′ = S ÷ %s%.3g",
                s.scale ? (s.score_scale > 0.0f ? "(1/scale) ÷ τ = S ÷ " : "√d_k ÷ τ = S ÷ ") : "τ = S ÷ ", b.divisor);
  bar_row(divided, b.scaled, bar_w, prob_colour, false, hide_scaled);
  row_end(2);
  if (b.position_bias.size() > 0) {
    // ALiBi: the bias is added before the mask; its own bars show the distance penalty.
    bar_row("   + position bias  B = m·(j − i)  (ALiBi)", b.position_bias, bar_w, prob_colour, false);
    bar_row("3. masked  Ŝ = S′ + B (−∞ where the mask forbids)", b.masked, bar_w, prob_colour, false, hide_masked);
  } else {
    bar_row("3. masked  Ŝ (−∞ where the mask forbids)", b.masked, bar_w, prob_colour, false, hide_masked);
  }
  const bool max_is_asked = hide_masked >= 0 && b.masked[hide_masked] == b.max;  // the max would give it away
  const std::string minus = "4. minus the row max (" + (max_is_asked ? std::string("?") : format_number(b.max, 3)) +
                            "): every entry ≤ 0, nothing overflows";
  bar_row(minus.c_str(), b.shifted, bar_w, prob_colour, false, hide_shifted);
  row_end(4);
  bar_row("5. exp: e^(Ŝⱼ − max), between 0 and 1", b.exps, bar_w, prob_colour, true);
  const std::string divide =
      b.sink > -std::numeric_limits<float>::infinity()
          ? "6. ÷ the sum (" + format_number(static_cast<float>(b.sum), 3) + ", with the sink's e^(" +
                format_number(b.sink, 3) + " − max)) = weights; the sink took " + format_number(b.sink_share, 3)
          : "6. ÷ the sum (" + format_number(static_cast<float>(b.sum), 3) + ") = weights";
  bar_row(divide.c_str(), b.weights, bar_w, prob_colour, true, hide_weights);
  row_end(6);
  // A lesson step that opens here with a quiz brings its "?" on screen: the
  // lowest row that hides it (the weights sit below the fold of a short window).
  if (state.scroll_to_step && state.quiz.asking()) {
    const int lowest = hide_weights >= 0 ? 6 : hide_masked >= 0 ? 4 : hide_scaled >= 0 ? 2 : 1;
    ImGui::SetScrollY(scroll_at_row[lowest]);
    state.scroll_to_step = false;
  }
  push_wrap_at_visible_edge();
  ImGui::Text("Entropy of the row: %s nats (uniform over the %d allowed keys: %s)",
              format_number(static_cast<float>(b.entropy), 3).c_str(), b.allowed,
              format_number(static_cast<float>(b.max_entropy), 3).c_str());
  ImGui::PopTextWrapPos();
  if (b.issue != RowIssue::None) text_colored(gfx::Accent::Warning, "%s", describe(b.issue));
  if (b.pinned()) text_colored(gfx::Accent::Pin, "This row has pinned cells; the steps above use the pinned values.");

  // Temperature preview: what the weights would be, without changing anything.
  ImGui::Separator();
  ImGui::SetNextItemWidth(260);
  if (ImGui::SliderFloat("preview temperature τ", &sc.preview_temperature, 0.05f, 5.0f, "%.2f", ImGuiSliderFlags_Logarithmic))
    preview = weights_at_temperature(b, sc.preview_temperature);
  same_line_if_fits(ImGui::CalcTextSize("Apply to the scenario").x + 2 * ImGui::GetStyle().FramePadding.x);
  if (ImGui::Button("Apply to the scenario")) state.apply(SetTemperature{sc.preview_temperature});
  if (preview.size() == n) {
    // At the scenario's own τ the preview is the weights row again.
    const bool same_tau = std::fabs(sc.preview_temperature - s.temperature) <= 1e-6f * s.temperature;
    bar_row("weights at this τ (below 1 sharper, above 1 flatter)", preview, bar_w, prob_colour, true,
            same_tau ? hide_weights : -1);
    ImGui::Text("entropy at this τ: %s nats", format_number(static_cast<float>(entropy_of(preview)), 3).c_str());
  }
}

}  // namespace attention_lab::gui
