#include "widgets/matrix_heatmap.h"

#include "logic/colormap.h"
#include "logic/matrix_csv.h"
#include "logic/number_format.h"
#include "logic/pooling.h"
#include "logic/text_fit.h"
#include "panels/panels.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>

namespace attention_lab::gui {

ImVec2 matrix_cell_size(int rows, int cols, ImVec2 max_cell, float max_w, float max_h) {
  return ImVec2(std::min(max_cell.x, max_w / static_cast<float>(std::max(cols, 1))),
                std::min(max_cell.y, max_h / static_cast<float>(std::max(rows, 1))));
}

MatrixHeatmapEvents draw_matrix_heatmap(AppState& state, const MatrixHeatmap& h) {
  MatrixHeatmapEvents ev;
  if (!h.values || h.values->size() == 0) return ev;
  const Matrix& m = *h.values;
  const int rows = static_cast<int>(m.rows()), cols = static_cast<int>(m.cols());
  const float em = gfx::em();
  ImGui::PushID(h.key.c_str());
  ImGui::BeginGroup();
  const bool labelled = h.row_labels != nullptr;
  const float label_w = labelled ? 52.0f * em : 0.0f;
  ImGui::SetCursorPosX(ImGui::GetCursorPosX() + label_w);
  ImGui::TextUnformatted(h.title.c_str());
  if (ImGui::IsItemHovered() && !h.tooltip.empty()) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(420.0f * em);
    ImGui::TextUnformatted(h.tooltip.c_str());
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
  const ImVec2 size = matrix_cell_size(rows, cols, ImVec2(h.max_cell_w * em, h.max_cell_h * em), h.max_w, h.max_h);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 p0(origin.x + label_w, origin.y);
  const ImVec2 p1(p0.x + size.x * static_cast<float>(cols), p0.y + size.y * static_cast<float>(rows));
  ev.cells = Rect{p0.x, p0.y, p1.x, p1.y};
  ImDrawList* dl = ImGui::GetWindowDrawList();

  // Row labels (tokens) when the rows are tall enough to read them.
  if (labelled && size.y >= ImGui::GetTextLineHeight() * 0.6f) {
    const float font_px = std::min(ImGui::GetFontSize(), size.y / 0.9f);
    const TextMeasure measure = [&](std::string_view t) {
      return ImGui::GetFont()->CalcTextSizeA(font_px, FLT_MAX, 0.0f, t.data(), t.data() + t.size()).x;
    };
    for (int r = 0; r < rows && static_cast<std::size_t>(r) < h.row_labels->size(); ++r) {
      const std::string t = ellipsize((*h.row_labels)[static_cast<std::size_t>(r)], label_w - 4, measure);
      const float y = p0.y + static_cast<float>(r) * size.y + (size.y - font_px) * 0.5f;
      if (!ImGui::IsRectVisible(ImVec2(p0.x - label_w, y), ImVec2(p0.x, y + font_px))) continue;
      dl->AddText(ImGui::GetFont(), font_px, ImVec2(p0.x - measure(t) - 4, y), ImGui::GetColorU32(ImGuiCol_TextDisabled), t.c_str());
    }
  }

  // The cells: pooled when several share a pixel, coloured by the heatmap shader.
  const int pool_r = size.y < 1.0f ? static_cast<int>(std::ceil(1.0f / size.y)) : 1;
  const int pool_c = size.x < 1.0f ? static_cast<int>(std::ceil(1.0f / size.x)) : 1;
  AppState::MatrixTexture& tex = state.matrix_textures[h.key];
  const std::uint64_t key = h.version * 1024u + static_cast<std::uint64_t>(pool_r * 32 + pool_c);
  if (tex.texture.version() != key && ImGui::IsRectVisible(p0, p1)) {
    float largest = 0.0f;
    if (pool_r > 1 || pool_c > 1) tex.texture.update(pool_max_abs(m, pool_r, pool_c, &largest), key);
    else tex.texture.update(m, key), largest = colour_range(ValueDomain::Signed, m);
    tex.range = largest > 0.0f ? largest : 1.0f;
    ++state.texture_uploads;
  }
  gfx::HeatmapDraw hd;
  hd.texture = tex.texture.id();
  hd.rows = (rows + pool_r - 1) / pool_r;
  hd.cols = (cols + pool_c - 1) / pool_c;
  hd.min = p0;
  hd.max = p1;
  hd.view[2] = static_cast<float>(hd.cols);
  hd.view[3] = static_cast<float>(hd.rows);
  hd.range = tex.range;
  hd.colormap = h.non_negative ? 1 : 0;
  hd.cell_px = std::min(size.x * static_cast<float>(pool_c), size.y * static_cast<float>(pool_r));
  if (h.lit_row >= 0) hd.lit_row = h.lit_row / pool_r;
  if (h.lit_col >= 0) hd.lit_col = h.lit_col / pool_c;
  if (h.hovered) hd.hover_row = h.hovered->row / pool_r, hd.hover_col = h.hovered->col / pool_c;
  if (h.selected) hd.selected_row = h.selected->row / pool_r, hd.selected_col = h.selected->col / pool_c;
  state.renderer.draw(dl, hd);

  // Values in cells wide enough to read them (the statistics' single column, small models).
  const float value_px = ImGui::GetFontSize() * 0.78f;
  if (size.x >= 3.2f * value_px && size.y >= value_px + 4.0f) {
    // Decimals enough for two significant digits of the largest value: a
    // variance of 0.0021 must not read "0.00". (One precision for the whole
    // matrix, so the column reads evenly.)
    const int decimals = std::clamp(1 - static_cast<int>(std::floor(std::log10(tex.range))), 2, 4);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) {
        const ImVec2 a(p0.x + static_cast<float>(c) * size.x, p0.y + static_cast<float>(r) * size.y);
        if (!ImGui::IsRectVisible(a, ImVec2(a.x + size.x, a.y + size.y))) continue;
        // A value too wide for its cell shows "…" (hovering gives it), never nothing.
        std::string t = format_cell_value(m(r, c), decimals);
        float w = ImGui::GetFont()->CalcTextSizeA(value_px, FLT_MAX, 0.0f, t.c_str()).x;
        if (w > size.x - 2) t = "…", w = ImGui::GetFont()->CalcTextSizeA(value_px, FLT_MAX, 0.0f, t.c_str()).x;
        const float v = m(r, c) / tex.range;
        const Rgb bg = h.non_negative ? viridis(v) : diverging(v);
        const float lum = 0.2126f * bg.r + 0.7152f * bg.g + 0.0722f * bg.b;
        dl->AddText(ImGui::GetFont(), value_px, ImVec2(a.x + (size.x - w) * 0.5f, a.y + (size.y - value_px) * 0.5f),
                    lum > 0.5f ? IM_COL32(20, 20, 20, 255) : IM_COL32(240, 240, 240, 255), t.c_str());
      }
  }

