// The inspector's derivations tell how a cell was computed with the real
// numbers: the terms shown are the engine's operands and the totals are the
// engine's values, formatted as the app formats them.

#include "logic/derivation.h"
#include "gui_test_support.h"

#include "attention_lab/presets.h"
#include "attention_lab/stage_info.h"
#include "logic/number_format.h"

#include <gtest/gtest.h>

#include <limits>
#include <numbers>
#include <string>

using namespace attention_lab;
using namespace attention_lab::gui;
using namespace attention_lab::gui_test;

namespace {



bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++n;
  return n;
}

// "a₀×b₀ + a₁×b₁ + …" for every term, as a learner would write the dot product out.
std::string all_terms(const RowVector& a, const RowVector& b) {
  std::string s;
  for (Eigen::Index i = 0; i < a.size(); ++i) s += (i ? " + " : "") + format_factor(a[i]) + "×" + format_factor(b[i]);
  return s;
}

}  // namespace

// [SECTION] Scores: q_r · k_c

TEST(Derivation, AFatCatScoreIsTheDotProductOfAQueryRowAndAKeyRow) {
  const Document doc = open("fat-cat");
  const Derivation d = derive(doc, head(StageKind::Scores, 0), 2, 1);
  EXPECT_TRUE(contains(d.title, "S₀[2,1]")) << d.title;
  EXPECT_TRUE(contains(d.title, "('cat' → 'fat')")) << d.title;
  EXPECT_TRUE(contains(d.formula, "q₂·k₁")) << d.formula;
  const RowVector q = doc.stage(head(StageKind::HeadQ, 0)).row(2);
  const RowVector k = doc.stage(head(StageKind::HeadK, 0)).row(1);
  const float engine = doc.stage(head(StageKind::Scores, 0))(2, 1);
  EXPECT_EQ(d.numbers, all_terms(q, k) + " = " + format_number(engine, 3));
  EXPECT_TRUE(d.note.empty()) << d.note;
}

TEST(Derivation, SpeaksInTheScenariosLetters) {
  Scenario s = *make_preset("fat-cat");
  s.symbols = {{"S", "ω"}, {"A", "α"}, {"C", "z"}};
  const Document doc(s);
  const Derivation score = derive(doc, head(StageKind::Scores, 0), 2, 1);
  EXPECT_TRUE(contains(score.title, "ω₀[2,1]")) << score.title;
  const Derivation context = derive(doc, head(StageKind::Context, 0), 2, 1);
  EXPECT_TRUE(contains(context.title, "z₀[2,1]")) << context.title;
  EXPECT_TRUE(contains(context.formula, "Σⱼ α₀[2,j] × V₀[j,1]")) << context.formula;
  // The numbers are the same as in our letters.
  EXPECT_EQ(context.numbers, derive(Document(*make_preset("fat-cat")), head(StageKind::Context, 0), 2, 1).numbers);
}

TEST(Derivation, CountsRowsColumnsAndHeadsFromTheScenariosBase) {
  Scenario s = *make_preset("fat-cat");
  s.index_base = 1;
  const Document doc(s);
  const Derivation score = derive(doc, head(StageKind::Scores, 0), 2, 1);
  EXPECT_TRUE(contains(score.title, "S₁[3,2]")) << score.title;
  EXPECT_TRUE(contains(score.formula, "q₃·k₂  (row 3 of Q₁ · row 2 of K₁)")) << score.formula;
  const Derivation context = derive(doc, head(StageKind::Context, 0), 2, 1);
  EXPECT_TRUE(contains(context.formula, "Σⱼ A₁[3,j] × V₁[j,2]")) << context.formula;
  const Derivation weight = derive(doc, head(StageKind::Weights, 0), 2, 1);
  EXPECT_TRUE(contains(weight.formula, "e^(Ŝ₃₂ − max)")) << weight.formula;
  // The numbers are the same cell's, whatever it is called.
  EXPECT_EQ(context.numbers, derive(Document(*make_preset("fat-cat")), head(StageKind::Context, 0), 2, 1).numbers);
}

