#pragma once
// Quizzes on real numbers: pick a cell, hide it, ask for its value, check the
// answer with a tolerance, and keep a tally.

#include "attention_lab/cell_ref.h"
#include "attention_lab/document.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attention_lab {

// The tolerance a quiz uses when nobody chose one.
inline constexpr double kDefaultQuizTolerance = 0.01;

// One question: the hidden cell, its true value and how close an answer must be.
struct Question {
  CellRef cell;
  double truth = 0.0;
  double tolerance = kDefaultQuizTolerance;
  // How the learner sees the cell, "A₀[2,1]" (make_question fills it in); the
  // messages fall back to the stage's internal name when it is empty.
  std::string name;
  // What to ask, in the teacher's words (a lesson's "question"); empty: the
  // app asks "What is A₀[2,1]?".
  std::string text;
  // The cell computed again from its sources as the screen rounds them (to 1
  // and to 2 decimals): a learner who works from the printed numbers gets one
  // of these rather than the truth, and is right to. Empty when the cell has
  // no sources or the scenario is too big to compute again for a question.
  struct FromScreen {
    int decimals = 0;
    double value = 0.0;
  };
  std::vector<FromScreen> from_screen;
};

// `cell` computed from its sources (cell_sources: one level up) rounded to
// `decimals`, as a learner computes it from the numbers a heatmap prints;
// nullopt when that cannot be done (no sources, a source that cannot be
// set, a non-finite result, a scenario of more than 64 tokens).
std::optional<double> value_from_rounded_sources(const Document& doc, const CellRef& cell, int decimals);

// The question for a cell chosen by a teacher. nullopt when the cell does not
// exist in the document or holds a value no one can type (−∞, +∞ or NaN).
std::optional<Question> make_question(const Document& doc, const CellRef& cell,
                                      double tolerance = kDefaultQuizTolerance);

// The cell whose number `cell` holds unchanged, when it is a pure copy: a
// head's slice Q[h], K[h], V[h] of Q, K, V; scaled = scores when the divisor
// √d_k·τ is 1 (scaling off and τ = 1, or d_k = 1); masked = scaled where the
// mask allows; concat = a head's context; output = concat without W_o and b_o.
// nullopt for a computed cell, an input, a pinned cell (it holds its pin) or a
// masked −∞. The source may itself be a copy: see copy_source.
std::optional<CellRef> copied_from(const Scenario& scenario, const CellRef& cell);

// The cell at the end of the copy chain (output → concat → context), or `cell`
// itself when it is not a copy. Two cells with the same source print the same number.
CellRef copy_source(const Scenario& scenario, const CellRef& cell);

// Whether a view showing `shown` would give the answer to a question on
// `asked` away, so it is hidden while the question is open: the cell itself,
// a copy of it further down (copied_from: the output that is the concat
// that is the context), and for a weight the other weights of its row, which
// add up to 1 with it. A cell the asked one copies from stays ("concat[7][9]
// is a copy of … find it" is a question).
bool gives_away(const Scenario& scenario, const CellRef& asked, const CellRef& shown);

// A cell picked at random (uniformly, reproducibly from `seed`) among the cells
// of `stages` that make a fair question: finite values only (a masked −∞ is
// skipped), no weight the mask forces to 0 or to 1 (a row that may see only
// one key), and no pure copy of another cell (copied_from): the pipeline
// prints every stage, so a copy's answer would already be on screen. Stages that do not exist in the
// document are ignored. An empty `stages` means every computed stage of the
// pipeline. nullopt when no cell qualifies.
std::optional<CellRef> pick_random_cell(const Document& doc, const std::vector<StageId>& stages, std::uint64_t seed);

// Reads a typed number: "0.24", "-1.5", "−1.5" (Unicode minus), "+2", ".5",
// "5.", "1e-3", with spaces around it; a decimal comma ("0,24") is accepted
// too. nullopt for anything else ("", "abc", "1.2.3", "inf", "nan").
std::optional<double> parse_answer(std::string_view text);

// Whether `answer` is within `tolerance` of `truth`: absolute for |truth| ≤ 1,
// relative (tolerance · |truth|) above, so 0.01 means "±0.01, or 1 % of a large value".
bool within_tolerance(double answer, double truth, double tolerance);

// The largest distance from the truth that still counts as right.
double allowed_error(double truth, double tolerance);

struct AnswerCheck {
  bool understood = false;  // the text was a number
  bool correct = false;
  double answer = 0.0;      // the number read, when understood
  double error = 0.0;       // answer − truth, when understood
  double allowed = 0.0;     // allowed_error(truth, tolerance)
  // The answer is the truth rounded to the decimals typed ("-0.1" for −0.126:
  // what a narrow cell shows), but too coarse to be within the tolerance. It is
  // neither right nor wrong: the learner is asked for more digits, and nothing
  // is counted.
  bool too_coarse = false;
  // Right because it is what the numbers on screen give, rounded to this many
  // decimals (0: right by the tolerance alone).
  int from_screen_decimals = 0;
  // "Right: A₀[2,1] is 0.614 (you said 0.61)." / "Not right: 0.5 is too low. …" /
  // "Please type a number…". A wrong answer's message never gives the true value.
  std::string message;
};

AnswerCheck check_answer(const Question& question, std::string_view text);

// The digits typed after the decimal point (or comma) of an answer, before any
// exponent: 1 for "-0.1", 0 for "3" and "3.", -1 when there is an exponent.
int decimals_typed(std::string_view text);

// Questions answered right at the first try, out of questions answered (a
// first answer that was a number, or "Show answer" before any). Retries after
// a wrong answer teach but do not change the tally.
struct QuizTally {
  int asked = 0;
  int right = 0;

  // Counts a first answer; one that was not a number is not counted (the learner may try again).
  void record(const AnswerCheck& check);
  // Counts a question whose answer was shown before any was given.
  void record_shown() { ++asked; }
  void reset() { *this = {}; }
  // "3 of 4 right at the first try"
  std::string text() const;
};

// One question being asked: the answers given so far, whether the hint may
// be shown and whether the answer has been shown. The learner may retry after
// a wrong answer; the true value is given only by a right answer or reveal().
struct QuizRound {
  Question question;
  int wrong = 0;          // wrong answers so far
  bool solved = false;    // answered right (at any try)
  bool revealed = false;  // "Show answer" was pressed
  std::optional<AnswerCheck> last;  // the last answer that was a number

  explicit QuizRound(Question q) : question(std::move(q)) {}
  // Over: the value may be shown everywhere.
  bool over() const { return solved || revealed; }
  // A hint is offered once an answer was wrong.
  bool hint_offered() const { return wrong > 0 && !over(); }
  // Checks a typed answer (ignored once over); the first numeric answer goes into the tally.
  AnswerCheck answer(std::string_view text, QuizTally& tally);
  // Shows the answer; counts the question as asked and not right if no answer came first.
  void reveal(QuizTally& tally);
  // "The answer: A₀[2,1] = 0.614." (empty until over)
  std::string solution() const;
};

}  // namespace attention_lab
