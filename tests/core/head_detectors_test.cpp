// The head detectors' patterns, written out by hand for a sequence with
// repeats, their score's definition, the repeated random input, and bad
// input refused. (Against TransformerLens's own definitions on a real model:
// kjv_gpt2_test.cpp.)

#include "attention_lab/head_detectors.h"
#include "attention_lab/transformer_model.h"
#include "model_fixture_paths.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <utility>

namespace attention_lab {
namespace {

// The (row, column) of every 1 of a 0/1 pattern; nothing else but 0 in it.
std::set<std::pair<int, int>> ones(const Matrix& p) {
  std::set<std::pair<int, int>> out;
  for (Eigen::Index i = 0; i < p.rows(); ++i)
    for (Eigen::Index j = 0; j < p.cols(); ++j) {
      EXPECT_TRUE(p(i, j) == 0.0f || p(i, j) == 1.0f) << i << "," << j;
      if (p(i, j) == 1.0f) out.insert({static_cast<int>(i), static_cast<int>(j)});
    }
  return out;
}

TEST(HeadDetectors, EachPatternMarksWhereItsKindOfHeadLooks) {
  const std::vector<int> ids = {5, 7, 5, 7, 9, 5};
  using P = std::set<std::pair<int, int>>;
  EXPECT_EQ(ones(detection_pattern(HeadKind::PreviousToken, ids)), (P{{1, 0}, {2, 1}, {3, 2}, {4, 3}, {5, 4}}));
  // An earlier copy of the same token (not itself).
  EXPECT_EQ(ones(detection_pattern(HeadKind::DuplicateToken, ids)), (P{{2, 0}, {3, 1}, {5, 0}, {5, 2}}));
  // The token after an earlier copy: 5 at 2 looks at 1 (after the 5 at 0);
  // 7 at 3 at 2; 5 at 5 at 1 and 3.
  EXPECT_EQ(ones(detection_pattern(HeadKind::Induction, ids)), (P{{2, 1}, {3, 2}, {5, 1}, {5, 3}}));
  EXPECT_EQ(detection_pattern(HeadKind::Induction, std::vector<int>{4}).rows(), 1);
  EXPECT_STREQ(to_string(HeadKind::PreviousToken), "previous_token");
  EXPECT_STREQ(to_string(HeadKind::DuplicateToken), "duplicate_token");
  EXPECT_STREQ(to_string(HeadKind::Induction), "induction");
}

TEST(HeadDetectors, TheScoreIsTheShareOfAttentionOnThePattern) {
  // Uniform causal attention over 4 tokens: row i gives 1/(i+1) to each key.
  Matrix a = Matrix::Zero(4, 4);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j <= i; ++j) a(i, j) = 1.0f / static_cast<float>(i + 1);
  const Matrix prev = detection_pattern(HeadKind::PreviousToken, std::vector<int>{1, 2, 3, 4});
  EXPECT_NEAR(detection_score(a, prev), (1.0 / 2 + 1.0 / 3 + 1.0 / 4) / 4.0, 1e-7);
  EXPECT_NEAR(detection_score(prev, prev), 3.0 / 3.0, 0.0);  // attention exactly on the pattern: 1
  EXPECT_TRUE(std::isnan(detection_score(Matrix::Zero(4, 4), prev)));
  EXPECT_THROW(detection_score(Matrix::Zero(3, 4), prev), std::invalid_argument);
}

TEST(HeadDetectors, TheDetectorScoresAsTheDenseDefinition) {
  const std::vector<int> ids = {5, 7, 5, 7, 9, 5, 7, 7};
  const HeadDetector detector(ids);
  Matrix a = Matrix::Zero(8, 8);
  for (int i = 0; i < 8; ++i) {  // a causal softmax of arbitrary scores
    float sum = 0.0f;
    for (int j = 0; j <= i; ++j) sum += a(i, j) = std::exp(std::sin(static_cast<float>(3 * i + 7 * j)));
    a.row(i) /= sum;
  }
  const std::vector<double> got = detector.scores(a);
  ASSERT_EQ(got.size(), 3u);
  for (const HeadKind kind : kHeadKinds)
    EXPECT_NEAR(got[static_cast<std::size_t>(kind)], detection_score(a, detection_pattern(kind, ids)), 1e-12) << to_string(kind);
  EXPECT_THROW(detector.scores(Matrix::Zero(7, 8)), std::invalid_argument);
}

TEST(HeadDetectors, RepeatedRandomTokensAreSeededAndRepeatOnce) {
  const std::vector<int> a = repeated_random_tokens(61, 10, 7), b = repeated_random_tokens(61, 10, 7);
  ASSERT_EQ(a.size(), 20u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, repeated_random_tokens(61, 10, 8));
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(a[static_cast<std::size_t>(i)], a[static_cast<std::size_t>(i + 10)]);
    EXPECT_GE(a[static_cast<std::size_t>(i)], 0);
    EXPECT_LT(a[static_cast<std::size_t>(i)], 61);
  }
  EXPECT_THROW(repeated_random_tokens(0, 10, 1), std::invalid_argument);
  EXPECT_THROW(repeated_random_tokens(61, 0, 1), std::invalid_argument);
}

TEST(HeadDetectors, EveryHeadOfEveryLayerIsScoredAndBadInputRefused) {
  const LoadedModel m = load_model(test::kFixtures / "llama-gqa");
  ASSERT_TRUE(m.model) << m.error;
  const std::vector<int> ids = repeated_random_tokens(m.model->config.vocab, 5, 3);
  const HeadScores s = detect_heads(*m.model, ids);
  ASSERT_EQ(s.scores.size(), 3u);
  EXPECT_EQ(s.ids, ids);
  for (const HeadKind kind : kHeadKinds) {
    ASSERT_EQ(s.of(kind).rows(), m.model->config.layers);
    ASSERT_EQ(s.of(kind).cols(), m.model->config.heads);
    EXPECT_GE(s.of(kind).minCoeff(), 0.0f);
    EXPECT_LE(s.of(kind).maxCoeff(), 1.0f);
  }
  // The previous-token pattern has T − 1 ones and rows sum to 1: a score is
  // at most (T − 1) / T; the second half has copies, so the induction scores are not all 0.
  EXPECT_LE(s.of(HeadKind::PreviousToken).maxCoeff(), 9.0f / 10.0f + 1e-6f);
  EXPECT_GT(s.of(HeadKind::Induction).maxCoeff(), 0.0f);
  EXPECT_THROW(detect_heads(*m.model, std::vector<int>{3}), std::invalid_argument);
  EXPECT_THROW(detect_heads(*m.model, std::vector<int>{3, 999}), std::invalid_argument);
}

}  // namespace
}  // namespace attention_lab
