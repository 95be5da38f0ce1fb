// A heatmap's cells (a float texture coloured by the heatmap shader), the
// numbers printed in them, the marks over them and the colour bar under them.

#include "attention_lab/stage_registry.h"
#include "gfx/fonts.h"
#include "logic/colormap.h"
#include "logic/number_format.h"
#include "logic/pooling.h"
#include "widgets/heatmap_parts.h"
#include "widgets/rgb_colour.h"

#include <imgui.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <map>

namespace attention_lab::gui {

namespace {

// Dark text on light cells, light text on dark ones.
ImU32 text_colour_on(Rgb bg) {
  const float luminance = 0.2126f * bg.r + 0.7152f * bg.g + 0.0722f * bg.b;
  return luminance > 0.5f ? IM_COL32(20, 20, 20, 255) : IM_COL32(240, 240, 240, 255);
}

Rgb cell_colour(int colormap, float v, float range) {
  if (!std::isfinite(v)) return {0.25f, 0.27f, 0.31f};
  if (colormap == 1) return viridis(v / range);
  if (colormap == 2) return v != 0.0f ? Rgb{0.93f, 0.93f, 0.90f} : Rgb{0.22f, 0.24f, 0.28f};
  return diverging(v / range);
}

// Draws the bar and its end labels; returns the height used below `p`.
float draw_colour_bar(ImDrawList* dl, ImVec2 p, float width, int colormap, float range, ColourScale scale, int decades) {
  const float h = 8.0f;
  const int segments = 24;
  for (int i = 0; i < segments; ++i) {
    const float t0 = static_cast<float>(i) / segments, t1 = static_cast<float>(i + 1) / segments;
    const auto c0 = colormap == 1 ? viridis(t0) : diverging(t0 * 2 - 1);
    const auto c1 = colormap == 1 ? viridis(t1) : diverging(t1 * 2 - 1);
    dl->AddRectFilledMultiColor(ImVec2(p.x + width * t0, p.y), ImVec2(p.x + width * t1, p.y + h), to_u32(c0),
                                to_u32(c1), to_u32(c1), to_u32(c0));
  }
  const auto [weights_lo, weights_hi] = colour_bar_ends(scale, decades);
  const std::string lo = colormap == 1 ? weights_lo : format_number(-range);
  const std::string hi = colormap == 1 ? weights_hi : format_number(range);
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const float line_h = ImGui::GetTextLineHeight();
  const ColourBarLabels at = colour_bar_labels(width, ImGui::CalcTextSize(lo.c_str()).x, ImGui::CalcTextSize(hi.c_str()).x,
                                               ImGui::CalcTextSize("  ").x);
  dl->AddText(ImVec2(p.x, p.y + h + 1), text, lo.c_str());
  dl->AddText(ImVec2(p.x + at.hi_x, p.y + h + 1 + (at.stacked ? line_h : 0.0f)), text, hi.c_str());
  return h + 1 + line_h * (at.stacked ? 2.0f : 1.0f);
}

// Where a stored pin shows on stage `id`, if it shows there at all: pins on
// Q/K/V appear on the head views too, pins on a head's context on concat.
std::optional<Cell> pinned_cell(const Scenario& s, StageId id, const PinKey& k) {
  const auto at = view_cell(CellRef{k.stage, k.row, k.col}, id, s.dims());
  if (!at) return std::nullopt;
  return Cell{at->row, at->col};
}

Rect cell_on_screen(const HeatmapDrawing& h, int row, int col) {
  return cell_rect(h.rect, h.view, h.rows, h.cols, Cell{row, col}, h.opt.transposed);
}

// The texture of the drawn matrix: uploaded when it (or its colour scale, or
// its pooling) changed, and kept while a thumbnail waits out a drag.
void upload_cells(HeatmapDrawing& h, const HeatmapColours& colours, std::uint64_t version, bool holding,
                  gfx::FloatTexture& tex, std::pair<std::uint64_t, float>& cached_range) {
  const std::uint64_t key = (version * 4096u + static_cast<std::uint64_t>(colours.pool)) * 4u +
                            static_cast<std::uint64_t>(colours.scale);
  if (tex.version() == key || holding || !h.on_screen) return;
  std::optional<Matrix> mapped;
  if (colours.scale != ColourScale::Linear) mapped = scaled_weights(h.values(), colours.scale, colours.decades);
  const MatrixView shown = mapped ? MatrixView(*mapped) : h.values();
  if (colours.pool > 1) {
    // one pass over the cells for the pooled copy and the colour range
    float largest = 0.0f;
    tex.update(pool_max_abs(shown, colours.pool, &largest), key);
    if (!h.showing_difference && !mapped) cached_range = {version, largest > 0.0f ? largest : 1.0f};
  } else {
    tex.update(shown, key);
  }
  ++h.state.texture_uploads;
}

}  // namespace

float colour_bar_width(float cells_w) {
  const float em = gfx::em();
  return std::clamp(cells_w, 100.0f * em, 160.0f * em);
}

HeatmapColours draw_heatmap_cells(HeatmapDrawing& h) {
  AppState& state = h.state;
  const HeatmapOptions& opt = h.opt;
  const Document& doc = *state.doc;
  HeatmapColours colours;
  // Several cells per pixel: upload a pooled copy (max |v| per block) instead.
  const float cells_per_px = (h.vis[2] - h.vis[0]) / h.rect.width();
  colours.pool = cells_per_px > 1.0f ? static_cast<int>(std::ceil(cells_per_px)) : 1;
  const int pool = colours.pool;
  const std::uint64_t version = h.showing_difference ? opt.difference_version
                                : h.showing_gradient ? opt.gradient_version
                                                     : doc.engine().version(h.id);
  auto& tex = state.textures[{h.id, pool * 2 + (h.showing_difference ? 1 : 0)}];
  // Weights are coloured on the scale chosen for them (linear, log, per row):
  // the texture holds the mapped values, so it changes with the scale too.
  colours.scale = !h.signed_overlay && h.info.domain == ValueDomain::Probability ? state.colour_scale(h.id)
                                                                                 : ColourScale::Linear;
  colours.decades = log_decades(doc.scenario().T());
  // (while the button is down: a drag whose heatmap left the screen ends
  // without telling it, and thumbnails must not wait for it forever)
  const bool holding = opt.hold_while_dragging && state.drag && ImGui::IsMouseDown(ImGuiMouseButton_Left) &&
                       tex.version() != 0;
  auto& cached_range = state.colour_ranges[h.id];  // (version, largest finite |v|)
  upload_cells(h, colours, version, holding, tex, cached_range);
  // A difference is signed whatever the stage holds: blue went down, red went up.
  colours.colormap = colormap_for(h.signed_overlay ? ValueDomain::Signed : h.info.domain);
  if (h.showing_difference) {
    colours.range = std::isfinite(opt.difference->largest_change) && opt.difference->largest_change != 0.0f
                        ? std::fabs(opt.difference->largest_change)
                        : 1.0f;
  } else {
    if (((cached_range.first != version && !holding) || version == 0) && h.on_screen)
      cached_range = {version, colour_range(h.info.domain, h.values())};
    colours.range = h.info.domain == ValueDomain::Signed ? cached_range.second : 1.0f;
  }
  gfx::HeatmapDraw hd;
  const auto pooled = [pool](int v) { return v < 0 ? v : v / pool; };
  hd.texture = tex.id();
  hd.rows = (h.rows + pool - 1) / pool;
  hd.cols = (h.cols + pool - 1) / pool;
  hd.min = h.p0;
  hd.max = h.p1;
  for (int i = 0; i < 4; ++i) hd.view[i] = h.vis[i] / static_cast<float>(pool);
  hd.range = colours.range;
  hd.colormap = colours.colormap;
  hd.cell_px = h.px_per_cell * static_cast<float>(pool);
  if (opt.reveal >= 0 && pool > 1) {
    const int r = opt.reveal / h.shown_cols, c = opt.reveal % h.shown_cols;
    hd.reveal = (r / pool) * ((h.shown_cols + pool - 1) / pool) + c / pool;
  } else {
    hd.reveal = opt.reveal;
  }
  hd.dim = opt.dim;
  hd.transposed = opt.transposed;
  for (const Lit& l : state.lit) {
    if (l.stage != h.id) continue;
    if (l.row >= 0) hd.lit_row = pooled(l.row);
    if (l.col >= 0) hd.lit_col = pooled(l.col);
    if (l.cell_row >= 0) hd.hover_row = pooled(l.cell_row), hd.hover_col = pooled(l.cell_col);
  }
  // The cell under the pointer gets the hover ring too (the lit ones are its sources).
  if (const auto& hov = state.hovered ? state.hovered : state.hovered_last_frame; hov && hov->stage == h.id)
    hd.hover_row = pooled(hov->row), hd.hover_col = pooled(hov->col);
  if (state.selected && state.selected->stage == h.id)
    hd.selected_row = pooled(state.selected->row), hd.selected_col = pooled(state.selected->col);
  state.renderer.draw(h.dl, hd);
  return colours;
}

void draw_cell_values(const HeatmapDrawing& h, const HeatmapColours& colours, float print_scale, DrawnHeatmap* drawn,
                      std::vector<Rect>& hidden) {
  const AppState& state = h.state;
  const float value_size = ImGui::GetFontSize() * 0.78f;  // smaller than labels, so "−0.31" fits a 34 px cell
  // In presenter mode the font is large for the room, and a 1280×720
  // projector's slides have cells under a line of it: numbers then go in at
  // down to half the font (never under 10 px, nor smaller anywhere on a
  // projector) rather than not at all, in cells with room for "0.0" at that size.
  // A slide's 22 px cells (the least a projected slide uses) hold "0.4" at 10 px.
  float value_room = value_size, presenter_least = 0.0f;
  if (state.presenter) {
    presenter_least = std::min(value_size, 10.0f);
    value_room = std::min(value_size, std::max(presenter_least, ImGui::GetFont()->CalcTextSizeA(
                                                                    presenter_least, FLT_MAX, 0.0f, "0.0").x));
  }
  if (h.opt.dim < 1.0f || h.px_per_cell < value_room + (state.presenter ? 4.0f : 6.0f)) return;
  // The cells on screen (a few hundred at most: values appear only on big cells).
  struct ShownValue {
    Rect rect;
    float v;
    int row;
  };
  std::vector<ShownValue> shown;
  for (int sr = h.first_row(); sr < h.end_row(); ++sr)
    for (int scn = h.first_col(); scn < h.end_col(); ++scn) {
      if (h.opt.reveal >= 0 && sr * h.shown_cols + scn >= h.opt.reveal) continue;
      const int r = h.opt.transposed ? scn : sr, c = h.opt.transposed ? sr : scn;
      const Rect cr = cell_on_screen(h, r, c);
      if (!h.signed_overlay && state.quiz_hides(h.id, r, c)) {  // the answer or a copy of it: "?" over it
        hidden.push_back(cr);
        continue;
      }
      if (cr.x0 >= h.p0.x - 1 && cr.x1 <= h.p1.x + 1 && cr.y0 >= h.p0.y - 1 && cr.y1 <= h.p1.y + 1)
        shown.push_back({cr, h.values()(r, c), r});
    }
  const int colormap = colours.colormap;
  const auto text_of = [&](float v, int digits) {
    return std::isinf(v) && v < 0 ? std::string("−∞")
           : colormap == 2        ? std::string(v != 0.0f ? "1" : "0")
                                  : format_cell_value(v * print_scale, digits);
  };
  const auto width_at = [&](const std::string& t, float size) { return ImGui::GetFont()->CalcTextSizeA(size, FLT_MAX, 0.0f, t.c_str()).x; };
  // One precision and one text size for every cell on screen, so a negative
  // number never shows fewer digits than a positive one: two decimals if they
  // all fit (the text may shrink to 60 % of the labels' size for that), else
  // one, which may shrink further, to 45 % but never under 9 px: with the
  // presenter's large font, 60 % of it left "−0.2" too wide for a slide's
  // cells and they read "…". A value that fits neither way (−123.45,
  // 1.2e+05) shows "…"; hovering it gives the number.
  const float smallest = ImGui::GetFontSize() * 0.6f;
  const float smallest_one_decimal =
      state.presenter ? presenter_least : std::min(smallest, std::max(9.0f, ImGui::GetFontSize() * 0.45f));
  const auto size_for = [&](int digits) {  // the largest size up to value_size at which all fit
    float size = std::min(value_size, h.px_per_cell - 6.0f);  // (and as tall as the cell has room for)
    for (const ShownValue& s : shown)
      if (const float w = width_at(text_of(s.v, digits), value_size); w > 0.0f)
        size = std::min(size, value_size * (s.rect.width() - 3) / w);
    return size;
  };
  int digits = 2;
  float size = size_for(2);
  if (size < smallest) digits = 1, size = std::max(smallest_one_decimal, size_for(1));
  // The colour under a value, on this heatmap's scale (per row needs the row's largest weight).
  std::map<int, float> row_max;
  const auto colour_under = [&](const ShownValue& s) {
    if (colormap != 1 || colours.scale == ColourScale::Linear) return cell_colour(colormap, s.v, colours.range);
    float m = 0.0f;
    if (colours.scale == ColourScale::PerRow) {
      auto [it, fresh] = row_max.try_emplace(s.row, 0.0f);
      if (fresh)
        for (Eigen::Index c = 0; c < h.values().cols(); ++c)
          if (std::isfinite(h.values()(s.row, c))) it->second = std::max(it->second, h.values()(s.row, c));
      m = it->second;
    }
    return cell_colour(colormap, scaled_weight(s.v, colours.scale, m, colours.decades), 1.0f);
  };
  for (const ShownValue& s : shown) {
    std::string t = text_of(s.v, digits);
    float tw = width_at(t, size);
    if (tw >= s.rect.width() - 2) t = compact_cell_value(t), tw = width_at(t, size);  // "−.4" before "…"
    const bool cut = tw >= s.rect.width() - 2;
    if (cut) t = "…", tw = width_at(t, size);
    if (tw >= s.rect.width() - 2) continue;
    if (drawn) ++(cut ? drawn->values_cut : drawn->values_printed);
    h.dl->AddText(ImGui::GetFont(), size,
                  ImVec2(s.rect.x0 + (s.rect.width() - tw) * 0.5f, s.rect.y0 + (s.rect.height() - size) * 0.5f),
                  text_colour_on(colour_under(s)), t.c_str());
  }
}

void draw_cell_marks(const HeatmapDrawing& h, std::vector<Rect>& hidden) {
  const AppState& state = h.state;
  const Scenario& sc = state.doc->scenario();
  const ImVec2 p0 = h.p0, p1 = h.p1;
  if (!h.signed_overlay && !is_input(h.id.kind) && !sc.pins.empty()) {
    // Only this stage's pins: never a loop over every cell of a big matrix.
    for (const auto& entry : sc.pins) {
      const std::optional<Cell> at = pinned_cell(sc, h.id, entry.first);
      if (!at) continue;
      const Rect cr = cell_on_screen(h, at->row, at->col);
      if (cr.x1 < p0.x || cr.x0 > p1.x || cr.y1 < p0.y || cr.y0 > p1.y) continue;
      // At least 3 px, so a pin stays visible on a zoomed-out heatmap.
      h.dl->AddRect(ImVec2(cr.x0 + 1, cr.y0 + 1), ImVec2(std::max(cr.x1, cr.x0 + 3) - 1, std::max(cr.y1, cr.y0 + 3) - 1),
                    IM_COL32(255, 0, 200, 255), 0, 0, 2.5f);
    }
  }
  // The quiz cell and its copies: covered, with a "?", until the learner has answered.
  if (state.quiz.asking() && state.quiz.round->question.cell.stage == h.id) {
    const CellRef& qc = state.quiz.round->question.cell;
    hidden.push_back(cell_on_screen(h, qc.row, qc.col));
  }
  for (const Rect& cr : hidden) {
    if (cr.x1 > p0.x && cr.x0 < p1.x && cr.y1 > p0.y && cr.y0 < p1.y) {
      h.dl->AddRectFilled(ImVec2(cr.x0, cr.y0), ImVec2(std::max(cr.x1, cr.x0 + 6), std::max(cr.y1, cr.y0 + 6)),
                          IM_COL32(250, 200, 40, 255));
      const float tw = ImGui::CalcTextSize("?").x;
      h.dl->AddText(ImVec2(cr.x0 + (cr.width() - tw) * 0.5f, cr.y0 + (cr.height() - ImGui::GetTextLineHeight()) * 0.5f),
                    IM_COL32(0, 0, 0, 255), "?");
    }
  }
  // Presenter mode: the hovered cell stands out so a room can follow the pointer.
  if (state.presenter && state.hovered && state.hovered->stage == h.id &&
      !state.quiz_hides(h.id, state.hovered->row, state.hovered->col)) {
    const Rect cr = cell_on_screen(h, state.hovered->row, state.hovered->col);
    h.dl->AddRect(ImVec2(cr.x0 - 3, cr.y0 - 3), ImVec2(cr.x1 + 3, cr.y1 + 3), IM_COL32(255, 140, 0, 255), 2.0f, 0, 5.0f);
    const float v = h.values()(state.hovered->row, state.hovered->col);
    const std::string t = std::isinf(v) && v < 0 ? "−∞" : h.showing_gradient ? format_significant(v) : format_number(v, 3);
    const float big = ImGui::GetFontSize() * 1.6f;
    const ImVec2 ts = ImGui::GetFont()->CalcTextSizeA(big, FLT_MAX, 0.0f, t.c_str());
    const ImVec2 at(cr.x1 + 8, cr.y0 - ts.y - 4);
    h.dl->AddRectFilled(ImVec2(at.x - 6, at.y - 3), ImVec2(at.x + ts.x + 6, at.y + ts.y + 3), IM_COL32(255, 140, 0, 240), 6.0f);
    h.dl->AddText(ImGui::GetFont(), big, at, IM_COL32(0, 0, 0, 255), t.c_str());
  }
  if (!h.view.is_reset()) h.dl->AddText(ImVec2(p1.x - 40, p1.y + 1), IM_COL32(255, 210, 80, 255), "zoom");
}

void draw_heatmap_legend(const HeatmapDrawing& h, const HeatmapColours& colours) {
  const ImVec2 p0 = h.p0, p1 = h.p1;
  ImGui::SetCursorScreenPos(ImVec2(p0.x, p1.y + 3));
  if (!h.opt.show_colour_bar || colours.colormap == 2) {
    ImGui::Dummy(ImVec2(h.rect.width(), 4));
    return;
  }
  // (wider than the cells of a narrow stage: the group, and the box around it, take it in)
  const float bar_w = colour_bar_width(h.rect.width());
  float legend_h =
      draw_colour_bar(h.dl, ImVec2(p0.x, p1.y + 3), bar_w, colours.colormap, colours.range, colours.scale, colours.decades) + 2;
  if (colours.pool > 1) {
    // Say how a pixel summarises its cells, so a zoomed-out picture is read right.
    // (A block of pool×pool cells is one colour, one to two pixels wide.)
    // Wrapped to the heatmap's (or its colour bar's) width: under a narrow
    // stage one line ran into its neighbours' at T = 1024.
    const std::string how = "colour = max |v| of each " + std::to_string(colours.pool) + "×" +
                            std::to_string(colours.pool) + " block";
    const float wrap = std::max(h.rect.width(), bar_w);
    h.dl->AddText(ImGui::GetFont(), ImGui::GetFontSize(), ImVec2(p0.x, p1.y + 3 + legend_h),
                  ImGui::GetColorU32(ImGuiCol_TextDisabled), how.c_str(), nullptr, wrap);
    legend_h += ImGui::CalcTextSize(how.c_str(), nullptr, false, wrap).y;
  }
  ImGui::Dummy(ImVec2(std::max(h.rect.width(), bar_w + (p0.x - ImGui::GetCursorScreenPos().x)), legend_h));
}

}  // namespace attention_lab::gui
