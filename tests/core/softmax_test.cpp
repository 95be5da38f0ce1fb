#include "attention_lab/softmax.h"
#include "unit_support.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using namespace attention_lab;

namespace {
using attention_lab::test::kInf;

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

// [SECTION] The pieces the engine builds its softmax from

TEST(FastExp, IsWithinTwoUlpOfTheExactExponential) {
  for (float x = -87.0f; x <= 88.0f; x += 0.0137f) {
    const double exact = std::exp(static_cast<double>(x));
    const float got = fast_exp(x);
    const double ulp = static_cast<double>(std::nextafter(static_cast<float>(exact), kInf) - static_cast<float>(exact));
    EXPECT_LE(std::abs(static_cast<double>(got) - exact), 2.0 * ulp) << "x = " << x;
  }
}

TEST(FastExp, EdgeCasesAreDecided) {
  EXPECT_EQ(fast_exp(0.0f), 1.0f);
  EXPECT_EQ(fast_exp(-kInf), 0.0f);        // masked entries get exactly 0
  EXPECT_EQ(fast_exp(-100.0f), 0.0f);      // below the smallest normal float: 0, no denormals
  EXPECT_EQ(fast_exp(100.0f), kInf);
  EXPECT_EQ(fast_exp(kInf), kInf);
  EXPECT_TRUE(std::isnan(fast_exp(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_GT(fast_exp(88.7f), 3e38f);        // 2^128 region stays finite
}

TEST(FastExp, VectorLoopsGiveTheSameBitsAsSingleCalls) {
  // The engine recomputes single entries of rows it computed in vector loops.
  std::vector<float> x(1003), e(1003);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = -90.0f + 0.179f * static_cast<float>(i);
  // and the edges, inside the vector body and in the tail
  for (std::size_t at : {std::size_t{5}, std::size_t{1001}}) {
    x[at] = std::numeric_limits<float>::quiet_NaN();
    x[at + 1] = kInf;
  }
  x[17] = -kInf;
  x[18] = 88.72283935f + 1.5f;  // just past the clamp after the shift
  x[19] = -87.33654475f + 1.5f;
  exp_shifted(x.data(), 1.5f, e.data(), static_cast<Eigen::Index>(x.size()));
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float single = fast_exp(x[i] - 1.5f);
    EXPECT_EQ(std::memcmp(&single, &e[i], sizeof single), 0) << "x = " << x[i] << " at " << i;
  }
}

// exp_shifted's hand-vectorized body against fast_exp, bit for bit: every
// 1021st float pattern over the whole range (NaNs with payloads, infinities,
// subnormals, both signs), then every float within 1/4 of the clamps, where the
// exponent's two factors and the final selects decide the result.
TEST(FastExp, TheVectorBodyGivesFastExpsBitsOverTheWholeFloatRange) {
  std::vector<float> x;
  for (std::uint64_t b = 0; b <= 0xffffffffu; b += 1021) {
    const auto bits = static_cast<std::uint32_t>(b);
    float f;
    std::memcpy(&f, &bits, sizeof f);
    x.push_back(f);
  }
  for (float edge : {-87.33654475f, 88.72283935f})
    for (float f = edge - 0.25f; f <= edge + 0.25f; f = std::nextafter(f, kInf)) x.push_back(f);
  std::vector<float> e(x.size());
  for (float offset : {0.0f, 1.5f, -3.25f}) {
    exp_shifted(x.data(), offset, e.data(), static_cast<Eigen::Index>(x.size()));
    std::size_t differ = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const float single = fast_exp(x[i] - offset);
      if (std::memcmp(&single, &e[i], sizeof single) != 0 && ++differ <= 5)
        ADD_FAILURE() << "x = " << x[i] << " − " << offset << ": " << e[i] << " against fast_exp's " << single;
    }
    EXPECT_EQ(differ, 0u) << "offset " << offset << ", " << x.size() << " values";
  }
}

TEST(SumInDouble, TrailingZerosDoNotChangeTheSum) {
  std::vector<float> x(300, 0.0f);
  for (std::size_t i = 0; i < 77; ++i) x[i] = 1.0f / static_cast<float>(i + 3);
  const double short_sum = sum_in_double(x.data(), 77);
  for (Eigen::Index n : {78, 80, 85, 128, 300}) EXPECT_EQ(sum_in_double(x.data(), n), short_sum) << n;
  double exact = 0.0;
  for (std::size_t i = 0; i < 77; ++i) exact += static_cast<double>(x[i]);
  EXPECT_NEAR(short_sum, exact, 1e-15);
}

TEST(MaxAndNan, FindsTheMaxAndAnyNaN) {
  std::vector<float> x(41, -kInf);
  bool nan = true;
  EXPECT_EQ(max_and_nan(x.data(), 41, nan), -kInf);
  EXPECT_FALSE(nan);
  x[37] = 2.5f;
  EXPECT_EQ(max_and_nan(x.data(), 41, nan), 2.5f);
  x[3] = std::numeric_limits<float>::quiet_NaN();
  max_and_nan(x.data(), 41, nan);
  EXPECT_TRUE(nan);
  EXPECT_EQ(max_and_nan(x.data(), 0, nan), -kInf);
}