TEST(Derivation, PositionsStayPositionsWhenCountingFromOne) {
  Scenario s = *make_preset("fat-cat");
  s.index_base = 1;
  s.rope.on = true;
  const Document doc(s);
  // Row 2 is the third token, at position 2: φ = 2·θ…, whatever the row is called.
  const Derivation angle = derive(doc, StageId::input(StageKind::RopeAngle), 2, 0);
  EXPECT_EQ(angle.formula.rfind("φ = 2·", 0), 0u) << angle.formula;
  EXPECT_TRUE(contains(angle.note, "Turns dimensions 1 and ")) << angle.note;
}

TEST(Derivation, EveryBookScoreShowsItsTermsAndTheEngineTotal) {
  const Document doc = open("book");  // d_k = 2: two terms per score
  const MatrixView scores = doc.stage(head(StageKind::Scores, 0));
  for (int r = 0; r < scores.rows(); ++r)
    for (int c = 0; c < scores.cols(); ++c) {
      const Derivation d = derive(doc, head(StageKind::Scores, 0), r, c);
      const RowVector q = doc.stage(head(StageKind::HeadQ, 0)).row(r);
      const RowVector k = doc.stage(head(StageKind::HeadK, 0)).row(c);
      EXPECT_TRUE(contains(d.formula, "q" + subscript(r) + "·k" + subscript(c))) << d.formula;
      EXPECT_EQ(d.numbers, all_terms(q, k) + " = " + format_number(scores(r, c), 3)) << r << "," << c;
    }
}

TEST(Derivation, TheBooksJourneyQueryLooksAtJourney) {
  const Document doc = open("book");
  const Derivation d = derive(doc, head(StageKind::Scores, 0), 1, 1);
  EXPECT_TRUE(contains(d.title, "('journey' → 'journey')")) << d.title;
  EXPECT_TRUE(contains(d.formula, "row 1 of Q₀ · row 1 of K₀")) << d.formula;
}

TEST(Derivation, AScaledScoreIsTheScoreOverTheSquareRootOfDk) {
  const Document doc = open("fat-cat");  // d_k = 4
  const Derivation d = derive(doc, head(StageKind::Scaled, 0), 2, 1);
  EXPECT_EQ(d.formula, "S₀[2,1] / √4");
  EXPECT_EQ(d.numbers, format_number(doc.stage(head(StageKind::Scores, 0))(2, 1), 3) + " / 2.000 = " +
                           format_number(doc.stage(head(StageKind::Scaled, 0))(2, 1), 3));
}

// [SECTION] Mask and softmax

TEST(Derivation, AMaskedCellSaysTheMaskForbidsIt) {
  const Document doc = open("fat-cat");  // causal: 'fat' (1) may not look ahead at 'sat' (3)
  ASSERT_EQ(doc.stage(head(StageKind::Masked, 0))(1, 3), -std::numeric_limits<float>::infinity());
  const Derivation d = derive(doc, head(StageKind::Masked, 0), 1, 3);
  EXPECT_TRUE(contains(d.formula, "−∞")) << d.formula;
  EXPECT_TRUE(contains(d.formula, "the mask forbids it")) << d.formula;
  EXPECT_TRUE(contains(d.numbers, "'fat' may not look at 'sat'")) << d.numbers;
}

TEST(Derivation, AnAllowedMaskedCellIsTheScaledScore) {
  const Document doc = open("fat-cat");
  const Derivation d = derive(doc, head(StageKind::Masked, 0), 3, 2);
  EXPECT_TRUE(contains(d.formula, "the mask allows it")) << d.formula;
  EXPECT_EQ(d.numbers, format_number(doc.stage(head(StageKind::Scaled, 0))(3, 2), 3));
}

TEST(Derivation, AWeightIsTheExponentialOverTheRowSumMinusTheMax) {
  const Document doc = open("fat-cat");
  const Derivation d = derive(doc, head(StageKind::Weights, 0), 2, 1);
  EXPECT_TRUE(contains(d.formula, "e^(Ŝ₂₁ − max)")) << d.formula;
  const RowVector masked = doc.stage(head(StageKind::Masked, 0)).row(2);
  const std::string max = format_number(masked.maxCoeff(), 3);
  EXPECT_TRUE(d.numbers.starts_with("e^(" + format_number(masked[1], 3) + " − " + max + ")")) << d.numbers;
  EXPECT_TRUE(ends_with(d.numbers, " = " + format_number(doc.stage(head(StageKind::Weights, 0))(2, 1), 3)))
      << d.numbers;
}

