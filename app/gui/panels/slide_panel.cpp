// A lesson step as a slide: the stages the step lists (and those of its
// highlighted and quiz cells), drawn as their equations and scaled to fill
// the centre view. The layout math is in logic/slide_layout; this file
// measures the boxes with the current font and draws them.

#include "panels/panels.h"

#include "attention_lab/softmax_breakdown.h"
#include "attention_lab/stage_info.h"
#include "attention_lab/stage_registry.h"
#include "logic/number_format.h"
#include "logic/slide_layout.h"
#include "logic/steps.h"
#include "logic/text_fit.h"
#include "widgets/heatmap_widget.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace attention_lab::gui {

namespace {

const LessonStep* current_step(const AppState& state) {
  if (!state.lesson.lesson || state.lesson.lesson->steps.empty()) return nullptr;
  const auto& steps_list = state.lesson.lesson->steps;
  return &steps_list[static_cast<std::size_t>(std::clamp(state.lesson.step, 0, static_cast<int>(steps_list.size()) - 1))];
}

// The stages a quiz's cell is computed from (one level up): on the slide at
// full size, so the room can work the answer out from printed numbers.
std::vector<StageId> quiz_inputs(const Scenario& s, const LessonStep& step) {
  std::vector<StageId> out;
  if (!step.quiz) return out;
  const CellRef& q = step.quiz->cell;
  for (const CellSource& src : cell_sources(s, q.stage, q.row, q.col))
    if (std::find(out.begin(), out.end(), src.stage) == out.end()) out.push_back(src.stage);
  return out;
}

// The step's "show", then the stages of its highlighted cells, its quiz cell
// and the quiz's inputs, so what the text talks about is always on the slide;
// only stages the scenario has now (the learner may have removed a head since).
std::vector<StageId> slide_stages(const Scenario& s, const LessonStep& step) {
  std::vector<StageId> out = step.show;
  for (const CellRef& c : step.highlight) out.push_back(c.stage);
  if (step.quiz) out.push_back(step.quiz->cell.stage);
  for (const StageId id : quiz_inputs(s, step))
    if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
  const std::vector<StageId> exists = pipeline(s);
  std::erase_if(out, [&](StageId id) { return std::find(exists.begin(), exists.end(), id) == exists.end(); });
  return out;
}

// Operators are set larger than the labels: they are read from the back of the room.
float operator_font_size() { return ImGui::GetFontSize() * 1.35f; }
ImVec2 operator_text_size(const std::string& text) {
  return ImGui::GetFont()->CalcTextSizeA(operator_font_size(), FLT_MAX, 0.0f, text.c_str());
}

// What draw_heatmap puts around the cells: row labels on the left, the title
// and column labels above, the colour bar below (heatmap_widget.cpp), plus
// what last frame measured beyond that. With Compare on, the change since
// the snapshot sits under each matrix: room for a second heatmap of the same
// size is kept whether or not the stage has changed yet, so a drag that
// changes it does not move the slide under the pointer.
std::pair<std::pair<StageId, bool>, int> chrome_key(StageId id, bool transposed, bool labels) {
  return {{id, transposed}, static_cast<int>(ImGui::GetFontSize()) * 2 + (labels ? 1 : 0)};
}

// A lesser stage (drawn smaller, for context) goes without labels: its rows
// are too small for them, and the room they took is what the step's own
// stages need.
SlideBox matrix_box(AppState& state, StageId id, bool transposed, bool colour_bar, bool with_difference, bool labels = true) {
  const StageInfo& info = state.stage_info(id);
  const int rows = transposed ? info.cols : info.rows, cols = transposed ? info.rows : info.cols;
  const float line = ImGui::GetTextLineHeight();
  const float spacing = ImGui::GetStyle().ItemSpacing.y;
  const float label_w = labels ? row_label_width(info, state.doc->scenario(), transposed, true) : 0.0f;
  const std::string title = labels ? info.symbol + (transposed ? "ᵀ" : "") + "  " + std::to_string(rows) + "×" + std::to_string(cols)
                                   : info.symbol + (transposed ? "ᵀ" : "");
  SlideBox b;
  b.fixed_w = label_w;
  b.cells_w = static_cast<float>(cols);
  // The colour bar is at least its minimum width, however small the cells.
  b.min_w = label_w + std::max(colour_bar ? colour_bar_width(0.0f) : 0.0f, ImGui::CalcTextSize(title.c_str()).x);
  b.above = labels ? line + spacing + line : line + spacing;
  b.turned_above = b.above;
  if (labels) {
    // Column words too wide for small cells go upwards (heatmap_widget.cpp).
    const ColumnWords words = column_words(transposed ? info.row_labels : info.col_labels);
    b.turn_below = words.turn_below;
    b.turned_above = line + spacing + words.band;
  }
  b.cells_h = static_cast<float>(rows);
  b.below = colour_bar ? 3.0f + 8.0f + line + 2.0f : 3.0f + 4.0f;
  if (with_difference) {
    // The Δ heatmap's title, labels and colour bar, whose two labels may
    // stack under a narrow matrix (a line more, kept whether they do or not,
    // so the slide never moves when the change appears).
    b.below += spacing + b.above + b.below + (colour_bar ? line : 0.0f);
    b.cells_h *= 2.0f;
    // Its title, "Δ W_q −1.30 [2,1]", with room for a change of two more digits.
    const std::string delta_title = "Δ " + info.symbol + " −000.00 [" + std::to_string(rows - 1) + "," +
                                    std::to_string(cols - 1) + "]";
    b.min_w = std::max(b.min_w, label_w + ImGui::CalcTextSize(delta_title.c_str()).x);
  }
  if (const auto it = state.slide.chrome_correction.find(chrome_key(id, transposed, labels));
      it != state.slide.chrome_correction.end()) {
    b.fixed_w += it->second.width, b.min_w += it->second.width;
    b.above += it->second.above;
    b.turned_above += it->second.above;
    b.below += it->second.below;
  }
  return b;
}

// Under a slide's matrix: its change since the snapshot, as a heatmap at the
// same cell size, or a line saying there is none (or why there is no cell by
// cell difference).
void draw_difference(AppState& state, StageId id, const HeatmapOptions& value_opt) {
  std::uint64_t version = 0;
  const StageDiff* d = state.difference(id, version, true);
  const std::string symbol = describe_stage(state.doc->scenario(), id).symbol;
  if (!d) {
    ImGui::TextDisabled("Δ %s: %s", symbol.c_str(), state.compare.diffs[id].diff.note.c_str());
    return;
  }
  if (!d->changed) {
    ImGui::TextDisabled("Δ %s: no change", symbol.c_str());
    return;
  }
  draw_difference_heatmap(state, id, value_opt, *d, version);
}

SlideBox operator_box(const std::string& text) {
  const ImVec2 size = operator_text_size(text);
  SlideBox b;
  b.fixed_w = size.x + 8.0f;
  b.above = b.below = size.y * 0.5f;
  b.operator_box = true;
  return b;
}

// Softmax of one row, next to the weights: per key, the masked score, its
// weight as a bar, and the weight.
struct SoftmaxRowBox {
  float token_w = 0, score_w = 0, weight_w = 0, header_h = 0;
};

SoftmaxRowBox measure_softmax_row(const Scenario& s, const SoftmaxBreakdown& b) {
  SoftmaxRowBox m;
  for (int i = 0; i < s.T(); ++i) m.token_w = std::max(m.token_w, ImGui::CalcTextSize(s.token_label(i).c_str()).x);
  m.token_w = std::min(m.token_w, 120.0f * gfx::em());
  m.score_w = ImGui::CalcTextSize("Ŝ −00.000").x;
  m.weight_w = ImGui::CalcTextSize("0.000").x;
  for (Eigen::Index i = 0; i < b.masked.size(); ++i)
    m.score_w = std::max(m.score_w, ImGui::CalcTextSize(format_number(b.masked[i], 3).c_str()).x);
  m.header_h = 2 * ImGui::GetTextLineHeightWithSpacing();
  return m;
}

SlideBox softmax_box(const SoftmaxRowBox& m, int keys) {
  SlideBox b;
  b.fixed_w = m.token_w + m.score_w + m.weight_w + 40.0f;
  b.cells_w = 3.0f;  // the bar
  b.min_w = ImGui::CalcTextSize("softmax of row 00 ('mmmmm')").x;
  b.above = m.header_h;
  b.cells_h = static_cast<float>(keys);
  b.below = 6.0f;
  return b;
}

float text_width(std::string_view text) { return ImGui::CalcTextSize(text.data(), text.data() + text.size()).x; }

// A token at text size `size`, cut to `width` ends in "…"; the whole word shows on hover.
void token_text(ImDrawList* dl, ImVec2 right_edge_top, float width, float size, const std::string& full, ImU32 colour) {
  const TextMeasure measure = [&](std::string_view t) {
    return ImGui::GetFont()->CalcTextSizeA(size, FLT_MAX, 0.0f, t.data(), t.data() + t.size()).x;
  };
  const std::string t = ellipsize(full, width, measure);
  const float w = measure(t);
  const ImVec2 at(right_edge_top.x - w, right_edge_top.y);
  dl->AddText(ImGui::GetFont(), size, at, colour, t.c_str());
  if (t != full && ImGui::IsWindowHovered() && ImGui::IsMouseHoveringRect(at, ImVec2(at.x + w, at.y + size)))
    ImGui::SetTooltip("%s", full.c_str());
}

void draw_softmax_row(AppState& state, const LessonRow& which, const SoftmaxBreakdown& b, const SoftmaxRowBox& m,
                      ImVec2 at, float cell) {
  const Scenario& s = state.doc->scenario();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), faint = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const auto& hl = gfx::accent(gfx::Accent::Highlight);
  const ImU32 bar = ImGui::ColorConvertFloat4ToU32(ImVec4(hl.r, hl.g, hl.b, 0.85f));
  const std::string title = "softmax of row " + s.shown_index(which.row) + " ('" +
                            ellipsize(s.token_label(which.row), m.token_w, text_width) + "')";
  dl->AddText(at, text, title.c_str());
  const float line = ImGui::GetTextLineHeightWithSpacing();
  const float x_token = at.x, x_score = x_token + m.token_w + 10, x_bar = x_score + m.score_w + 14;
  const float x_weight = x_bar + 3 * cell + 6;
  dl->AddText(ImVec2(x_score, at.y + line), faint, rename_symbols("Ŝ", s.symbols).c_str());
  dl->AddText(ImVec2(x_bar, at.y + line), faint, "weight");
  const float top = at.y + m.header_h;
  // The numbers and tokens of a row are set at most as tall as the row (a
  // projector's 22 px rows under a 28 px font), never under 10 px.
  const float size = std::min(ImGui::GetFontSize(), cell * 0.8f);
  const bool numbers = size >= 10.0f;
  const auto text_at = [&](ImVec2 where, ImU32 colour, const std::string& t) { dl->AddText(ImGui::GetFont(), size, where, colour, t.c_str()); };
  const auto width_of = [&](const std::string& t) { return ImGui::GetFont()->CalcTextSizeA(size, FLT_MAX, 0.0f, t.c_str()).x; };
  for (int k = 0; k < static_cast<int>(b.weights.size()); ++k) {
    const float y = top + cell * static_cast<float>(k);
    const float ty = y + (cell - size) * 0.5f;
    const float w = b.weights[k];
    // The quiz's answer (or a copy of it) is a "?" here as in the heatmaps.
    const bool hide_score = state.quiz_hides(StageId::of_head(StageKind::Masked, which.head), which.row, k);
    const bool hide_weight = state.quiz_hides(StageId::of_head(StageKind::Weights, which.head), which.row, k);
    if (!hide_weight) dl->AddRectFilled(ImVec2(x_bar, y + 1), ImVec2(x_bar + std::max(0.0f, 3 * cell * w), y + cell - 1), bar);
    dl->AddRect(ImVec2(x_bar, y + 1), ImVec2(x_bar + 3 * cell, y + cell - 1), faint);
    if (!numbers) continue;
    token_text(dl, ImVec2(x_token + m.token_w, ty), m.token_w, size, s.token_label(k), faint);
    const float v = b.masked[k];
    const std::string score = hide_score ? "?" : std::isinf(v) && v < 0 ? "−∞" : format_number(v, 3);
    text_at(ImVec2(x_score + m.score_w - width_of(score), ty), text, score);
    text_at(ImVec2(x_weight, ty), text, hide_weight ? "?" : format_number(w, 3));
  }
}

