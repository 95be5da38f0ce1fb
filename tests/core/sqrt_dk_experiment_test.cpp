// The "why √d_k" experiment: the measured statistics agree with the theory
// (variance d unscaled, 1 scaled) within the sampling error, and the softmax
// saturates without scaling but not with it.

#include "attention_lab/sqrt_dk_experiment.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

using namespace attention_lab;

namespace {

SqrtDkResult run(int d, int samples = 20000, std::uint64_t seed = 1) {
  SqrtDkOptions o;
  o.d = d;
  o.samples = samples;
  o.seed = seed;
  return run_sqrt_dk_experiment(o);
}

// Four standard errors of a measured variance, relative to the true one.
// With q·k = Σ qᵢkᵢ: Var((q·k)²) = 2d² + 6d, and the n keys of a row share q,
// which adds covariances of 2d between the squares of one row.
double variance_tolerance(int d, int samples, int n) {
  const double dd = d;
  const double per_sample = (2.0 * dd * dd + 6.0 * dd + 2.0 * (n - 1) * dd) / (dd * dd);
  return 4.0 * std::sqrt(per_sample / samples);
}

}  // namespace

TEST(SqrtDkExperiment, TheVarianceOfTheDotProductIsCloseToD) {
  for (const int d : {1, 16, 64, 256}) {
    const SqrtDkResult r = run(d);
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(r.unscaled.theory_variance, d);
    const double tol = variance_tolerance(d, 20000, 16);
    EXPECT_LT(tol, d >= 16 ? 0.06 : 0.2);
    EXPECT_NEAR(r.unscaled.variance / d, 1.0, tol) << "d = " << d;
  }
}

TEST(SqrtDkExperiment, TheVarianceOfTheScaledDotProductIsCloseToOne) {
  for (const int d : {1, 16, 64, 256}) {
    const SqrtDkResult r = run(d);
    EXPECT_EQ(r.scaled.theory_variance, 1.0);
    EXPECT_NEAR(r.scaled.variance, 1.0, variance_tolerance(d, 20000, 16)) << "d = " << d;
    EXPECT_NEAR(r.scaled.variance, r.unscaled.variance / d, 1e-9 * r.scaled.variance);
  }
}

TEST(SqrtDkExperiment, TheMeanIsCloseToZero) {
  for (const int d : {1, 64, 256}) {
    const SqrtDkResult r = run(d);
    EXPECT_NEAR(r.unscaled.mean, 0.0, 4.0 * std::sqrt(d / 20000.0)) << "d = " << d;
    EXPECT_NEAR(r.scaled.mean, 0.0, 4.0 * std::sqrt(1 / 20000.0)) << "d = " << d;
  }
}

TEST(SqrtDkExperiment, ScaledSamplesAreTheUnscaledOnesDividedByRootD) {
  const SqrtDkResult r = run(49, 500);
  ASSERT_EQ(r.unscaled.values.size(), 500u);
  ASSERT_EQ(r.scaled.values.size(), 500u);
  for (std::size_t i = 0; i < 500; ++i) EXPECT_DOUBLE_EQ(r.scaled.values[i], r.unscaled.values[i] / 7.0);
  const SqrtDkResult one = run(1, 500);
  EXPECT_EQ(one.scaled.values, one.unscaled.values);
}

TEST(SqrtDkExperiment, TheSameSeedGivesTheSameSamplesAndAnotherSeedOthers) {
  EXPECT_EQ(run(32, 1000, 7).unscaled.values, run(32, 1000, 7).unscaled.values);
  EXPECT_NE(run(32, 1000, 7).unscaled.values, run(32, 1000, 8).unscaled.values);
}

TEST(SqrtDkExperiment, WithoutScalingTheSoftmaxSaturatesAsDGrows) {
  double last_max = 0.0, last_entropy = 1e9;
  for (const int d : {1, 16, 256, 1024}) {
    const SqrtDkResult r = run(d, 4000);
    EXPECT_GT(r.unscaled.softmax.mean_max_weight, last_max) << "d = " << d;
    EXPECT_LT(r.unscaled.softmax.mean_entropy, last_entropy) << "d = " << d;
    last_max = r.unscaled.softmax.mean_max_weight;
    last_entropy = r.unscaled.softmax.mean_entropy;
  }
  EXPECT_GT(last_max, 0.9);      // nearly all the weight on one key
  EXPECT_LT(last_entropy, 0.25);  // against ln 16 ≈ 2.77 for an even row
}

