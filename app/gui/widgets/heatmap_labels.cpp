// A heatmap's row and column labels: tokens or indices, cut to "jo…" only
// when smaller text no longer fits, written upwards on a slide with room.

#include "gfx/fonts.h"
#include "logic/text_fit.h"
#include "widgets/heatmap_parts.h"

#include <imgui.h>

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace attention_lab::gui {

namespace {

// The smallest of 1, 2, 5, 10, 20, 50, … that is at least `n`: an axis
// labelled 0, 50, 100 reads better than 0, 62, 124.
int nice_step(int n) {
  for (int decade = 1;; decade *= 10)
    for (int m : {1, 2, 5})
      if (m * decade >= n) return m * decade;
}

bool has_digit(const std::string& label) {
  return std::any_of(label.begin(), label.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
}

// `text` at `pivot`, turned a quarter left about it: it reads upwards from
// the pivot, its glyphs' tops to the left (Dear ImGui draws text level only,
// so its vertices are turned after the fact).
void add_turned_text(ImDrawList* dl, float size, ImVec2 pivot, ImU32 colour, const std::string& text) {
  // The glyphs are laid out level first, to the right of the pivot: the clip
  // rectangle must not drop them there. Once turned, they are clipped as the
  // rest of the window is (a scrolled slide or pipeline hides them too): the
  // draw command that holds them gets the window's rectangle back.
  const ImVec2 clip_min = dl->GetClipRectMin(), clip_max = dl->GetClipRectMax();
  dl->PushClipRect(ImVec2(-1e6f, -1e6f), ImVec2(1e6f, 1e6f), false);
  const int first = dl->VtxBuffer.Size;
  dl->AddText(ImGui::GetFont(), size, pivot, colour, text.c_str());
  for (int i = first; i < dl->VtxBuffer.Size; ++i) {
    ImVec2& v = dl->VtxBuffer[i].pos;
    const float dx = v.x - pivot.x, dy = v.y - pivot.y;
    v = ImVec2(pivot.x + dy, pivot.y - dx);
  }
  dl->CmdBuffer.back().ClipRect = ImVec4(clip_min.x, clip_min.y, clip_max.x, clip_max.y);  // (the push gave the text a command of its own)
  dl->PopClipRect();
}

// Text measured at `px` (not the font's own size).
TextMeasure measure_at(float px) {
  return [px](std::string_view text) {
    return ImGui::GetFont()->CalcTextSizeA(px, FLT_MAX, 0.0f, text.data(), text.data() + text.size()).x;
  };
}

// A label drawn cut: its whole text in a tooltip while the pointer is on it.
void label_tip(const HeatmapDrawing& h, ImVec2 a, ImVec2 b, const std::string& full) {
  if (h.opt.interactive && ImGui::IsWindowHovered() && ImGui::IsMouseHoveringRect(a, b)) ImGui::SetTooltip("%s", full.c_str());
}

int draw_row_labels(const HeatmapDrawing& h, const std::vector<std::string>& labels) {
  const ImU32 colour = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const float line_h = ImGui::GetTextLineHeight(), font_px = ImGui::GetFontSize();
  // Rows shorter than a line of text (four heads side by side on a slide)
  // get smaller text, down to 60 % of the labels' size; below that, none.
  const float row_px = std::min(font_px, font_px * h.px_per_cell / (line_h * 0.9f));
  if (row_px < 0.6f * font_px) return 0;
  const float row_line_h = line_h * row_px / font_px;
  const TextMeasure measure = measure_at(row_px);
  int cut = 0;
  for (int r = h.first_row(); r < h.end_row(); ++r) {
    const float y = h.p0.y + (static_cast<float>(r) - h.vis[1]) * h.px_per_cell + (h.px_per_cell - row_line_h) * 0.5f;
    // (A line a little taller than its row may stand out by half the difference, first and last rows too.)
    const float slack = std::max(0.0f, (row_line_h - h.px_per_cell) * 0.5f) + 1.0f;
    if (y < h.p0.y - slack || y + row_line_h > h.p1.y + slack || static_cast<std::size_t>(r) >= labels.size()) continue;
    const std::string& full = labels[static_cast<std::size_t>(r)];
    // A cut label ends in "…" (the full word is in the tooltip), so "t10…" never passes for "t10".
    const std::string t = ellipsize(full, h.label_w - 4, measure);
    if (t.empty()) continue;
    const float w = measure(t);
    h.dl->AddText(ImGui::GetFont(), row_px, ImVec2(h.p0.x - w - 4, y), colour, t.c_str());
    if (t != full) {
      label_tip(h, ImVec2(h.p0.x - h.label_w, y), ImVec2(h.p0.x, y + row_line_h), full);
      ++cut;
    }
  }
  return cut;
}

// Column words turned upwards, centred on their columns, from just above the cells.
int draw_turned_column_labels(const HeatmapDrawing& h, const std::vector<std::string>& labels, const TurnedLabels& turned,
                              int end_col) {
  const ImU32 colour = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const float line_h = ImGui::GetTextLineHeight(), font_px = ImGui::GetFontSize();
  const TextMeasure measure = measure_at(turned.text_px);
  int cut = 0;
  for (int c = h.first_col(); c < end_col; ++c) {
    const std::string& full = labels[static_cast<std::size_t>(c)];
    // (the band is the longest word plus 4 px: a pixel more, so rounding never cuts that word)
    const std::string t = ellipsize(full, turned.band - 3.0f, measure);
    const float cell_x = h.p0.x + (static_cast<float>(c) - h.vis[0]) * h.px_per_cell;
    const float glyph_h = line_h * turned.text_px / font_px;
    add_turned_text(h.dl, turned.text_px, ImVec2(cell_x + (h.px_per_cell - glyph_h) * 0.5f, h.p0.y - 2.0f), colour, t);
    if (t != full) {
      label_tip(h, ImVec2(cell_x, h.origin.y), ImVec2(cell_x + h.px_per_cell, h.p0.y), full);
      ++cut;
    }
  }
  return cut;
}

// Column labels level, just above the cells (under any band the equation keeps).
int draw_flat_column_labels(const HeatmapDrawing& h, const std::vector<std::string>& labels, int end_col) {
  const ImU32 colour = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const float line_h = ImGui::GetTextLineHeight(), font_px = ImGui::GetFontSize();
  const int first_col = h.first_col();
  // An index is never cut ("379" as "37" names another column): when the
  // widest one on screen does not fit its cell, every k-th column is
  // labelled instead, with room for the whole number.
  int index_every = 1;
  if (end_col > first_col) {
    const float widest = ImGui::CalcTextSize(labels[static_cast<std::size_t>(end_col - 1)].c_str()).x;
    if (widest > h.px_per_cell - 2) index_every = nice_step(static_cast<int>(std::ceil((widest + 8.0f) / h.px_per_cell)));
  }
  // Token columns narrower than their words ("mat" over a 24 px column)
  // first get smaller text, down to 70 % of the labels' size, the same for
  // every column; only then are they cut to "jo…".
  const float avail = h.px_per_cell - 2;
  float token_px = font_px;
  for (int c = first_col; c < end_col; ++c)
    if (const std::string& t = labels[static_cast<std::size_t>(c)]; !has_digit(t))
      if (const float w = ImGui::CalcTextSize(t.c_str()).x; w > avail)
        token_px = std::min(token_px, std::max(0.7f * font_px, font_px * avail / w));
  const TextMeasure token_measure = measure_at(token_px);
  const float flat_y = h.p0.y - line_h;
  int cut = 0;
  for (int c = first_col; c < end_col; ++c) {
    const std::string& full = labels[static_cast<std::size_t>(c)];
    const float cell_x = h.p0.x + (static_cast<float>(c) - h.vis[0]) * h.px_per_cell;
    std::string t = full;
    const bool index = has_digit(t);
    if (index) {
      if (c % index_every != 0) continue;
    } else if (token_measure(t) > avail) {  // a token: "jour…", the whole word on hover
      t = ellipsize(full, avail, token_measure);
      if (t.empty() || t == kEllipsis) {  // "…" alone says nothing: the column's word only on hover
        label_tip(h, ImVec2(cell_x, flat_y), ImVec2(cell_x + h.px_per_cell, flat_y + line_h), full);
        ++cut;
        continue;
      }
    }
    const float size = index ? font_px : token_px;
    const float w = index ? ImGui::CalcTextSize(t.c_str()).x : token_measure(t);
    const float x = cell_x + (h.px_per_cell - w) * 0.5f;
    h.dl->AddText(ImGui::GetFont(), size, ImVec2(x, flat_y + (font_px - size)), colour, t.c_str());
    if (t != full) {
      label_tip(h, ImVec2(cell_x, flat_y), ImVec2(cell_x + h.px_per_cell, flat_y + line_h), full);
      ++cut;
    }
  }
  return cut;
}

}  // namespace

float row_label_width(const StageInfo& info, const Scenario& scenario, bool transposed, bool whole_words) {
  const LabelKind kind = transposed ? info.col_label_kind : info.row_label_kind;
  const bool named = kind == LabelKind::Token || kind == LabelKind::KeyToken ||
                     (kind == LabelKind::Feature && !scenario.features.empty());
  const float em = gfx::em();
  const auto& labels = transposed ? info.col_labels : info.row_labels;
  if (named && whole_words) {
    // As wide as the longest word (within reason), so "journey" is not "jour…".
    float widest = 0.0f;
    for (const std::string& label : labels) widest = std::max(widest, ImGui::CalcTextSize(label.c_str()).x);
    return std::clamp(widest + 6.0f * em, 52.0f * em, 160.0f * em);
  }
  if (named) return 52.0f * em;
  // Indices, or the one word of a bias row ("bias"): as wide as the widest
  // of them (the first and the last index), so none ends in "…".
  float widest = 0.0f;
  if (!labels.empty())
    widest = std::max(ImGui::CalcTextSize(labels.front().c_str()).x, ImGui::CalcTextSize(labels.back().c_str()).x);
  return std::max(22.0f * em, widest + 6.0f * em);
}

ColumnWords column_words(const std::vector<std::string>& labels) {
  const float font_px = ImGui::GetFontSize(), line_h = ImGui::GetTextLineHeight();
  float widest = 0.0f, longest = 0.0f;  // at 70 % (the smallest flat text), and whole
  bool words = false;
  for (const std::string& label : labels) {
    if (has_digit(label)) continue;  // an index is never turned (nor cut)
    words = true;
    widest = std::max(widest, ImGui::GetFont()->CalcTextSizeA(0.7f * font_px, FLT_MAX, 0.0f, label.c_str()).x);
    longest = std::max(longest, ImGui::CalcTextSize(label.c_str()).x);
  }
  ColumnWords w;
  if (!words) return w;
  w.turn_below = widest + 2.0f;
  w.band = std::min(longest, 8.0f * line_h) + 4.0f;
  return w;
}

TurnedLabels turned_labels(const std::vector<std::string>& labels, float px_per_cell) {
  const ColumnWords words = column_words(labels);
  TurnedLabels t;
  if (!(px_per_cell < words.turn_below)) return t;
  const float font_px = ImGui::GetFontSize(), line_h = ImGui::GetTextLineHeight();
  t.on = true;
  t.band = words.band;
  t.text_px = std::max(1.0f, std::min(font_px, (px_per_cell - 2) * font_px / line_h));
  return t;
}

int draw_heatmap_labels(const HeatmapDrawing& h, const TurnedLabels& turned) {
  const auto& row_labels = h.opt.transposed ? h.info.col_labels : h.info.row_labels;
  const auto& col_labels = h.opt.transposed ? h.info.row_labels : h.info.col_labels;
  const int end_col = std::min(h.end_col(), static_cast<int>(col_labels.size()));
  return draw_row_labels(h, row_labels) + (turned.on ? draw_turned_column_labels(h, col_labels, turned, end_col)
                                                     : draw_flat_column_labels(h, col_labels, end_col));
}

}  // namespace attention_lab::gui
