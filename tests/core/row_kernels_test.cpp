// The engine's row loops (core/src/attention/row_kernels.h) against plain
// scalar loops: every length around the 16-lane vectors, the largest |value|,
// and NaN reported whatever lane it is in.

#include "attention/row_kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace attention_lab::engine_detail {
namespace {

std::vector<float> normal(std::mt19937& rng, int n) {
  std::normal_distribution<float> d;
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = d(rng);
  return v;
}

TEST(RowKernels, UpdateContextRowIsTheScalarUpdateWithItsLargestEntry) {
  std::mt19937 rng(31);
  for (const int n : {0, 1, 15, 16, 17, 64, 70}) {
    for (const bool with_old : {true, false}) {
      auto u = normal(rng, n);
      const auto v_new = normal(rng, n), v_old = normal(rng, n);
      const float en = 0.7f, eo = 0.2f, scale = 0.25f;
      std::vector<float> want(u.size()), concat(u.size());
      float want_max = 0.0f;
      for (int c = 0; c < n; ++c) {
        const auto i = static_cast<std::size_t>(c);
        want[i] = u[i] + (with_old ? v_new[i] * en - v_old[i] * eo : v_new[i] * (en - eo));
        want_max = std::max(want_max, std::abs(want[i]));
      }
      const float got = update_context_row(u.data(), v_new.data(), with_old ? v_old.data() : nullptr, en, eo, scale,
                                           concat.data(), n);
      EXPECT_EQ(got, want_max) << n;
      for (int c = 0; c < n; ++c) {
        const auto i = static_cast<std::size_t>(c);
        ASSERT_NEAR(u[i], want[i], 1e-6f * (1.0f + std::abs(want[i]))) << n << " at " << c;
        ASSERT_EQ(concat[i], u[i] * scale) << n << " at " << c;
      }
    }
  }
}

TEST(RowKernels, ANotANumberInAnyLaneIsReported) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const int at : {0, 5, 15, 16, 33, 69}) {
    std::vector<float> u(70, 1.0f), v(70, 0.5f), concat(70);
    v[static_cast<std::size_t>(at)] = nan;
    EXPECT_TRUE(std::isnan(update_context_row(u.data(), v.data(), nullptr, 1.0f, 0.0f, 1.0f, concat.data(), 70)))
        << "NaN at " << at;
    std::vector<float> block(3 * 70, 1.0f), a{1.0f, 2.0f, 3.0f}, b(70, 0.5f);
    b[static_cast<std::size_t>(at)] = nan;
    bool has_nan = false;
    add_outer_product(block.data(), 70, a.data(), b.data(), 3, 70, has_nan);
    EXPECT_TRUE(has_nan) << "NaN at " << at;
  }
}

TEST(RowKernels, AddOuterProductAddsEveryCellAndFindsTheLargest) {
  std::mt19937 rng(32);
  const int rows = 5, cols = 37, stride = 40;
  auto block = normal(rng, rows * stride);
  const auto before = block, a = normal(rng, rows), b = normal(rng, cols);
  bool nan = true;
  const float largest = add_outer_product(block.data(), stride, a.data(), b.data(), rows, cols, nan);
  EXPECT_FALSE(nan);
  float want_largest = 0.0f;
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < stride; ++j) {
      const auto at = static_cast<std::size_t>(i * stride + j);
      if (j >= cols) {
        ASSERT_EQ(block[at], before[at]) << "past the block at " << i << "," << j;
        continue;
      }
      const float want = before[at] + a[static_cast<std::size_t>(i)] * b[static_cast<std::size_t>(j)];
      ASSERT_NEAR(block[at], want, 1e-6f * (1.0f + std::abs(want))) << i << "," << j;
      want_largest = std::max(want_largest, std::abs(block[at]));
    }
  EXPECT_EQ(largest, want_largest);
}

TEST(RowKernels, FourRowsAtOnceGiveTheBitsOfOneRowAtATime) {
  std::mt19937 rng(33);
  const int n = 70;
  std::vector<std::vector<float>> seg, out, seg1, out1;
  for (int g = 0; g < kGroupRows; ++g) seg.push_back(normal(rng, n)), out.push_back(normal(rng, n));
  seg1 = seg, out1 = out;
  const auto y_old = normal(rng, n), y_new = normal(rng, n);
  const float a[kGroupRows] = {-0.5f, 0.25f, 1.5f, -2.0f}, b[kGroupRows] = {0.75f, -1.0f, 0.125f, 3.0f};
  const float scale[kGroupRows] = {0.1f, 0.2f, 0.3f, 0.4f};
  for (const bool first : {true, false}) {
    float* s[kGroupRows];
    float* o[kGroupRows];
    for (int g = 0; g < kGroupRows; ++g) s[g] = seg[static_cast<std::size_t>(g)].data(), o[g] = out[static_cast<std::size_t>(g)].data();
    if (first)
      sum_output_segments<true>(s, y_old.data(), y_new.data(), a, b, scale, o, n);
    else
      sum_output_segments<false>(s, y_old.data(), y_new.data(), a, b, scale, o, n);
    for (int g = 0; g < kGroupRows; ++g) {
      const auto k = static_cast<std::size_t>(g);
      sum_output_segment(seg1[k].data(), y_old.data(), y_new.data(), a[g], b[g], scale[g], out1[k].data(), n, first);
      EXPECT_EQ(seg[k], seg1[k]) << "row " << g << (first ? " (first head)" : "");
      EXPECT_EQ(out[k], out1[k]) << "row " << g << (first ? " (first head)" : "");
    }
  }
}

}  // namespace
}  // namespace attention_lab::engine_detail
