#include "widgets/score_grid.h"

#include "gfx/fonts.h"
#include "logic/colormap.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attention_lab::gui {

namespace {

ImU32 colour_of(const ScoreGrid& g, double v) {
  if (!std::isfinite(v)) return IM_COL32(90, 90, 90, 255);
  const Rgb c = g.colours == ScoreGrid::Colours::Unit
                    ? viridis(static_cast<float>(std::clamp(v, 0.0, 1.0)))
                    : diverging(static_cast<float>(std::clamp(v / (g.range > 0.0 ? g.range : 1.0), -1.0, 1.0)));
  return IM_COL32(static_cast<int>(c.r * 255), static_cast<int>(c.g * 255), static_cast<int>(c.b * 255), 255);
}

bool light(ImU32 c) {
  const float r = static_cast<float>(c & 0xff), g = static_cast<float>((c >> 8) & 0xff), b = static_cast<float>((c >> 16) & 0xff);
  return (r * 0.3f + g * 0.59f + b * 0.11f) / 255.0f > 0.5f;
}

// "0.32" as ".32" and "−0.32" as "−.32" when the cell needs the room; "—" for NaN.
std::string cell_text(double v, int decimals, bool short_form) {
  if (!std::isfinite(v)) return "—";
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", decimals, std::abs(v));
  std::string s = text;
  if (short_form && s.rfind("0.", 0) == 0) s.erase(0, 1);
  const bool negative = v < 0.0 && s.find_first_not_of("0.") != std::string::npos;
  return negative ? "−" + s : s;
}

}  // namespace

GridCell draw_score_grid(AppState& state, const ScoreGrid& g, GridCell* hovered_out) {
  GridCell clicked, hovered;
  const auto rows = static_cast<int>(g.values.rows()), cols = static_cast<int>(g.values.cols());
  if (rows == 0 || cols == 0) return clicked;
  float label_w = 0.0f;
  for (const std::string& l : g.row_labels) label_w = std::max(label_w, ImGui::CalcTextSize(l.c_str()).x);
  label_w += 6.0f * gfx::em();
  const float avail = ImGui::GetContentRegionAvail().x - label_w;
  const float cell = std::clamp(avail / static_cast<float>(cols), g.min_cell_px * gfx::em(), 40.0f * gfx::em());
  // Numbers where the widest fits; "0." dropped first when that makes it fit.
  float widest = 0.0f, widest_short = 0.0f;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      widest = std::max(widest, ImGui::CalcTextSize(cell_text(g.values(r, c), g.decimals, false).c_str()).x);
      widest_short = std::max(widest_short, ImGui::CalcTextSize(cell_text(g.values(r, c), g.decimals, true).c_str()).x);
    }
  const float pad = 4.0f * gfx::em();
  const bool short_form = widest + pad > cell;
  const bool numbers = (short_form ? widest_short : widest) + pad <= cell;

  ImDrawList* list = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  for (int c = 0; c < cols; ++c) {  // column labels above, where they fit (the tooltip always names the column)
    const std::string& n = g.col_labels[static_cast<std::size_t>(c)];
    const float w = ImGui::CalcTextSize(n.c_str()).x;
    if (w + 2.0f <= cell || (c % 4 == 0 && w <= 4.0f * cell))
      list->AddText(ImVec2(origin.x + label_w + (static_cast<float>(c) + 0.5f) * cell - w / 2, origin.y),
                    ImGui::GetColorU32(ImGuiCol_TextDisabled), n.c_str());
  }
  ImGui::Dummy(ImVec2(label_w + cell * static_cast<float>(cols), ImGui::GetTextLineHeight()));
  ImGui::PushID(g.id.c_str());
  // Row labels on every row where a line of text fits a cell, else on every
  // n-th (the tooltip names every row).
  const int label_every = std::max(1, static_cast<int>(std::ceil(ImGui::GetTextLineHeight() / cell)));
  for (int r = 0; r < rows; ++r) {
    const ImVec2 row = ImGui::GetCursorScreenPos();
    if (r % label_every == 0)
      list->AddText(ImVec2(row.x, row.y + (cell - ImGui::GetTextLineHeight()) / 2), ImGui::GetColorU32(ImGuiCol_Text),
                    g.row_labels[static_cast<std::size_t>(r)].c_str());
    for (int c = 0; c < cols; ++c) {
      const double v = g.values(r, c);
      const ImVec2 a(row.x + label_w + static_cast<float>(c) * cell, row.y);
      const ImVec2 b(a.x + cell - 1.0f, a.y + cell - 1.0f);
      ImGui::SetCursorScreenPos(a);
      ImGui::PushID(r * 65536 + c);
      if (ImGui::InvisibleButton("cell", ImVec2(cell - 1.0f, cell - 1.0f))) clicked = {r, c};
      state.note_item(g.id + " " + std::to_string(r) + " " + std::to_string(c));
      if (g.context_menu && ImGui::BeginPopupContextItem("menu")) {
        g.context_menu(r, c);
        ImGui::EndPopup();
      }
      ImGui::PopID();
      const bool over = ImGui::IsItemHovered();
      if (over) hovered = {r, c};
      const ImU32 fill = colour_of(g, v);
      list->AddRectFilled(a, b, fill);
      if (numbers) {
        const std::string t = cell_text(v, g.decimals, short_form);
        const ImVec2 size = ImGui::CalcTextSize(t.c_str());
        list->AddText(ImVec2((a.x + b.x - size.x) / 2, (a.y + b.y - size.y) / 2),
                      light(fill) ? IM_COL32(0, 0, 0, 255) : IM_COL32(255, 255, 255, 255), t.c_str());
      }
      const bool framed = g.outlined && g.outlined(r, c);
      if (framed || over)
        list->AddRect(a, b, framed ? ImGui::GetColorU32(ImGuiCol_PlotHistogram) : ImGui::GetColorU32(ImGuiCol_Text), 0.0f, 0,
                      framed ? 3.0f : 1.0f);
      if (over && g.tooltip) {
        const std::string tip = g.tooltip(r, c);
        ImGui::SetTooltip("%s", tip.c_str());
      }
    }
    ImGui::SetCursorScreenPos(ImVec2(row.x, row.y + cell));
  }
  ImGui::PopID();
  ImGui::Dummy(ImVec2(1.0f, 2.0f * gfx::em()));
  if (hovered_out) *hovered_out = hovered;
  return clicked;
}

}  // namespace attention_lab::gui
