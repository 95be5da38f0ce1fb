#include "logic/slide_layout.h"

#include "attention_lab/stage_registry.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

namespace attention_lab::gui {

// [SECTION] Which equations show the wanted stages

namespace {

bool is_head_view(StageKind k) { return spec(k).view == ViewKind::HeadSlice || spec(k).view == ViewKind::KVSlice; }


// A matrix is the result of an expression when the operator before it ends
// one ("… =", "softmax →"); the others are operands.
bool is_result(const EquationLine& line, std::size_t i) {
  if (i == 0 || line.terms[i].kind != Term::Kind::Matrix) return false;
  const Term& before = line.terms[i - 1];
  if (before.kind != Term::Kind::Operator) return false;
  std::string t = before.text;
  while (!t.empty() && t.back() == ' ') t.pop_back();
  return (!t.empty() && t.back() == '=') || t.find("→") != std::string::npos;
}

// The part of `line` that shows the stages of `wanted` it contains (nullopt: none).
std::optional<EquationLine> cut(const EquationLine& line, const std::set<StageId>& wanted, bool one_head) {
  std::vector<std::size_t> hits;
  for (std::size_t i = 0; i < line.terms.size(); ++i)
    if (line.terms[i].kind == Term::Kind::Matrix && wanted.count(line.terms[i].stage)) hits.push_back(i);
  if (hits.empty()) return std::nullopt;
  // A head's Q block met only as the operand of its scores is shown as the
  // split of Q instead (slide_equations), not as "Q₀ · K₀ᵀ = S₀".
  // (With one head the block is the whole matrix: no split to show.)
  if (!one_head && std::all_of(hits.begin(), hits.end(), [&](std::size_t i) { return is_head_view(line.terms[i].stage.kind); }))
    return std::nullopt;
  std::size_t a = hits.front(), b = hits.back();
  if (hits.size() > 1) {
    // An operand brings its whole expression: "W_q" with "Q" is "X · W_q = Q".
    if (!is_result(line, a))
      while (a > 0 && !is_result(line, a)) --a;
    if (!is_result(line, b))
      for (std::size_t j = b + 1; j < line.terms.size(); ++j)
        if (is_result(line, j)) {
          b = j;
          break;
        }
  }
  // Walk the expressions in [a, b]: one that neither gives nor uses a wanted
  // stage is left out, when leaving it out removes a matrix, as "→ … →".
  EquationLine out;
  std::size_t kept_until = a;  // terms [a, kept_until] are copied already
  out.terms.push_back(line.terms[a]);
  std::size_t segment_start = a;  // the previous result (the chain's operand)
  std::optional<std::size_t> skip_from;  // first result of a run of unneeded expressions
  for (std::size_t r = a + 1; r <= b; ++r) {
    if (!is_result(line, r)) continue;
    bool needed = false;
    for (std::size_t i = segment_start + 1; i <= r; ++i)
      if (line.terms[i].kind == Term::Kind::Matrix && wanted.count(line.terms[i].stage)) needed = true;
    if (!needed) {
      if (!skip_from) skip_from = segment_start;
    } else {
      if (skip_from) {
        // Expressions (skip_from, segment_start] are unneeded; segment_start is
        // this expression's own operand and stays.
        bool drops_a_matrix = false;
        for (std::size_t i = *skip_from + 1; i < segment_start; ++i)
          if (line.terms[i].kind == Term::Kind::Matrix) drops_a_matrix = true;
        if (drops_a_matrix) {
          out.terms.push_back(Term::op("→ … →"));
          kept_until = segment_start - 1;
        }
        skip_from.reset();
      }
      for (std::size_t i = kept_until + 1; i <= r; ++i) out.terms.push_back(line.terms[i]);
      kept_until = r;
    }
    segment_start = r;
  }
  for (std::size_t i = kept_until + 1; i <= b; ++i) out.terms.push_back(line.terms[i]);
  return out;
}

std::vector<EquationLine> candidate_lines(const Scenario& s, const std::vector<StageId>& wanted) {
  std::set<int> heads;
  for (const StageId id : wanted)
    if (is_per_head(id.kind) && id.head >= 0 && id.head < s.heads) heads.insert(id.head);
  if (heads.empty()) heads.insert(0);
  std::vector<EquationLine> lines;
  bool first = true;
  for (const int h : heads) {
    for (auto& line : pipeline_equations(s, h)) {
      // The layer's own lines (projections, concat, output) once, from the first head.
      const bool of_this_head = std::any_of(line.terms.begin(), line.terms.end(), [&](const Term& t) {
        return t.kind == Term::Kind::Matrix && is_per_head(t.stage.kind) && t.stage.head == h &&
               t.stage.kind != StageKind::Context;  // the concat line names every head's context
      });
      if (first || of_this_head) lines.push_back(std::move(line));
    }
    first = false;
  }
  return lines;
}

}  // namespace

StageId whole_matrix(const Scenario& s, StageId id) {
  const bool one_head = s.heads == 1 && s.dims().kv_heads == 1;
  return one_head && is_head_view(id.kind) ? StageId::input(spec(id.kind).storage) : id;
}

std::vector<EquationLine> slide_equations(const Scenario& s, const std::vector<StageId>& wanted_in) {
  // With one head (and one K/V head) a head's block Q[0] is the whole Q: one
  // matrix under two names, and a step may use either for the same slide.
  // Each is drawn where the math has it: the whole Q as the result of a
  // projection the step also shows ("X · W_q = Q"), else the head's block in
  // its head's chain ("Q · Kᵀ = S₀"); it keeps the name the step gave it.
  const bool one_head = s.heads == 1 && s.dims().kv_heads == 1;
  std::map<StageId, StageId> named;  // the chosen id → the id the step gave
  std::vector<StageId> given;
  for (const StageId id : wanted_in)
    if (std::find(given.begin(), given.end(), id) == given.end()) given.push_back(id);
  const auto view_of = [&](StageId whole) -> std::optional<StageId> {
    for (const StageSpec& v : all_stages())
      if (is_head_view(v.kind) && v.storage == whole.kind) return StageId::of_head(v.kind, 0);
    return std::nullopt;
  };
  const auto projection_shown = [&](StageId whole) {
    for (const auto& line : pipeline_equations(s, 0)) {
      const auto at = std::find_if(line.terms.begin(), line.terms.end(),
                                   [&](const Term& t) { return t.kind == Term::Kind::Matrix && t.stage == whole; });
      if (at == line.terms.end() || !is_result(line, static_cast<std::size_t>(at - line.terms.begin()))) continue;
      for (auto t = line.terms.begin(); t != at; ++t)
        if (t->kind == Term::Kind::Matrix && std::find(given.begin(), given.end(), t->stage) != given.end()) return true;
    }
    return false;
  };
  std::vector<StageId> wanted;
  for (const StageId id : given) {
    StageId chosen = id;
    if (one_head) {
      const StageId whole = whole_matrix(s, id);
      if (const auto view = view_of(whole)) chosen = projection_shown(whole) ? whole : *view;
    }
    if (std::find(wanted.begin(), wanted.end(), chosen) != wanted.end()) continue;
    wanted.push_back(chosen);
    if (chosen != id) named.emplace(chosen, id);
  }
  const std::vector<EquationLine> candidates = candidate_lines(s, wanted);

  std::set<StageId> remaining(wanted.begin(), wanted.end());
  std::vector<EquationLine> chosen;
  std::vector<bool> used(candidates.size(), false);
  // Greedy cover: the line that shows most of what is still missing, first.
  for (;;) {
    std::optional<EquationLine> best;
    std::size_t best_index = 0;
    int best_count = 0;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (used[i]) continue;
      auto piece = cut(candidates[i], remaining, one_head);
      if (!piece) continue;
      std::set<StageId> covered;
      for (const Term& t : piece->terms)
        if (t.kind == Term::Kind::Matrix && remaining.count(t.stage)) covered.insert(t.stage);
      if (static_cast<int>(covered.size()) > best_count) best = std::move(piece), best_index = i, best_count = static_cast<int>(covered.size());
    }
    if (!best) break;
    used[best_index] = true;
    for (const Term& t : best->terms)
      if (t.kind == Term::Kind::Matrix) remaining.erase(t.stage);
    chosen.push_back(std::move(*best));
  }