TEST(Derivation, EveryWeightOfTheFatCatAndTheBookEqualsTheEnginesToThreeDecimals) {
  for (const char* preset : {"fat-cat", "book"}) {
    const Document doc = open(preset);
    const MatrixView weights = doc.stage(head(StageKind::Weights, 0));
    for (int r = 0; r < weights.rows(); ++r)
      for (int c = 0; c < weights.cols(); ++c) {
        const Derivation d = derive(doc, head(StageKind::Weights, 0), r, c);
        EXPECT_TRUE(ends_with(d.numbers, " = " + format_number(weights(r, c), 3)))
            << preset << " " << r << "," << c << ": " << d.numbers;
      }
  }
}

TEST(Derivation, AWeightOfAMaskedKeyIsExactlyZero) {
  const Document doc = open("fat-cat");
  const Derivation d = derive(doc, head(StageKind::Weights, 0), 1, 3);
  EXPECT_TRUE(ends_with(d.numbers, " = 0.000")) << d.numbers;
  EXPECT_TRUE(contains(d.numbers, "e^(−∞ − ")) << d.numbers;
  EXPECT_EQ(d.note, "A masked key gets exactly 0.");
}

TEST(Derivation, ANegativeRowMaxIsParenthesisedNotWrittenAsMinusMinus) {
  // naive's scores are mostly negative, so the row max is often negative
  const Document doc = open("naive");
  const MatrixView masked = doc.stage(head(StageKind::Masked, 0));
  bool saw_negative_max = false;
  for (int r = 0; r < masked.rows(); ++r) {
    const float max = masked.row(r).maxCoeff();
    if (max >= 0.0f) continue;
    saw_negative_max = true;
    for (int c = 0; c < masked.cols(); ++c) {
      const Derivation d = derive(doc, head(StageKind::Weights, 0), r, c);
      EXPECT_FALSE(contains(d.numbers, "− −")) << d.numbers;
      EXPECT_TRUE(contains(d.numbers, " − " + format_factor(max, 3) + ")")) << d.numbers;
    }
  }
  EXPECT_TRUE(saw_negative_max);
}

TEST(Derivation, ARowWithAnInfiniteScoreIsNotCalledARowWithNoAllowedKey) {
  // A huge embedding makes one score overflow to +∞ (book: no mask, all values positive).
  Document doc = open("book");
  ASSERT_EQ(doc.apply(SetCell{in(StageKind::X), 1, 0, 1e30f}), "");
  const MatrixView masked = doc.stage(head(StageKind::Masked, 0));
  const MatrixView weights = doc.stage(head(StageKind::Weights, 0));
  ASSERT_EQ(masked(1, 1), std::numeric_limits<float>::infinity());
  for (int c = 0; c < weights.cols(); ++c) {
    const Derivation d = derive(doc, head(StageKind::Weights, 0), 1, c);
    EXPECT_FALSE(contains(d.formula, "no allowed key")) << d.formula;
    EXPECT_TRUE(contains(d.formula, "+∞")) << d.formula;
    EXPECT_TRUE(ends_with(d.numbers, format_number(weights(1, c), 3))) << c << ": " << d.numbers;
  }
}

TEST(Derivation, ARowHoldingNaNSaysItsWeightsAreNaN) {
  // q₁ gets an infinite entry (1e30 × 1e30 overflows) and every key is exactly 0
  // in that column, so each score q₁·k_c contains ∞ × 0 = NaN whatever the
  // order or fusing of the float operations.
  Document doc = open("naive");
  ASSERT_EQ(doc.apply(SetCell{in(StageKind::W_q), 0, 0, 1e30f}), "");
  ASSERT_EQ(doc.apply(SetCell{in(StageKind::X), 1, 0, 1e30f}), "");
  for (int r = 0; r < 4; ++r) ASSERT_EQ(doc.apply(SetCell{in(StageKind::W_k), r, 0, 0.0f}), "");
  ASSERT_EQ(doc.apply(SetCell{in(StageKind::b_k), 0, 0, 0.0f}), "");
  ASSERT_TRUE(doc.stage(head(StageKind::Masked, 0)).row(1).hasNaN());
  const MatrixView weights = doc.stage(head(StageKind::Weights, 0));
  for (int c = 0; c < weights.cols(); ++c) {
    const Derivation d = derive(doc, head(StageKind::Weights, 0), 1, c);
    EXPECT_TRUE(contains(d.formula, "NaN")) << d.formula;
    EXPECT_FALSE(contains(d.formula, "no allowed key")) << d.formula;
    EXPECT_EQ(d.numbers, format_number(weights(1, c), 3)) << c;
  }
}

