#include "widgets/heatmap_widget.h"

#include "attention_lab/stage_info.h"
#include "attention_lab/stage_registry.h"
#include "logic/colormap.h"
#include "logic/gesture.h"
#include "logic/label_hit.h"
#include "logic/number_format.h"
#include "logic/matrix_csv.h"
#include "logic/pooling.h"
#include "panels/panels.h"
#include "widgets/rgb_colour.h"
#include "logic/text_fit.h"
#include "attention_lab/seeded_fill.h"

#include <imgui.h>
#include <imgui_internal.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

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

float colour_bar_width(float cells_w) {
  const float em = gfx::em();
  return std::clamp(cells_w, 100.0f * em, 160.0f * em);
}

namespace {

bool pinned(const Scenario& s, StageId id, int r, int c) {
  const auto stored = storage_cell(CellRef{id, r, c}, s.dims());
  return stored && s.pins.count(PinKey{stored->stage, stored->row, stored->col}) > 0;
}

// Where a stored pin shows on stage `id`, if it shows there at all: pins on
// Q/K/V appear on the head views too, pins on a head's context on concat.
std::optional<Cell> pinned_cell(const Scenario& s, StageId id, const PinKey& k) {
  const auto at = view_cell(CellRef{k.stage, k.row, k.col}, id, s.dims());
  if (!at) return std::nullopt;
  return Cell{at->row, at->col};
}

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

// Column labels written upwards (a slide's tokens wider than their columns):
// whether, the band above the cells they take, and their text size.
struct TurnedLabels {
  bool on = false;
  float band = 0.0f;     // height above the cells
  float text_px = 0.0f;  // font size: a line of it fits the column's width
};

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

}  // namespace

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

float displayed_cell_px(float cell_px, float max_px, int rows, int cols) {
  return std::min(cell_px, max_px / static_cast<float>(std::max({rows, cols, 1})));
}

