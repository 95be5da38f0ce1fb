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
};

// The question for a cell chosen by a teacher. nullopt when the cell does not
// exist in the document or holds a value no one can type (−∞, +∞ or NaN).
std::optional<Question> make_question(const Document& doc, const CellRef& cell,
                                      double tolerance = kDefaultQuizTolerance);

// A cell picked at random (uniformly, reproducibly from `seed`) among the cells
// of `stages` that make a fair question: finite values only (a masked −∞ is
// skipped) and no weight the mask forces to 0. Stages that do not exist in the
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
  std::string message;      // "Right: 0.614 (you said 0.61)." / "Not quite: …" / "Please type a number…"
};

AnswerCheck check_answer(const Question& question, std::string_view text);

// Right answers out of questions asked. An answer that was not a number does
// not count as asked: the learner may try again.
struct QuizTally {
  int asked = 0;
  int right = 0;

  void record(const AnswerCheck& check);
  void reset() { *this = {}; }
  // "3 of 4 right"
  std::string text() const;
};

}  // namespace attention_lab