  // Head blocks asked for on their own: the split of the whole matrix,
  // continuing the line that ends with it ("X · W_q = Q = Q₀ | Q₁ | …").
  for (const StageSpec& view_spec : all_stages()) {
    if (!is_head_view(view_spec.kind) || one_head) continue;  // one head's block stands alone
    const StageKind view = view_spec.kind;
    std::vector<StageId> blocks;
    for (const StageId id : wanted)
      if (id.kind == view && remaining.count(id)) blocks.push_back(id);
    if (blocks.empty()) continue;
    const StageId whole = StageId::input(view_spec.storage);
    EquationLine* target = nullptr;
    for (auto& line : chosen)
      if (!line.terms.empty() && line.terms.back().kind == Term::Kind::Matrix && line.terms.back().stage == whole) target = &line;
    if (!target) {
      chosen.emplace_back();
      target = &chosen.back();
      target->terms.push_back(Term::matrix(whole));
      remaining.erase(whole);
    }
    target->terms.push_back(Term::op("="));
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      if (i > 0) target->terms.push_back(Term::op("|"));
      target->terms.push_back(Term::matrix(blocks[i]));
      remaining.erase(blocks[i]);
    }
  }
  // Whatever no equation shows (one head's concat is its context) stands alone.
  for (const StageId id : wanted)
    if (remaining.count(id)) chosen.push_back(EquationLine{{Term::matrix(id)}}), remaining.erase(id);

  // In the order of the step's list: a line's place is that of its first wanted stage.
  const auto rank = [&](const EquationLine& line) {
    std::size_t best = wanted.size();
    for (const Term& t : line.terms)
      if (t.kind == Term::Kind::Matrix)
        if (auto it = std::find(wanted.begin(), wanted.end(), t.stage); it != wanted.end())
          best = std::min(best, static_cast<std::size_t>(it - wanted.begin()));
    return best;
  };
  std::stable_sort(chosen.begin(), chosen.end(), [&](const auto& x, const auto& y) { return rank(x) < rank(y); });
  // The names the step gave.
  for (auto& line : chosen)
    for (Term& t : line.terms)
      if (t.kind == Term::Kind::Matrix)
        if (const auto it = named.find(t.stage); it != named.end()) t.stage = it->second;
  return chosen;
}