HeatmapEvents draw_heatmap(AppState& state, StageId id, const HeatmapOptions& opt) {
  HeatmapEvents ev;
  const Document& doc = *state.doc;
  // (a head the scenario no longer has, for the frame a change of heads takes to reach the layout)
  StageId value_id = id;
  value_id.role = Role::Value;
  if (!doc.engine().not_held(value_id).empty()) return ev;
  const StageInfo& info = state.stage_info(id);
  const bool showing_difference = opt.difference != nullptr;
  const bool showing_gradient = opt.gradient != nullptr && id.role == Role::Gradient;
  // a difference or a gradient: signed numbers of the stage's shape that are not its values
  const bool signed_overlay = showing_difference || showing_gradient;
  // The values are fetched only when something reads them: a derived stage
  // (scaled, masked, weights) costs an exp per cell to materialize, and the
  // texture and colour range of an unchanged stage are cached already. (At
  // T=1024 the twelve weight thumbnails alone would otherwise rebuild
  // 12 million weights every frame.)
  std::optional<MatrixView> fetched;
  const auto values = [&]() -> const MatrixView& {
    if (!fetched)
      fetched.emplace(showing_difference ? MatrixView(opt.difference->difference)
                      : showing_gradient ? MatrixView(*opt.gradient)
                                         : doc.stage(id));
    return *fetched;
  };
  const int rows = showing_difference ? static_cast<int>(opt.difference->difference.rows())
                   : showing_gradient ? static_cast<int>(opt.gradient->rows())
                                      : info.rows;
  const int cols = showing_difference ? static_cast<int>(opt.difference->difference.cols())
                   : showing_gradient ? static_cast<int>(opt.gradient->cols())
                                      : info.cols;
  const int shown_rows = opt.transposed ? cols : rows, shown_cols = opt.transposed ? rows : cols;
  if (rows == 0 || cols == 0) return ev;

  // X appears in three equations (X·W_q, X·W_k, X·W_v): each drawing of a
  // stage gets its own ImGui ID, so only the one under the mouse is active
  // and a drag applies one edit a frame, not one per copy. Δ heatmaps (Compare)
  // have IDs of their own, so one appearing after the first edit of a drag
  // leaves the IDs of the value copies, and the drag, where they were.
  ImGui::PushID(to_string(id).c_str());
  ImGui::PushID(showing_difference ? "difference" : showing_gradient ? "gradient" : "value");
  ImGui::PushID(state.heatmap_instances[{id, showing_difference}]++);
  ImGui::BeginGroup();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float label_w = opt.show_labels ? row_label_width(info, doc.scenario(), opt.transposed, opt.whole_labels) : 0.0f;
  // A 1024×1024 stage cannot have 30 px cells: shrink to max_px; zoom brings cells back.
  const float cell_size = displayed_cell_px(opt.cell_px, opt.max_px, shown_rows, shown_cols);
  HeatmapView& view = state.views[id];
  float vis[4];
  view.visible(shown_rows, shown_cols, vis);
  const float px_per_cell = cell_size * static_cast<float>(shown_cols) / (vis[2] - vis[0]);
  const auto& col_labels = opt.transposed ? info.row_labels : info.col_labels;
  const int first_col = static_cast<int>(vis[0]);
  const int end_col = std::min({shown_cols, static_cast<int>(std::ceil(vis[2])), static_cast<int>(col_labels.size())});
  const TurnedLabels turned = opt.show_labels && opt.whole_labels ? turned_labels(col_labels, px_per_cell) : TurnedLabels{};
  const float col_label_h =
      !opt.show_labels ? 0.0f : std::max(turned.on ? turned.band : ImGui::GetTextLineHeight(), opt.column_band);

  // A gradient's cells print its numbers times a power of ten when they are
  // all small (0.0036 would read "0.00"): the title says "×10⁻²", the
  // colours and the inspector keep the real numbers.
  int print_exponent = 0;
  if (showing_gradient) {
    auto& range_of = state.colour_ranges[id];
    if (range_of.first != opt.gradient_version) range_of = {opt.gradient_version, colour_range(ValueDomain::Signed, values())};
    if (range_of.second > 0.0f && range_of.second < 0.1f)
      print_exponent = static_cast<int>(std::floor(std::log10(range_of.second)));
  }
  const float print_scale = print_exponent == 0 ? 1.0f : std::pow(10.0f, static_cast<float>(-print_exponent));

  // Title: symbol and shape, e.g. "Q  7×4"; the full name and formula in the tooltip.
  std::string title = std::string(opt.title_override ? opt.title_override : info.symbol.c_str()) + (opt.transposed ? "ᵀ" : "");
  if (opt.show_labels) title += "  " + std::to_string(shown_rows) + "×" + std::to_string(shown_cols);
  if (print_exponent != 0) title += "  " + power_of_ten(print_exponent);
  if (showing_difference) {
    // "Δ S₀: largest change [2,1] +0.31", so the eye knows where to look.
    const StageDiff& d = *opt.difference;
    title = "Δ " + std::string(opt.title_override ? opt.title_override : info.symbol.c_str()) + " " +
            (d.largest_change > 0 ? "+" : "") + format_number(d.largest_change, 2) + " [" +
            doc.scenario().shown_index(d.largest_row) + "," + doc.scenario().shown_index(d.largest_col) + "]";
  }
  ImGui::SetCursorPosX(ImGui::GetCursorPosX() + label_w);
  if (opt.dim < 1.0f) ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  ImGui::TextUnformatted(title.c_str());
  if (opt.dim < 1.0f) ImGui::PopStyleColor();
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::Text("%s", info.name.c_str());
    ImGui::Text("%s", info.formula.c_str());
    ImGui::PushTextWrapPos(420.0f);
    ImGui::TextDisabled("%s", info.explanation.c_str());
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }

  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float cw = cell_size, ch = cell_size;
  const ImVec2 p0(origin.x + label_w, origin.y + col_label_h);
  const ImVec2 p1(p0.x + cw * static_cast<float>(shown_cols), p0.y + ch * static_cast<float>(shown_rows));
  const Rect rect{p0.x, p0.y, p1.x, p1.y};
  // Off screen (scrolled away in a tall pipeline): no texture upload and no
  // colour range, which at T=1024 would pool a million cells per changed
  // stage every frame of a drag. Both catch up once it scrolls into view.
  // (The legend under the cells counts as part of it.)
  const bool on_screen = ImGui::IsRectVisible(origin, ImVec2(p1.x, p1.y + 3.0f * ImGui::GetTextLineHeightWithSpacing()));

  // Labels: tokens or dimension indices, only when there is room to read them.
  int labels_cut = 0;  // drawn cut ("jour…") or left out: whole in a tooltip only
  if (opt.show_labels) {
    const auto& rl = opt.transposed ? info.col_labels : info.row_labels;
    const auto& cl = opt.transposed ? info.row_labels : info.col_labels;
    const ImU32 lc = ImGui::GetColorU32(ImGuiCol_TextDisabled);
    const float line_h = ImGui::GetTextLineHeight();
    const TextMeasure measure = [](std::string_view text) {
      return ImGui::CalcTextSize(text.data(), text.data() + text.size()).x;
    };
    // A label drawn cut: its whole text in a tooltip while the pointer is on it.
    const auto label_tip = [&](ImVec2 a, ImVec2 b, const std::string& full) {
      if (opt.interactive && ImGui::IsWindowHovered() && ImGui::IsMouseHoveringRect(a, b)) ImGui::SetTooltip("%s", full.c_str());
    };
    // Rows shorter than a line of text (four heads side by side on a slide)
    // get smaller text, down to 60 % of the labels' size; below that, none.
    const float font_px = ImGui::GetFontSize();
    const float row_px = std::min(font_px, font_px * px_per_cell / (line_h * 0.9f));
    const float row_line_h = line_h * row_px / font_px;
    const TextMeasure row_measure = [&](std::string_view text) {
      return ImGui::GetFont()->CalcTextSizeA(row_px, FLT_MAX, 0.0f, text.data(), text.data() + text.size()).x;
    };
    if (row_px >= 0.6f * font_px)
      for (int r = static_cast<int>(vis[1]); r < std::min(shown_rows, static_cast<int>(std::ceil(vis[3]))); ++r) {
        const float y = p0.y + (static_cast<float>(r) - vis[1]) * px_per_cell + (px_per_cell - row_line_h) * 0.5f;
        // (A line a little taller than its row may stand out by half the difference, first and last rows too.)
        const float slack = std::max(0.0f, (row_line_h - px_per_cell) * 0.5f) + 1.0f;
        if (y < p0.y - slack || y + row_line_h > p1.y + slack || static_cast<std::size_t>(r) >= rl.size()) continue;
        const std::string& full = rl[static_cast<std::size_t>(r)];
        // A cut label ends in "…" (the full word is in the tooltip), so "t10…" never passes for "t10".
        const std::string t = ellipsize(full, label_w - 4, row_measure);
        if (t.empty()) continue;
        const float w = row_measure(t);
        dl->AddText(ImGui::GetFont(), row_px, ImVec2(p0.x - w - 4, y), lc, t.c_str());
        if (t != full) {
          label_tip(ImVec2(p0.x - label_w, y), ImVec2(p0.x, y + row_line_h), full);
          ++labels_cut;
        }
      }
    // An index is never cut ("379" as "37" names another column): when the
    // widest one on screen does not fit its cell, every k-th column is
    // labelled instead, with room for the whole number.
    int index_every = 1;
    if (end_col > first_col) {
      const float widest = ImGui::CalcTextSize(cl[static_cast<std::size_t>(end_col - 1)].c_str()).x;
      if (widest > px_per_cell - 2) index_every = nice_step(static_cast<int>(std::ceil((widest + 8.0f) / px_per_cell)));
    }
    // Token columns narrower than their words ("mat" over a 24 px column)
    // first get smaller text, down to 70 % of the labels' size, the same for
    // every column; only then are they cut to "jo…".
    const float avail = px_per_cell - 2;
    float token_px = font_px;
    for (int c = first_col; c < end_col; ++c)
      if (const std::string& t = cl[static_cast<std::size_t>(c)]; !has_digit(t))
        if (const float w = ImGui::CalcTextSize(t.c_str()).x; w > avail)
          token_px = std::min(token_px, std::max(0.7f * font_px, font_px * avail / w));
    const TextMeasure token_measure = [&](std::string_view text) {
      return ImGui::GetFont()->CalcTextSizeA(token_px, FLT_MAX, 0.0f, text.data(), text.data() + text.size()).x;
    };
    for (int c = first_col; c < end_col && turned.on; ++c) {
      // Upwards, centred on the column, from just above the cells.
      const std::string& full = cl[static_cast<std::size_t>(c)];
      const TextMeasure turned_measure = [&](std::string_view text) {
        return ImGui::GetFont()->CalcTextSizeA(turned.text_px, FLT_MAX, 0.0f, text.data(), text.data() + text.size()).x;
      };
      // (the band is the longest word plus 4 px: a pixel more, so rounding never cuts that word)
      const std::string t = ellipsize(full, turned.band - 3.0f, turned_measure);
      const float cell_x = p0.x + (static_cast<float>(c) - vis[0]) * px_per_cell;
      const float glyph_h = line_h * turned.text_px / font_px;
      add_turned_text(dl, turned.text_px, ImVec2(cell_x + (px_per_cell - glyph_h) * 0.5f, p0.y - 2.0f), lc, t);
      if (t != full) {
        label_tip(ImVec2(cell_x, origin.y), ImVec2(cell_x + px_per_cell, p0.y), full);
        ++labels_cut;
      }
    }
    // flat labels sit just above the cells, under any band the equation keeps
    const float flat_y = p0.y - line_h;
    for (int c = first_col; c < end_col && !turned.on; ++c) {
      const std::string& full = cl[static_cast<std::size_t>(c)];
      const float cell_x = p0.x + (static_cast<float>(c) - vis[0]) * px_per_cell;
      std::string t = full;
      const bool index = has_digit(t);
      if (index) {
        if (c % index_every != 0) continue;
      } else if (token_measure(t) > avail) {  // a token: "jour…", the whole word on hover
        t = ellipsize(full, avail, token_measure);
        if (t.empty() || t == kEllipsis) {  // "…" alone says nothing: the column's word only on hover
          label_tip(ImVec2(cell_x, flat_y), ImVec2(cell_x + px_per_cell, flat_y + line_h), full);
          ++labels_cut;
          continue;
        }
      }
      const float size = index ? font_px : token_px;
      const float w = index ? ImGui::CalcTextSize(t.c_str()).x : token_measure(t);
      const float x = cell_x + (px_per_cell - w) * 0.5f;
      dl->AddText(ImGui::GetFont(), size, ImVec2(x, flat_y + (font_px - size)), lc, t.c_str());
      if (t != full) {
        label_tip(ImVec2(cell_x, flat_y), ImVec2(cell_x + px_per_cell, flat_y + line_h), full);
        ++labels_cut;
      }
    }
  }

  // The cells themselves: a float texture coloured by the heatmap shader.
  // Several cells per pixel: upload a pooled copy (max |v| per block) instead.
  const float cells_per_px = (vis[2] - vis[0]) / rect.width();
  const int pool = cells_per_px > 1.0f ? static_cast<int>(std::ceil(cells_per_px)) : 1;
  const std::uint64_t version = showing_difference ? opt.difference_version
                                : showing_gradient ? opt.gradient_version
                                                   : doc.engine().version(id);
  auto& tex = state.textures[{id, pool * 2 + (showing_difference ? 1 : 0)}];
  // Weights are coloured on the scale chosen for them (linear, log, per row):
  // the texture holds the mapped values, so it changes with the scale too.
  const ColourScale scale =
      !signed_overlay && info.domain == ValueDomain::Probability ? state.colour_scale(id) : ColourScale::Linear;
  const int decades = log_decades(doc.scenario().T());
  const std::uint64_t key = (version * 4096u + static_cast<std::uint64_t>(pool)) * 4u + static_cast<std::uint64_t>(scale);
  // (while the button is down: a drag whose heatmap left the screen ends
  // without telling it, and thumbnails must not wait for it forever)
  const bool holding = opt.hold_while_dragging && state.drag && ImGui::IsMouseDown(ImGuiMouseButton_Left) &&
                       tex.version() != 0;
  auto& cached_range = state.colour_ranges[id];  // (version, largest finite |v|)
  if (tex.version() != key && !holding && on_screen) {
    std::optional<Matrix> mapped;
    if (scale != ColourScale::Linear) mapped = scaled_weights(values(), scale, decades);
    const MatrixView shown = mapped ? MatrixView(*mapped) : values();
    if (pool > 1) {
      // one pass over the cells for the pooled copy and the colour range
      float largest = 0.0f;
      tex.update(pool_max_abs(shown, pool, &largest), key);
      if (!showing_difference && !mapped) cached_range = {version, largest > 0.0f ? largest : 1.0f};
    } else {
      tex.update(shown, key);
    }
    ++state.texture_uploads;
  }
  // A difference is signed whatever the stage holds: blue went down, red went up.
  const ValueDomain domain = signed_overlay ? ValueDomain::Signed : info.domain;
  const int colormap = colormap_for(domain);
  float range = 1.0f;
  if (showing_difference) {
    range = std::isfinite(opt.difference->largest_change) && opt.difference->largest_change != 0.0f
                ? std::fabs(opt.difference->largest_change)
                : 1.0f;
  } else {
    if (((cached_range.first != version && !holding) || version == 0) && on_screen)
      cached_range = {version, colour_range(info.domain, values())};
    range = info.domain == ValueDomain::Signed ? cached_range.second : 1.0f;
  }
  gfx::HeatmapDraw hd;
  const auto pooled = [pool](int v) { return v < 0 ? v : v / pool; };
  hd.texture = tex.id();
  hd.rows = (rows + pool - 1) / pool;
  hd.cols = (cols + pool - 1) / pool;
  hd.min = p0;
  hd.max = p1;
  for (int i = 0; i < 4; ++i) hd.view[i] = vis[i] / static_cast<float>(pool);
  hd.range = range;
  hd.colormap = colormap;
  hd.cell_px = px_per_cell * static_cast<float>(pool);
  if (opt.reveal >= 0 && pool > 1) {
    const int r = opt.reveal / shown_cols, c = opt.reveal % shown_cols;
    hd.reveal = (r / pool) * ((shown_cols + pool - 1) / pool) + c / pool;
  } else {
    hd.reveal = opt.reveal;
  }
  hd.dim = opt.dim;
  hd.transposed = opt.transposed;
  for (const Lit& l : state.lit) {
    if (l.stage != id) continue;
    if (l.row >= 0) hd.lit_row = pooled(l.row);
    if (l.col >= 0) hd.lit_col = pooled(l.col);
    if (l.cell_row >= 0) hd.hover_row = pooled(l.cell_row), hd.hover_col = pooled(l.cell_col);
  }
  // The cell under the pointer gets the hover ring too (the lit ones are its sources).
  if (const auto& h = state.hovered ? state.hovered : state.hovered_last_frame; h && h->stage == id)
    hd.hover_row = pooled(h->row), hd.hover_col = pooled(h->col);
  if (state.selected && state.selected->stage == id)
    hd.selected_row = pooled(state.selected->row), hd.selected_col = pooled(state.selected->col);
  state.renderer.draw(dl, hd);
  DrawnHeatmap* drawn = nullptr;
  if (!showing_difference) {
    state.drawn.push_back({id, rect, rows, cols, opt.transposed, px_per_cell});
    drawn = &state.drawn.back();
    drawn->labels_cut = labels_cut;
  }

  // Overlays: values in cells that are big enough, −∞ spelled out, pins outlined.
  const Scenario& sc = doc.scenario();
  const float value_size = ImGui::GetFontSize() * 0.78f;  // smaller than labels, so "−0.31" fits a 34 px cell
  std::vector<Rect> hidden_copies;  // cells printing the quiz's answer (output = concat = context without W_o)
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
  if (opt.dim >= 1.0f && px_per_cell >= value_room + (state.presenter ? 4.0f : 6.0f)) {
    // The cells on screen (a few hundred at most: values appear only on big cells).
    struct ShownValue {
      Rect rect;
      float v;
      int row;
    };
    std::vector<ShownValue> shown;
    for (int sr = static_cast<int>(vis[1]); sr < std::min(shown_rows, static_cast<int>(std::ceil(vis[3]))); ++sr)
      for (int scn = static_cast<int>(vis[0]); scn < std::min(shown_cols, static_cast<int>(std::ceil(vis[2]))); ++scn) {
        if (opt.reveal >= 0 && sr * shown_cols + scn >= opt.reveal) continue;
        const int r = opt.transposed ? scn : sr, c = opt.transposed ? sr : scn;
        const Rect cr = cell_rect(rect, view, rows, cols, Cell{r, c}, opt.transposed);
        if (!signed_overlay && state.quiz_hides(id, r, c)) {  // the answer or a copy of it: "?" below
          hidden_copies.push_back(cr);
          continue;
        }
        if (cr.x0 >= p0.x - 1 && cr.x1 <= p1.x + 1 && cr.y0 >= p0.y - 1 && cr.y1 <= p1.y + 1) shown.push_back({cr, values()(r, c), r});
      }
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
      float size = std::min(value_size, px_per_cell - 6.0f);  // (and as tall as the cell has room for)
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
      if (colormap != 1 || scale == ColourScale::Linear) return cell_colour(colormap, s.v, range);
      float m = 0.0f;
      if (scale == ColourScale::PerRow) {
        auto [it, fresh] = row_max.try_emplace(s.row, 0.0f);
        if (fresh)
          for (Eigen::Index c = 0; c < values().cols(); ++c)
            if (std::isfinite(values()(s.row, c))) it->second = std::max(it->second, values()(s.row, c));
        m = it->second;
      }
      return cell_colour(colormap, scaled_weight(s.v, scale, m, decades), 1.0f);
    };
    for (const ShownValue& s : shown) {
      std::string t = text_of(s.v, digits);
      float tw = width_at(t, size);
      if (tw >= s.rect.width() - 2) t = compact_cell_value(t), tw = width_at(t, size);  // "−.4" before "…"
      const bool cut = tw >= s.rect.width() - 2;
      if (cut) t = "…", tw = width_at(t, size);
      if (tw >= s.rect.width() - 2) continue;
      if (drawn) ++(cut ? drawn->values_cut : drawn->values_printed);
      dl->AddText(ImGui::GetFont(), size, ImVec2(s.rect.x0 + (s.rect.width() - tw) * 0.5f, s.rect.y0 + (s.rect.height() - size) * 0.5f),
                  text_colour_on(colour_under(s)), t.c_str());
    }
  }
  if (!signed_overlay && !is_input(id.kind) && !sc.pins.empty()) {
    // Only this stage's pins: never a loop over every cell of a big matrix.
    for (const auto& entry : sc.pins) {
      const std::optional<Cell> at = pinned_cell(sc, id, entry.first);
      if (!at) continue;
      const Rect cr = cell_rect(rect, view, rows, cols, *at, opt.transposed);
      if (cr.x1 < p0.x || cr.x0 > p1.x || cr.y1 < p0.y || cr.y0 > p1.y) continue;
      // At least 3 px, so a pin stays visible on a zoomed-out heatmap.
      dl->AddRect(ImVec2(cr.x0 + 1, cr.y0 + 1), ImVec2(std::max(cr.x1, cr.x0 + 3) - 1, std::max(cr.y1, cr.y0 + 3) - 1),
                  IM_COL32(255, 0, 200, 255), 0, 0, 2.5f);
    }
  }
  // The quiz cell and its copies: covered, with a "?", until the learner has answered.
  if (state.quiz.asking() && state.quiz.round->question.cell.stage == id) {
    const CellRef& qc = state.quiz.round->question.cell;
    hidden_copies.push_back(cell_rect(rect, view, rows, cols, Cell{qc.row, qc.col}, opt.transposed));
  }
  for (const Rect& cr : hidden_copies) {
    if (cr.x1 > p0.x && cr.x0 < p1.x && cr.y1 > p0.y && cr.y0 < p1.y) {
      dl->AddRectFilled(ImVec2(cr.x0, cr.y0), ImVec2(std::max(cr.x1, cr.x0 + 6), std::max(cr.y1, cr.y0 + 6)),
                        IM_COL32(250, 200, 40, 255));
      const float tw = ImGui::CalcTextSize("?").x;
      dl->AddText(ImVec2(cr.x0 + (cr.width() - tw) * 0.5f, cr.y0 + (cr.height() - ImGui::GetTextLineHeight()) * 0.5f),
                  IM_COL32(0, 0, 0, 255), "?");
    }
  }
  // Presenter mode: the hovered cell stands out so a room can follow the pointer.
  if (state.presenter && state.hovered && state.hovered->stage == id &&
      !state.quiz_hides(id, state.hovered->row, state.hovered->col)) {
    const Rect cr = cell_rect(rect, view, rows, cols, Cell{state.hovered->row, state.hovered->col}, opt.transposed);
    dl->AddRect(ImVec2(cr.x0 - 3, cr.y0 - 3), ImVec2(cr.x1 + 3, cr.y1 + 3), IM_COL32(255, 140, 0, 255), 2.0f, 0, 5.0f);
    const float v = values()(state.hovered->row, state.hovered->col);
    const std::string t = std::isinf(v) && v < 0 ? "−∞" : showing_gradient ? format_significant(v) : format_number(v, 3);
    const float big = ImGui::GetFontSize() * 1.6f;
    const ImVec2 ts = ImGui::GetFont()->CalcTextSizeA(big, FLT_MAX, 0.0f, t.c_str());
    const ImVec2 at(cr.x1 + 8, cr.y0 - ts.y - 4);
    dl->AddRectFilled(ImVec2(at.x - 6, at.y - 3), ImVec2(at.x + ts.x + 6, at.y + ts.y + 3), IM_COL32(255, 140, 0, 240), 6.0f);
    dl->AddText(ImGui::GetFont(), big, at, IM_COL32(0, 0, 0, 255), t.c_str());
  }
  if (!view.is_reset()) dl->AddText(ImVec2(p1.x - 40, p1.y + 1), IM_COL32(255, 210, 80, 255), "zoom");

  // Interaction: an invisible button over the cells.
  ImGui::SetCursorScreenPos(p0);
  ImGui::InvisibleButton("cells", ImVec2(std::max(rect.width(), 1.0f), std::max(rect.height(), 1.0f)),
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight);
  const ImGuiIO& io = ImGui::GetIO();
  const bool hovered = ImGui::IsItemHovered();
  if (hovered && opt.interactive) {
    if (const auto cell = hit_test(rect, view, rows, cols, io.MousePos.x, io.MousePos.y, opt.transposed))
      ev.hovered = CellRef{id, cell->row, cell->col};
    // The wheel zooms this heatmap only when the wheel gesture began over it
    // (WheelGesture): one that slides under the pointer while the page scrolls
    // lets the page keep scrolling. When it zooms, it must not also scroll the
    // panel: ImGui decides whether to scroll before anything is drawn, from
    // the item that claimed the wheel while hovered the frame before, so the
    // claim is made on every hovered frame that a notch would zoom.
    const std::uint64_t wheel_id = ImGui::GetItemID();
    const double now = ImGui::GetTime();
    if (state.wheel.would_zoom(wheel_id, now)) ImGui::SetItemUsingMouseWheel();
    if (io.MouseWheel != 0.0f && state.wheel.wheel(wheel_id, now)) {
      view.zoom_at(io.MouseWheel > 0 ? 1.25f : 0.8f, (io.MousePos.x - rect.x0) / rect.width(),
                   (io.MousePos.y - rect.y0) / rect.height(), shown_rows, shown_cols);
    }
  }
  if (hovered && !opt.interactive && ImGui::IsItemClicked(ImGuiMouseButton_Left)) ev.clicked = true;

  if (opt.interactive) {
    // Ctrl+drag pans; a plain drag edits (inputs) or pins (computed stages).
    if (ImGui::IsItemActivated() && ev.hovered) {
      if (io.KeyCtrl) {
        state.panning = id;
      } else if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
        state.selected = ev.hovered;
        // the registry's word on it (StageInfo::editability); the mask toggles on release, concat
        // is pinned through each head's context
        const bool editable = opt.editable && !signed_overlay && id.kind != StageKind::Mask &&
                              id.kind != StageKind::Concat && info.editability != Editability::ReadOnly;
        if (editable)
          state.drag = DragState{*ev.hovered, state.doc->begin_gesture(), values()(ev.hovered->row, ev.hovered->col),
                                 io.MousePos.y, false};
      }
    }
    if (ImGui::IsItemActive() && state.panning == id && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 0.0f)) {
      view.pan_by(io.MouseDelta.x, io.MouseDelta.y, rect, shown_rows, shown_cols);
    }
    if (ImGui::IsItemActive() && !signed_overlay && state.drag && state.drag->cell.stage == id) {
      DragState& d = *state.drag;
      // The inspector follows the cell being changed, not the one the mouse
      // passes over on its way up or down.
      ev.hovered = d.cell;
      const float up = d.start_y - io.MousePos.y;
      if (std::fabs(up) >= 3.0f || d.moved) {
        d.moved = true;
        float start = d.start_value;
        if (!std::isfinite(start)) start = 0.0f;  // dragging a −∞ cell starts from 0
        ev.edits.push_back({cell_edit(id, d.cell.row, d.cell.col, dragged_value(start, up, io.KeyShift)), d.gesture});
      }
    }
    if (ImGui::IsItemDeactivated()) {
      // Only a left click toggles a mask cell: the right click that opens the menu must not.
      if (id.kind == StageKind::Mask && opt.editable && !signed_overlay && ev.hovered && state.panning != id &&
          ImGui::IsMouseReleased(ImGuiMouseButton_Left))
        ev.edits.push_back({mask_toggle(ev.hovered->row, ev.hovered->col, values()(ev.hovered->row, ev.hovered->col)), 0});
      state.drag.reset();
      if (state.panning == id) state.panning.reset();
    }
    if (hovered && opt.editable && !signed_overlay && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left) && ev.hovered &&
        id.kind != StageKind::Mask && id.kind != StageKind::Concat) {
      state.drag.reset();
      state.typing.cell = *ev.hovered;
      state.typing.open_requested = true;
    }
    // The cell the menu was opened on: while the menu is open the heatmap is
    // not hovered (the menu covers it), so "Unpin this cell" asks this one.
    if (hovered && ev.hovered && ImGui::IsMouseReleased(ImGuiMouseButton_Right)) state.context_cell = ev.hovered;
    if (ImGui::BeginPopupContextItem("heatmap menu")) {
      const std::optional<CellRef> on =
          state.context_cell && state.context_cell->stage == id ? state.context_cell : std::optional<CellRef>{};
      if (ImGui::MenuItem("Reset zoom", nullptr, false, !view.is_reset())) view.reset();
      if (info.domain == ValueDomain::Probability && !signed_overlay && ImGui::BeginMenu("Colour scale")) {
        for (const ColourScale cs : kColourScales)
          if (ImGui::MenuItem(to_string(cs), nullptr, scale == cs)) state.colour_scales[id] = cs;
        ImGui::EndMenu();
      }
      if (ImGui::MenuItem("Copy matrix as CSV")) {
        ImGui::SetClipboardText(matrix_to_csv(values(), info.row_labels, info.col_labels).c_str());
        state.set_status("Copied " + info.id_text + " (" + std::to_string(rows) + "×" + std::to_string(cols) + ") to the clipboard");
      }
      if (!signed_overlay) {
        if (ImGui::MenuItem("Export CSV…")) action_export_csv_dialog(state, id);
        state.note_item("Export CSV…");
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("With the tokens as row and column headers");
        if (ImGui::MenuItem("Export PNG…")) action_export_png_dialog(state, ExportTarget{ExportKind::Stage, id});
        state.note_item("Export PNG…");
        if (ImGui::IsItemHovered())
          ImGui::SetTooltip("Drawn off screen at 1×, 2× or 4×, with title, labels and colour bar");
      }
      if (on && !signed_overlay && !is_input(id.kind) && pinned(sc, id, on->row, on->col) && ImGui::MenuItem("Unpin this cell"))
        ev.edits.push_back({SetPin{PinKey{id, on->row, on->col}, std::nullopt}, 0});
      if (!signed_overlay && is_input(id.kind) && id.kind != StageKind::Mask && ImGui::MenuItem("Randomize (seeded)")) {
        const int fan_in = id.kind == StageKind::W_o ? rows : sc.d_model();
        const auto seed = sc.seed + doc.engine().version(id) * 7919u;
        ev.edits.push_back({SetMatrix{id, seeded_matrix(seed, id.kind, rows, cols, fan_in), "randomize"}, 0});
      }
      ImGui::EndPopup();
    }
  }

  // A token or feature label renames it on a double-click (the pointer says so on hover).
  if (opt.show_labels && opt.interactive && !signed_overlay && ImGui::IsWindowHovered()) {
    const auto hit = label_at(rect, label_w, col_label_h, vis, shown_rows, shown_cols, io.MousePos.x, io.MousePos.y);
    if (const auto name = hit ? label_name(info, opt.transposed, *hit) : std::nullopt) {
      ImGui::SetMouseCursor(ImGuiMouseCursor_TextInput);
      if (ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) state.start_rename(name->kind, name->index);
    }
  }

  // Colour bar with its range.
  ImGui::SetCursorScreenPos(ImVec2(p0.x, p1.y + 3));
  if (opt.show_colour_bar && colormap != 2) {
    // (wider than the cells of a narrow stage: the group, and the box around it, take it in)
    const float bar_w = colour_bar_width(rect.width());
    float legend_h = draw_colour_bar(dl, ImVec2(p0.x, p1.y + 3), bar_w, colormap, range, scale, decades) + 2;
    if (pool > 1) {
      // Say how a pixel summarises its cells, so a zoomed-out picture is read right.
      // (A block of pool×pool cells is one colour, one to two pixels wide.)
      // Wrapped to the heatmap's (or its colour bar's) width: under a narrow
      // stage one line ran into its neighbours' at T = 1024.
      const std::string how = "colour = max |v| of each " + std::to_string(pool) + "×" + std::to_string(pool) + " block";
      const float wrap = std::max(rect.width(), bar_w);
      dl->AddText(ImGui::GetFont(), ImGui::GetFontSize(), ImVec2(p0.x, p1.y + 3 + legend_h),
                  ImGui::GetColorU32(ImGuiCol_TextDisabled), how.c_str(), nullptr, wrap);
      legend_h += ImGui::CalcTextSize(how.c_str(), nullptr, false, wrap).y;
    }
    ImGui::Dummy(ImVec2(std::max(rect.width(), bar_w + (p0.x - ImGui::GetCursorScreenPos().x)), legend_h));
  } else {
    ImGui::Dummy(ImVec2(rect.width(), 4));
  }
  ImGui::EndGroup();
  ImGui::PopID();
  ImGui::PopID();
  ImGui::PopID();
  return ev;
}

void draw_difference_heatmap(AppState& state, StageId id, const HeatmapOptions& value_opt, const StageDiff& d,
                             std::uint64_t version) {
  state.difference_heatmaps.drawn(id);
  HeatmapOptions opt = value_opt;
  opt.difference = &d;
  opt.difference_version = version;
  opt.reveal = -1;
  if (const HeatmapEvents ev = apply_heatmap_edits(state, draw_heatmap(state, id, opt)); ev.hovered) state.hovered = ev.hovered;
}

void draw_gradient_heatmap(AppState& state, StageId value_id, const HeatmapOptions& value_opt, const Matrix& g,
                           std::uint64_t version) {
  HeatmapOptions opt = value_opt;
  opt.gradient = &g;
  opt.gradient_version = version;
  opt.reveal = -1;
  opt.editable = false;
  StageId id = value_id;
  id.role = Role::Gradient;
  if (const HeatmapEvents ev = draw_heatmap(state, id, opt); ev.hovered) state.hovered = ev.hovered;
}

HeatmapEvents apply_heatmap_edits(AppState& state, HeatmapEvents events) {
  for (const auto& r : events.edits) state.apply(r.edit, r.gesture);
  return events;
}

}  // namespace attention_lab::gui
