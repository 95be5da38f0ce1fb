// The packed GEMM's variants (AVX-512 and AVX2, each when this CPU runs it),
// called directly: every tail of the register tile (rows not a multiple of
// 6, columns not a multiple of the panel, sums longer than one slice of k),
// both layouts of B as strided blocks, accumulate, one thread or two — against
// a float64 reference; and the bits of a cell do not depend on how the
// product is split (threads, the rows around it).

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
  long (*b_floats)(int);
  void (*run)(const packed::Product&, float*, int);
};

std::vector<Variant> variants() {
  std::vector<Variant> out;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    out.push_back({"AVX-512", packed::b_panel_floats_avx512, packed::run_avx512});
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    out.push_back({"AVX2", packed::b_panel_floats_avx2, packed::run_avx2});
  return out;
}

// C (m × n, rows ldc apart) as the variant computes it with `threads`.
void run(const Variant& v, const packed::Product& p, int threads) {
  std::vector<float> buffer(static_cast<std::size_t>(threads * v.b_floats(p.k)));
  v.run(p, buffer.data(), threads);
}

TEST(PackedGemm, EveryTailOfTheTileMatchesAFloat64Reference) {
  const auto all = variants();
  if (all.empty()) GTEST_SKIP() << "this CPU has neither AVX-512F nor AVX2 + FMA";
  std::mt19937 rng(21);
  std::normal_distribution<float> normal;
  // m around the 6-row tile; n around the 16/64-column panels; k past one
  // 768-step slice (1700: three slices) and tiny.
  const std::vector<std::tuple<int, int, int>> shapes{{1, 1, 1},    {5, 17, 3},    {6, 64, 64},   {7, 65, 100},
                                                      {13, 130, 769}, {64, 64, 64}, {37, 200, 1700}, {3, 9, 2}};
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
  const int m = 50, n = 150, k = 1000;
  std::vector<float> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n));
  for (float& x : a) x = normal(rng);
  for (float& x : b) x = normal(rng);
  for (const Variant& v : all) {
    SCOPED_TRACE(v.name);
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

}  // namespace
}  // namespace attention_lab
