#include "attention_lab/softmax.h"

#include <gtest/gtest.h>

#include <limits>

using namespace attention_lab;

namespace {
constexpr float kInf = std::numeric_limits<float>::infinity();

RowVector row(std::initializer_list<float> v) {
  RowVector r(static_cast<Eigen::Index>(v.size()));
  Eigen::Index i = 0;
  for (float x : v) r[i++] = x;
  return r;
}
}  // namespace

TEST(Softmax, MatchesHandComputedValues) {
  RowVector w(3);
  EXPECT_EQ(softmax_row(row({0.0f, 1.0f, 2.0f}), w), RowIssue::None);
  // e^0, e^1, e^2 over their sum 11.1073
  EXPECT_NEAR(w[0], 0.0900306, 1e-6);
  EXPECT_NEAR(w[1], 0.2447285, 1e-6);
  EXPECT_NEAR(w[2], 0.6652410, 1e-6);
}

TEST(Softmax, RowWithNoAllowedKeyIsAllZeros) {
  RowVector w(3);
  EXPECT_EQ(softmax_row(row({-kInf, -kInf, -kInf}), w), RowIssue::NoAllowedKey);
  EXPECT_EQ(w, RowVector::Zero(3));
}

TEST(Softmax, MaskedEntriesGetExactlyZero) {
  RowVector w(3);
  softmax_row(row({1.0f, -kInf, 3.0f}), w);
  EXPECT_EQ(w[1], 0.0f);
  EXPECT_NEAR(w.sum(), 1.0f, 1e-6);
}

TEST(Softmax, HugeScoresGiveFiniteWeights) {
  RowVector w(3);
  EXPECT_EQ(softmax_row(row({1e30f, -1e30f, 0.0f}), w), RowIssue::None);
  EXPECT_TRUE(w.allFinite());
  EXPECT_FLOAT_EQ(w[0], 1.0f);
  EXPECT_EQ(w[1], 0.0f);
}

TEST(Softmax, PlusInfinitySharesTheWeight) {
  RowVector w(4);
  EXPECT_EQ(softmax_row(row({kInf, 1.0f, kInf, -kInf}), w), RowIssue::InfiniteScore);
  EXPECT_EQ(w, row({0.5f, 0.0f, 0.5f, 0.0f}));
}

TEST(Softmax, NaNIsReportedNotHidden) {
  RowVector w(2);
  EXPECT_EQ(softmax_row(row({std::numeric_limits<float>::quiet_NaN(), 1.0f}), w), RowIssue::NotANumber);
  EXPECT_TRUE(w.array().isNaN().all());
}