// The step's highlighted cells get an outline, so the eye finds them at once.
void outline_highlights(AppState& state, const LessonStep& step) {
  const auto& hl = gfx::accent(gfx::Accent::Highlight);
  const ImU32 colour = ImGui::ColorConvertFloat4ToU32(ImVec4(hl.r, hl.g, hl.b, 1.0f));
  for (const CellRef& c : step.highlight)
    for (const DrawnHeatmap& d : state.drawn) {
      if (d.stage != c.stage || c.row >= d.rows || c.col >= d.cols) continue;
      const Rect r = cell_rect(d.rect, state.views[d.stage], d.rows, d.cols, Cell{c.row, c.col}, d.transposed);
      ImGui::GetWindowDrawList()->AddRect(ImVec2(r.x0 - 2, r.y0 - 2), ImVec2(r.x1 + 2, r.y1 + 2), colour, 3.0f, 0, 3.0f);
    }
}

}  // namespace

bool showing_slide(const AppState& state) {
  const LessonStep* step = current_step(state);
  return step && !step->show.empty() && !state.lesson.whole_pipeline && state.centre == CentreView::Pipeline;
}

namespace {

// The engine's warnings, as lines under a slide (the first three, then how many more).
std::vector<std::string> slide_warnings(AppState& state) {
  const auto& warnings = state.doc->engine().warnings();
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < warnings.size() && i < 3; ++i) lines.push_back("Warning: " + warnings[i].message);
  if (warnings.size() > 3) lines.push_back("and " + std::to_string(warnings.size() - 3) + " more warnings (in the inspector)");
  return lines;
}

