// Quizzes: reading typed answers, checking them with a tolerance, the tally,
// and picking fair cells at random.

#include "attention_lab/quiz.h"

#include "test_support.h"

#include <cmath>
#include <limits>
#include <set>

using namespace attention_lab;
using attention_lab::test::preset;

namespace {
StageId head_stage(StageKind k, int h = 0) { return StageId::of_head(k, h); }
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
  const Question q{CellRef{head_stage(StageKind::Weights), 2, 1}, 0.6139548, 0.01};
  const AnswerCheck c = check_answer(q, "0.61");
  EXPECT_TRUE(c.understood);
  EXPECT_TRUE(c.correct);
  EXPECT_NEAR(c.error, -0.0039548, 1e-9);
  EXPECT_EQ(c.message, "Right: weights[0][2][1] is 0.614 (you said 0.61).");
}

TEST(QuizCheck, AWrongAnswerSaysByHowMuchAndWhatCounts) {
  const Question q{CellRef{head_stage(StageKind::Scores), 3, 2}, 2.8012, 0.01};
  const AnswerCheck c = check_answer(q, "2.7");
  EXPECT_TRUE(c.understood);
  EXPECT_FALSE(c.correct);
  EXPECT_NEAR(c.allowed, 0.028012, 1e-12);
  EXPECT_EQ(c.message, "Not quite: scores[0][3][2] is 2.801, you said 2.7 (off by 0.1012; within 0.02801 counts as right).");
}

TEST(QuizCheck, MessagesNameTheCellAsTheLearnerSeesIt) {
  const Document doc(attention_lab::test::preset("fat-cat"));
  const auto q = make_question(doc, CellRef{head_stage(StageKind::Weights), 3, 2});
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->name, "A₀[3,2]");
  EXPECT_EQ(check_answer(*q, "12345").message.rfind("Not quite: A₀[3,2] is ", 0), 0u);
  EXPECT_EQ(check_answer(*q, std::to_string(q->truth)).message.rfind("Right: A₀[3,2] is ", 0), 0u);
}

TEST(QuizCheck, TextThatIsNotANumberAsksAgain) {
  const Question q{CellRef{head_stage(StageKind::Weights), 0, 0}, 1.0, 0.01};
  const AnswerCheck c = check_answer(q, "one");
  EXPECT_FALSE(c.understood);
  EXPECT_FALSE(c.correct);
  EXPECT_EQ(c.message, "Please type a number, such as 0.25 or -1.5.");
}

TEST(QuizTally, CountsQuestionsAnsweredAndRightOnes) {
  const Question q{CellRef{head_stage(StageKind::Weights), 0, 0}, 0.25, 0.01};
  QuizTally tally;
  EXPECT_EQ(tally.text(), "0 of 0 right");
  tally.record(check_answer(q, "0.25"));
  tally.record(check_answer(q, "0.5"));
  tally.record(check_answer(q, "a quarter"));  // not a number: not counted
  tally.record(check_answer(q, "−0.25"));
  tally.record(check_answer(q, ".251"));
  EXPECT_EQ(tally.asked, 4);
  EXPECT_EQ(tally.right, 2);
  EXPECT_EQ(tally.text(), "2 of 4 right");
  tally.reset();
  EXPECT_EQ(tally.asked, 0);
}

// [SECTION] Questions from a document

TEST(QuizQuestion, ATeachersCellAsksForItsValue) {
  const Document doc(preset("fat-cat"));
  const auto q = make_question(doc, CellRef{head_stage(StageKind::Weights), 2, 1}, 0.02);
  ASSERT_TRUE(q.has_value());
  EXPECT_NEAR(q->truth, 0.614, 5e-4);
  EXPECT_EQ(q->tolerance, 0.02);
}

TEST(QuizQuestion, MinusInfinityAndMissingCellsMakeNoQuestion) {
  const Document doc(preset("fat-cat"));  // causal: masked[0][0][1] is −∞
  EXPECT_FALSE(make_question(doc, CellRef{head_stage(StageKind::Masked), 0, 1}).has_value());
  EXPECT_FALSE(make_question(doc, CellRef{head_stage(StageKind::Weights), 7, 0}).has_value());
  EXPECT_FALSE(make_question(doc, CellRef{head_stage(StageKind::Weights, 1), 0, 0}).has_value());
}

TEST(QuizPick, TheSameSeedPicksTheSameCell) {
  const Document doc(preset("multi-head"));
  for (std::uint64_t seed : {1u, 2u, 99u}) EXPECT_EQ(pick_random_cell(doc, {}, seed), pick_random_cell(doc, {}, seed));
}

TEST(QuizPick, DifferentSeedsReachEveryFairCell) {
  const Document doc(preset("fat-cat"));  // causal, T = 7: 28 allowed weights
  std::set<CellRef> seen;
  for (std::uint64_t seed = 0; seed < 2000; ++seed) {
    const auto cell = pick_random_cell(doc, {head_stage(StageKind::Weights)}, seed);
    ASSERT_TRUE(cell.has_value());
    seen.insert(*cell);
  }
  EXPECT_EQ(seen.size(), 28u);
}

TEST(QuizPick, NeverPicksMinusInfinityOrAWeightTheMaskForcesToZero) {
  const Document doc(preset("fat-cat"));
  for (std::uint64_t seed = 0; seed < 300; ++seed) {
    const auto cell =
        pick_random_cell(doc, {head_stage(StageKind::Masked), head_stage(StageKind::Weights)}, seed);
    ASSERT_TRUE(cell.has_value());
    EXPECT_LE(cell->col, cell->row) << to_string(*cell);  // causal: only on or below the diagonal
    EXPECT_TRUE(std::isfinite(doc.stage(cell->stage)(cell->row, cell->col)));
  }
}

TEST(QuizPick, OnlyThePickedStagesAreUsed) {
  const Document doc(preset("multi-head"));
  const std::vector<StageId> stages = {head_stage(StageKind::Scores, 2), StageId::input(StageKind::Concat)};
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
  EXPECT_FALSE(pick_random_cell(doc, {head_stage(StageKind::Weights, 3)}, 1).has_value());
  const auto cell = pick_random_cell(doc, {head_stage(StageKind::Weights, 3), StageId::input(StageKind::Q)}, 1);
  ASSERT_TRUE(cell.has_value());
  EXPECT_EQ(cell->stage, StageId::input(StageKind::Q));
}

TEST(QuizPick, NothingQualifiesWhenEveryCellIsMasked) {
  Document doc(preset("book"));
  ASSERT_EQ(doc.apply(SetMask{MaskKind::Custom, Matrix::Zero(6, 6)}), "");
  EXPECT_FALSE(pick_random_cell(doc, {head_stage(StageKind::Masked), head_stage(StageKind::Weights)}, 7).has_value());
}
