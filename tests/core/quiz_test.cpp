// Quizzes: reading typed answers, checking them with a tolerance, the tally,
// and picking fair cells at random.

#include "attention_lab/quiz.h"
#include "attention_lab/stage_info.h"

#include "test_support.h"
#include "unit_support.h"

#include <cmath>
#include <limits>
#include <set>

using namespace attention_lab;
using attention_lab::test::preset;

namespace {
using attention_lab::test::head;
}  // namespace

// [SECTION] Reading answers

TEST(QuizAnswer, CommonWaysOfWritingANumberAreRead) {
  EXPECT_EQ(parse_answer("0.24"), 0.24);
  EXPECT_EQ(parse_answer("-1.5"), -1.5);
  EXPECT_EQ(parse_answer("\xE2\x88\x92" "1.5"), -1.5);  // U+2212 MINUS SIGN
  EXPECT_EQ(parse_answer("\xE2\x80\x93" "2"), -2.0);    // an en dash
  EXPECT_EQ(parse_answer(".5"), 0.5);
  EXPECT_EQ(parse_answer("-.5"), -0.5);
  EXPECT_EQ(parse_answer("5."), 5.0);
  EXPECT_EQ(parse_answer("+2"), 2.0);
  EXPECT_EQ(parse_answer("  3 \n"), 3.0);
  EXPECT_EQ(parse_answer("1e-3"), 0.001);
  EXPECT_EQ(parse_answer("2E2"), 200.0);
  EXPECT_EQ(parse_answer("0,5"), 0.5);  // a decimal comma
  EXPECT_EQ(parse_answer("0"), 0.0);
}

TEST(QuizAnswer, TextThatIsNotANumberIsNotRead) {
  for (const char* text : {"", "   ", "abc", "1.2.3", "inf", "-inf", "nan", "--1", "1-", "1e", "0x10", "1,2,3", "-",
                           ".", "+", "1 2", "0.5.", "e5", "1e999", "12abc", "+-1"})
    EXPECT_FALSE(parse_answer(text).has_value()) << "'" << text << "'";
}

// [SECTION] Tolerance

TEST(QuizTolerance, IsAbsoluteForValuesUpToOne) {
  EXPECT_TRUE(within_tolerance(0.509, 0.5, 0.01));
  EXPECT_TRUE(within_tolerance(0.491, 0.5, 0.01));
  EXPECT_FALSE(within_tolerance(0.511, 0.5, 0.01));
  EXPECT_TRUE(within_tolerance(0.009, 0.0, 0.01));
  EXPECT_FALSE(within_tolerance(0.011, 0.0, 0.01));
  EXPECT_DOUBLE_EQ(allowed_error(0.3, 0.01), 0.01);
}

TEST(QuizTolerance, IsRelativeForLargeValues) {
  EXPECT_TRUE(within_tolerance(201.9, 200.0, 0.01));
  EXPECT_FALSE(within_tolerance(202.1, 200.0, 0.01));
  EXPECT_TRUE(within_tolerance(-148.6, -150.0, 0.01));
  EXPECT_FALSE(within_tolerance(-148.4, -150.0, 0.01));
  EXPECT_DOUBLE_EQ(allowed_error(-150.0, 0.01), 1.5);
}

TEST(QuizTolerance, NonFiniteAnswersAreNeverRight) {
  EXPECT_FALSE(within_tolerance(std::nan(""), 0.5, 0.01));
  EXPECT_FALSE(within_tolerance(std::numeric_limits<double>::infinity(), 1e30, 1.0));
}

// [SECTION] Checking answers and the tally

TEST(QuizCheck, ARightAnswerSaysSoWithTheTrueValue) {
  const Question q{CellRef{head(StageKind::Weights), 2, 1}, 0.6139548, 0.01, {}, {}, {}};
  const AnswerCheck c = check_answer(q, "0.61");
  EXPECT_TRUE(c.understood);
  EXPECT_TRUE(c.correct);
  EXPECT_NEAR(c.error, -0.0039548, 1e-9);
  EXPECT_EQ(c.message, "Right: weights[0][2][1] is 0.614 (you said 0.61).");
}

