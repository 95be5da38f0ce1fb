// Model mode: a checkpoint's text, focused layer, next-token predictions and
// every layer's every head at a glance. The pipeline shows the focused
// layer's attention; this is the model around it.

#include "panels/panels.h"

#include "logic/colormap.h"
#include "logic/number_format.h"
#include "widgets/head_score_grids.h"
#include "widgets/score_grid.h"
#include "attention_lab/model_cache.h"

#include <imgui.h>
#include <imgui_stdlib.h>  // InputText into a std::string: a text of any length, never cut

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace attention_lab::gui {

namespace {

// Pixels of one overview thumbnail: a row of every head fills `width`, up to
// 128 px at the base font (smaller for many heads: GPT-2's twelve at 1280 ×
// 720 are about 50 px; hovering one shows it whole with its tokens).
float thumbnail_px(float width, int heads) {
  const float label = ImGui::CalcTextSize("layer 00 ").x;
  const float fit = (width - label) / static_cast<float>(std::max(1, heads)) - ImGui::GetStyle().ItemSpacing.x;
  return std::clamp(fit, 10.0f * gfx::em(), 128.0f * gfx::em());
}
// Cells per side of a thumbnail of `px` pixels for `tokens` tokens: every
// token where each gets 3 px or more, else pooled to what does.
int thumbnail_cells(float px, int tokens) { return std::clamp(static_cast<int>(px / 3.0f), 1, std::max(1, tokens)); }
// The tokens listed under the text until "Show all" (a 1024-token text is pages of them).
constexpr std::size_t kTokensShown = 48;

void rerun(AppState& state, int layer, const std::string& text) {
  state.open_model(state.model.rerun(text, layer, state.model.ablations()));
}

}  // namespace

void run_model_text(AppState& state, const std::string& text) { rerun(state, state.model.session->layer(), text); }

void draw_ablation_menu(AppState& state, int layer, int head) {
  std::vector<Ablation> now = state.model.ablations();
  const auto item = [&](const Ablation& a, const std::string& label, const char* tip) {
    const auto at = std::find(now.begin(), now.end(), a);
    const bool on = at != now.end();
    if (ImGui::MenuItem(label.c_str(), nullptr, on, !state.busy())) {
      std::vector<Ablation> next = now;
      if (on) next.erase(next.begin() + (at - now.begin()));
      else next.push_back(a);
      state.set_ablations(std::move(next));
    }
    state.note_item("ablate " + to_spec(a));
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s%s", tip, on ? "\n(on: choose it again to take it back)" : "");
  };
  const std::string L = "layer " + std::to_string(layer);
  const std::string H = "head " + std::to_string(head) + " of " + L;
  item({AblationTarget::Head, AblationMode::Zero, layer, head, -1}, "Ablate " + H,
       "Its output (z) set to zero at every position: its share of the attention's output is gone.");
  item({AblationTarget::Head, AblationMode::Mean, layer, head, -1}, "Mean-ablate " + H,
       "Its output (z) at every position replaced by its mean over this text's positions.");
  ImGui::Separator();
  item({AblationTarget::Attention, AblationMode::Zero, layer, 0, -1}, "Ablate " + L + "'s attention",
       "What the layer's attention adds to the residual stream set to zero.");
  item({AblationTarget::Mlp, AblationMode::Zero, layer, 0, -1}, "Ablate " + L + "'s MLP",
       "What the layer's MLP adds to the residual stream set to zero.");
  item({AblationTarget::Mlp, AblationMode::Mean, layer, 0, -1}, "Mean-ablate " + L + "'s MLP",
       "What the layer's MLP adds, replaced by its mean over this text's positions.");
}

void focus_head(AppState& state, int layer, int head) {
  state.focused_head = head;
  if (layer != state.model.session->layer()) rerun(state, layer, state.model.text);
  else state.centre = CentreView::HeadView, state.select_centre_tab = true;
}

namespace {

std::string summary(const ModelSession& s) {
  const ModelConfig& c = s.model().config;
  const double params = static_cast<double>(s.model().parameters);
  char count[32];
  if (params >= 1e6) std::snprintf(count, sizeof count, "%.1f M", params / 1e6);
  else std::snprintf(count, sizeof count, "%.0f", params);
  char buf[320];
  std::snprintf(buf, sizeof buf, "%s · %d layers × %d heads (%d K/V) · d_model %d · %s · %s parameters",
                s.model().layout.c_str(), c.layers, c.heads, c.kv_heads, c.d_model, to_string(s.model().dtype), count);
  return buf;
}

// The rows of the predictions table: token, probability bar, change.
void draw_prediction_rows(AppState& state, const ModelState::Cached& p, std::size_t count, bool compact) {
  const ModelSession& s = *state.model.session;
  if (p.updating) ImGui::PushStyleVar(ImGuiStyleVar_Alpha, ImGui::GetStyle().Alpha * 0.5f);
  struct PopAlpha {
    bool on;
    ~PopAlpha() {
      if (on) ImGui::PopStyleVar();
    }
  } pop_alpha{p.updating};
  // The columns as wide as their widest text, so nothing loses digits.
  const std::size_t n = std::min(count, p.top.size());
  std::vector<std::string> labels(n), texts(n), changes(n);
  float label_w = 0.0f, text_w = 0.0f, change_w = ImGui::CalcTextSize("±0").x;
  for (std::size_t i = 0; i < n; ++i) {
    labels[i] = "'" + s.tokenizer().label(p.top[i].id) + "'";
    texts[i] = format_probability(p.top[i].probability);
    changes[i] = format_probability_change(p.top[i].before, p.top[i].probability);
    label_w = std::max(label_w, ImGui::CalcTextSize(labels[i].c_str()).x);
    text_w = std::max(text_w, ImGui::CalcTextSize(texts[i].c_str()).x);
    change_w = std::max(change_w, ImGui::CalcTextSize(changes[i].c_str()).x);
  }
  // The bar takes what the token and the change leave; where the three do not
  // fit on one line (the narrow side panel), the change goes under the bar.
  // Which of the two is decided with room for a usual change ("−99.9 pt")
  // even before there is one, so the first edit does not move the rows.
  const float avail = ImGui::GetContentRegionAvail().x;
  const float padding = 2.0f * ImGui::GetStyle().CellPadding.x + 2.0f;
  const float bar_min = text_w + 2.0f * ImGui::GetStyle().FramePadding.x + 4.0f;
  const float bar_max = compact ? avail : std::min(220.0f * gfx::em(), avail * 0.5f);
  change_w = std::max(change_w, ImGui::CalcTextSize("−99.9 pt").x);
  const bool one_line = avail - label_w - change_w - 3.0f * padding >= bar_min;
  const float bar_w = one_line ? std::clamp(avail - label_w - change_w - 3.0f * padding, bar_min, std::max(bar_min, bar_max))
                               : std::max(bar_min, avail - label_w - 2.0f * padding);
  if (!ImGui::BeginTable(compact ? "predictions compact" : "predictions", one_line ? 3 : 2,
                         ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg))
    return;
  ImGui::TableSetupColumn("token", ImGuiTableColumnFlags_WidthFixed, label_w);
  ImGui::TableSetupColumn("p", ImGuiTableColumnFlags_WidthFixed, bar_w);
  if (one_line) ImGui::TableSetupColumn("change", ImGuiTableColumnFlags_WidthFixed, change_w);
  for (std::size_t i = 0; i < n; ++i) {
    const Prediction& q = p.top[i];
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    const std::string& label = labels[i];
    ImGui::TextUnformatted(label.c_str());
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("token %d  %s\nprobability %.6f (before the edits%s %.6f)", q.id, label.c_str(),
                        static_cast<double>(q.probability), s.ablations().empty() ? "" : " and ablations",
                        static_cast<double>(q.before));
    ImGui::TableNextColumn();
    ImGui::ProgressBar(q.probability, ImVec2(bar_w, 0), texts[i].c_str());
    const std::string& change = changes[i];
    // (Under the bar when it does not fit beside it: on every row, "±0"
    // too, so the rows keep their height after the first edit.)
    if (one_line) ImGui::TableNextColumn();
    if (change == "±0") {
      ImGui::TextDisabled("±0");
    } else {
      text_colored(q.probability > q.before ? gfx::Accent::Status : gfx::Accent::Error, "%s", change.c_str());
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("percentage points since before the edits%s (%s then)", s.ablations().empty() ? "" : " and ablations",
                          format_probability(q.before).c_str());
    }
  }
  ImGui::EndTable();
}

// "after 'fox' (token 4 of 9)" with a slider to choose the token.
void draw_row_choice(AppState& state) {
  ModelState& m = state.model;
  const ModelSession& s = *m.session;
  int row = m.predicted_row();
  ImGui::SetNextItemWidth(std::min(ImGui::GetContentRegionAvail().x, 260.0f * gfx::em()));
  char format[128];
  std::snprintf(format, sizeof format, "after '%s' (%%d)", s.tokenizer().label(s.ids()[static_cast<std::size_t>(row)]).c_str());
  if (ImGui::SliderInt("##predict after", &row, 0, s.T() - 1, format, ImGuiSliderFlags_AlwaysClamp))
    m.row = row == s.T() - 1 ? -1 : row;
  state.note_item("predict after");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Which token's next-token prediction to show (the last by default).\n"
                      "Only the tokens up to it run through the later layers.");
}

// The token chooser and this document's predictions; null (with the reason
// shown) when the focused layer's shape no longer fits the model.
const ModelState::Cached* current_predictions(AppState& state) {
  draw_row_choice(state);
  const ModelState::Cached& p = state.model_predictions();
  if (p.problem.empty()) {
    // (computed on a thread of their own: the rows below are of the state before, dimmed, until then)
    if (p.updating)
      ImGui::TextDisabled("%s", p.top.empty() ? "computing the predictions…" : "updating… (below: before the last change)");
    return &p;
  }
  ImGui::PushTextWrapPos(0.0f);
  text_colored(gfx::Accent::Warning, "%s", p.problem.c_str());
  ImGui::PopTextWrapPos();
  return nullptr;
}

// A head enlarged in a tooltip: its weights (pooled to 48 × 48 past 48
// tokens), each row's tokens beside it, the values printed where a cell has
// room, and where each row looks most.
void draw_head_close_up(const ModelSession& s, int l, int h, const char* note) {
  const Matrix& m = s.overview().at(l, h);
  const bool pooled = m.rows() < s.T();
  const std::vector<std::string> labels = pooled ? std::vector<std::string>() : s.token_labels();
  ImGui::BeginTooltip();
  ImGui::Text("layer %d, head %d (K/V head %d)%s", l, h, h / (s.overview().heads / s.model().config.kv_heads),
              pooled ? " — pooled to 48 × 48" : "");
  const float cell = std::clamp(360.0f / static_cast<float>(m.rows()), 5.0f, 26.0f) * gfx::em();
  float label_w = 0.0f;
  for (const std::string& t : labels) label_w = std::max(label_w, ImGui::CalcTextSize(t.c_str()).x + 6.0f * gfx::em());
  const bool numbers = cell >= ImGui::CalcTextSize(".00").x + 4.0f * gfx::em();
  const ImVec2 at = ImGui::GetCursorScreenPos();
  ImDrawList* list = ImGui::GetWindowDrawList();
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    const float y = at.y + static_cast<float>(r) * cell;
    if (!labels.empty())
      list->AddText(ImVec2(at.x, y + (cell - ImGui::GetTextLineHeight()) / 2), ImGui::GetColorU32(ImGuiCol_Text),
                    labels[static_cast<std::size_t>(r)].c_str());
    for (Eigen::Index c = 0; c < m.cols(); ++c) {
      const float v = m(r, c);
      const Rgb col = viridis(std::clamp(v, 0.0f, 1.0f));
      const ImVec2 a(at.x + label_w + static_cast<float>(c) * cell, y), b(a.x + cell - 1.0f, y + cell - 1.0f);
      list->AddRectFilled(a, b, IM_COL32(static_cast<int>(col.r * 255), static_cast<int>(col.g * 255), static_cast<int>(col.b * 255), 255));
      if (numbers && c <= r + (pooled ? 1 : 0)) {
        char text[16];
        std::snprintf(text, sizeof text, "%.2f", static_cast<double>(v));
        const char* shown = text[0] == '0' ? text + 1 : text;
        const ImVec2 size = ImGui::CalcTextSize(shown);
        const bool light = col.r * 0.3f + col.g * 0.59f + col.b * 0.11f > 0.5f;
        list->AddText(ImVec2((a.x + b.x - size.x) / 2, (a.y + b.y - size.y) / 2),
                      light ? IM_COL32(0, 0, 0, 255) : IM_COL32(255, 255, 255, 255), shown);
      }
    }
  }
  ImGui::Dummy(ImVec2(label_w + cell * static_cast<float>(m.cols()), cell * static_cast<float>(m.rows())));
  if (!pooled) {  // where the last token looks most
    Eigen::Index j = 0;
    const float w = m.row(m.rows() - 1).maxCoeff(&j);
    ImGui::TextDisabled("'%s' (the last token) looks most at '%s' (%.2f)", labels.back().c_str(),
                        labels[static_cast<std::size_t>(j)].c_str(), static_cast<double>(w));
  }
  ImGui::TextDisabled("click: focus it; right-click: ablate it%s", note);
  ImGui::EndTooltip();
}

