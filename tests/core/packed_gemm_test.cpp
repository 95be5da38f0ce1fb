// The packed GEMM's variants (AVX-512 and AVX2, each when this CPU runs it),
// called directly: every tail of the register tile (rows not a multiple of
// 6, columns not a multiple of the panel, sums longer than one slice of k),
// both layouts of B as strided blocks, accumulate, one thread or two — against
// a float64 reference; and the bits of a cell do not depend on how the
// product is split (threads, the rows around it, whether B was packed whole
// or panel by panel).

#include "base/packed_gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace attention_lab {
namespace {

struct Variant {
  std::string name;
  long (*buffer_floats)(const packed::Product&, int);
  void (*run)(const packed::Product&, float*, int);
};

std::vector<Variant> variants() {
  std::vector<Variant> out;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    out.push_back({"AVX-512", packed::buffer_floats_avx512, packed::run_avx512});
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    out.push_back({"AVX2", packed::buffer_floats_avx2, packed::run_avx2});
  return out;
}

// C (m × n, rows ldc apart) as the variant computes it with `threads`.
void run(const Variant& v, const packed::Product& p, int threads) {
  std::vector<float> buffer(static_cast<std::size_t>(v.buffer_floats(p, threads)));
  v.run(p, buffer.data(), threads);
}

TEST(PackedGemm, EveryTailOfTheTileMatchesAFloat64Reference) {
  const auto all = variants();
  if (all.empty()) GTEST_SKIP() << "this CPU has neither AVX-512F nor AVX2 + FMA";
  std::mt19937 rng(21);
  std::normal_distribution<float> normal;
  // m around the 6-row tile; n around the 16/64-column panels; k past one
  // 768-step slice (1700: three slices) and tiny; a B small enough to be
  // packed whole (an edited head's change of the output, 64 × 768) and one
  // just too big for it (64 × 1040).
  const std::vector<std::tuple<int, int, int>> shapes{{1, 1, 1},      {5, 17, 3},   {6, 64, 64},     {7, 65, 100},
                                                      {13, 130, 769}, {64, 64, 64}, {37, 200, 1700}, {3, 9, 2},
                                                      {61, 768, 64},  {19, 1040, 64}};
  for (const Variant& v : all) {
    SCOPED_TRACE(v.name);
    for (const auto& [m, n, k] : shapes) {
      for (const bool transposed : {false, true}) {
        for (const bool accumulate : {false, true}) {
          for (const int threads : {1, 2}) {
            const int lda = k + 2, ldb = (transposed ? k : n) + 5, ldc = n + 3;  // blocks of wider tensors
            std::vector<float> a(static_cast<std::size_t>(m * lda)), b(static_cast<std::size_t>((transposed ? n : k) * ldb));
            std::vector<float> c(static_cast<std::size_t>(m * ldc));
            for (float& x : a) x = normal(rng);
            for (float& x : b) x = normal(rng);
            for (float& x : c) x = normal(rng);
            const std::vector<float> before = c;
            run(v, {m, n, k, a.data(), lda, b.data(), ldb, transposed, c.data(), ldc, accumulate}, threads);
            for (int i = 0; i < m; ++i)
              for (int j = 0; j < ldc; ++j) {
                const auto at = static_cast<std::size_t>(i * ldc + j);
                if (j >= n) {  // past the block: untouched
                  ASSERT_EQ(c[at], before[at]) << "column " << j << " of a block of " << n;
                  continue;
                }
                double want = accumulate ? static_cast<double>(before[at]) : 0.0;
                for (int p = 0; p < k; ++p) {
                  const float bv = transposed ? b[static_cast<std::size_t>(j * ldb + p)] : b[static_cast<std::size_t>(p * ldb + j)];
                  want += static_cast<double>(a[static_cast<std::size_t>(i * lda + p)]) * static_cast<double>(bv);
                }
                ASSERT_NEAR(c[at], want, 1e-4 * (1.0 + std::sqrt(static_cast<double>(k))))
                    << m << "×" << k << "×" << n << (transposed ? " Bᵀ" : " B") << (accumulate ? " +=" : "") << " threads "
                    << threads << " at " << i << "," << j;
              }
          }
        }
      }
    }
  }
}

TEST(PackedGemm, ACellHasTheSameBitsHoweverTheProductIsSplit) {
  const auto all = variants();
  if (all.empty()) GTEST_SKIP() << "this CPU has neither AVX-512F nor AVX2 + FMA";
  std::mt19937 rng(22);
  std::normal_distribution<float> normal;
  // k = 1000: B packed panel by panel, in two slices of k; k = 300: B
  // packed whole
  for (const int k : {1000, 300}) {
    const int m = 50, n = 150;
    std::vector<float> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n));
    for (float& x : a) x = normal(rng);
    for (float& x : b) x = normal(rng);
    for (const Variant& v : all) {
      SCOPED_TRACE(v.name + ", k " + std::to_string(k));
      std::vector<float> one(static_cast<std::size_t>(m * n)), two(one.size());
      run(v, {m, n, k, a.data(), k, b.data(), n, false, one.data(), n, false}, 1);
      run(v, {m, n, k, a.data(), k, b.data(), n, false, two.data(), n, false}, 2);
      EXPECT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)), 0) << "1 thread vs 2";
      // Row 17 alone (a product of one row) and columns 70 … 149 alone.
      std::vector<float> row(static_cast<std::size_t>(n));
      run(v, {1, n, k, a.data() + 17 * k, k, b.data(), n, false, row.data(), n, false}, 2);
      EXPECT_EQ(std::memcmp(row.data(), one.data() + 17 * n, row.size() * sizeof(float)), 0) << "row 17 alone";
      std::vector<float> right(static_cast<std::size_t>(m * 80));
      run(v, {m, 80, k, a.data(), k, b.data() + 70, n, false, right.data(), 80, false}, 1);
      for (int i = 0; i < m; ++i)
        ASSERT_EQ(std::memcmp(right.data() + i * 80, one.data() + i * n + 70, 80 * sizeof(float)), 0) << "columns 70… of row " << i;
    }
  }
}