// [SECTION] Fitting the boxes into the area

float SlideBox::width(float cell) const { return std::max(min_w, fixed_w + cells_w * cell * cell_scale); }

namespace {

struct Row {
  std::vector<std::pair<int, int>> boxes;  // (group, box)
  std::vector<bool> new_group;             // a group gap before this box
  float width = 0.0f;
  float upper = 0.0f, lower = 0.0f;        // above and below the cells' centre line
};

// Flows the groups into rows no wider than `width` (nullopt: a piece wider than a row).
std::optional<std::vector<Row>> flow(const std::vector<SlideGroup>& groups, float width, float cell, const SlideSpacing& sp) {
  std::vector<Row> rows(1);
  const auto add = [&](int g, int b, bool new_group) {
    Row& row = rows.back();
    if (!row.boxes.empty()) row.width += new_group ? sp.group_gap : sp.box_gap;
    row.boxes.push_back({g, b});
    row.new_group.push_back(new_group);
    const SlideBox& box = groups[static_cast<std::size_t>(g)].boxes[static_cast<std::size_t>(b)];
    row.width += box.width(cell);
    const float half = box.cells_h * cell * box.cell_scale * 0.5f;
    row.upper = std::max(row.upper, box.above_at(cell) + half);
    row.lower = std::max(row.lower, half + box.below);
  };
  const auto span_width = [&](const SlideGroup& g, std::size_t from, std::size_t to) {
    float w = 0.0f;
    for (std::size_t i = from; i < to; ++i) w += g.boxes[i].width(cell) + (i > from ? sp.box_gap : 0.0f);
    return w;
  };
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const SlideGroup& g = groups[gi];
    if (g.boxes.empty()) continue;
    const float whole = span_width(g, 0, g.boxes.size());
    const auto gap_before = [&](bool new_group) { return rows.back().boxes.empty() ? 0.0f : new_group ? sp.group_gap : sp.box_gap; };
    if (rows.back().width + gap_before(true) + whole > width && !rows.back().boxes.empty()) rows.emplace_back();
    // The equation, in pieces that each start with an operator.
    std::size_t start = 0;
    while (start < g.boxes.size()) {
      std::size_t end = start + 1;
      while (end < g.boxes.size() && !g.boxes[end].operator_box) ++end;
      const float piece = span_width(g, start, end);
      const bool new_group = start == 0;
      if (!rows.back().boxes.empty() && rows.back().width + gap_before(new_group) + piece > width) rows.emplace_back();
      if (piece > width) return std::nullopt;
      for (std::size_t b = start; b < end; ++b) add(static_cast<int>(gi), static_cast<int>(b), new_group && b == start);
      start = end;
    }
  }
  if (rows.back().boxes.empty()) rows.pop_back();
  return rows;
}