TEST(QuizCheck, AWrongAnswerSaysWhichWayAndWhatCountsButNotTheValue) {
  const Question q{CellRef{head(StageKind::Scores), 3, 2}, 2.8012, 0.01, {}, {}, {}};
  const AnswerCheck c = check_answer(q, "2.7");
  EXPECT_TRUE(c.understood);
  EXPECT_FALSE(c.correct);
  EXPECT_NEAR(c.allowed, 0.028012, 1e-12);
  EXPECT_EQ(c.message,
            "Not right: 2.7 is too low for scores[0][3][2] (within 1 % counts as right). Try again, or ask for a hint.");
  EXPECT_EQ(c.message.find("2.801"), std::string::npos);  // the solution waits for "Show answer"
  // nor through the allowed error: 0.02801 would be 1 % of 2.801
  EXPECT_EQ(c.message.find("0.028"), std::string::npos);
  EXPECT_NE(check_answer(Question{q.cell, 0.42, 0.01, {}, {}, {}}, "0.3").message.find("within ±0.01 counts"),
            std::string::npos);  // at most 1: an absolute tolerance, which tells nothing of the value
  EXPECT_NE(check_answer(q, "3").message.find("too high"), std::string::npos);
}

TEST(QuizCheck, TheValueAsANarrowCellRoundsItAsksForMoreDigitsAndCountsNothing) {
  // concat[7][9] of the many-heads lesson: −0.126, drawn "-0.1" in a narrow cell.
  const Question q{CellRef{StageId::input(StageKind::Concat), 7, 9}, -0.1263, 0.01, "C[7,9]", {}, {}};
  const AnswerCheck c = check_answer(q, "-0.1");
  EXPECT_TRUE(c.understood);
  EXPECT_FALSE(c.correct);
  EXPECT_TRUE(c.too_coarse);
  EXPECT_EQ(c.message,
            "Close: -0.1 is C[7,9] rounded to 1 decimal. Give more digits (within ±0.01 counts as right; hovering a "
            "cell shows all of its digits).");
  EXPECT_TRUE(check_answer(q, "−0,13").correct);    // more digits: right
  EXPECT_FALSE(check_answer(q, "-0.2").too_coarse);  // another number at that rounding: wrong
  EXPECT_TRUE(check_answer(q, "-0.12").correct);     // 0.0063 away: right
  // A whole number is a guess, not a rounding; an exponent says nothing about decimals.
  const Question big{CellRef{head(StageKind::Scores), 3, 2}, 2.9134, 0.001, {}, {}, {}};
  EXPECT_FALSE(check_answer(big, "3").too_coarse);
  EXPECT_FALSE(check_answer(big, "2.9e0").too_coarse);
  EXPECT_TRUE(check_answer(big, "2.9").too_coarse);
  EXPECT_TRUE(check_answer(big, "2.91").too_coarse);  // 0.0034 away, 0.0029 allowed: still too coarse
  EXPECT_FALSE(check_answer(big, "2.92").too_coarse);
  // Nothing is counted, and the round goes on without a wrong answer.
  QuizTally tally;
  QuizRound round(q);
  EXPECT_TRUE(round.answer("-0.1", tally).too_coarse);
  EXPECT_EQ(tally.asked, 0);
  EXPECT_EQ(round.wrong, 0);
  EXPECT_FALSE(round.hint_offered());
  EXPECT_TRUE(round.answer("-0.126", tally).correct);
  EXPECT_EQ(tally.right, 1);
  tally.record(check_answer(q, "-0.1"));
  EXPECT_EQ(tally.asked, 1);
}

TEST(QuizCheck, DecimalsTypedAreCountedBeforeAnyExponent) {
  EXPECT_EQ(decimals_typed("3"), 0);
  EXPECT_EQ(decimals_typed("3."), 0);
  EXPECT_EQ(decimals_typed("-0.10"), 2);
  EXPECT_EQ(decimals_typed("0,125"), 3);
  EXPECT_EQ(decimals_typed(" .5 "), 1);
  EXPECT_EQ(decimals_typed("1.5e-3"), -1);
}

TEST(QuizCheck, MessagesNameTheCellAsTheLearnerSeesIt) {
  const Document doc(attention_lab::test::preset("fat-cat"));
  const auto q = make_question(doc, CellRef{head(StageKind::Weights), 3, 2});
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->name, "A₀[3,2]");
  EXPECT_NE(check_answer(*q, "12345").message.find(" for A₀[3,2] "), std::string::npos);
  EXPECT_EQ(check_answer(*q, std::to_string(q->truth)).message.rfind("Right: A₀[3,2] is ", 0), 0u);
}

