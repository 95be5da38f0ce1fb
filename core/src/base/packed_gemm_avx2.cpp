// The packed GEMM for AVX2 + FMA CPUs without AVX-512: a 6 × 16 tile of C in
// 12 ymm registers (the classic Haswell tile: 2 vectors of B and a broadcast
// beside them). Compiled with -mavx2 -mfma (CMakeLists.txt); run only when
// the CPU reports both (gemm.cpp).

#include <immintrin.h>

#include "base/packed_gemm_impl.h"

namespace attention_lab::packed {
namespace {

struct Avx2 {
  using V = __m256;
  static constexpr int W = 8, MR = 6, NV = 2;
  static V zero() { return _mm256_setzero_ps(); }
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static V broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  // Lane i on when i < n (the sign bit of each 32-bit mask lane).
  static __m256i first(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static V load_first(const float* p, int n) { return _mm256_maskload_ps(p, first(n)); }
  static void store_first(float* p, V v, int n) { _mm256_maskstore_ps(p, first(n), v); }
};

}  // namespace

long buffer_floats_avx2(const Product& p, int threads) { return Gemm<Avx2>::buffer_floats(p, threads); }
void run_avx2(const Product& p, float* buffer, int threads) { Gemm<Avx2>::run(p, buffer, threads); }
long packed_floats_avx2(int k, int n) { return Gemm<Avx2>::packed_floats(k, n); }
void pack_avx2(const float* b, int ldb, int k, int n, float* packed) { Gemm<Avx2>::pack(b, ldb, k, n, packed); }
void run_prepacked_avx2(const Product& p, const float* packed, int packed_k) {
  Gemm<Avx2>::run_prepacked(p, packed, packed_k);
}

}  // namespace attention_lab::packed