// Cells smaller than this cannot be read from the back of a room: 22 px on a
// 1280×720 projector at the presenter's font. Ctrl+plus raises it with the
// text, so a larger font never means smaller matrices.
float least_readable_cell() {
  constexpr float kPresenterFont = gfx::kBaseFontSize * 1.75f;  // Settings::presenter_font_scale's default
  return kReadableCellPx * std::max(1.0f, ImGui::GetFontSize() / kPresenterFont);
}

// What a slide may do to be readable, tried in this order until its stages'
// cells are at least least_readable_cell(): draw the stages the step is not
// about (operands its equations need) at half size, fold the step's text to
// one line, hide the inspector (presenter mode, steps without a quiz), drop
// the colour bars, and at last show the equations in pages.
struct Room {
  const char* name;
  float lesser_scale;
  bool fold, no_inspector, colour_bars, pages;
};
constexpr Room kRooms[] = {
    {"as written", 1.0f, false, false, true, false},
    {"lesser stages smaller", 0.5f, false, false, true, false},
    {"text folded", 0.5f, true, false, true, false},
    {"inspector hidden", 0.5f, true, true, true, false},
    {"no colour bars", 0.5f, true, true, false, false},
    {"pages", 0.5f, true, true, false, true},
};

// The stages a step is about: its "show", its highlighted cells, its quiz
// cell and the quiz's inputs.
std::set<StageId> subjects_of(const Scenario& s, const LessonStep& step) {
  std::set<StageId> out(step.show.begin(), step.show.end());
  for (const CellRef& c : step.highlight) out.insert(c.stage);
  if (step.quiz) out.insert(step.quiz->cell.stage);
  for (const StageId id : quiz_inputs(s, step)) out.insert(id);
  return out;
}