void draw_overview(AppState& state) {
  const ModelSession& s = *state.model.session;
  const ModelOverview& ov = s.overview();
  const float px = thumbnail_px(visible_width_left() - 2.0f * ImGui::GetStyle().ItemSpacing.x, ov.heads);
  ImDrawList* list = ImGui::GetWindowDrawList();
  push_wrap_at_visible_edge();
  ImGui::TextDisabled("Every layer's every head (the model as run: its ablations, not the focused layer's edits; click one "
                      "to focus it, right-click to ablate it)");
  ImGui::PopTextWrapPos();
  // Thumbnails start at one x for every layer (the font's digits differ in width: "layer 10" vs "layer  9").
  const float label_w = ImGui::CalcTextSize("layer 00 ").x;
  {  // head numbers above the columns
    const ImVec2 top = ImGui::GetCursorScreenPos();
    const float step = px + ImGui::GetStyle().ItemSpacing.x;
    for (int h = 0; h < ov.heads; ++h) {
      const std::string n = "head " + std::to_string(h);
      const std::string shown = ImGui::CalcTextSize(n.c_str()).x <= px ? n : std::to_string(h);
      ImGui::GetWindowDrawList()->AddText(
          ImVec2(top.x + label_w + static_cast<float>(h) * step + (px - ImGui::CalcTextSize(shown.c_str()).x) / 2, top.y),
          ImGui::GetColorU32(ImGuiCol_TextDisabled), shown.c_str());
    }
    ImGui::Dummy(ImVec2(label_w + step * static_cast<float>(ov.heads), ImGui::GetTextLineHeight()));
  }
  for (int l = 0; l < ov.layers; ++l) {
    const float row_x = ImGui::GetCursorPosX();
    ImGui::Text("layer %2d", l);
    for (int h = 0; h < ov.heads; ++h) {
      ImGui::SameLine();
      if (h == 0) ImGui::SetCursorPosX(row_x + label_w);
      ImGui::PushID(l * 4096 + h);
      const ImVec2 at = ImGui::GetCursorScreenPos();
      if (ImGui::InvisibleButton("head", ImVec2(px, px))) focus_head(state, l, h);
      if (ImGui::BeginPopupContextItem("ablate")) {
        draw_ablation_menu(state, l, h);
        ImGui::EndPopup();
      }
      const bool hovered = ImGui::IsItemHovered();
      if (hovered && !ImGui::IsPopupOpen(nullptr, ImGuiPopupFlags_AnyPopupId))
        draw_head_close_up(s, l, h, l != s.layer() && state.doc->modified() ? "\n(the focused layer's edits are kept for when you come back)" : "");
      state.note_item("overview " + std::to_string(l) + " " + std::to_string(h));
      const Matrix m = pool_to(ov.at(l, h), thumbnail_cells(px, static_cast<int>(ov.at(l, h).rows())));
      const float cw = px / static_cast<float>(m.cols()), ch = px / static_cast<float>(m.rows());
      const float top = m.maxCoeff() > 0 ? m.maxCoeff() : 1.0f;
      for (Eigen::Index r = 0; r < m.rows(); ++r)
        for (Eigen::Index c = 0; c < m.cols(); ++c) {
          const Rgb col = viridis(m(r, c) / top);
          list->AddRectFilled(ImVec2(at.x + static_cast<float>(c) * cw, at.y + static_cast<float>(r) * ch),
                              ImVec2(at.x + static_cast<float>(c + 1) * cw, at.y + static_cast<float>(r + 1) * ch),
                              IM_COL32(static_cast<int>(col.r * 255), static_cast<int>(col.g * 255),
                                       static_cast<int>(col.b * 255), 255));
        }
      const bool ablated = std::any_of(s.ablations().begin(), s.ablations().end(), [&](const Ablation& a) {
        return a.target == AblationTarget::Head && a.layer == l && a.head == h;
      });
      if (ablated)  // crossed out
        list->AddLine(at, ImVec2(at.x + px, at.y + px), ImGui::GetColorU32(ImGuiCol_PlotLinesHovered), 2.0f);
      const bool focused = l == s.layer() && h == state.focused_head;
      if (focused || hovered)
        list->AddRect(at, ImVec2(at.x + px, at.y + px),
                      focused ? ImGui::GetColorU32(ImGuiCol_PlotHistogram) : ImGui::GetColorU32(ImGuiCol_Text), 0.0f, 0,
                      focused ? 3.0f : 1.0f);
      ImGui::PopID();
    }
  }
}