// A B too big to pack whole (300 × 600 floats) and its first 150 columns,
// small enough: the same bits in those columns.
TEST(PackedGemm, PackingBWholeOrByPanelsGivesTheSameBits) {
  const auto all = variants();
  if (all.empty()) GTEST_SKIP() << "this CPU has neither AVX-512F nor AVX2 + FMA";
  std::mt19937 rng(23);
  std::normal_distribution<float> normal;
  const int m = 40, wide = 600, narrow = 150, k = 300;
  std::vector<float> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * wide));
  for (float& x : a) x = normal(rng);
  for (float& x : b) x = normal(rng);
  for (const Variant& v : all) {
    SCOPED_TRACE(v.name);
    const packed::Product by_panels{m, wide, k, a.data(), k, b.data(), wide, false, nullptr, wide, false};
    const packed::Product whole{m, narrow, k, a.data(), k, b.data(), wide, false, nullptr, narrow, false};
    ASSERT_LT(v.buffer_floats(by_panels, 1), static_cast<long>(k) * wide) << "the wide product's B goes panel by panel";
    ASSERT_GE(v.buffer_floats(whole, 1), static_cast<long>(k) * narrow) << "the narrow product's B is packed whole";
    std::vector<float> c_wide(static_cast<std::size_t>(m * wide)), c_narrow(static_cast<std::size_t>(m * narrow));
    for (const int threads : {1, 2}) {
      packed::Product p = by_panels;
      p.c = c_wide.data();
      run(v, p, threads);
      p = whole;
      p.c = c_narrow.data();
      run(v, p, threads);
      for (int i = 0; i < m; ++i)
        ASSERT_EQ(std::memcmp(c_narrow.data() + i * narrow, c_wide.data() + i * wide, narrow * sizeof(float)), 0)
            << "row " << i << ", threads " << threads;
    }
  }
}

}  // namespace
}  // namespace attention_lab