TEST(Derivation, ARowTheMaskEmptiesSaysSo) {
  Document doc = open("fat-cat");
  ASSERT_EQ(doc.apply(SetCell{in(StageKind::Mask), 0, 0, 0.0f}), "");  // 'the' may look at nothing now
  const Derivation d = derive(doc, head(StageKind::Weights, 0), 0, 0);
  EXPECT_TRUE(contains(d.formula, "no allowed key")) << d.formula;
  EXPECT_EQ(doc.stage(head(StageKind::Weights, 0))(0, 0), 0.0f);
  EXPECT_TRUE(d.numbers.starts_with("0 ")) << d.numbers;
}

// [SECTION] Context, projections and output

TEST(Derivation, ABookContextCellIsTheWeightedSumOfAValueColumn) {
  const Document doc = open("book");  // T = 6: every term fits
  const Derivation d = derive(doc, head(StageKind::Context, 0), 1, 0);
  EXPECT_EQ(d.formula, "Σⱼ A₀[1,j] × V₀[j,0]");
  const RowVector a = doc.stage(head(StageKind::Weights, 0)).row(1);
  const RowVector v = doc.stage(head(StageKind::HeadV, 0)).col(0).transpose();
  EXPECT_EQ(d.numbers, all_terms(a, v) + " = " + format_number(doc.stage(head(StageKind::Context, 0))(1, 0), 3));
  EXPECT_TRUE(contains(d.title, "(token 'journey')")) << d.title;
}

TEST(Derivation, AFatCatContextCellEndsWithTheEngineValue) {
  const Document doc = open("fat-cat");  // T = 7: one term more than shown
  const Derivation d = derive(doc, head(StageKind::Context, 0), 2, 1);
  EXPECT_TRUE(contains(d.numbers, " + … (7 terms) = ")) << d.numbers;
  EXPECT_TRUE(ends_with(d.numbers, " = " + format_number(doc.stage(head(StageKind::Context, 0))(2, 1), 3)));
}

TEST(Derivation, AQueryIsAnEmbeddingRowTimesAWeightColumn) {
  const Document doc = open("fat-cat");
  const Derivation d = derive(doc, in(StageKind::Q), 2, 1);
  EXPECT_EQ(d.formula, "x₂·W_q[:,1]");
  const RowVector x = doc.stage(in(StageKind::X)).row(2);
  const RowVector w = doc.stage(in(StageKind::W_q)).col(1).transpose();
  EXPECT_EQ(d.numbers, all_terms(x, w) + " = " + format_number(doc.stage(in(StageKind::Q))(2, 1), 3));
}

TEST(Derivation, AHeadsValueViewNamesTheColumnOfTheWholeWeightMatrix) {
  const Document doc = open("multi-head");  // d_v = 4: head 2's column 1 is W_v's column 9
  const Derivation d = derive(doc, head(StageKind::HeadV, 2), 3, 1);
  EXPECT_EQ(d.formula, "x₃·W_v[:,9]");
  EXPECT_TRUE(ends_with(d.numbers, " = " + format_number(doc.stage(head(StageKind::HeadV, 2))(3, 1), 3)));
}

