#include "attention_lab/quiz.h"
#include "attention_lab/number_text.h"

#include "attention_lab/engine.h"

#include "attention_lab/stage_info.h"
#include "attention_lab/stage_registry.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

namespace attention_lab {

namespace {


// For a weights stage, the head's masked scores and how many keys each row
// may see; empty for other stages.
struct MaskedRows {
  Matrix masked;
  std::vector<Eigen::Index> allowed;
};

MaskedRows masked_of(const Document& doc, StageId id) {
  if (id.kind != StageKind::Weights) return {};
  MaskedRows out{doc.stage(StageId::of_head(StageKind::Masked, id.head)), {}};
  for (Eigen::Index r = 0; r < out.masked.rows(); ++r)
    out.allowed.push_back((out.masked.row(r).array() > -std::numeric_limits<float>::infinity()).count());
  return out;
}

// Whether cell (r, c) of `id` is a fair question: a finite number that the
// learner has to work out, not one forced by the mask or printed elsewhere as a copy.
bool fair(const Scenario& s, StageId id, float value, const MaskedRows& m, Eigen::Index r, Eigen::Index c) {
  if (!std::isfinite(value)) return false;
  if (m.masked.size() > 0) {
    if (std::isinf(m.masked(r, c)) && m.masked(r, c) < 0.0f) return false;  // a forced 0
    if (m.allowed[static_cast<std::size_t>(r)] == 1) return false;  // its only key gets all the weight: a forced 1
  }
  return !copied_from(s, CellRef{id, static_cast<int>(r), static_cast<int>(c)});
}

}  // namespace

std::optional<Question> make_question(const Document& doc, const CellRef& cell, double tolerance) {
  if (!cell_problem(doc.scenario(), cell).empty()) return std::nullopt;
  const float value = doc.stage(cell.stage)(cell.row, cell.col);
  if (!std::isfinite(value)) return std::nullopt;
  const std::string name = cell_symbol(doc.scenario(), cell.stage, cell.row, cell.col);
  Question q{cell, static_cast<double>(value), tolerance, name, {}, {}};
  for (const int decimals : {1, 2})
    if (const auto v = value_from_rounded_sources(doc, cell, decimals)) q.from_screen.push_back({decimals, *v});
  return q;
}

bool gives_away(const Scenario& s, const CellRef& asked, const CellRef& shown) {
  CellRef at = shown;
  for (int up = 0; up < 8; ++up) {
    if (at == asked) return true;
    if (asked.stage.kind == StageKind::Weights && at.stage == asked.stage && at.row == asked.row) return true;
    const auto from = copied_from(s, at);
    if (!from) return false;
    at = *from;
  }
  return false;
}

std::optional<double> value_from_rounded_sources(const Document& doc, const CellRef& cell, int decimals) {
  const Scenario& s = doc.scenario();
  if (s.T() > 64 || !cell_problem(s, cell).empty()) return std::nullopt;  // a recompute per question: lessons are small
  const std::vector<CellSource> sources = cell_sources(s, cell.stage, cell.row, cell.col);
  if (sources.empty()) return std::nullopt;
  const double scale = std::pow(10.0, decimals);
  Scenario rounded = s;
  for (const CellSource& src : sources) {
    const MatrixView m = doc.stage(src.stage);
    std::vector<std::pair<int, int>> cells;
    if (src.row >= 0)
      for (int c = 0; c < m.cols(); ++c) cells.emplace_back(src.row, c);
    if (src.col >= 0)
      for (int r = 0; r < m.rows(); ++r) cells.emplace_back(r, src.col);
    if (src.cell_row >= 0) cells.emplace_back(src.cell_row, src.cell_col);
    for (const auto& [r, c] : cells) {
      const float v = m(r, c);
      if (!std::isfinite(v)) continue;  // −∞ prints as −∞
      const auto shown = static_cast<float>(std::round(static_cast<double>(v) * scale) / scale);
      if (shown == v) continue;
      const Edit e = is_input(src.stage.kind) ? Edit{SetCell{src.stage, r, c, shown}} : Edit{SetPin{PinKey{src.stage, r, c}, shown}};
      if (!apply_edit(rounded, e).error.empty()) return std::nullopt;
    }
  }
  Engine engine;
  engine.recompute_all(rounded);
  const float v = engine.stage(cell.stage)(cell.row, cell.col);
  if (!std::isfinite(v)) return std::nullopt;
  return static_cast<double>(v);
}

std::optional<CellRef> copied_from(const Scenario& s, const CellRef& cell) {
  const int r = cell.row, c = cell.col, h = cell.stage.head;
  if (s.pins.count(PinKey{cell.stage, r, c})) return std::nullopt;  // holds its pin, not its source
  const Dims d = s.dims();
  const auto head = [&](StageKind k, int col) { return CellRef{StageId::of_head(k, h), r, col}; };
  const auto layer = [&](StageKind k, int col) { return CellRef{StageId::input(k), r, col}; };
  if (spec(cell.stage.kind).view != ViewKind::Stored) return storage_cell(cell, d);  // a view copies what it shows
  switch (cell.stage.kind) {
    case StageKind::Scaled: {
      // The engine divides by √d_k·τ: exactly the score when that is 1.
      if (score_divisor(s) == 1.0) return head(StageKind::Scores, c);
      return std::nullopt;
    }
    case StageKind::Masked:
      if (s.mask_allows(r, c) && !s.alibi) return head(StageKind::Scaled, c);  // ALiBi adds its bias
      return std::nullopt;  // −∞
    case StageKind::Output:
      if (!s.use_w_o && !s.use_output_bias) return layer(StageKind::Concat, c);
      return std::nullopt;
    default: return std::nullopt;
  }
}

CellRef copy_source(const Scenario& s, const CellRef& cell) {
  CellRef at = cell;
  // Each step moves up the pipeline (output → concat → context, masked →
  // scaled → scores, Q[h] → Q), so the chain is short; the bound is a guard.
  for (int i = 0; i < 8; ++i) {
    const auto up = copied_from(s, at);
    if (!up) break;
    at = *up;
  }
  return at;
}

std::optional<CellRef> pick_random_cell(const Document& doc, const std::vector<StageId>& stages, std::uint64_t seed) {
  const Scenario& s = doc.scenario();
  std::vector<StageId> pool;
  if (stages.empty()) {
    for (const StageId id : pipeline(s))
      if (!is_input(id.kind)) pool.push_back(id);
  } else {
    for (const StageId id : stages)
      if (stage_problem(s, id).empty() && std::find(pool.begin(), pool.end(), id) == pool.end()) pool.push_back(id);
  }
  // Two passes over the same cells: count the fair ones, then walk to the chosen one.
  std::uint64_t total = 0;
  for (const StageId id : pool) {
    const Matrix m = doc.stage(id);
    const MaskedRows masked = masked_of(doc, id);
    for (Eigen::Index r = 0; r < m.rows(); ++r)
      for (Eigen::Index c = 0; c < m.cols(); ++c) total += fair(s, id, m(r, c), masked, r, c) ? 1u : 0u;
  }
  if (total == 0) return std::nullopt;
  std::mt19937_64 rng(seed);
  std::uint64_t left = std::uniform_int_distribution<std::uint64_t>(0, total - 1)(rng);
  for (const StageId id : pool) {
    const Matrix m = doc.stage(id);
    const MaskedRows masked = masked_of(doc, id);
    for (Eigen::Index r = 0; r < m.rows(); ++r)
      for (Eigen::Index c = 0; c < m.cols(); ++c) {
        if (!fair(s, id, m(r, c), masked, r, c)) continue;
        if (left == 0) return CellRef{id, static_cast<int>(r), static_cast<int>(c)};
        --left;
      }
  }
  return std::nullopt;  // not reached: `total` fair cells exist
}

std::optional<double> parse_answer(std::string_view text) {
  std::string t(text);
  // The Unicode minus (U+2212) and the en dash, which some keyboards and
  // phones produce, become '-'.
  for (const char* dash : {"\xE2\x88\x92", "\xE2\x80\x93"})
    for (auto p = t.find(dash); p != std::string::npos; p = t.find(dash)) t.replace(p, 3, "-");
  const auto space = [](char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r'; };
  while (!t.empty() && space(t.front())) t.erase(t.begin());
  while (!t.empty() && space(t.back())) t.pop_back();
  // One optional sign; from_chars takes neither '+' nor "-.5", so the sign is handled here.
  bool negative = false;
  if (!t.empty() && (t.front() == '+' || t.front() == '-')) {
    negative = t.front() == '-';
    t.erase(t.begin());
  }
  if (std::count(t.begin(), t.end(), ',') == 1 && t.find('.') == std::string::npos) std::replace(t.begin(), t.end(), ',', '.');
  if (t.empty() || t.front() == '+' || t.front() == '-') return std::nullopt;
  // Only digits, a point and an exponent: from_chars would also take "inf"
  // and "nan", which are not answers.
  for (const char ch : t)
    if (!(std::isdigit(static_cast<unsigned char>(ch)) || ch == '-' || ch == '+' || ch == '.' || ch == 'e' || ch == 'E'))
      return std::nullopt;
  double value = 0.0;
  const char* first = t.data();
  const char* last = t.data() + t.size();
  const auto [end, ec] = std::from_chars(first, last, value, std::chars_format::general);
  if (ec != std::errc{} || end != last || !std::isfinite(value)) return std::nullopt;
  return negative ? -value : value;
}

double allowed_error(double truth, double tolerance) { return tolerance * std::max(1.0, std::fabs(truth)); }

bool within_tolerance(double answer, double truth, double tolerance) {
  return std::isfinite(answer) && std::fabs(answer - truth) <= allowed_error(truth, tolerance);
}

int decimals_typed(std::string_view text) {
  if (text.find_first_of("eE") != std::string_view::npos) return -1;
  const auto point = text.find_first_of(".,");
  if (point == std::string_view::npos) return 0;
  int n = 0;
  for (std::size_t i = point + 1; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) ++n;
  return n;
}

namespace {
// What counts as right, in words that do not give the value away: the
// allowed error of a value above 1 is a share of it ("within 0.2367" of a
// 5 % tolerance is 4.733), so it is said as that share.
std::string tolerance_words(double truth, double tolerance) {
  if (std::fabs(truth) <= 1.0) return "within ±" + significant(tolerance, 4);
  return "within " + significant(100.0 * tolerance, 4) + " %";
}

// Whether `answer` is `truth` rounded to the `decimals` typed: at most half a
// unit of the last typed digit away (with room for the binary rounding of both).
bool rounded_truth(double answer, double truth, int decimals) {
  if (decimals < 1) return false;  // "0" for 0.3 or "3" for 2.91 is a guess, not a rounding
  const double half_unit = 0.5 * std::pow(10.0, -decimals);
  return std::fabs(answer - truth) <= half_unit * (1.0 + 1e-9);
}
}  // namespace

AnswerCheck check_answer(const Question& q, std::string_view text) {
  AnswerCheck out;
  out.allowed = allowed_error(q.truth, q.tolerance);
  const auto answer = parse_answer(text);
  if (!answer) {
    out.message = "Please type a number, such as 0.25 or -1.5.";
    return out;
  }
  out.understood = true;
  out.answer = *answer;
  out.error = *answer - q.truth;
  out.correct = within_tolerance(*answer, q.truth, q.tolerance);
  // Worked out from the numbers as printed: right too, and said so.
  const Question::FromScreen* screen = nullptr;
  if (!out.correct)
    for (const auto& f : q.from_screen)
      if (within_tolerance(*answer, f.value, q.tolerance)) {
        screen = &f;
        out.correct = true;
        out.from_screen_decimals = f.decimals;
        break;
      }
  const std::string truth = significant(q.truth, 4);
  const std::string cell = q.name.empty() ? to_string(q.cell) : q.name;
  const std::string said = significant(*answer, 4);
  const int decimals = decimals_typed(text);
  out.too_coarse = !out.correct && rounded_truth(*answer, q.truth, decimals);
  if (screen)
    out.message = "Right: from the numbers on screen, rounded to " + std::to_string(screen->decimals) +
                  (screen->decimals == 1 ? " decimal" : " decimals") + ", that is " + significant(screen->value, 4) +
                  " (you said " + said + "); with every digit " + cell + " is " + truth + ".";
  else if (out.correct)
    out.message = "Right: " + cell + " is " + truth + " (you said " + said + ").";
  else if (out.too_coarse)
    out.message = "Close: " + said + " is " + cell + " rounded to " + std::to_string(decimals) +
                  (decimals == 1 ? " decimal" : " decimals") + ". Give more digits (" +
                  tolerance_words(q.truth, q.tolerance) + " counts as right; hovering a cell shows all of its digits).";
  else  // no true value: the learner may try again
    out.message = "Not right: " + said + " is too " + (out.error > 0 ? "high" : "low") + " for " + cell +
                  " (" + tolerance_words(q.truth, q.tolerance) + " counts as right). Try again, or ask for a hint.";
  return out;
}

void QuizTally::record(const AnswerCheck& check) {
  if (!check.understood || check.too_coarse) return;
  ++asked;
  if (check.correct) ++right;
}

std::string QuizTally::text() const {
  return std::to_string(right) + " of " + std::to_string(asked) + " right at the first try";
}

AnswerCheck QuizRound::answer(std::string_view text, QuizTally& tally) {
  if (over()) return last ? *last : AnswerCheck{};
  const AnswerCheck check = check_answer(question, text);
  if (!check.understood || check.too_coarse) return check;  // nothing counted: type again
  if (wrong == 0) tally.record(check);  // only the first answer counts
  if (check.correct)
    solved = true;
  else
    ++wrong;
  last = check;
  return check;
}

void QuizRound::reveal(QuizTally& tally) {
  if (over()) return;
  if (wrong == 0) tally.record_shown();
  revealed = true;
}

std::string QuizRound::solution() const {
  if (!over()) return {};
  const std::string cell = question.name.empty() ? to_string(question.cell) : question.name;
  return "The answer: " + cell + " = " + significant(question.truth, 4) + ".";
}

}  // namespace attention_lab