float total_height(const std::vector<Row>& rows, const SlideSpacing& sp) {
  float h = 0.0f;
  for (const Row& r : rows) h += r.upper + r.lower;
  return h + sp.row_gap * static_cast<float>(rows.empty() ? 0 : rows.size() - 1);
}

bool fits(const std::vector<SlideGroup>& groups, const SlideArea& area, float cell, const SlideSpacing& sp) {
  const auto rows = flow(groups, area.width(), cell, sp);
  return rows && total_height(*rows, sp) <= area.height();
}

}  // namespace

SlideLayout layout_slide(const std::vector<SlideGroup>& groups, const SlideArea& area, const SlideSpacing& sp) {
  SlideLayout out;
  // Bigger cells (almost) never need fewer rows or less room, so the largest
  // size that fits is found by bisection. (Labels that turn upwards below a
  // cell size make a box taller below it: then a size that fits, maybe not the largest.)
  float lo = sp.min_cell, hi = std::max(sp.min_cell, sp.max_cell);
  if (fits(groups, area, hi, sp)) {
    out.cell = hi, out.fits = true;
  } else if (!fits(groups, area, lo, sp)) {
    out.cell = lo, out.fits = false;
  } else {
    for (int i = 0; i < 40; ++i) {
      const float mid = 0.5f * (lo + hi);
      (fits(groups, area, mid, sp) ? lo : hi) = mid;
    }
    // Whole pixels keep cell edges crisp (still fits: smaller never hurts).
    out.cell = lo >= 4.0f ? std::floor(lo) : lo;
    out.fits = true;
  }
  auto rows = flow(groups, area.width(), out.cell, sp);
  // Wrapped rows are balanced: the narrowest width that needs no more rows
  // gives four heads as 2 + 2, not 3 + 1 with one alone on the second row.
  // (A narrower flow may put a taller box on the second row: it must still fit.)
  if (rows && rows->size() > 1) {
    float narrow = 0.0f, wide = area.width();
    const float height = std::max(area.height(), total_height(*rows, sp));
    for (int i = 0; i < 30; ++i) {
      const float mid = 0.5f * (narrow + wide);
      const auto r = flow(groups, mid, out.cell, sp);
      (r && r->size() <= rows->size() && total_height(*r, sp) <= height ? wide : narrow) = mid;
    }
    rows = flow(groups, wide, out.cell, sp);
  }
  if (!rows) {  // a piece wider than the area even at the smallest cells: one row per group
    rows.emplace();
    for (std::size_t g = 0; g < groups.size(); ++g) {
      Row row;
      for (std::size_t b = 0; b < groups[g].boxes.size(); ++b) {
        const SlideBox& box = groups[g].boxes[b];
        if (b > 0) row.width += sp.box_gap;
        row.boxes.push_back({static_cast<int>(g), static_cast<int>(b)});
        row.new_group.push_back(b == 0);
        row.width += box.width(out.cell);
        const float half = box.cells_h * out.cell * box.cell_scale * 0.5f;
        row.upper = std::max(row.upper, box.above_at(out.cell) + half);
        row.lower = std::max(row.lower, half + box.below);
      }
      if (!row.boxes.empty()) rows->push_back(std::move(row));
    }
  }
  out.rows = static_cast<int>(rows->size());
  const float block_h = total_height(*rows, sp);
  float widest = 0.0f;
  for (const Row& r : *rows) widest = std::max(widest, r.width);
  // Centred; a block larger than the area starts at its top-left corner, so
  // the beginning of the equations stays in view.
  const float top = area.y0 + std::max(0.0f, (area.height() - block_h) * 0.5f);
  out.bounds = {area.x0 + std::max(0.0f, (area.width() - widest) * 0.5f), top, 0, top + block_h};
  out.bounds.x1 = out.bounds.x0 + widest;
  float y = top;
  for (const Row& r : *rows) {
    float x = area.x0 + std::max(0.0f, (area.width() - r.width) * 0.5f);
    for (std::size_t i = 0; i < r.boxes.size(); ++i) {
      if (i > 0) x += r.new_group[i] ? sp.group_gap : sp.box_gap;
      const auto [g, b] = r.boxes[i];
      const SlideBox& box = groups[static_cast<std::size_t>(g)].boxes[static_cast<std::size_t>(b)];
      const float cell = out.cell * box.cell_scale;
      PlacedBox p{g, b, x, y + r.upper - (box.above_at(out.cell) + box.cells_h * cell * 0.5f), box.width(out.cell),
                  box.height(out.cell), cell};
      out.boxes.push_back(p);
      x += p.w;
    }
    y += r.upper + r.lower + sp.row_gap;
  }
  std::sort(out.boxes.begin(), out.boxes.end(),
            [](const PlacedBox& p, const PlacedBox& q) { return p.group != q.group ? p.group < q.group : p.box < q.box; });
  return out;
}