TEST(Derivation, AProjectionWithBiasAddsTheBias) {
  const Document doc = open("naive");
  const Derivation d = derive(doc, in(StageKind::K), 2, 3);
  EXPECT_EQ(d.formula, "x₂·W_k[:,3] + b_k[3]");
  const float b = doc.scenario().b_k(0, 3);
  EXPECT_TRUE(contains(d.numbers, " ; + " + format_factor(b) + " = ")) << d.numbers;
  EXPECT_TRUE(ends_with(d.numbers, " = " + format_number(doc.stage(in(StageKind::K))(2, 3), 3))) << d.numbers;
}

TEST(Derivation, LongSumsShowTheirFirstTermsAndAnEllipsis) {
  const Document doc = open("multi-head");  // d_model = 16
  const Derivation d = derive(doc, in(StageKind::Q), 2, 1);
  EXPECT_EQ(count(d.numbers, "×"), static_cast<std::size_t>(kMaxTermsShown));
  EXPECT_TRUE(contains(d.numbers, " + … (16 terms) = ")) << d.numbers;
  EXPECT_TRUE(ends_with(d.numbers, " = " + format_number(doc.stage(in(StageKind::Q))(2, 1), 3))) << d.numbers;
  // the terms shown are the first ones
  const RowVector x = doc.stage(in(StageKind::X)).row(2);
  const RowVector w = doc.stage(in(StageKind::W_q)).col(1).transpose();
  EXPECT_TRUE(d.numbers.starts_with(all_terms(x.head(kMaxTermsShown), w.head(kMaxTermsShown)) + " + …"))
      << d.numbers;
}

TEST(Derivation, TheOutputWithWoIsAConcatRowTimesAWoColumn) {
  const Document doc = open("multi-head");  // h·d_v = 16 terms
  const Derivation d = derive(doc, in(StageKind::Output), 2, 1);
  EXPECT_EQ(d.formula, "c₂·W_o[:,1]");
  EXPECT_TRUE(contains(d.numbers, "… (16 terms)")) << d.numbers;
  EXPECT_TRUE(ends_with(d.numbers, " = " + format_number(doc.stage(in(StageKind::Output))(2, 1), 3))) << d.numbers;
}

TEST(Derivation, TheOutputWithoutWoIsTheConcatenatedContext) {
  const Document doc = open("book");
  const Derivation d = derive(doc, in(StageKind::Output), 2, 1);
  EXPECT_TRUE(contains(d.formula, "(no W_o)")) << d.formula;
  EXPECT_EQ(d.numbers, format_number(doc.stage(head(StageKind::Context, 0))(2, 1), 3));
}

TEST(Derivation, AConcatCellNamesTheHeadItComesFrom) {
  const Document doc = open("multi-head");  // d_v = 4: column 13 is head 3's column 1
  const Derivation d = derive(doc, in(StageKind::Concat), 5, 13);
  EXPECT_EQ(d.formula, "C₃[5,1]");
  EXPECT_EQ(d.numbers, "head 3's context, column 1 = " + format_number(doc.stage(head(StageKind::Context, 3))(5, 1), 3));
}

TEST(Derivation, AnInputSaysHowToEditIt) {
  const Document doc = open("fat-cat");
  const Derivation x = derive(doc, in(StageKind::X), 2, 2);
  EXPECT_EQ(x.formula, "an input");
  EXPECT_EQ(x.numbers, format_number(1.0f, 4));
  EXPECT_TRUE(contains(x.note, "Drag")) << x.note;
  EXPECT_TRUE(contains(derive(doc, in(StageKind::Mask), 1, 3).note, "toggle"));
}

// [SECTION] Pins

TEST(Derivation, APinnedScoreMentionsThePinAndTheComputedValue) {
  Document doc = open("book");
  const float computed = doc.stage(head(StageKind::Scores, 0))(1, 4);
  ASSERT_EQ(doc.apply(SetPin{{head(StageKind::Scores, 0), 1, 4}, 40.0f}), "");
  const Derivation d = derive(doc, head(StageKind::Scores, 0), 1, 4);
  EXPECT_TRUE(contains(d.note, "Pinned to 40.000")) << d.note;
  EXPECT_TRUE(contains(d.note, "(computed: " + format_number(computed, 3) + ")")) << d.note;
  // the numbers still show how the value would have been computed
  EXPECT_TRUE(ends_with(d.numbers, " = " + format_number(computed, 3))) << d.numbers;
  // and a cell next to it is not pinned
  EXPECT_TRUE(derive(doc, head(StageKind::Scores, 0), 1, 3).note.empty());
}