// The head detectors on this text (widgets/head_score_grids.h).
void draw_head_scores(AppState& state) {
  ImGui::Spacing();
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextDisabled("Head detectors on this text: the share of each head's attention where the kind of head looks "
                      "(TransformerLens's detect_head). Click a cell to focus that head.");
  ImGui::PopTextWrapPos();
  draw_head_score_grids(state, state.model.session->head_scores(), "detector");
}

// The ablations the model runs with: each takes itself back on a click; a
// spec can be typed for what the menus do not offer (one position: "L2H3@5").
void draw_ablations(AppState& state) {
  ModelState& m = state.model;
  const ModelSession& s = *m.session;
  ImGui::Spacing();
  ImGui::TextDisabled("Ablations");
  ImGui::SameLine();
  const std::vector<Ablation>& now = s.ablations();
  if (now.empty()) ImGui::TextDisabled("none (right-click a head below to ablate it)");
  for (std::size_t i = 0; i < now.size(); ++i) {
    ImGui::SameLine();
    const std::string label = "× " + to_spec(now[i]);
    if (ImGui::SmallButton(label.c_str()) && !state.busy()) {
      std::vector<Ablation> next = now;
      next.erase(next.begin() + static_cast<std::ptrdiff_t>(i));
      state.set_ablations(std::move(next));
    }
    state.note_item("ablation " + to_spec(now[i]));
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Take %s back (Ctrl+Z also does)", to_spec(now[i]).c_str());
  }
  ImGui::SetNextItemWidth(200.0f * gfx::em());
  const bool enter = ImGui::InputTextWithHint("##ablation spec", "L3H1, L2.mlp@5:mean", &m.ablation_field,
                                              ImGuiInputTextFlags_EnterReturnsTrue | ImGuiInputTextFlags_AutoSelectAll);
  state.note_item("ablation spec");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("L<layer>H<head>: a head's output; L<layer>.attn, L<layer>.mlp: what the layer's attention or MLP\n"
                      "adds; then @P for position P only, :mean for its mean over the positions instead of zero.");
  ImGui::SameLine();
  if ((ImGui::Button("Ablate") || enter) && !state.busy()) {
    Ablation a;
    m.ablation_error = parse_ablation(m.ablation_field, a);
    if (m.ablation_error.empty()) m.ablation_error = check(a, s.model().config, s.T());
    if (m.ablation_error.empty() && std::find(now.begin(), now.end(), a) != now.end())
      m.ablation_error = to_spec(a) + " is ablated already";
    if (m.ablation_error.empty()) {
      std::vector<Ablation> next = now;
      next.push_back(a);
      state.set_ablations(std::move(next));
      m.ablation_field.clear();
    }
  }
  state.note_item("ablate");
  if (!m.ablation_error.empty()) {
    push_wrap_at_visible_edge();
    text_colored(gfx::Accent::Warning, "%s", m.ablation_error.c_str());
    ImGui::PopTextWrapPos();
  }
}

}  // namespace

