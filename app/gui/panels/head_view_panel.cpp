#include "panels/panels.h"

#include "attention_lab/stage_info.h"
#include "logic/head_view.h"
#include "logic/number_format.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace attention_lab::gui {

namespace {

ImU32 head_colour_u32(int head, float alpha) {
  const Rgb c = head_colour(head);
  return ImGui::GetColorU32(ImVec4(c.r, c.g, c.b, alpha));
}

// "■ 0  ■ 1  …": which colour is which head. Hovering one shows only its
// lines; clicking one focuses that head. Returns the hovered head, or -1.
int head_legend(AppState& state, int heads) {
  int hovered = -1;
  const float box = ImGui::GetTextLineHeight() * 0.8f;
  for (int h = 0; h < heads; ++h) {
    if (h > 0) ImGui::SameLine();
    // Wrap when the next entry would leave the panel.
    const float entry_w = box + 6 + ImGui::CalcTextSize("00").x + ImGui::GetStyle().ItemSpacing.x;
    if (h > 0 && ImGui::GetCursorScreenPos().x + entry_w > ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x)
      ImGui::NewLine();
    ImGui::PushID(h);
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const std::string label = state.doc->scenario().shown_index(h);
    const ImVec2 size(box + 6 + ImGui::CalcTextSize(label.c_str()).x, ImGui::GetTextLineHeight());
    if (ImGui::InvisibleButton("head", size)) state.focused_head = h;
    if (ImGui::IsItemHovered()) {
      hovered = h;
      ImGui::SetTooltip("head %s: hover to see only its lines, click to focus it", label.c_str());
    }
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float y = p.y + (size.y - box) * 0.5f;
    dl->AddRectFilled(ImVec2(p.x, y), ImVec2(p.x + box, y + box), head_colour_u32(h, 1.0f), 2.0f);
    if (h == state.focused_head) dl->AddRect(ImVec2(p.x - 1, y - 1), ImVec2(p.x + box + 1, y + box + 1), ImGui::GetColorU32(ImGuiCol_Text), 2.0f);
    dl->AddText(ImVec2(p.x + box + 4, p.y), ImGui::GetColorU32(hovered == h ? ImGuiCol_Text : ImGuiCol_TextDisabled),
                label.c_str());
    ImGui::PopID();
  }
  return hovered;
}

}  // namespace

namespace {

// The "all heads" switch and the head whose lines are drawn: chosen here as
// well as in the heads grid (presenter mode hides that panel).
void draw_head_choice(AppState& state) {
  const Scenario& s = state.doc->scenario();
  HeadViewState& hv = state.head_view;
  ImGui::Checkbox("all heads", &hv.all_heads);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Draw every head at once, one colour each");
  if (hv.all_heads) {
    ImGui::SameLine();
    ImGui::TextDisabled(s.heads == 1 ? "%d head" : "%d heads", s.heads);
  } else if (s.heads > 1) {
    const std::string label = "head (of " + std::to_string(s.heads) + ")";
    const float slider_w = 8.0f * ImGui::GetFontSize();
    same_line_if_fits(slider_w + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label.c_str()).x);
    int head = std::clamp(state.focused_head, 0, s.heads - 1);
    ImGui::SetNextItemWidth(slider_w);
    if (ImGui::SliderInt(label.c_str(), &head, 0, s.heads - 1)) state.focused_head = head;
    state.note_item("head view head");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("The head whose lines are drawn (also: click a head in the heads grid)");
  } else {
    ImGui::SameLine();
    ImGui::TextDisabled("the only head");
  }
}

// Hovering a token prints its weights at the far end of its lines (every
// token in the window, even those under 1 % that have no line): with
// several heads drawn (`windows`: their weight rows), the mean over them.
void draw_hovered_weights(const Scenario& s, const HeadViewLayout& layout, const std::vector<Matrix>& windows, int hover_query,
                          int hover_key) {
  const int T_q = s.T(), T_k = s.dims().T_k;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float line_h = ImGui::GetTextLineHeight();
  const ImU32 bg = ImGui::GetColorU32(ImGuiCol_WindowBg, 0.85f), fg = ImGui::GetColorU32(ImGuiCol_Text);
  for (int t = layout.first_token; t < layout.first_token + layout.token_count; ++t) {
    if (hover_query >= 0 ? t >= T_k : t >= T_q) continue;  // no key (query) at this place
    double sum = 0.0;
    for (const Matrix& w : windows)
      sum += static_cast<double>(hover_query >= 0 ? w(hover_query - layout.first_token, t)
                                                  : w(t - layout.first_token, hover_key));
    const std::string text = format_number(static_cast<float>(sum / static_cast<double>(windows.size())), 2);
    const float tw = ImGui::CalcTextSize(text.c_str()).x;
    const float x = hover_query >= 0 ? layout.right_x - tw - 6 : layout.left_x + 6;
    const float y = layout.y_of(t) - line_h * 0.5f;
    dl->AddRectFilled(ImVec2(x - 3, y - 1), ImVec2(x + tw + 3, y + line_h + 1), bg, 3.0f);
    dl->AddText(ImVec2(x, y), fg, text.c_str());
  }
  if (windows.size() > 1)
    ImGui::SetTooltip("'%s': mean weight over the %d heads drawn; hover a head in the legend for one head's",
                      (hover_query >= 0 ? s.token_label(hover_query) : s.key_label(hover_key)).c_str(),
                      static_cast<int>(windows.size()));
}

}  // namespace