// Gaps grow with the text; a small slide's cells stop at 2.5 lines of it
// (they grow with Ctrl+plus, not to fill a projector).
SlideSpacing slide_spacing() {
  SlideSpacing sp;
  const float e = gfx::em();
  sp.box_gap = 4.0f * e;
  sp.group_gap = 24.0f * e;
  sp.row_gap = 8.0f * e;
  sp.max_cell = 2.5f * ImGui::GetFontSize();
  return sp;
}

// A slide's boxes at the current font: one group per equation, the softmax
// row right after the equation with its weights; and what each box draws.
struct Built {
  std::vector<SlideGroup> groups;
  std::vector<std::vector<const Term*>> pieces;  // nullptr: the softmax row
};

// The room a slide settled on, with its lines, boxes and pages.
struct Choice {
  const Room* room = &kRooms[0];
  // The lines cut for pages (`built` points into them; a moved vector keeps its elements).
  std::vector<EquationLine> paged_lines;
  Built built;
  std::vector<std::vector<int>> pages;
  float cell = 0.0f;  // the smallest page's cell size
};

// Measures one step's slide in each room (kRooms) until its stages are
// readable: the boxes, the area a room gives, the lines cut into pages.
class SlidePlanner {
 public:
  // `row`: the step's softmax row (may be null); `spacing`: read at every
  // measurement (the zoom may change it between two).
  SlidePlanner(AppState& state, const LessonStep& step, bool lesson, const SoftmaxBreakdown* row, SlideArea area,
               const SlideSpacing& spacing)
      : state_(state), s_(state.doc->scenario()), slide_(state.slide), subjects_(subjects_of(s_, step)), lesson_(lesson),
        row_(row), area_(area), spacing_(spacing) {
    comparing_ = state.compare.snapshot && state.compare.show;
    if (row_) {
      row_weights_ = StageId::of_head(StageKind::Weights, step.softmax_row->head);
      row_metrics_ = measure_softmax_row(s_, *row_);
    }
    may_fold_ = lesson && !state.lesson.text_kept_open && slide_.fold_gain > 0.0f;
    may_hide_inspector_ = lesson && state.presenter && !state.quiz.round && slide_.inspector_gain > 0.0f;
  }

  bool comparing() const { return comparing_; }
  bool may_fold() const { return may_fold_; }
  bool may_hide_inspector() const { return may_hide_inspector_; }
  const SoftmaxRowBox& row_metrics() const { return row_metrics_; }

  // (`with_row`: the softmax row goes right after the line with its weights,
  // or at the end when no line has them; a line measured alone, to be cut into
  // pages, leaves it out: the row is a group of its own, paged like a line.)
  Built build(const std::vector<EquationLine>& lines, const Room& room, bool with_row = true) const {
    Built b;
    const auto add_row = [&] {
      b.groups.push_back(SlideGroup{{softmax_box(row_metrics_, static_cast<int>(row_->weights.size()))}});
      b.pieces.push_back({nullptr});
    };
    bool row_placed = false;
    for (const EquationLine& line : lines) {
      SlideGroup g;
      std::vector<const Term*> p;
      bool has_row_weights = false;
      for (const Term& t : line.terms) {
        if (t.kind == Term::Kind::Matrix) {
          const bool lesser = (!subjects_.count(t.stage) || t.demoted) && room.lesser_scale < 1.0f;
          g.boxes.push_back(matrix_box(state_, t.stage, t.transposed, room.colour_bars, comparing_, !lesser));
          if (lesser) g.boxes.back().cell_scale = room.lesser_scale;
          has_row_weights = has_row_weights || t.stage == row_weights_;
        } else {
          g.boxes.push_back(operator_box(t.text));
        }
        p.push_back(&t);
      }
      b.groups.push_back(std::move(g));
      b.pieces.push_back(std::move(p));
      if (row_ && with_row && has_row_weights && !row_placed) add_row(), row_placed = true;
    }
    if (row_ && with_row && !row_placed) add_row();
    return b;
  }