TEST(QuizCheck, TextThatIsNotANumberAsksAgain) {
  const Question q{CellRef{head(StageKind::Weights), 0, 0}, 1.0, 0.01, {}, {}, {}};
  const AnswerCheck c = check_answer(q, "one");
  EXPECT_FALSE(c.understood);
  EXPECT_FALSE(c.correct);
  EXPECT_EQ(c.message, "Please type a number, such as 0.25 or -1.5.");
}

TEST(QuizTally, CountsQuestionsAnsweredAndRightOnes) {
  const Question q{CellRef{head(StageKind::Weights), 0, 0}, 0.25, 0.01, {}, {}, {}};
  QuizTally tally;
  EXPECT_EQ(tally.text(), "0 of 0 right at the first try");
  tally.record(check_answer(q, "0.25"));
  tally.record(check_answer(q, "0.5"));
  tally.record(check_answer(q, "a quarter"));  // not a number: not counted
  tally.record(check_answer(q, "−0.25"));
  tally.record(check_answer(q, ".251"));
  EXPECT_EQ(tally.asked, 4);
  EXPECT_EQ(tally.right, 2);
  EXPECT_EQ(tally.text(), "2 of 4 right at the first try");
  tally.record_shown();
  EXPECT_EQ(tally.asked, 5);
  EXPECT_EQ(tally.right, 2);
  tally.reset();
  EXPECT_EQ(tally.asked, 0);
}

// [SECTION] A round: retries, the hint, "Show answer"

TEST(QuizRound, AWrongAnswerOffersAHintAndARetryAndRevealsNothing) {
  QuizRound round(Question{CellRef{head(StageKind::Weights), 1, 0}, 0.6139548, 0.01, "A₀[1,0]", {}, {}});
  QuizTally tally;
  EXPECT_FALSE(round.hint_offered());
  EXPECT_FALSE(round.answer("a lot", tally).understood);  // not a number: nothing counted, no hint yet
  EXPECT_EQ(tally.asked, 0);
  EXPECT_FALSE(round.hint_offered());
  const AnswerCheck wrong = round.answer("0.5", tally);
  EXPECT_FALSE(wrong.correct);
  EXPECT_FALSE(round.over());
  EXPECT_TRUE(round.hint_offered());
  EXPECT_EQ(round.solution(), "");
  EXPECT_EQ(wrong.message.find("0.614"), std::string::npos);
  EXPECT_EQ(tally.asked, 1);
  EXPECT_EQ(tally.right, 0);
  // The retry is right: the round is over, the tally still says "wrong at the first try".
  EXPECT_TRUE(round.answer("0.614", tally).correct);
  EXPECT_TRUE(round.solved);
  EXPECT_FALSE(round.hint_offered());
  EXPECT_EQ(tally.asked, 1);
  EXPECT_EQ(tally.right, 0);
  EXPECT_EQ(round.solution(), "The answer: A₀[1,0] = 0.614.");
  // Answers after the end change nothing.
  round.answer("0.614", tally);
  EXPECT_EQ(tally.asked, 1);
}

TEST(QuizRound, ARightFirstAnswerCountsAndShowAnswerBeforeAnyAnswerCountsAsNotRight) {
  QuizTally tally;
  QuizRound first(Question{CellRef{head(StageKind::Weights), 1, 0}, 0.25, 0.01, {}, {}, {}});
  EXPECT_TRUE(first.answer(".25", tally).correct);
  EXPECT_EQ(tally.right, 1);
  QuizRound shown(Question{CellRef{head(StageKind::Weights), 2, 0}, 0.75, 0.01, {}, {}, {}});
  EXPECT_EQ(shown.solution(), "");
  shown.reveal(tally);
  EXPECT_TRUE(shown.revealed);
  EXPECT_TRUE(shown.over());
  EXPECT_EQ(shown.solution(), "The answer: weights[0][2][0] = 0.75.");
  EXPECT_EQ(tally.asked, 2);
  EXPECT_EQ(tally.right, 1);
  // Shown after a wrong answer: that answer was already counted, not twice.
  QuizRound retried(Question{CellRef{head(StageKind::Weights), 3, 0}, 0.5, 0.01, {}, {}, {}});
  retried.answer("0.1", tally);
  retried.reveal(tally);
  EXPECT_EQ(tally.asked, 3);
  EXPECT_EQ(tally.right, 1);
}

// [SECTION] Copies: cells that print another cell's number

