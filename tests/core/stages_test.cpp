// Every stage against values computed by hand (or with a few lines of plain
// Python) for scenarios small enough to check on paper.

#include "attention_lab/engine.h"

#include "test_support.h"
#include "unit_support.h"

#include <cmath>
#include <limits>

using namespace attention_lab;
using attention_lab::test::rows_of;

namespace {

using attention_lab::test::kInf;
constexpr double kTol = 1e-5;

MatrixView stage(const Engine& e, StageKind k, int head = 0) {
  return e.stage(is_per_head(k) ? StageId::of_head(k, head) : StageId::input(k));
}

using attention_lab::test::computed;

// Two tokens, d_model = d_k = d_v = 1, identity weights: X = [[1], [2]], so
// Q = K = V = X and scores = X·Xᵀ = [[1, 2], [2, 4]]. √d_k = 1.
Scenario pair() {
  Scenario s;
  s.X = rows_of({{1.0f}, {2.0f}});
  s.W_q = rows_of({{1.0f}});
  s.W_k = rows_of({{1.0f}});
  s.W_v = rows_of({{1.0f}});
  s.heads = 1;
  return s;
}

}  // namespace

// [SECTION] The book's example ("Your journey starts with one step")

TEST(BookStages, QueryOfJourneyMatchesTheBook) {
  // query_2 = x_2 · W_query = [0.55, 0.87, 0.66] · W_q = [0.4306, 1.4551]
  const Engine e = computed(attention_lab::test::preset("book"));
  EXPECT_NEAR(stage(e, StageKind::Q)(1, 0), 0.430637, kTol);
  EXPECT_NEAR(stage(e, StageKind::Q)(1, 1), 1.455058, kTol);
}

TEST(BookStages, KeysAndValuesMatchHandComputedRows) {
  const Engine e = computed(attention_lab::test::preset("book"));
  // key_1 = [0.43, 0.15, 0.89] · W_k
  EXPECT_NEAR(stage(e, StageKind::K)(0, 0), 0.366914, kTol);
  EXPECT_NEAR(stage(e, StageKind::K)(0, 1), 0.764558, kTol);
  // value_6 = [0.05, 0.80, 0.55] · W_v
  EXPECT_NEAR(stage(e, StageKind::V)(5, 0), 0.322124, kTol);
  EXPECT_NEAR(stage(e, StageKind::V)(5, 1), 0.786291, kTol);
  // a head's view of a single-head scenario is the whole matrix
  EXPECT_EQ(stage(e, StageKind::HeadK, 0), stage(e, StageKind::K));
}

TEST(BookStages, ScoresOfJourneyMatchHandComputedDotProducts) {
  // scores[1][c] = query_2 · key_c; the book prints attn_score_22 = 1.8524
  const Engine e = computed(attention_lab::test::preset("book"));
  const float expected[] = {1.270483f, 1.852384f, 1.811107f, 1.079517f, 0.557731f, 1.543971f};
  for (int c = 0; c < 6; ++c) EXPECT_NEAR(stage(e, StageKind::Scores)(1, c), expected[c], kTol) << c;
}

TEST(BookStages, ScaledScoresAreDividedBySquareRootOfTwo) {
  // d_k = 2: 1.852384 / √2 = 1.309834
  const Engine e = computed(attention_lab::test::preset("book"));
  const float expected[] = {0.898367f, 1.309834f, 1.280646f, 0.763334f, 0.394375f, 1.091752f};
  for (int c = 0; c < 6; ++c) EXPECT_NEAR(stage(e, StageKind::Scaled)(1, c), expected[c], kTol) << c;
}

TEST(BookStages, WeightsOfJourneyMatchTheBook) {
  // the book: attn_weights_2 = [0.1500, 0.2264, 0.2199, 0.1311, 0.0906, 0.1820]
  const Engine e = computed(attention_lab::test::preset("book"));
  const float expected[] = {0.150019f, 0.226384f, 0.219872f, 0.131070f, 0.090629f, 0.182026f};
  for (int c = 0; c < 6; ++c) EXPECT_NEAR(stage(e, StageKind::Weights)(1, c), expected[c], kTol) << c;
  // no mask: masked == scaled
  EXPECT_EQ(stage(e, StageKind::Masked), stage(e, StageKind::Scaled));
}

