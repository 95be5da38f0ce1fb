#pragma once
// The project's own single-precision GEMM (base/gemm.cpp's "packed"
// backend): C (+)= A·B or A·Bᵀ on row-major blocks, with the register-tiled
// micro-kernel that OpenBLAS and BLIS use — each NR-column panel of B packed
// k-major once and then reused from L2 by every block of MR rows of A, which
// are read where they are (one broadcast per row and step; packing A too
// was 3–8 % slower here, most of all for attention's small products).
//
// Why our own: on this project's machine (2 cores, AMD EPYC with AVX-512
// executed as two 256-bit halves, 116 GFLOP/s a core) OpenBLAS 0.3.21 ran a
// GPT-2 layer's products (256 × 768 · 768 × 2304 and the like) at 77–88 % of
// the cores' peak and this kernel at 87–94 % (docs/performance.md, "Real models").
//
// Each cell is Σₚ a(i,p)·b(p,j) summed in order p = 0, 1, … with fused
// multiply-adds, in slices of at most 768 steps added to C one after the
// other — the same order whatever the thread count, the row or the column:
// the same inputs give the same bits on one thread or many, in a product of
// one row block or of many.
//
// The instruction-set variants live in their own files, compiled for their
// ISA only (packed_gemm_avx512.cpp, packed_gemm_avx2.cpp); gemm.cpp picks
// one at run time from what the CPU reports. Those files include nothing but
// intrinsics and this header, so no inline function compiled with AVX-512
// can stand in for one used on a CPU without it.

namespace attention_lab::packed {

// One product. `buffer` holds at least buffer_floats(p, threads) floats;
// `threads` ≥ 1 runs an OpenMP team of that many (1: the calling thread
// alone).
struct Product {
  int m, n, k;
  const float* a;
  int lda;
  const float* b;
  int ldb;
  bool b_transposed;
  float* c;
  int ldc;
  bool accumulate;
  // B stored as 16-bit floats instead (b unused): a model's F16 or BF16
  // weights, widened as each panel is packed (F16 with F16C's conversion:
  // run only where the CPU reports it, gemm.cpp).
  const unsigned short* b16 = nullptr;
  bool b16_is_bf16 = false;
};

long buffer_floats_avx512(const Product& p, int threads);
void run_avx512(const Product& p, float* buffer, int threads);

long buffer_floats_avx2(const Product& p, int threads);
void run_avx2(const Product& p, float* buffer, int threads);

// B (k × n, not transposed) packed whole once, for several products with
// its first rows, each on the calling thread: `packed` holds
// packed_floats(k, n) floats; run_prepacked computes p with B's first p.k
// rows from `packed` (packed_k ≥ p.k of them; p.b is not read), in the
// same bits as run.
long packed_floats_avx512(int k, int n);
void pack_avx512(const float* b, int ldb, int k, int n, float* packed);
void run_prepacked_avx512(const Product& p, const float* packed, int packed_k);

long packed_floats_avx2(int k, int n);
void pack_avx2(const float* b, int ldb, int k, int n, float* packed);
void run_prepacked_avx2(const Product& p, const float* packed, int packed_k);

}  // namespace attention_lab::packed