void draw_head_view_panel(AppState& state) {
  const Document& doc = *state.doc;
  const Scenario& s = doc.scenario();
  // queries on the left, keys on the right (with cross-attention: X_kv's rows, T_k of them)
  const int T_q = s.T(), T_k = s.dims().T_k, T = std::max(T_q, T_k);
  HeadViewState& hv = state.head_view;

  draw_head_choice(state);
  push_wrap_at_visible_edge();
  ImGui::TextDisabled("Left: the token asking (query). Right: the tokens it looks at (keys). Thicker = more weight. "
                      "Hover a token to see only its lines and their weights; click a line to select that weight.");
  ImGui::PopTextWrapPos();
  const int legend_head = hv.all_heads && s.heads > 1 ? head_legend(state, s.heads) : -1;

  const ImVec2 avail = ImGui::GetContentRegionAvail();
  // Rows share the panel's height, from a readable minimum up to a spacing
  // that still reads as one picture (a few tokens need not span a tall screen).
  const float min_row_h = std::max(ImGui::GetTextLineHeightWithSpacing() * 1.2f, 18.0f);
  // (One row's height stays free below the last token, as `fits` counts it:
  // with avail.y / T the last of eight tokens never fitted and went missing.)
  const float row_h = std::clamp(avail.y / static_cast<float>(std::max(T, 1) + 1), min_row_h, 4.0f * min_row_h);
  const float note_h = 3 * ImGui::GetTextLineHeightWithSpacing();  // the long-sequence slider and note
  int fits = std::max(1, static_cast<int>((avail.y - row_h) / row_h + 1e-3f));
  if (T > fits) fits = std::max(1, static_cast<int>((avail.y - row_h - note_h) / row_h + 1e-3f));
  if (T > fits) {
    // Long sequences: a window of tokens, scrolled with the slider.
    ImGui::SetNextItemWidth(220);
    ImGui::SliderInt("first token", &hv.first_token, 0, T - fits);
    hv.first_token = std::clamp(hv.first_token, 0, T - fits);
    // Most of a query's attention may go to keys outside the window; an empty
    // picture must not read as "no attention at all".
    const int window_end = hv.first_token + fits;
    const int query = std::min(T_q - 1, hv.hovered_query >= hv.first_token && hv.hovered_query < window_end
                                            ? hv.hovered_query
                                            : hv.first_token + fits / 2);
    double inside = 0.0;
    int heads_counted = 0;
    for (int h = 0; h < s.heads; ++h) {
      if (!hv.all_heads && h != state.focused_head) continue;
      const Matrix w = doc.engine().rows(StageId::of_head(StageKind::Weights, h), query, 1);
      for (int k = hv.first_token; k < std::min(window_end, T_k); ++k) inside += static_cast<double>(w(0, k));
      ++heads_counted;
    }
    inside /= std::max(heads_counted, 1);
    push_wrap_at_visible_edge();
    ImGui::TextDisabled("'%s' gives %s of its attention%s to the %d tokens shown, %s to the others. "
                        "Lines under 1 %% are not drawn; hover a query on the left for its share.",
                        s.token_label(query).c_str(), format_percent(inside).c_str(),
                        hv.all_heads ? " (mean over the heads)" : "", fits, format_percent(1.0 - inside).c_str());
    ImGui::PopTextWrapPos();
  }
  hv.first_token = std::clamp(hv.first_token, 0, std::max(0, T - fits));

  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float label_w = 110.0f * gfx::em();
  HeadViewLayout layout;
  layout.left_x = origin.x + label_w + 8;
  // The lines span the panel's whole width.
  layout.right_x = std::max(origin.x + avail.x - label_w - 8, layout.left_x + 80.0f);
  layout.top = origin.y;
  layout.row_height = row_h;
  layout.first_token = hv.first_token;
  layout.token_count = std::min(T, fits);

  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImGuiIO& io = ImGui::GetIO();
  // Which token is hovered, on which side?
  int hover_query = -1, hover_key = -1;
  for (int t = layout.first_token; t < layout.first_token + layout.token_count; ++t) {
    const float y = layout.y_of(t);
    if (std::fabs(io.MousePos.y - y) > row_h * 0.5f) continue;
    if (t < T_q && io.MousePos.x >= origin.x && io.MousePos.x < layout.left_x) hover_query = t;
    if (t < T_k && io.MousePos.x > layout.right_x && io.MousePos.x < layout.right_x + label_w + 8) hover_key = t;
  }

  hv.hovered_query = hover_query;

  // Only the rows of the token window: at T=1024 with twelve heads, whole
  // weight matrices would be 12 million exponentials a frame.
  std::vector<AttentionLine> all;
  std::vector<Matrix> windows;  // the drawn heads' weight rows, for the numbers on hover
  for (int h = 0; h < s.heads; ++h) {
    if (!hv.all_heads && h != state.focused_head) continue;
    if (legend_head >= 0 && h != legend_head) continue;
    windows.push_back(doc.engine().rows(StageId::of_head(StageKind::Weights, h), layout.first_token, layout.token_count));
    auto lines = attention_lines(windows.back(), h, layout, 0.01f, hover_query, hover_key, layout.first_token);
    all.insert(all.end(), lines.begin(), lines.end());
  }
  std::sort(all.begin(), all.end(), [](const AttentionLine& a, const AttentionLine& b) { return a.weight < b.weight; });
  const float em = gfx::em();
  for (const AttentionLine& l : all)
    dl->AddLine(ImVec2(l.x0, l.y0), ImVec2(l.x1, l.y1), head_colour_u32(l.head, 0.15f + 0.85f * l.weight),
                (0.5f + 5.5f * l.weight) * em);

  // The selected weight cell, if it is one of these lines, stands out.
  if (state.selected && state.selected->stage.kind == StageKind::Weights && state.selected->stage.role == Role::Value) {
    const auto& c = *state.selected;
    if (c.row >= layout.first_token && c.row < layout.first_token + layout.token_count && c.col >= layout.first_token &&
        c.col < layout.first_token + layout.token_count)
      dl->AddLine(ImVec2(layout.left_x, layout.y_of(c.row)), ImVec2(layout.right_x, layout.y_of(c.col)),
                  IM_COL32(255, 60, 60, 255), 3.0f * em);
  }

  // Token labels on both sides; the hovered one highlighted.
  hv.left_x = layout.left_x;
  hv.right_x = layout.right_x;
  hv.drawn_queries.clear();
  hv.drawn_keys.clear();
  for (int t = layout.first_token; t < layout.first_token + layout.token_count; ++t) {
    if (t < T_q) hv.drawn_queries.push_back({t, s.token_label(t), layout.y_of(t)});
    if (t < T_k) hv.drawn_keys.push_back({t, s.key_label(t), layout.y_of(t)});
    const float y = layout.y_of(t) - ImGui::GetTextLineHeight() * 0.5f;
    const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
    const ImU32 lit = IM_COL32(255, 140, 0, 255);
    if (t < T_q) {
      const std::string label = s.token_label(t);
      const float w = ImGui::CalcTextSize(label.c_str()).x;
      dl->AddText(ImVec2(layout.left_x - 6 - w, y), t == hover_query ? lit : text, label.c_str());
    }
    if (t < T_k) dl->AddText(ImVec2(layout.right_x + 6, y), t == hover_key ? lit : text, s.key_label(t).c_str());
  }

  if ((hover_query >= 0 || hover_key >= 0) && !windows.empty()) draw_hovered_weights(s, layout, windows, hover_query, hover_key);

  // Click a line: select that weight everywhere (pipeline, inspector).
  const ImVec2 size(std::max(layout.right_x - origin.x + label_w, 1.0f),
                    std::max(static_cast<float>(layout.token_count) * row_h, 1.0f));
  ImGui::InvisibleButton("lines", size);
  const bool lines_hovered = ImGui::IsItemHovered(), lines_clicked = ImGui::IsItemClicked();
  if (lines_hovered) {
    if (const auto line = pick_line(all, io.MousePos.x, io.MousePos.y)) {
      ImGui::SetTooltip("head %s: '%s' → '%s' = %s", s.shown_index(line->head).c_str(), s.token_label(line->query).c_str(),
                        s.key_label(line->key).c_str(), format_number(line->weight, 3).c_str());
      state.hovered = CellRef{StageId::of_head(StageKind::Weights, line->head), line->query, line->key};
      if (lines_clicked) {
        state.selected = state.hovered;
        state.focused_head = line->head;
      }
    }
  }
}

}  // namespace attention_lab::gui