TEST(BookStages, ContextOfJourneyMatchesTheBook) {
  // the book: context_vec_2 = [0.3061, 0.8210]
  const Engine e = computed(attention_lab::test::preset("book"));
  EXPECT_NEAR(stage(e, StageKind::Context)(1, 0), 0.306100, kTol);
  EXPECT_NEAR(stage(e, StageKind::Context)(1, 1), 0.821030, kTol);
  // first and last rows too: [0.299582, 0.805314] and [0.299010, 0.804037]
  EXPECT_NEAR(stage(e, StageKind::Context)(0, 0), 0.299582, kTol);
  EXPECT_NEAR(stage(e, StageKind::Context)(0, 1), 0.805314, kTol);
  EXPECT_NEAR(stage(e, StageKind::Context)(5, 0), 0.299010, kTol);
  EXPECT_NEAR(stage(e, StageKind::Context)(5, 1), 0.804037, kTol);
}

TEST(BookStages, OutputWithoutProjectionIsTheConcatenatedContext) {
  const Engine e = computed(attention_lab::test::preset("book"));
  EXPECT_EQ(stage(e, StageKind::Output), stage(e, StageKind::Concat));
  EXPECT_EQ(stage(e, StageKind::Concat), stage(e, StageKind::Context));
}

TEST(BookStages, CausalMaskGivesTheBooksCausalWeights) {
  // Section 3.5: with a causal mask, row 1 renormalises over keys 0 and 1 only:
  // softmax([0.898367, 1.309834]) = [0.398561, 0.601439]; row 0 attends only to itself.
  Scenario s = attention_lab::test::preset("book");
  s.mask_kind = MaskKind::Causal;
  const Engine e = computed(s);
  EXPECT_FLOAT_EQ(stage(e, StageKind::Weights)(0, 0), 1.0f);
  EXPECT_NEAR(stage(e, StageKind::Weights)(1, 0), 0.398561, kTol);
  EXPECT_NEAR(stage(e, StageKind::Weights)(1, 1), 0.601439, kTol);
  EXPECT_EQ(stage(e, StageKind::Weights)(1, 2), 0.0f);
  EXPECT_EQ(stage(e, StageKind::Masked)(1, 2), -kInf);
  // context row 1 = 0.398561·v_1 + 0.601439·v_2 = [0.311586, 0.954903]
  EXPECT_NEAR(stage(e, StageKind::Context)(1, 0), 0.311586, kTol);
  EXPECT_NEAR(stage(e, StageKind::Context)(1, 1), 0.954903, kTol);
}

// [SECTION] Two tokens on paper

TEST(PairStages, EveryStageMatchesPaper) {
  const Engine e = computed(pair());
  EXPECT_EQ(stage(e, StageKind::Q), rows_of({{1}, {2}}));
  EXPECT_EQ(stage(e, StageKind::K), rows_of({{1}, {2}}));
  EXPECT_EQ(stage(e, StageKind::V), rows_of({{1}, {2}}));
  EXPECT_EQ(stage(e, StageKind::Scores), rows_of({{1, 2}, {2, 4}}));
  EXPECT_EQ(stage(e, StageKind::Scaled), rows_of({{1, 2}, {2, 4}}));  // √1 = 1
  EXPECT_EQ(stage(e, StageKind::Mask), rows_of({{1, 1}, {1, 1}}));
  // softmax(1, 2) = [1/(1+e), e/(1+e)]; softmax(2, 4) = [1/(1+e²), e²/(1+e²)]
  const auto w = stage(e, StageKind::Weights);
  EXPECT_NEAR(w(0, 0), 0.268941, 1e-6);
  EXPECT_NEAR(w(0, 1), 0.731059, 1e-6);
  EXPECT_NEAR(w(1, 0), 0.119203, 1e-6);
  EXPECT_NEAR(w(1, 1), 0.880797, 1e-6);
  // context = weights · [1, 2]ᵀ
  EXPECT_NEAR(stage(e, StageKind::Context)(0, 0), 1.731059, 1e-6);
  EXPECT_NEAR(stage(e, StageKind::Context)(1, 0), 1.880797, 1e-6);
  EXPECT_TRUE(e.warnings().empty());
}

TEST(PairStages, BiasesAreAddedToEveryToken) {
  Scenario s = pair();
  s.use_bias = true;
  s.b_q = rows_of({{1.0f}});   // Q = [[2], [3]]
  s.b_k = rows_of({{0.0f}});   // K = [[1], [2]]
  s.b_v = rows_of({{-1.0f}});  // V = [[0], [1]]
  const Engine e = computed(s);
  EXPECT_EQ(stage(e, StageKind::Q), rows_of({{2}, {3}}));
  EXPECT_EQ(stage(e, StageKind::V), rows_of({{0}, {1}}));
  EXPECT_EQ(stage(e, StageKind::Scores), rows_of({{2, 4}, {3, 6}}));
  // context = weights · [0, 1]ᵀ = the second weight of each row
  EXPECT_NEAR(stage(e, StageKind::Context)(0, 0), 0.880797, 1e-6);  // e²/(1+e²)
  EXPECT_NEAR(stage(e, StageKind::Context)(1, 0), 0.952574, 1e-6);  // e³/(1+e³)
}

