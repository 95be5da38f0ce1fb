// The model forward's products: Eigen, OpenBLAS (when installed) and the
// packed kernel (when the CPU runs it) give
// x·B and x·Bᵀ of a strided block, as a float64 reference does; so do the
// vector products that one or two rows take (split across threads by
// columns, some ranges empty when C has fewer columns than ranges).

#include "attention_lab/gemm.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <stdexcept>
#include <vector>

namespace attention_lab {
namespace {

std::vector<GemmBackend> backends() { return available_gemm_backends(); }

// Restores the backend a test changed.
struct BackendGuard {
  GemmBackend before = gemm_backend();
  ~BackendGuard() { set_gemm_backend(before); }
};

TEST(Gemm, BothLayoutsOfAStridedBlockMatchAFloat64Reference) {
  BackendGuard guard;
  std::mt19937 rng(11);
  std::normal_distribution<float> normal;
  for (const GemmBackend backend : backends()) {
    SCOPED_TRACE(to_string(backend));
    ASSERT_TRUE(set_gemm_backend(backend));
    for (const auto& [m, k, n] : {std::tuple{1, 7, 5}, std::tuple{33, 64, 19}, std::tuple{70, 130, 257}, std::tuple{1, 300, 301},
                                  std::tuple{2, 257, 299}, std::tuple{1, 8192, 9}, std::tuple{3, 300, 301}}) {
      for (const bool transposed : {false, true}) {
        const int rows = transposed ? n : k, cols = transposed ? k : n, stride = cols + 3;  // a block of a wider tensor
        std::vector<float> b(static_cast<std::size_t>(rows * stride));
        for (float& v : b) v = normal(rng);
        Matrix x(m, k);
        for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = normal(rng);
        Matrix y;
        gemm(x, b.data(), rows, cols, stride, transposed, y);
        ASSERT_EQ(y.rows(), m);
        ASSERT_EQ(y.cols(), n);
        for (int i = 0; i < m; ++i)
          for (int j = 0; j < n; ++j) {
            double want = 0.0;
            for (int p = 0; p < k; ++p) {
              const float bv = transposed ? b[static_cast<std::size_t>(j * stride + p)] : b[static_cast<std::size_t>(p * stride + j)];
              want += static_cast<double>(x(i, p)) * static_cast<double>(bv);
            }
            ASSERT_NEAR(y(i, j), want, 1e-4 * (1.0 + std::abs(want))) << m << "×" << k << "×" << n << " at " << i << "," << j;
          }
      }
    }
  }
}

TEST(Gemm, AccumulateAddsTheProductToWhatIsThere) {
  BackendGuard guard;
  std::mt19937 rng(12);
  std::normal_distribution<float> normal;
  for (const GemmBackend backend : backends()) {
    SCOPED_TRACE(to_string(backend));
    ASSERT_TRUE(set_gemm_backend(backend));
    // A product of many rows (sgemm with beta 1) and of one (the vector path).
    for (const auto& [m, k, n] : {std::tuple{70, 130, 257}, std::tuple{1, 300, 301}}) {
      for (const bool transposed : {false, true}) {
        const int rows = transposed ? n : k, cols = transposed ? k : n;
        std::vector<float> b(static_cast<std::size_t>(rows * cols));
        for (float& v : b) v = normal(rng);
        Matrix x(m, k), before(m, n);
        for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = normal(rng);
        for (Eigen::Index i = 0; i < before.size(); ++i) before.data()[i] = normal(rng);
        Matrix product;
        gemm(x, b.data(), rows, cols, cols, transposed, product);
        Matrix y = before;
        gemm_accumulate(x, b.data(), rows, cols, cols, transposed, y);
        EXPECT_LT((y - (before + product)).cwiseAbs().maxCoeff(), 1e-4f) << m << "×" << k << "×" << n;
        EXPECT_GT((y - product).cwiseAbs().maxCoeff(), 0.1f);  // what was there counts
      }
    }
    Matrix wrong(3, 3);
    const float b[4] = {1, 2, 3, 4};
    EXPECT_THROW(gemm_accumulate(Matrix::Ones(2, 2), b, 2, 2, 2, false, wrong), std::invalid_argument);
    Matrix kept = Matrix::Constant(3, 2, 5.0f);
    gemm_accumulate(Matrix(3, 0), b, 0, 2, 2, false, kept);  // k = 0: adds nothing
    EXPECT_EQ(kept, Matrix::Constant(3, 2, 5.0f));
  }
}

// 16-bit weights (a model's F16 / BF16 tensors where the file mapping put
// them) are widened inside the product: the result is that of the same B
// widened first, on every backend and path (the packed kernel widening while
// it packs, in the same bits; one or two rows and the other backends by
// blocks of columns, within rounding), plain and accumulated, through a
// strided block.
TEST(Gemm, SixteenBitWeightsGiveTheProductOfTheWidenedWeights) {
  BackendGuard guard;
  std::mt19937 rng(21);
  std::normal_distribution<float> normal;
  for (const StoredType type : {StoredType::BF16, StoredType::F16}) {
    for (const GemmBackend backend : backends()) {
      SCOPED_TRACE(std::string(to_string(type)) + " on " + to_string(backend));
      ASSERT_TRUE(set_gemm_backend(backend));
      for (const auto& [m, k, n] : {std::tuple{1, 300, 301}, std::tuple{2, 64, 600}, std::tuple{3, 300, 301},
                                    std::tuple{40, 130, 257}, std::tuple{70, 900, 70}}) {
        for (const bool transposed : {false, true}) {
          const int rows = transposed ? n : k, cols = transposed ? k : n, stride = cols + 5;
          std::vector<std::uint16_t> bits(static_cast<std::size_t>(rows * stride));
          std::vector<float> widened(bits.size());
          for (std::size_t i = 0; i < bits.size(); ++i) {
            const float v = normal(rng);
            // float → 16 bits by truncation: any pattern of finite values will do
            bits[i] = type == StoredType::BF16 ? static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(v) >> 16)
                                               : static_cast<std::uint16_t>(0x3000u + (std::bit_cast<std::uint32_t>(v) >> 19 & 0x0fffu) +
                                                                            (v < 0 ? 0x8000u : 0u));
            widened[i] = type == StoredType::BF16 ? bfloat16_to_float(bits[i]) : half_to_float(bits[i]);
          }
          const StoredFloats b{bits.data(), type};
          Matrix x(m, k), before(m, n);
          for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = normal(rng);
          for (Eigen::Index i = 0; i < before.size(); ++i) before.data()[i] = normal(rng);
          Matrix y, want;
          gemm(x, b, rows, cols, stride, transposed, y);
          gemm(x, widened.data(), rows, cols, stride, transposed, want);
          ASSERT_EQ(y.rows(), m);
          ASSERT_EQ(y.cols(), n);
          const float scale = 1.0f + want.cwiseAbs().maxCoeff();
          if (backend == GemmBackend::Packed && m > 2) EXPECT_EQ(y, want) << m << "×" << k << "×" << n;
          else EXPECT_LT((y - want).cwiseAbs().maxCoeff(), 1e-5f * scale) << m << "×" << k << "×" << n;
          Matrix sum = before;
          gemm_accumulate(x, b, rows, cols, stride, transposed, sum);
          EXPECT_LT((sum - (before + want)).cwiseAbs().maxCoeff(), 1e-5f * scale) << m << "×" << k << "×" << n;
        }
      }
    }
  }
}

TEST(Gemm, EmptyShapesGiveEmptyOrZeroResults) {
  BackendGuard guard;
  for (const GemmBackend backend : backends()) {
    ASSERT_TRUE(set_gemm_backend(backend));
    const float b[4] = {1, 2, 3, 4};
    Matrix y;
    gemm(Matrix(0, 2), b, 2, 2, 2, false, y);
    EXPECT_EQ(y.rows(), 0);
    EXPECT_EQ(y.cols(), 2);
    gemm(Matrix(3, 0), b, 0, 2, 2, false, y);  // k = 0: a sum of nothing
    EXPECT_EQ(y, Matrix::Zero(3, 2));
  }
}

TEST(Gemm, OpenBlasIsRefusedWhenAbsentAndTheBackendSaysWhichRuns) {
  BackendGuard guard;
  EXPECT_EQ(set_gemm_backend(GemmBackend::Packed), packed_available());
  EXPECT_EQ(gemm_backend(), packed_available() ? GemmBackend::Packed : GemmBackend::Eigen);
  EXPECT_EQ(std::string(packed_isa_name()).empty(), !packed_available());
  const auto all = available_gemm_backends();
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.back(), GemmBackend::Eigen);
  EXPECT_EQ(all.front(), packed_available() ? GemmBackend::Packed : openblas_available() ? GemmBackend::OpenBlas : GemmBackend::Eigen);
  EXPECT_TRUE(set_gemm_backend(GemmBackend::Eigen));
  EXPECT_EQ(gemm_backend(), GemmBackend::Eigen);
  EXPECT_EQ(set_gemm_backend(GemmBackend::OpenBlas), openblas_available());
  EXPECT_EQ(gemm_backend(), openblas_available() ? GemmBackend::OpenBlas : GemmBackend::Eigen);
  EXPECT_EQ(openblas_library().empty(), !openblas_available());
}