TEST(QuizCopies, EachCopyHoldsItsSourcesNumberExactly) {
  // Every preset, and fat-cat with scaling off (scaled = scores) and a
  // multi-head scenario without W_o (output = concat): a cell copied_from
  // names holds the same number as its source.
  std::vector<Scenario> scenarios;
  for (const char* name : {"fat-cat", "book", "naive", "multi-head"}) scenarios.push_back(preset(name));
  Scenario unscaled = preset("fat-cat");
  unscaled.scale = false;
  scenarios.push_back(unscaled);
  Scenario no_w_o = preset("multi-head");
  no_w_o.use_w_o = false;
  no_w_o.use_output_bias = false;
  scenarios.push_back(no_w_o);
  int copies = 0;
  for (const Scenario& s : scenarios) {
    const Document doc(s);
    for (const StageId id : pipeline(doc.scenario())) {
      const Matrix m = doc.stage(id);
      for (int r = 0; r < m.rows(); ++r)
        for (int c = 0; c < m.cols(); ++c) {
          const CellRef cell{id, r, c};
          const auto from = copied_from(doc.scenario(), cell);
          if (!from) continue;
          ++copies;
          EXPECT_FLOAT_EQ(doc.stage(from->stage)(from->row, from->col), m(r, c)) << s.title << ": " << to_string(cell);
          const CellRef root = copy_source(doc.scenario(), cell);
          EXPECT_FALSE(copied_from(doc.scenario(), root).has_value());
          EXPECT_FLOAT_EQ(doc.stage(root.stage)(root.row, root.col), m(r, c)) << s.title << ": " << to_string(cell);
        }
    }
  }
  EXPECT_GT(copies, 500);
}

TEST(QuizCopies, WhatIsACopyAndWhatIsComputed) {
  Scenario s = preset("multi-head");  // 4 heads, d_k = d_v = 4, W_o on, causal
  s.use_w_o = false;
  s.use_output_bias = false;
  const auto cell = [](StageKind k, int h, int r, int c) { return CellRef{StageId::of_head(k, h), r, c}; };
  const auto layer = [](StageKind k, int r, int c) { return CellRef{StageId::input(k), r, c}; };
  EXPECT_EQ(copied_from(s, cell(StageKind::HeadQ, 2, 3, 1)), layer(StageKind::Q, 3, 9));
  EXPECT_EQ(copied_from(s, layer(StageKind::Concat, 7, 9)), cell(StageKind::Context, 2, 7, 1));
  EXPECT_EQ(copied_from(s, layer(StageKind::Output, 7, 9)), layer(StageKind::Concat, 7, 9));
  EXPECT_EQ(copy_source(s, layer(StageKind::Output, 7, 9)), cell(StageKind::Context, 2, 7, 1));
  EXPECT_EQ(copied_from(s, cell(StageKind::Masked, 0, 5, 2)), cell(StageKind::Scaled, 0, 5, 2));  // allowed
  EXPECT_FALSE(copied_from(s, cell(StageKind::Masked, 0, 2, 5)).has_value());  // −∞
  EXPECT_FALSE(copied_from(s, cell(StageKind::Scaled, 0, 2, 1)).has_value());  // divided by √4
  EXPECT_FALSE(copied_from(s, cell(StageKind::Scores, 0, 2, 1)).has_value());
  EXPECT_FALSE(copied_from(s, cell(StageKind::Weights, 0, 2, 1)).has_value());
  EXPECT_FALSE(copied_from(s, layer(StageKind::Q, 2, 1)).has_value());
  s.use_w_o = true;
  EXPECT_FALSE(copied_from(s, layer(StageKind::Output, 7, 9)).has_value());
  s.use_w_o = false;
  s.use_output_bias = true;  // output = concat + b_o
  EXPECT_FALSE(copied_from(s, layer(StageKind::Output, 7, 9)).has_value());
  s.scale = false;
  EXPECT_EQ(copied_from(s, cell(StageKind::Scaled, 0, 2, 1)), cell(StageKind::Scores, 0, 2, 1));
  s.temperature = 0.5f;
  EXPECT_FALSE(copied_from(s, cell(StageKind::Scaled, 0, 2, 1)).has_value());
  // A pinned cell holds its pin, not its source's number.
  s.pins[PinKey{StageId::input(StageKind::Concat), 7, 9}] = 0.5f;
  EXPECT_FALSE(copied_from(s, layer(StageKind::Concat, 7, 9)).has_value());
}