TEST(Derivation, APinOnAHeadsQueryViewIsFoundThroughQ) {
  Document doc = open("multi-head");
  const float computed = doc.stage(head(StageKind::HeadQ, 2))(1, 3);
  ASSERT_EQ(doc.apply(SetPin{{head(StageKind::HeadQ, 2), 1, 3}, -7.0f}), "");
  const std::string expected = "Pinned to " + format_number(-7.0f, 3) + " (computed: " + format_number(computed, 3);
  EXPECT_TRUE(contains(derive(doc, head(StageKind::HeadQ, 2), 1, 3).note, expected));
  EXPECT_TRUE(contains(derive(doc, in(StageKind::Q), 1, 2 * 4 + 3).note, expected));
  EXPECT_TRUE(derive(doc, head(StageKind::HeadQ, 1), 1, 3).note.empty());  // another head's cell
}

TEST(Derivation, APinnedWeightMentionsThePinAndTheSoftmaxValue) {
  Document doc = open("fat-cat");
  const float computed = doc.stage(head(StageKind::Weights, 0))(4, 0);
  ASSERT_EQ(doc.apply(SetPin{{head(StageKind::Weights, 0), 4, 0}, 0.9f}), "");
  const Derivation d = derive(doc, head(StageKind::Weights, 0), 4, 0);
  EXPECT_TRUE(contains(d.note, "Pinned to 0.900 (computed: " + format_number(computed, 3) + ")")) << d.note;
  EXPECT_FALSE(contains(d.note, "not a probability")) << d.note;  // inside [0, 1]: nothing more to say
}

TEST(Derivation, AWeightPinnedOutsideZeroToOneSaysItIsNoLongerAShare) {
  Document doc = open("fat-cat");
  const StageId w = head(StageKind::Weights, 0);
  for (const float pin : {1.5f, -0.25f}) {
    ASSERT_EQ(doc.apply(SetPin{{w, 4, 0}, pin}), "");
    const MatrixView m = doc.stage(w);
    double sum = 0.0;
    for (int j = 0; j < m.cols(); ++j) sum += static_cast<double>(m(4, j));
    EXPECT_GT(std::abs(sum - 1.0), 0.1);
    const Derivation d = derive(doc, w, 4, 0);
    EXPECT_TRUE(contains(d.note, "A weight outside [0, 1] is not a probability: row 4 now sums to " +
                                     format_number(static_cast<float>(sum), 3) + ", not 1."))
        << d.note;
    // The row's other cells are not pinned: no note there.
    EXPECT_TRUE(derive(doc, w, 4, 1).note.empty()) << derive(doc, w, 4, 1).note;
  }
  // A pinned score may be any number: no such remark.
  ASSERT_EQ(doc.apply(SetPin{{head(StageKind::Scores, 0), 4, 0}, 40.0f}), "");
  EXPECT_FALSE(contains(derive(doc, head(StageKind::Scores, 0), 4, 0).note, "probability"));
}

// [SECTION] Titles

TEST(Derivation, TitlesNameTokensOnlyOnTokenAxes) {
  // d_model = T = 6: X is square, but its columns are features, not tokens,
  // and W_q's rows are features too.
  Document doc = open("book");
  ASSERT_EQ(doc.apply(SetDimension{Dimension::d_model, 6}), "");
  ASSERT_EQ(doc.scenario().T(), doc.scenario().d_model());
  const Derivation x = derive(doc, in(StageKind::X), 0, 1);
  EXPECT_FALSE(contains(x.title, "→")) << x.title;
  EXPECT_TRUE(contains(x.title, "(token 'Your')")) << x.title;
  const Derivation w = derive(doc, in(StageKind::W_q), 1, 0);
  EXPECT_FALSE(contains(w.title, "'")) << w.title;
  // T×T stages still name both tokens
  EXPECT_TRUE(contains(derive(doc, head(StageKind::Weights, 0), 0, 1).title, "('Your' → 'journey')"));
  EXPECT_TRUE(contains(derive(doc, in(StageKind::Mask), 0, 1).title, "('Your' → 'journey')"));
}