  ImGui::SetCursorScreenPos(p0);
  ImGui::InvisibleButton("cells", ImVec2(std::max(p1.x - p0.x, 1.0f), std::max(p1.y - p0.y, 1.0f)));
  if (ImGui::IsItemHovered()) {
    const ImVec2 mp = ImGui::GetIO().MousePos;
    const int c = std::clamp(static_cast<int>((mp.x - p0.x) / size.x), 0, cols - 1);
    const int r = std::clamp(static_cast<int>((mp.y - p0.y) / size.y), 0, rows - 1);
    ev.hovered = Cell{r, c};
    if (ImGui::IsItemClicked(ImGuiMouseButton_Left)) ev.clicked = true;
  }
  if (ImGui::BeginPopupContextItem("matrix menu")) {
    if (ImGui::MenuItem("Copy matrix as CSV")) {
      std::vector<std::string> col_labels;
      for (int c = 0; c < cols; ++c) col_labels.push_back(std::to_string(c));
      ImGui::SetClipboardText(matrix_to_csv(m, h.row_labels ? *h.row_labels : std::vector<std::string>{}, col_labels).c_str());
      state.set_status("Copied " + h.key + " (" + std::to_string(rows) + "×" + std::to_string(cols) + ") to the clipboard");
    }
    ImGui::EndPopup();
  }
  ImGui::Dummy(ImVec2(p1.x - p0.x, 2.0f));
  ImGui::EndGroup();
  ImGui::PopID();
  return ev;
}

}  // namespace attention_lab::gui