TEST(QuizPick, NeverAsksForACopyOfAnotherCell) {
  // Without W_o the output is the concat, which is the contexts; with scaling
  // off the scaled scores are the scores; masked = scaled where allowed; Q[h]
  // is a slice of Q. None of these may be asked: the answer is on screen.
  Scenario s = preset("multi-head");
  s.use_w_o = false;
  s.scale = false;
  const Document doc(s);
  std::set<StageKind> kinds;
  for (std::uint64_t seed = 0; seed < 400; ++seed) {
    const auto cell = pick_random_cell(doc, {}, seed);
    ASSERT_TRUE(cell.has_value());
    EXPECT_FALSE(copied_from(doc.scenario(), *cell).has_value()) << to_string(*cell);
    kinds.insert(cell->stage.kind);
  }
  EXPECT_EQ(kinds, (std::set<StageKind>{StageKind::Q, StageKind::K, StageKind::V, StageKind::Scores,
                                        StageKind::Weights, StageKind::Context}));
  // A step that shows only copies has no fair question.
  EXPECT_FALSE(pick_random_cell(doc, {StageId::input(StageKind::Concat), StageId::input(StageKind::Output),
                                      StageId::of_head(StageKind::Scaled, 1), StageId::of_head(StageKind::HeadQ, 0)},
                                3)
                   .has_value());
}

// [SECTION] Questions from a document

TEST(QuizQuestion, ATeachersCellAsksForItsValue) {
  const Document doc(preset("fat-cat"));
  const auto q = make_question(doc, CellRef{head(StageKind::Weights), 2, 1}, 0.02);
  ASSERT_TRUE(q.has_value());
  EXPECT_NEAR(q->truth, 0.614, 5e-4);
  EXPECT_EQ(q->tolerance, 0.02);
}

TEST(QuizQuestion, MinusInfinityAndMissingCellsMakeNoQuestion) {
  const Document doc(preset("fat-cat"));  // causal: masked[0][0][1] is −∞
  EXPECT_FALSE(make_question(doc, CellRef{head(StageKind::Masked), 0, 1}).has_value());
  EXPECT_FALSE(make_question(doc, CellRef{head(StageKind::Weights), 7, 0}).has_value());
  EXPECT_FALSE(make_question(doc, CellRef{head(StageKind::Weights, 1), 0, 0}).has_value());
}

TEST(QuizPick, TheSameSeedPicksTheSameCell) {
  const Document doc(preset("multi-head"));
  for (std::uint64_t seed : {1u, 2u, 99u}) EXPECT_EQ(pick_random_cell(doc, {}, seed), pick_random_cell(doc, {}, seed));
}

TEST(QuizPick, DifferentSeedsReachEveryFairCell) {
  const Document doc(preset("fat-cat"));  // causal, T = 7: 28 allowed weights
  std::set<CellRef> seen;
  for (std::uint64_t seed = 0; seed < 2000; ++seed) {
    const auto cell = pick_random_cell(doc, {head(StageKind::Weights)}, seed);
    ASSERT_TRUE(cell.has_value());
    seen.insert(*cell);
  }
  EXPECT_EQ(seen.size(), 27u);  // row 0 sees only itself: its weight is a forced 1
}

TEST(QuizPick, NeverPicksMinusInfinityOrAWeightTheMaskForcesToZeroOrOne) {
  const Document doc(preset("fat-cat"));
  for (std::uint64_t seed = 0; seed < 300; ++seed) {
    const auto cell =
        pick_random_cell(doc, {head(StageKind::Masked), head(StageKind::Weights)}, seed);
    ASSERT_TRUE(cell.has_value());
    EXPECT_LE(cell->col, cell->row) << to_string(*cell);  // causal: only on or below the diagonal
    EXPECT_GT(cell->row, 0) << to_string(*cell);            // row 0's only weight is 1
    EXPECT_EQ(cell->stage.kind, StageKind::Weights) << to_string(*cell);  // masked = scaled where allowed
    EXPECT_TRUE(std::isfinite(doc.stage(cell->stage)(cell->row, cell->col)));
  }
}

TEST(QuizPick, OnlyThePickedStagesAreUsed) {
  const Document doc(preset("multi-head"));
  const std::vector<StageId> stages = {head(StageKind::Scores, 2), StageId::input(StageKind::Concat)};
  for (std::uint64_t seed = 0; seed < 100; ++seed) {
    const auto cell = pick_random_cell(doc, stages, seed);
    ASSERT_TRUE(cell.has_value());
    EXPECT_TRUE(cell->stage == stages[0] || cell->stage == stages[1]) << to_string(*cell);
  }
}