std::vector<EquationLine> split_statements(const EquationLine& line) {
  std::vector<EquationLine> out(1);
  for (std::size_t i = 0; i < line.terms.size(); ++i) {
    // Only before a new relation ("=", "→"): "Q = Q₀ | Q₁" is not "Q₀ | Q₁".
    const Term& t = line.terms[i];
    const bool relation = t.kind == Term::Kind::Operator &&
                          (t.text.find('=') != std::string::npos || t.text.find("→") != std::string::npos);
    const bool cut_here = i >= 2 && relation && is_result(line, i - 1);
    if (cut_here) out.push_back(EquationLine{{line.terms[i - 1]}});
    out.back().terms.push_back(line.terms[i]);
  }
  return out;
}

std::vector<std::vector<int>> page_groups(const std::vector<SlideGroup>& groups, const SlideArea& area, float least,
                                          const SlideSpacing& sp) {
  const auto fits_readably = [&](const std::vector<int>& page) {
    std::vector<SlideGroup> subset;
    for (const int g : page) subset.push_back(groups[static_cast<std::size_t>(g)]);
    const SlideLayout l = layout_slide(subset, area, sp);
    return l.fits && l.cell >= least;
  };
  std::vector<std::vector<int>> pages;
  for (int g = 0; g < static_cast<int>(groups.size()); ++g) {
    if (!pages.empty()) {
      pages.back().push_back(g);
      if (fits_readably(pages.back())) continue;
      pages.back().pop_back();
    }
    pages.push_back({g});
  }
  if (pages.empty()) pages.emplace_back();
  return pages;
}

}  // namespace attention_lab::gui