TEST(SqrtDkExperiment, WithScalingTheSoftmaxStaysTheSameForEveryD) {
  const SqrtDkResult base = run(16, 4000);
  EXPECT_NEAR(base.max_entropy, std::log(16.0), 1e-12);
  EXPECT_EQ(base.uniform_weight, 1.0 / 16);
  EXPECT_EQ(base.rows, 250);
  for (const int d : {64, 256, 1024}) {
    const SqrtDkResult r = run(d, 4000);
    EXPECT_NEAR(r.scaled.softmax.mean_max_weight, base.scaled.softmax.mean_max_weight, 0.03) << "d = " << d;
    EXPECT_NEAR(r.scaled.softmax.mean_entropy, base.scaled.softmax.mean_entropy, 0.08) << "d = " << d;
    EXPECT_LT(r.scaled.softmax.mean_max_weight, 0.35);
    EXPECT_GT(r.scaled.softmax.mean_entropy, 2.0);
  }
}

TEST(SqrtDkExperiment, HistogramsCoverFourStandardDeviationsOfTheUnscaledProduct) {
  const SqrtDkResult r = run(64, 5000);
  for (const Histogram* h : {&r.unscaled.histogram, &r.scaled.histogram}) {
    ASSERT_EQ(h->counts.size(), 40u);
    ASSERT_EQ(h->edges.size(), 41u);
    EXPECT_EQ(h->edges.front(), -32.0);  // 4·√64
    EXPECT_EQ(h->edges.back(), 32.0);
    EXPECT_EQ(std::accumulate(h->counts.begin(), h->counts.end(), 0) + h->below + h->above, 5000);
  }
  // The scaled products (σ = 1) fall into the middle bins of width 1.6.
  const auto& scaled = r.scaled.histogram.counts;
  EXPECT_EQ(std::accumulate(scaled.begin(), scaled.begin() + 15, 0), 0);
  EXPECT_EQ(std::accumulate(scaled.end() - 15, scaled.end(), 0), 0);
  // Beyond ±4σ of a normal lies 0.006 %: about none of 5000.
  EXPECT_LE(r.unscaled.histogram.below + r.unscaled.histogram.above, 5);
}

TEST(SqrtDkExperiment, TheHistogramRangeAndBinsCanBeChosen) {
  SqrtDkOptions o;
  o.d = 4;
  o.samples = 1000;
  o.bins = 10;
  o.range = 2.5;
  const SqrtDkResult r = run_sqrt_dk_experiment(o);
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.unscaled.histogram.counts.size(), 10u);
  EXPECT_EQ(r.unscaled.histogram.edges.front(), -2.5);
  EXPECT_DOUBLE_EQ(r.unscaled.histogram.edges[1], -2.0);
  EXPECT_GT(r.unscaled.histogram.below + r.unscaled.histogram.above, 100);  // σ = 2: many beyond ±2.5
}

TEST(SqrtDkExperiment, AHistogramCountsEachValueInItsBin) {
  const Histogram h = make_histogram({-2.0, -1.0, -0.5, 0.0, 0.99, 1.0, 3.0, -1.0000001}, -1.0, 1.0, 4);
  EXPECT_EQ(h.edges, (std::vector<double>{-1.0, -0.5, 0.0, 0.5, 1.0}));
  EXPECT_EQ(h.counts, (std::vector<int>{1, 1, 1, 1}));  // -1 | -0.5 | 0 | 0.99
  EXPECT_EQ(h.below, 2);  // -2 and -1.0000001
  EXPECT_EQ(h.above, 2);  // 1 (the right edge is open) and 3
}

TEST(SqrtDkExperiment, SoftmaxRowStatsOfEvenAndOfOneSidedRows) {
  const SoftmaxRowStats even = softmax_row_stats(std::vector<double>(8, 3.0), 4);
  EXPECT_DOUBLE_EQ(even.mean_max_weight, 0.25);
  EXPECT_NEAR(even.mean_entropy, std::log(4.0), 1e-12);
  const SoftmaxRowStats sharp = softmax_row_stats({0.0, 100.0, 0.0, 0.0}, 4);
  EXPECT_NEAR(sharp.mean_max_weight, 1.0, 1e-12);
  EXPECT_NEAR(sharp.mean_entropy, 0.0, 1e-12);
  // Two rows, averaged; the incomplete third row is left out.
  const SoftmaxRowStats mixed = softmax_row_stats({1.0, 1.0, 0.0, 100.0, 5.0}, 2);
  EXPECT_NEAR(mixed.mean_max_weight, (0.5 + 1.0) / 2, 1e-12);
  EXPECT_NEAR(mixed.mean_entropy, std::log(2.0) / 2, 1e-12);
}