TEST(QuizPick, NoStagesMeansEveryComputedStageAndNoInput) {
  const Document doc(preset("book"));
  std::set<StageKind> kinds;
  for (std::uint64_t seed = 0; seed < 500; ++seed) {
    const auto cell = pick_random_cell(doc, {}, seed);
    ASSERT_TRUE(cell.has_value());
    EXPECT_FALSE(is_input(cell->stage.kind)) << to_string(*cell);
    kinds.insert(cell->stage.kind);
  }
  EXPECT_GT(kinds.size(), 5u);
}

TEST(QuizPick, StagesTheScenarioDoesNotHaveAreIgnored) {
  const Document doc(preset("fat-cat"));  // one head
  EXPECT_FALSE(pick_random_cell(doc, {head(StageKind::Weights, 3)}, 1).has_value());
  const auto cell = pick_random_cell(doc, {head(StageKind::Weights, 3), StageId::input(StageKind::Q)}, 1);
  ASSERT_TRUE(cell.has_value());
  EXPECT_EQ(cell->stage, StageId::input(StageKind::Q));
}

TEST(QuizPick, NothingQualifiesWhenEveryCellIsMasked) {
  Document doc(preset("book"));
  ASSERT_EQ(doc.apply(SetMask{MaskKind::Custom, Matrix::Zero(6, 6)}), "");
  EXPECT_FALSE(pick_random_cell(doc, {head(StageKind::Masked), head(StageKind::Weights)}, 7).has_value());
}

TEST(Quiz, AnAnswerWorkedOutFromThePrintedNumbersIsRightAndSaysSo) {
  Question q{CellRef{StageId::of_head(StageKind::Scores, 0), 6, 1}, 2.7018, 0.01, "S₀[6,1]", {}, {{1, 2.64}, {2, 2.6981}}};
  const AnswerCheck from_one_decimal = check_answer(q, "2.64");
  EXPECT_TRUE(from_one_decimal.correct);
  EXPECT_EQ(from_one_decimal.from_screen_decimals, 1);
  EXPECT_EQ(from_one_decimal.message,
            "Right: from the numbers on screen, rounded to 1 decimal, that is 2.64 (you said 2.64); with every digit S₀[6,1] is 2.702.");
  const AnswerCheck exact = check_answer(q, "2.70");
  EXPECT_TRUE(exact.correct);
  EXPECT_EQ(exact.from_screen_decimals, 0);
  EXPECT_FALSE(check_answer(q, "2.5").correct);
}

TEST(Quiz, TheValueFromRoundedSourcesIsTheCellComputedFromPrintedInputs) {
  const Document doc(*make_preset("fat-cat"));
  const CellRef cell{StageId::of_head(StageKind::Scores, 0), 6, 1};
  const auto v = value_from_rounded_sources(doc, cell, 1);
  ASSERT_TRUE(v);
  double by_hand = 0.0;
  const auto q = doc.stage(StageId::of_head(StageKind::HeadQ, 0)), k = doc.stage(StageId::of_head(StageKind::HeadK, 0));
  for (Eigen::Index i = 0; i < q.cols(); ++i)
    by_hand += std::round(static_cast<double>(q(6, i)) * 10.0) / 10.0 * (std::round(static_cast<double>(k(1, i)) * 10.0) / 10.0);
  EXPECT_NEAR(*v, by_hand, 1e-5);
  EXPECT_FALSE(value_from_rounded_sources(doc, CellRef{StageId::input(StageKind::X), 0, 0}, 1));  // an input has no sources
}

TEST(Quiz, AWeightsRowIsHiddenWithItForItsOtherWeightsWouldGiveItAway) {
  const Scenario s = *make_preset("fat-cat");
  const CellRef asked{StageId::of_head(StageKind::Weights, 0), 1, 0};
  EXPECT_TRUE(gives_away(s, asked, asked));
  EXPECT_TRUE(gives_away(s, asked, CellRef{asked.stage, 1, 1}));   // 1 − this is the answer
  EXPECT_FALSE(gives_away(s, asked, CellRef{asked.stage, 2, 0}));  // another row
  EXPECT_FALSE(gives_away(s, asked, CellRef{StageId::of_head(StageKind::Masked, 0), 1, 0}));  // what it is computed from
  const CellRef score{StageId::of_head(StageKind::Scores, 0), 3, 2};
  EXPECT_FALSE(gives_away(s, score, CellRef{score.stage, 3, 1}));  // scores do not add up to anything
}