TEST(PairStages, OutputProjectionAndBiasMatchPaper) {
  Scenario s = pair();
  s.use_w_o = true;
  s.W_o = rows_of({{2.0f, -1.0f}});
  s.use_output_bias = true;
  s.b_o = rows_of({{0.5f, 0.25f}});
  const Engine e = computed(s);
  EXPECT_EQ(e.dims().d_out, 2);
  // output = context · [2, −1] + [0.5, 0.25] with context = [1.731059, 1.880797]
  const auto o = stage(e, StageKind::Output);
  EXPECT_NEAR(o(0, 0), 3.962118, 1e-5);
  EXPECT_NEAR(o(0, 1), -1.481059, 1e-5);
  EXPECT_NEAR(o(1, 0), 4.261594, 1e-5);
  EXPECT_NEAR(o(1, 1), -1.630797, 1e-5);
}

TEST(PairStages, CausalMaskHidesTheFutureToken) {
  Scenario s = pair();
  s.mask_kind = MaskKind::Causal;
  const Engine e = computed(s);
  EXPECT_EQ(stage(e, StageKind::Mask), rows_of({{1, 0}, {1, 1}}));
  EXPECT_EQ(stage(e, StageKind::Masked), rows_of({{1, -kInf}, {2, 4}}));
  EXPECT_EQ(stage(e, StageKind::Weights)(0, 0), 1.0f);
  EXPECT_EQ(stage(e, StageKind::Weights)(0, 1), 0.0f);
  EXPECT_NEAR(stage(e, StageKind::Context)(0, 0), 1.0, 1e-6);
  EXPECT_NEAR(stage(e, StageKind::Context)(1, 0), 1.880797, 1e-6);
}

TEST(PairStages, TemperatureDividesTheScores) {
  Scenario s = pair();
  s.temperature = 2.0f;
  const Engine e = computed(s);
  EXPECT_EQ(stage(e, StageKind::Scaled), rows_of({{0.5f, 1}, {1, 2}}));
  // softmax(0.5, 1) = [1/(1+e^0.5), e^0.5/(1+e^0.5)]
  EXPECT_NEAR(stage(e, StageKind::Weights)(0, 0), 0.377541, 1e-6);
  EXPECT_NEAR(stage(e, StageKind::Weights)(0, 1), 0.622459, 1e-6);
}

// [SECTION] Two heads on paper

// X = I₂, heads = 2, d_k = d_v = 1. W_q = diag(1, 2), W_k = I, W_v = diag(1, −1):
// head 0: q = [1, 0], k = [1, 0], v = [1, 0]; head 1: q = [0, 2], k = [0, 1], v = [0, −1].
TEST(TwoHeadStages, EachHeadUsesItsOwnColumnBlock) {
  Scenario s;
  s.X = rows_of({{1, 0}, {0, 1}});
  s.W_q = rows_of({{1, 0}, {0, 2}});
  s.W_k = rows_of({{1, 0}, {0, 1}});
  s.W_v = rows_of({{1, 0}, {0, -1}});
  s.heads = 2;
  const Engine e = computed(s);
  EXPECT_EQ(e.dims().d_k, 1);
  EXPECT_EQ(stage(e, StageKind::HeadQ, 1), rows_of({{0}, {2}}));
  EXPECT_EQ(stage(e, StageKind::Scores, 0), rows_of({{1, 0}, {0, 0}}));
  EXPECT_EQ(stage(e, StageKind::Scores, 1), rows_of({{0, 0}, {0, 2}}));
  // head 0 row 0: softmax(1, 0) = [0.731059, 0.268941]; head 1 row 1: softmax(0, 2)
  EXPECT_NEAR(stage(e, StageKind::Weights, 0)(0, 0), 0.731059, 1e-6);
  EXPECT_NEAR(stage(e, StageKind::Weights, 0)(1, 0), 0.5, 1e-6);
  EXPECT_NEAR(stage(e, StageKind::Weights, 1)(1, 1), 0.880797, 1e-6);
  // contexts: head 0 = weights₀·[1, 0]ᵀ, head 1 = weights₁·[0, −1]ᵀ
  const Matrix concat = stage(e, StageKind::Concat);
  EXPECT_NEAR(concat(0, 0), 0.731059, 1e-6);
  EXPECT_NEAR(concat(1, 0), 0.5, 1e-6);
  EXPECT_NEAR(concat(0, 1), -0.5, 1e-6);
  EXPECT_NEAR(concat(1, 1), -0.880797, 1e-6);
  EXPECT_EQ(stage(e, StageKind::Context, 1), concat.middleCols(1, 1));
  EXPECT_EQ(stage(e, StageKind::Output), concat);
}