TEST(Derivation, ACellOutsideTheStageDerivesNothing) {
  const Document doc = open("fat-cat");
  for (const auto& [r, c] : {std::pair{-1, 0}, std::pair{0, -1}, std::pair{7, 0}, std::pair{0, 7}}) {
    const Derivation d = derive(doc, head(StageKind::Scores, 0), r, c);
    EXPECT_TRUE(d.title.empty() && d.formula.empty() && d.numbers.empty() && d.note.empty()) << r << "," << c;
  }
}

// [SECTION] Quiz hints: the arithmetic without its result

// The hint of every computed cell ends at its question mark (or names a copy)
// and never prints the cell's value after an "=": the learner finishes the sum.
TEST(DerivationHint, EveryComputedCellGetsAHintThatStopsBeforeItsValue) {
  for (const char* preset : {"fat-cat", "book", "naive", "multi-head"}) {
    for (const bool w_o : {true, false}) {
      Document doc(*make_preset(preset));
      // Through the edit, which fills W_o when a preset has none.
      ASSERT_EQ(doc.apply(SetToggle{Toggle::OutputProjection, w_o}), "") << preset;
      for (const StageId id : pipeline(doc.scenario())) {
        if (is_input(id.kind)) continue;
        const MatrixView m = doc.stage(id);
        for (int r = 0; r < m.rows(); ++r)
          for (int c = 0; c < m.cols(); ++c) {
            const Derivation d = derive(doc, id, r, c);
            const std::string where = std::string(preset) + " " + to_string(id) + "[" + std::to_string(r) + "," +
                                      std::to_string(c) + "]";
            ASSERT_FALSE(d.hint.empty()) << where;
            EXPECT_FALSE(contains(d.hint, "= " + format_number(m(r, c), 3))) << where << ": " << d.hint;
            if (id.kind != StageKind::Masked && id.kind != StageKind::Concat) {
              EXPECT_TRUE(ends_with(d.hint, " = ?")) << where << ": " << d.hint;
            }
          }
      }
    }
  }
}

TEST(DerivationHint, ADotProductShowsEveryTermAndAsksForTheSum) {
  const Document doc = open("fat-cat");
  const Derivation d = derive(doc, head(StageKind::Scores, 0), 3, 2);
  const RowVector q = doc.stage(head(StageKind::HeadQ, 0)).row(3), k = doc.stage(head(StageKind::HeadK, 0)).row(2);
  EXPECT_EQ(d.hint, all_terms(q, k) + " = ?");
  EXPECT_EQ(d.numbers, all_terms(q, k) + " = " + format_number(doc.stage(head(StageKind::Scores, 0))(3, 2), 3));
}

TEST(DerivationHint, AHintShowsEveryTermOfASumTheLearnerCanAddByHand) {
  const Document doc = open("fat-cat");  // T = 7: a context cell sums 7 terms, the inspector shows 6
  const Derivation d = derive(doc, head(StageKind::Context, 0), 1, 1);
  const RowVector a = doc.stage(head(StageKind::Weights, 0)).row(1);
  const RowVector v = doc.stage(head(StageKind::HeadV, 0)).col(1).transpose();
  EXPECT_EQ(d.hint, all_terms(a, v) + " = ?");
  EXPECT_TRUE(contains(d.numbers, "(7 terms)")) << d.numbers;
}

TEST(DerivationHint, ASoftmaxWeightShowsItsExponentAndSumButNotTheQuotient) {
  const Document doc = open("fat-cat");
  const Derivation d = derive(doc, head(StageKind::Weights, 0), 2, 1);
  EXPECT_TRUE(ends_with(d.hint, ") / Σⱼ e^(Ŝ₂ⱼ − 1.455) = ?")) << d.hint;
  EXPECT_TRUE(contains(d.hint, "e^(1.455 − 1.455)")) << d.hint;
  EXPECT_FALSE(contains(d.hint, "0.614")) << d.hint;
}

TEST(DerivationHint, AScaledScoreShowsTheDivision) {
  const Document doc = open("fat-cat");  // d_k = 4
  const float score = doc.stage(head(StageKind::Scores, 0))(2, 1);
  EXPECT_EQ(derive(doc, head(StageKind::Scaled, 0), 2, 1).hint, format_number(score, 3) + " / 2.000 = ?");
}