TEST(SqrtDkExperiment, OptionsOutOfRangeAreRefusedWithAMessage) {
  auto error = [](auto change) {
    SqrtDkOptions o;
    change(o);
    const SqrtDkResult r = run_sqrt_dk_experiment(o);
    EXPECT_TRUE(r.unscaled.values.empty());
    return r.error;
  };
  EXPECT_EQ(error([](SqrtDkOptions& o) { o.d = 0; }), "d: expected 1 to 1024, found 0");
  EXPECT_EQ(error([](SqrtDkOptions& o) { o.d = 1025; }), "d: expected 1 to 1024, found 1025");
  EXPECT_EQ(error([](SqrtDkOptions& o) { o.samples = 15; }),
            "samples: expected 16 to 1000000, found 15 (at least one row of keys_per_row)");
  EXPECT_EQ(error([](SqrtDkOptions& o) { o.keys_per_row = 1; }), "keys_per_row: expected 2 to 4096, found 1");
  EXPECT_EQ(error([](SqrtDkOptions& o) { o.bins = 0; }), "bins: expected 1 to 1000, found 0");
  EXPECT_EQ(error([](SqrtDkOptions& o) { o.range = -1.0; }).rfind("range: expected 0 (automatic)", 0), 0u);
  EXPECT_EQ(error([](SqrtDkOptions& o) { o.range = std::nan(""); }).rfind("range: expected 0 (automatic)", 0), 0u);
  EXPECT_EQ(validate(SqrtDkOptions{}), "");
}

TEST(SqrtDkExperiment, ProductsHaveTheShapeOfRealDotProductsNotJustTheirVariance) {
  // The products are drawn as ‖q‖·z (exact for q·k given q). A plain N(0, d)
  // draw would have the right variance but not the right shape: the product
  // of two normals (d = 1) has kurtosis 9, and q·k in general 3 + 6/d; and
  // the keys of one row share q, so their squares are correlated (2d over
  // Var((q·k)²) = 2d² + 6d, 0.25 at d = 1) while those of different rows are not.
  for (const int d : {1, 4}) {
    SqrtDkOptions o;
    o.d = d;
    o.samples = 400000;
    o.keys_per_row = 2;
    const std::vector<double>& x = run_sqrt_dk_experiment(o).unscaled.values;
    double m2 = 0.0, m4 = 0.0;
    for (const double v : x) m2 += v * v, m4 += v * v * v * v;
    m2 /= static_cast<double>(x.size());
    m4 /= static_cast<double>(x.size());
    const double kurtosis = m4 / (m2 * m2);
    EXPECT_NEAR(kurtosis, 3.0 + 6.0 / d, d == 1 ? 0.8 : 0.25) << "d = " << d;

    const auto correlation_of_squares = [&](std::size_t offset) {
      double sa = 0, sb = 0, sab = 0, saa = 0, sbb = 0;
      std::size_t count = 0;
      for (std::size_t i = 0; i + offset < x.size(); i += 2, ++count) {
        const double a = x[i] * x[i], b = x[i + offset] * x[i + offset];
        sa += a, sb += b, sab += a * b, saa += a * a, sbb += b * b;
      }
      const double c = static_cast<double>(count);
      const double cov = sab / c - (sa / c) * (sb / c);
      return cov / std::sqrt((saa / c - (sa / c) * (sa / c)) * (sbb / c - (sb / c) * (sb / c)));
    };
    const double same_row = 2.0 * d / (2.0 * d * d + 6.0 * d);
    EXPECT_NEAR(correlation_of_squares(1), same_row, 0.08) << "d = " << d;  // keys 0 and 1 of one row
    EXPECT_NEAR(correlation_of_squares(2), 0.0, 0.05) << "d = " << d;       // key 0 of two rows
  }
}
