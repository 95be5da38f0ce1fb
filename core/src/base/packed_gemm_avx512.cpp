// The packed GEMM for AVX-512 CPUs: a 6 × 64 tile of C in 24 zmm registers
// (4 vectors of B and one broadcast of A beside them, 29 of 32). Measured
// here against 12 × 32 and 8 × 48: 6 × 64 was fastest at every shape of a
// GPT-2 layer. Compiled with -mavx512f (CMakeLists.txt); run only when the
// CPU reports AVX-512F (gemm.cpp).

#include <immintrin.h>

#include "base/packed_gemm_impl.h"

namespace attention_lab::packed {
namespace {

struct Avx512 {
  using V = __m512;
  static constexpr int W = 16, MR = 6, NV = 4;
  static V zero() { return _mm512_setzero_ps(); }
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static V broadcast(const float* p) { return _mm512_set1_ps(*p); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static __mmask16 first(int n) { return static_cast<__mmask16>((1u << n) - 1u); }
  static V load_first(const float* p, int n) { return _mm512_maskz_loadu_ps(first(n), p); }
  static void store_first(float* p, V v, int n) { _mm512_mask_storeu_ps(p, first(n), v); }
};

}  // namespace

long buffer_floats_avx512(const Product& p, int threads) { return Gemm<Avx512>::buffer_floats(p, threads); }
void run_avx512(const Product& p, float* buffer, int threads) { Gemm<Avx512>::run(p, buffer, threads); }
long packed_floats_avx512(int k, int n) { return Gemm<Avx512>::packed_floats(k, n); }
void pack_avx512(const float* b, int ldb, int k, int n, float* packed) { Gemm<Avx512>::pack(b, ldb, k, n, packed); }
void run_prepacked_avx512(const Product& p, const float* packed, int packed_k) {
  Gemm<Avx512>::run_prepacked(p, packed, packed_k);
}

}  // namespace attention_lab::packed