// [SECTION] Which tokens a cell's title names (the registry's axes)

TEST(Derivation, TitlesNameTheTokensOfTheAxesTheRegistryGives) {
  // Cross-attention: a key row is an English word, a weight goes French → English.
  const Document translate = open("translate");
  EXPECT_TRUE(contains(derive(translate, in(StageKind::K), 2, 0).title, "(token 'cat')"))
      << derive(translate, in(StageKind::K), 2, 0).title;
  EXPECT_TRUE(contains(derive(translate, in(StageKind::X_kv), 3, 0).title, "(token 'sleeps')"));
  EXPECT_TRUE(contains(derive(translate, head(StageKind::Weights, 0), 1, 2).title, "('chat' → 'cat')"));
  EXPECT_TRUE(contains(derive(translate, in(StageKind::Q), 1, 0).title, "(token 'chat')"));
  // Weights and the RoPE angles' rows are no tokens: nothing named.
  EXPECT_FALSE(contains(derive(translate, in(StageKind::W_q), 1, 0).title, "token"));
  const Document rope = open("rope");
  const Derivation angle = derive(rope, in(StageKind::RopeAngle), 3, 1);
  EXPECT_TRUE(contains(angle.title, "φ[3,1]")) << angle.title;
  EXPECT_FALSE(contains(angle.title, "token")) << angle.title;
  EXPECT_TRUE(contains(angle.formula, "φ = 3·θ^(−2/4)")) << angle.formula;
  EXPECT_TRUE(contains(angle.note, "Turns dimensions 1 and 3")) << angle.note;
}

// A scaled RoPE (Llama 3): the angle's formula carries the scaling and its
// note says which band the pair is in; the numbers are the scaled ones.
TEST(Derivation, AScaledRopeAngleShowsItsScaledFrequency) {
  Scenario s = *make_preset("rope");
  s.rope.theta = 10000.0f;
  s.rope.scaling = RopeScaling::Linear;
  s.rope.factor = 4.0f;
  const Document linear(s);
  const Derivation angle = derive(linear, in(StageKind::RopeAngle), 3, 1);
  EXPECT_TRUE(contains(angle.formula, "φ = 3·θ^(−2/4) ÷ 4, θ = 10000")) << angle.formula;
  EXPECT_TRUE(contains(angle.numbers, "3 × " + format_number(static_cast<float>(rope_frequency(s.rope, 4, 1)), 4)))
      << angle.numbers;
  EXPECT_TRUE(contains(angle.note, "linear scaling: every frequency divided by 4")) << angle.note;
}

TEST(Derivation, CrossAttentionKeysAndValuesComeFromRowsOfXkv) {
  const Document translate = open("translate");
  EXPECT_TRUE(contains(derive(translate, in(StageKind::K), 2, 1).formula, "x_kv₂·W_k[:,1]"))
      << derive(translate, in(StageKind::K), 2, 1).formula;
  EXPECT_TRUE(contains(derive(translate, in(StageKind::V), 0, 1).formula, "x_kv₀·W_v[:,1]"));
  EXPECT_TRUE(contains(derive(translate, in(StageKind::Q), 1, 0).formula, "x₁·W_q[:,0]"));
}

TEST(Derivation, ARotatedCellNamesItsAngleAsTheAnglesHeatmapShowsIt) {
  // φ = 5 rad at position 5, pair 0; the φ heatmap shows it modulo 2π.
  const Document rope = open("rope");
  const Derivation k = derive(rope, in(StageKind::K), 5, 0);
  EXPECT_TRUE(contains(k.formula, "= 5.000 rad")) << k.formula;
  EXPECT_TRUE(contains(k.formula, "≡ " + format_number(static_cast<float>(5.0 - 2.0 * std::numbers::pi), 3) + " (mod 2π"))
      << k.formula;
  // position 1 turns by 1 rad: nothing to wrap
  EXPECT_FALSE(contains(derive(rope, in(StageKind::K), 1, 0).formula, "mod 2π"));
}