  // The area a room gives: this frame's, less what the text and the
  // inspector already gave, plus what that room takes.
  SlideArea area_for(const Room& room) const {
    SlideArea a = area_;
    if (slide_.fold_applied) a.y1 -= slide_.fold_gain;
    if (slide_.inspector_hidden) a.x1 -= slide_.inspector_gain;
    if (room.fold && may_fold_) a.y1 += slide_.fold_gain;
    if (room.no_inspector && may_hide_inspector_) a.x1 += slide_.inspector_gain;
    return a;
  }

  // The ladder of rooms from `first`: the first whose layout is readable
  // (cells of at least `least_cell`), or pages, or (pages that cannot be
  // read either) every room without pages. `ratchet`: the slide's own
  // choice, remembered for the step; false: a measurement only.
  Choice ladder(int first, float least_cell, const SlideSpacing& sp, bool ratchet) const {
    Choice c;
    for (int r = first; r < static_cast<int>(std::size(kRooms)); ++r) {
      const Room& room = kRooms[r];
      if (!lesson_ && (room.fold || room.no_inspector || room.pages)) continue;
      if (lesson_ && ratchet) slide_.least_room = r;
      c.room = &room;
      if (room.pages) {
        in_pages(r, least_cell, sp, c);
        continue;
      }
      c.built = build(slide_.lines, room);
      c.pages = {all_groups(c.built)};
      const SlideLayout l = layout_slide(c.built.groups, area_for(room), sp);
      c.cell = l.cell;
      if (l.fits && l.cell >= least_cell) break;
    }
    return c;
  }

 private:
  static std::vector<int> all_groups(const Built& b) {
    std::vector<int> all;
    for (int g = 0; g < static_cast<int>(b.groups.size()); ++g) all.push_back(g);
    return all;
  }

  bool readable(const EquationLine& line, const Room& room, const SlideArea& a, float least_cell) const {
    const SlideLayout l = layout_slide(build({line}, room, false).groups, a, spacing_);
    return l.fits && l.cell >= least_cell;
  }

  // A statement too big even alone, shown in turns: each page draws some of
  // its stages at full size and repeats the others smaller ("concat · W_o"
  // big, then "concat · W_o = output" with output big).
  void in_turns(const EquationLine& line, const Room& room, const SlideArea& a, float least_cell,
                std::vector<EquationLine>& out) const {
    std::vector<std::size_t> big;  // the subjects of `line`, by term
    for (std::size_t i = 0; i < line.terms.size(); ++i)
      if (line.terms[i].kind == Term::Kind::Matrix && subjects_.count(line.terms[i].stage)) big.push_back(i);
    std::size_t next = 0;
    while (next < big.size()) {
      // Full size from big[next] on, as many as stay readable (at least one).
      std::size_t until = next + 1;
      const auto variant = [&](std::size_t end) {
        EquationLine v = line;
        for (std::size_t k = 0; k < big.size(); ++k) v.terms[big[k]].demoted = k < next || k >= end;
        // A page ends with its last full-size stage: what follows is for the next page.
        if (end < big.size()) v.terms.resize(std::min(v.terms.size(), big[end - 1] + 1));
        return v;
      };
      while (until < big.size() && readable(variant(until + 1), room, a, least_cell)) ++until;
      out.push_back(variant(until));
      next = until;
    }
  }

  // A line too long to be readable alone is cut into statements, joined
  // again as far as they stay readable (so a page repeats as little as it
  // can); a statement still too big is shown in turns.
  std::vector<EquationLine> page_lines(const Room& room, const SlideArea& a, float least_cell) const {
    std::vector<EquationLine> out;
    for (const EquationLine& line : slide_.lines) {
      if (readable(line, room, a, least_cell)) {
        out.push_back(line);
        continue;
      }
      std::vector<EquationLine> merged;
      for (EquationLine& part : split_statements(line)) {
        if (!merged.empty()) {
          EquationLine joined = merged.back();
          joined.terms.insert(joined.terms.end(), part.terms.begin() + 1, part.terms.end());
          if (readable(joined, room, a, least_cell)) {
            merged.back() = std::move(joined);
            continue;
          }
        }
        merged.push_back(std::move(part));
      }
      for (const EquationLine& piece : merged) {
        if (readable(piece, room, a, least_cell)) out.push_back(piece);
        else in_turns(piece, room, a, least_cell, out);
      }
    }
    return out;
  }