void draw_model_predictions_section(AppState& state) {
  if (!state.model.open()) return;
  const ModelSession& s = *state.model.session;
  ImGui::TextDisabled("Next token (layer %d focused)", s.layer());
  const ModelState::Cached* ready = current_predictions(state);
  if (!ready) return;
  const ModelState::Cached& p = *ready;
  draw_prediction_rows(state, p, 5, true);
}

void draw_model_view(AppState& state) {
  if (!state.model.open()) return;
  ModelState& m = state.model;
  const ModelSession& s = *m.session;
  ImGui::Text("%s", model_display_name(m.path).c_str());
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextDisabled("%s", summary(s).c_str());
  ImGui::PopTextWrapPos();

  ImGui::Spacing();
  ImGui::TextDisabled("Text (%s)", s.tokenizer().kind().c_str());
  ImGui::SetNextItemWidth(std::max(200.0f, ImGui::GetContentRegionAvail().x - 90.0f * gfx::em()));
  // A click selects the whole text: typing replaces it (as a browser's address bar).
  const bool enter = ImGui::InputText("##model text", &m.text_field,
                                      ImGuiInputTextFlags_EnterReturnsTrue | ImGuiInputTextFlags_AutoSelectAll);
  state.note_item("model text");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(s.tokenizer().splits_text()
                          ? "The model's input. Enter runs it (the focused layer's edits are kept aside:\n"
                            "they come back with this text)."
                          : "The model has no BPE tokenizer: type vocabulary strings or token ids\n"
                            "separated by spaces. Enter runs it (the focused layer's edits are kept aside:\n"
                            "they come back with this text).");
  ImGui::SameLine();
  const bool run = ImGui::Button("Run");
  state.note_item("model run");
  if ((enter || run) && !state.busy()) {
    if (m.text_field.find_first_not_of(" \t\r\n") == std::string::npos)
      state.error_popup = "Text: expected at least one token, found none.\n\nWhat is shown is unchanged.";
    else
      rerun(state, s.layer(), m.text_field);
  }
  if (m.text != m.text_field) {  // typed but not run (or refused): say what is shown
    ImGui::PushTextWrapPos(0.0f);
    text_colored(gfx::Accent::Warning, "Not run yet: what is shown is still the text below (Enter runs the new one).");
    ImGui::PopTextWrapPos();
  }
  {  // the tokens, as the rows of every stage are labelled; a long text shows its first ones
    const std::size_t shown = m.show_all_tokens ? s.ids().size() : std::min<std::size_t>(s.ids().size(), kTokensShown);
    std::string tokens;
    for (std::size_t i = 0; i < shown; ++i) tokens += (i ? " | " : "") + s.tokenizer().label(s.ids()[i]);
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextDisabled("%d tokens: %s%s", s.T(), tokens.c_str(), shown < s.ids().size() ? " | …" : "");
    ImGui::PopTextWrapPos();
    if (s.ids().size() > kTokensShown) {
      if (ImGui::SmallButton(m.show_all_tokens ? "Show fewer" : ("Show all " + std::to_string(s.T())).c_str()))
        m.show_all_tokens = !m.show_all_tokens;
      state.note_item("show all tokens");
    }
  }

  ImGui::Spacing();
  // Applied on release: each layer reruns the model from its input. The value
  // lives in the state while dragged (reloading it each frame lost the release).
  if (!m.layer_slider_active) m.layer_slider = s.layer();
  ImGui::SetNextItemWidth(220.0f * gfx::em());
  ImGui::SliderInt("focused layer", &m.layer_slider, 0, s.model().config.layers - 1, "layer %d",
                   ImGuiSliderFlags_AlwaysClamp);
  m.layer_slider_active = ImGui::IsItemActive();
  state.note_item("focused layer");
  if (ImGui::IsItemDeactivatedAfterEdit() && m.layer_slider != s.layer() && !state.busy())
    rerun(state, m.layer_slider, m.text);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("The layer whose attention the Pipeline and Head view show and edit.\n"
                      "An edited layer left for another is kept, and its edits come back with it;\n"
                      "the layers before it never rerun.");
  if (state.doc->modified()) {
    // beside the slider when it fits, else under it, wrapped at the view's edge (never cut)
    char note[96];
    std::snprintf(note, sizeof note, "(layer %d has edits: kept if you switch, back when you return)", s.layer());
    same_line_if_fits(ImGui::CalcTextSize(note).x);
    push_wrap_at_visible_edge();
    text_colored(gfx::Accent::Warning, "%s", note);
    ImGui::PopTextWrapPos();
  }

  draw_ablations(state);

  ImGui::Spacing();
  ImGui::Separator();
  // The heads first, as wide as the view (what a model is looked at for);
  // then the predictions and the head detectors side by side when there is
  // room, else one under the other.
  draw_overview(state);
  ImGui::Spacing();
  ImGui::Separator();
  const bool side_by_side = ImGui::GetContentRegionAvail().x >= 620.0f * gfx::em();
  if (side_by_side) {
    ImGui::BeginTable("model columns", 2, ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_BordersInnerV);
    ImGui::TableSetupColumn("predictions", ImGuiTableColumnFlags_WidthStretch, 0.5f);
    ImGui::TableSetupColumn("detectors", ImGuiTableColumnFlags_WidthStretch, 0.5f);
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
  }
  ImGui::TextDisabled("Next-token predictions");
  if (const ModelState::Cached* ready = current_predictions(state)) {
    const ModelState::Cached& p = *ready;
    draw_prediction_rows(state, p, static_cast<std::size_t>(m.top_k), false);
    ImGui::PushTextWrapPos(0.0f);
    const int last = s.model().config.layers - 1;
    if (p.top.empty()) {
      // nothing computed yet: no time to give
    } else if (s.layer() == last)
      ImGui::TextDisabled("updated in %.1f ms (layer %d's output through its MLP and the logits)", p.ms, last);
    else if (s.layer() + 1 == last)
      ImGui::TextDisabled("updated in %.1f ms (layer %d's output through the rest of it and layer %d)", p.ms,
                          s.layer(), last);
    else
      ImGui::TextDisabled("updated in %.1f ms (layer %d's output through the rest of it and layers %d to %d)", p.ms,
                          s.layer(), s.layer() + 1, last);
    ImGui::PopTextWrapPos();
  }
  if (side_by_side) {
    ImGui::TableNextColumn();
  } else {
    ImGui::Spacing();
    ImGui::Separator();
  }
  draw_head_scores(state);
  if (side_by_side) ImGui::EndTable();
}

}  // namespace attention_lab::gui