// A factor prepared once (a head's values, read by each block of rows of
// its weights): every product with its first k rows has the bits gemm()
// gives it — one or two rows, a row block, sums of one slice and of two
// (k past 768), with and without accumulate — on every backend; and a new
// prepare of the same object takes the new B.
TEST(Gemm, APreparedFactorGivesGemmsBits) {
  BackendGuard guard;
  std::mt19937 rng(12);
  std::normal_distribution<float> normal;
  const int full_k = 1000, n = 70, ldb = 90;
  std::vector<float> b(static_cast<std::size_t>(full_k * ldb)), a(static_cast<std::size_t>(64 * full_k));
  for (float& v : b) v = normal(rng);
  for (float& v : a) v = normal(rng);
  for (const GemmBackend backend : backends()) {
    SCOPED_TRACE(to_string(backend));
    ASSERT_TRUE(set_gemm_backend(backend));
    GemmRhs rhs;
    for (const int round : {0, 1}) {
      if (round == 1)
        for (float& v : b) v = normal(rng);  // then prepared again
      rhs.prepare(b.data(), full_k, n, ldb);
      for (const auto& [m, k] : {std::pair{1, 1000}, std::pair{2, 64}, std::pair{5, 300}, std::pair{64, 640},
                                 std::pair{64, 1000}, std::pair{25, 769}, std::pair{64, 1}}) {
        for (const bool accumulate : {false, true}) {
          SCOPED_TRACE(std::to_string(m) + " × " + std::to_string(k) + (accumulate ? " +=" : "") + " round " +
                       std::to_string(round));
          std::vector<float> want(static_cast<std::size_t>(m * n), 0.5f), got = want;
          gemm(m, n, k, a.data(), full_k, b.data(), ldb, false, want.data(), n, accumulate);
          rhs.multiply(m, k, a.data(), full_k, got.data(), n, accumulate);
          ASSERT_EQ(got, want);
        }
      }
    }
  }
}

}  // namespace
}  // namespace attention_lab