  // The last room, kRooms[r]: the lines in pages.
  void in_pages(int r, float least_cell, const SlideSpacing& sp, Choice& c) const {
    const Room& room = kRooms[r];
    // Once the room is given, the pages are cut for the area as it is
    // (the gains are estimates; the page must fit what shows).
    const bool given = (room.fold && may_fold_) == slide_.fold_applied &&
                       (room.no_inspector && may_hide_inspector_) == slide_.inspector_hidden;
    const SlideArea page_area = given ? area_ : area_for(room);
    c.paged_lines = page_lines(room, page_area, least_cell);
    c.built = build(c.paged_lines, room);
    c.pages = page_groups(c.built.groups, page_area, least_cell, sp);
    c.cell = sp.max_cell;
    for (const std::vector<int>& page : c.pages) {
      std::vector<SlideGroup> groups;
      for (const int g : page) groups.push_back(c.built.groups[static_cast<std::size_t>(g)]);
      const SlideLayout l = layout_slide(groups, page_area, sp);
      c.cell = std::min(c.cell, l.fits ? l.cell : 0.0f);
    }
    // Pages below the cells asked for. With the text zoomed large they may
    // still print their numbers (22 px at the presenter's size): those
    // pages. Too small even for that (the whole text kept open on a small
    // screen): one page as large as the room allows beats many unreadable ones.
    if (c.cell >= least_cell) return;
    const Room& all_room = kRooms[r - 1];  // every room taken, no pages
    Built one = build(slide_.lines, all_room);
    const float one_cell = layout_slide(one.groups, area_for(all_room), sp).cell;
    if (c.cell < kReadableCellPx || one_cell >= c.cell) {
      c.room = &all_room;
      c.built = std::move(one);
      c.pages = {all_groups(c.built)};
      c.cell = one_cell;
    }
  }

  AppState& state_;
  const Scenario& s_;
  SlideState& slide_;
  std::set<StageId> subjects_;
  bool lesson_ = false;
  const SoftmaxBreakdown* row_ = nullptr;
  StageId row_weights_{};
  SoftmaxRowBox row_metrics_;
  bool comparing_ = false, may_fold_ = false, may_hide_inspector_ = false;
  SlideArea area_;
  const SlideSpacing& spacing_;
};

// A quiz step opens on its question: the page with the quiz's cell comes
// first (the others follow in order), so the "?" is on screen as it asks.
void put_quiz_page_first(const Scenario& s, const LessonStep& step, const Built& built, std::vector<std::vector<int>>& pages) {
  if (!step.quiz || pages.size() < 2) return;
  const StageId asked = whole_matrix(s, step.quiz->cell.stage);
  const auto has_quiz = [&](const std::vector<int>& page) {
    return std::any_of(page.begin(), page.end(), [&](int g) {
      const auto& terms = built.pieces[static_cast<std::size_t>(g)];
      return std::any_of(terms.begin(), terms.end(), [&](const Term* t) {
        return t && t->kind == Term::Kind::Matrix && !t->demoted && whole_matrix(s, t->stage) == asked;
      });
    });
  };
  if (const auto at = std::find_if(pages.begin(), pages.end(), has_quiz); at != pages.end()) std::rotate(pages.begin(), at, at + 1);
}

// One matrix of the page at its place, and what it took beyond its box (for
// next frame's layout: above its cells, so the cells of an equation stay on
// one line, and below).
void draw_slide_matrix(AppState& state, const Term& term, const PlacedBox& p, const SlideBox& box, const SlideLayout& layout,
                       bool colour_bars, bool comparing) {
  ImGui::SetCursorScreenPos(ImVec2(p.x, p.y));
  HeatmapOptions opt;
  opt.cell_px = p.cell;
  opt.max_px = 1e9f;  // the layout already chose the size
  opt.transposed = term.transposed;
  opt.show_colour_bar = colour_bars;
  opt.show_labels = p.cell >= layout.cell;  // a lesser stage, drawn smaller: no labels (matrix_box)
  opt.whole_labels = true;  // (matrix_box leaves the row labels' room; the turned band is measured: chrome_correction)
  ImGui::BeginGroup();
  const std::size_t drawn_before = state.drawn.size();
  const HeatmapEvents ev = apply_heatmap_edits(state, draw_heatmap(state, term.stage, opt));
  if (ev.hovered) state.hovered = ev.hovered;
  const float above = box.above_at(layout.cell);
  const float cells_top = state.drawn.size() > drawn_before ? state.drawn[drawn_before].rect.y0 : p.y + above;
  if (comparing) draw_difference(state, term.stage, opt);
  ImGui::EndGroup();
  const ImVec2 drawn = ImGui::GetItemRectSize();
  auto& correction = state.slide.chrome_correction[chrome_key(term.stage, term.transposed, opt.show_labels)];
  const float extra_w = std::max(0.0f, drawn.x - p.w);
  const float extra_above = std::max(0.0f, cells_top - p.y - above);
  const float extra_below = std::max(0.0f, drawn.y - p.h - extra_above);
  if (extra_w > 0.5f || extra_above > 0.5f || extra_below > 0.5f)
    correction = {std::min(correction.width + extra_w, 200.0f), std::min(correction.above + extra_above, 200.0f),
                  std::min(correction.below + extra_below, 200.0f)};
}

// Under the equations, what the step's text may refer to that lives
// elsewhere in the window (presenter mode hides the controls, a slide that
// needs room the inspector): the engine's warnings ("row 0 may look at no
// key"), and a temperature slider on a step that sets the temperature.
struct SlideFooter {
  std::vector<std::string> lines;
  bool temperature_slider = false;
  float height = 0.0f;
};

SlideFooter slide_footer(AppState& state, const LessonStep& step, bool lesson, float width) {
  SlideFooter f;
  f.lines = slide_warnings(state);
  f.temperature_slider = lesson && std::any_of(step.apply.begin(), step.apply.end(), [](const Edit& e) {
    return std::holds_alternative<SetTemperature>(e);
  });
  for (const std::string& line : f.lines)
    f.height += ImGui::CalcTextSize(line.c_str(), nullptr, false, width).y + ImGui::GetStyle().ItemSpacing.y;
  if (f.temperature_slider) f.height += ImGui::GetFrameHeightWithSpacing();
  return f;
}

void draw_slide_footer(AppState& state, const SlideFooter& footer, const SlideArea& area) {
  SlideState& slide = state.slide;
  ImGui::SetCursorScreenPos(ImVec2(area.x0, area.y1 + ImGui::GetStyle().ItemSpacing.y));
  ImGui::PushTextWrapPos(area.x1 - ImGui::GetWindowPos().x);
  for (const std::string& line : footer.lines) text_colored(gfx::Accent::Warning, "%s", line.c_str());
  ImGui::PopTextWrapPos();
  if (footer.temperature_slider) {
    float t = state.doc->scenario().temperature;
    ImGui::SetNextItemWidth(std::min(area.width() * 0.4f, 360.0f * gfx::em()));
    const bool changed = ImGui::SliderFloat("temperature τ", &t, 0.05f, 5.0f, "%.2f", ImGuiSliderFlags_Logarithmic);
    state.note_item("slide temperature");
    if (ImGui::IsItemActivated()) state.temperature_gesture = state.doc->begin_gesture();
    if (changed) state.apply(SetTemperature{t}, state.temperature_gesture);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("The step's temperature τ: below 1 sharper, above 1 flatter (Ctrl+click to type)");
  }
  // The footer belongs to the slide's content (an export keeps it).
  slide.content.x0 = std::min(slide.content.x0, area.x0);
  slide.content.x1 = std::max(slide.content.x1, ImGui::GetItemRectMax().x);
  slide.content.y1 = std::max(slide.content.y1, ImGui::GetItemRectMax().y);
}

// `source` and `index` name the step (a lesson file and its step, or the
// step-through and its step), so its equations are cut once per document
// revision, not every frame. Only a lesson's slide may page and take room
// from the text and the inspector (the step-through has no pages to turn).
void draw_slide(AppState& state, const LessonStep* step, const std::string& source, int index, bool lesson) {
  const Scenario& s = state.doc->scenario();
  SlideState& slide = state.slide;
  if (slide.revision != state.doc->revision() || slide.step != index || slide.lesson_path != source) {
    // What the labels of another step's matrices took says nothing of this step's.
    if (slide.step != index || slide.lesson_path != source) slide.chrome_correction.clear();
    slide.lines = slide_equations(s, slide_stages(s, *step));
    slide.revision = state.doc->revision();
    slide.step = index;
    slide.lesson_path = source;
  }
  std::optional<SoftmaxBreakdown> row;
  if (step->softmax_row) {
    row = softmax_breakdown(*state.doc, step->softmax_row->head, step->softmax_row->row);
    if (!row->error.empty()) row.reset();
  }

  // The visible area of this view, less a margin that keeps the slide off
  // its edges, and less the footer under the equations.
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float margin = 3.0f * gfx::em();
  SlideArea area{origin.x + margin, origin.y + margin, origin.x + avail.x - margin, origin.y + avail.y - margin};
  const SlideFooter footer = slide_footer(state, *step, lesson, area.width());
  area.y1 -= footer.height;
  SlideSpacing spacing = slide_spacing();
  const SlidePlanner planner(state, *step, lesson, row ? &*row : nullptr, area, spacing);

  if (const std::pair<float, float> now{ImGui::GetMainViewport()->Size.x * 10000.0f + ImGui::GetMainViewport()->Size.y,
                                        ImGui::GetFontSize()};
      now != slide.room_for || !lesson)
    slide.least_room = 0, slide.room_for = now;
  // Ctrl+plus / Ctrl+minus zoom the slide, text and matrices together: its
  // cells are what they are at the default text size, times the zoom (larger
  // ones take more room, or pages; smaller ones are capped there).
  const float default_font = gfx::kBaseFontSize * (state.presenter ? Settings{}.presenter_font_scale : Settings{}.font_scale);
  const float zoom = ImGui::GetFontSize() / default_font;
  float least = least_readable_cell();
  if (std::fabs(zoom - 1.0f) > 0.01f) {
    ImGui::SetWindowFontScale(1.0f / zoom);
    const Choice at_default = planner.ladder(0, least_readable_cell(), slide_spacing(), false);
    ImGui::SetWindowFontScale(1.0f);
    const float target = std::floor(at_default.cell * zoom);
    if (zoom > 1.0f) least = std::max(least, target);
    else least = spacing.max_cell = std::max(4.0f, target);
  }
  const Choice choice = planner.ladder(slide.least_room, least, spacing, true);
  const Room* chosen = choice.room;
  const Built& built = choice.built;
  std::vector<std::vector<int>> pages = choice.pages;
  if (lesson) put_quiz_page_first(s, *step, built, pages);
  slide.want_fold = chosen->fold && planner.may_fold();
  slide.want_no_inspector = chosen->no_inspector && planner.may_hide_inspector();
  slide.room = chosen->name;
  slide.pages = static_cast<int>(pages.size());
  // Back from the next step: this step's last page, also while its page count
  // settles (the labels' room is measured over the first frames), until a page turns.
  if (slide.land_on_last_page) slide.page = slide.pages - 1;
  slide.page = std::clamp(slide.page, 0, slide.pages - 1);
  // This frame's page, laid out in this frame's area (the room asked for comes next frame).
  Built shown;
  for (const int g : pages[static_cast<std::size_t>(slide.page)]) {
    shown.groups.push_back(built.groups[static_cast<std::size_t>(g)]);
    shown.pieces.push_back(built.pieces[static_cast<std::size_t>(g)]);
  }
  const SlideLayout layout = layout_slide(shown.groups, area, spacing);
  slide.overflows = !layout.fits;
  state.slide_cell = layout.cell;

  for (const PlacedBox& p : layout.boxes) {
    const SlideBox& box = shown.groups[static_cast<std::size_t>(p.group)].boxes[static_cast<std::size_t>(p.box)];
    const Term* term = shown.pieces[static_cast<std::size_t>(p.group)][static_cast<std::size_t>(p.box)];
    if (!term) {
      draw_softmax_row(state, *step->softmax_row, *row, planner.row_metrics(), ImVec2(p.x, p.y), layout.cell);
    } else if (term->kind == Term::Kind::Operator) {
      const ImVec2 size = operator_text_size(term->text);
      ImGui::GetWindowDrawList()->AddText(ImGui::GetFont(), operator_font_size(),
                                          ImVec2(p.x + (p.w - size.x) * 0.5f, p.y + (p.h - size.y) * 0.5f),
                                          ImGui::GetColorU32(ImGuiCol_Text), term->text.c_str());
    } else {
      draw_slide_matrix(state, *term, p, box, layout, chosen->colour_bars, planner.comparing());
    }
  }
  if (!state.exporting_plain) outline_highlights(state, *step);
  slide.content = Rect{layout.bounds.x0, layout.bounds.y0, layout.bounds.x1, layout.bounds.y1};
  if (footer.height > 0.0f) draw_slide_footer(state, footer, area);
  // The view's content is exactly its area, so it never shows scroll bars for a slide that fits.
  ImGui::SetCursorScreenPos(origin);
  ImGui::Dummy(ImVec2(std::max(1.0f, avail.x - 1.0f), std::max(1.0f, layout.fits ? avail.y - 1.0f : layout.bounds.y1 - origin.y)));
}

}  // namespace

void draw_slide_panel(AppState& state) {
  if (const LessonStep* step = current_step(state)) draw_slide(state, step, state.lesson.path, state.lesson.step, true);
}

bool draw_step_through_slide(AppState& state) {
  if (state.step < 0 || state.step >= static_cast<int>(steps().size())) return false;
  // The stages the step reveals, of every head, as a lesson step that shows them.
  LessonStep step;
  const auto& kinds = steps()[static_cast<std::size_t>(state.step)].kinds;
  for (const StageId id : pipeline(state.doc->scenario()))
    if (std::find(kinds.begin(), kinds.end(), id.kind) != kinds.end()) step.show.push_back(id);
  if (step.show.empty()) return false;
  draw_slide(state, &step, "(step-through)", state.step, false);
  return true;
}

}  // namespace attention_lab::gui
