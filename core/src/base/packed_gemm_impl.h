#pragma once
// The packed GEMM's loops, written once over an instruction set `Isa` (see
// packed_gemm_avx512.cpp / packed_gemm_avx2.cpp for the two there are):
//   Isa::V            a vector of Isa::W floats
//   Isa::MR, Isa::NV  the register tile: MR rows × NV vectors of C
//   zero, load, broadcast, fma, add
//   load_first(p, n) / store_first(p, v, n): the first n ≤ W lanes only
// Packing B uses AVX2 and F16C, which both variants have. Included only by
// those files (compiled for their ISA); nothing from the standard library
// here, see packed_gemm.h.

#include "base/packed_gemm.h"

#include <immintrin.h>
#include <omp.h>

namespace attention_lab::packed {

template <class Isa>
struct Gemm {
  // Eight values of B as floats: stored as float, as bfloat16 (the high half
  // of a float: a shift) or as float16 (F16C's conversion, exact). Members,
  // like everything here, so each ISA's file has its own (see packed_gemm.h).
  struct FromF32 {
    using T = float;
    static __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
    static float one(float v) { return v; }
  };
  struct FromBf16 {
    using T = unsigned short;
    static __m256 load8(const unsigned short* p) {
      const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
      return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
    }
    static float one(unsigned short v) {
      const unsigned int bits = static_cast<unsigned int>(v) << 16;
      float f;
      __builtin_memcpy(&f, &bits, sizeof f);
      return f;
    }
  };
  struct FromF16 {
    using T = unsigned short;
    static __m256 load8(const unsigned short* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
    static float one(unsigned short v) { return _cvtsh_ss(v); }
  };

  // v[r] (row r of an 8 × 8 block) becomes column r.
  static void transpose8(__m256 v[8]) {
    const __m256 t0 = _mm256_unpacklo_ps(v[0], v[1]), t1 = _mm256_unpackhi_ps(v[0], v[1]);
    const __m256 t2 = _mm256_unpacklo_ps(v[2], v[3]), t3 = _mm256_unpackhi_ps(v[2], v[3]);
    const __m256 t4 = _mm256_unpacklo_ps(v[4], v[5]), t5 = _mm256_unpackhi_ps(v[4], v[5]);
    const __m256 t6 = _mm256_unpacklo_ps(v[6], v[7]), t7 = _mm256_unpackhi_ps(v[6], v[7]);
    const __m256 s0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0)), s1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
    const __m256 s2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0)), s3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
    const __m256 s4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0)), s5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
    const __m256 s6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0)), s7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
    v[0] = _mm256_permute2f128_ps(s0, s4, 0x20);
    v[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
    v[2] = _mm256_permute2f128_ps(s2, s6, 0x20);
    v[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
    v[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
    v[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
    v[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
    v[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
  }

  static constexpr int MR = Isa::MR;
  static constexpr int NR = Isa::W * Isa::NV;
  using V = typename Isa::V;

  static int row_blocks(int m) { return (m + MR - 1) / MR; }
  // The sum runs in slices of at most kMaxSteps steps of k, so that a
  // slice of a B panel (≤ 768 × 64 floats, 192 KB) stays in L2 beside the
  // row block of A it meets: at k = 3072 (GPT-2's MLP down-projection) the
  // whole panel did not, and the product ran 5 % slower than OpenBLAS.
  static constexpr int kMaxSteps = 768;
  static int slices(int k) { return (k + kMaxSteps - 1) / kMaxSteps; }
  static int slice_steps(int k) { return (k + slices(k) - 1) / slices(k); }
  // + one vector, so a panel can start on a 64-byte line whatever the buffer.
  static long b_floats(int k) { return static_cast<long>(slice_steps(k)) * NR + 16; }

  // A short sum over a small B (an edited head's change of the output,
  // T × 64 · 64 × 768; a head's share of the output): all of B is packed
  // once, and each thread goes along whole rows of C, which it then reads
  // and writes in order. Panel by panel down all rows (the other path), each
  // row of C is touched 48 times a line at a time — with only 64 steps of
  // sum per visit, the product waited on C and ran at half the kernel's rate.
  static constexpr long kMaxWholeB = 64L * 1024;  // floats: 256 KB, in L2 beside the rows of A and C
  static int panels_of(int n) { return (n + NR - 1) / NR; }
  static bool whole_b(const Product& q) {
    return q.k <= kMaxSteps && static_cast<long>(panels_of(q.n)) * NR * q.k <= kMaxWholeB;
  }
  static bool direct(const Product& q) { return !q.b_transposed && q.m <= kMaxDirectRows; }
  static long buffer_floats(const Product& q, int threads) {
    return !direct(q) && whole_b(q) ? static_cast<long>(panels_of(q.n)) * NR * q.k + 16 : threads * b_floats(q.k);
  }
  template <class F>
  static F* aligned(F* p) {
    return p + (16 - (reinterpret_cast<unsigned long>(p) / sizeof(float)) % 16) % 16;
  }

  // Columns j0 … j0+NR of B's rows p0 … p0+steps, k-major:
  // out[p·NR + j] = b(p0 + p, j0 + j); columns past n are 0. B's values as
  // stored: float, or 16-bit floats widened here.
  static void pack_b(const Product& q, int p0, int steps, int j0, float* out) {
    if (q.b16 == nullptr) pack_b<FromF32>(q, q.b, p0, steps, j0, out);
    else if (q.b16_is_bf16) pack_b<FromBf16>(q, q.b16, p0, steps, j0, out);
    else pack_b<FromF16>(q, q.b16, p0, steps, j0, out);
  }
  template <class From>
  static void pack_b(const Product& q, const typename From::T* b, int p0, int steps, int j0, float* out) {
    const int cols = q.n - j0 < NR ? q.n - j0 : NR;
    if (!q.b_transposed) {
      for (int p = 0; p < steps; ++p) {
        const typename From::T* src = b + static_cast<long>(p0 + p) * q.ldb + j0;
        float* dst = out + static_cast<long>(p) * NR;
        int j = 0;
        for (; j + 8 <= cols; j += 8) _mm256_storeu_ps(dst + j, From::load8(src + j));
        for (; j < cols; ++j) dst[j] = From::one(src[j]);
        for (; j < NR; ++j) dst[j] = 0.0f;
      }
      return;
    }
    // Bᵀ stored: column j of the product is row j0 + j of the tensor. Eight
    // rows at a time, eight steps of each read and the 8 × 8 block
    // transposed in registers: row by row with one value a write, the
    // packing took a third of a Llama layer's products (2048 deep, 256 rows
    // of A: each panel serves only 43 blocks of rows).
    int j = 0;
    for (; j + 8 <= cols; j += 8) {
      const typename From::T* rows[8];
      for (int r = 0; r < 8; ++r) rows[r] = b + static_cast<long>(j0 + j + r) * q.ldb + p0;
      int p = 0;
      for (; p + 8 <= steps; p += 8) {
        __m256 v[8];
        for (int r = 0; r < 8; ++r) v[r] = From::load8(rows[r] + p);
        transpose8(v);
        for (int t = 0; t < 8; ++t) _mm256_storeu_ps(out + static_cast<long>(p + t) * NR + j, v[t]);
      }
      for (; p < steps; ++p)
        for (int r = 0; r < 8; ++r) out[static_cast<long>(p) * NR + j + r] = From::one(rows[r][p]);
    }
    for (; j < NR; ++j) {
      if (j < cols) {
        const typename From::T* src = b + static_cast<long>(j0 + j) * q.ldb + p0;
        for (int p = 0; p < steps; ++p) out[static_cast<long>(p) * NR + j] = From::one(src[p]);
      } else {
        for (int p = 0; p < steps; ++p) out[static_cast<long>(p) * NR + j] = 0.0f;
      }
    }
  }

  // Part `part` of `parts` of B's panel at j0, rows p0 … p0+steps, asked
  // into L2 while the panel before it is multiplied: packing then copies from
  // L2 instead of waiting on memory (8 % of a 256-row product's time).
  static void prefetch_b(const Product& q, int p0, int steps, int j0, int part, int parts) {
    if (j0 >= q.n) return;
    const int cols = q.n - j0 < NR ? q.n - j0 : NR;
    const long size = q.b16 ? 2 : 4;  // bytes of a value of B
    const char* b = q.b16 ? reinterpret_cast<const char*>(q.b16) : reinterpret_cast<const char*>(q.b);
    if (!q.b_transposed) {
      const int first = static_cast<int>(static_cast<long>(steps) * part / parts);
      const int last = static_cast<int>(static_cast<long>(steps) * (part + 1) / parts);
      for (int p = first; p < last; ++p) {
        const char* row = b + (static_cast<long>(p0 + p) * q.ldb + j0) * size;
        for (long byte = 0; byte < cols * size; byte += 64) _mm_prefetch(row + byte, _MM_HINT_T1);
      }
      return;
    }
    const int first = static_cast<int>(static_cast<long>(cols) * part / parts);
    const int last = static_cast<int>(static_cast<long>(cols) * (part + 1) / parts);
    for (int j = first; j < last; ++j) {
      const char* row = b + (static_cast<long>(j0 + j) * q.ldb + p0) * size;
      for (long byte = 0; byte < steps * size; byte += 64) _mm_prefetch(row + byte, _MM_HINT_T1);
    }
  }

  // The tile of C at (r0, j0), asked into L1 while the tile before it is
  // computed: with a short sum (k = 64: an edited head's change of the
  // output) waiting for C's lines was 10 % of the product.
  static void prefetch_c(const Product& q, int r0, int j0, int cols) {
    const int rows = q.m - r0 < MR ? q.m - r0 : MR;
    for (int r = 0; r < rows; ++r) {
      const char* row = reinterpret_cast<const char*>(q.c + static_cast<long>(r0 + r) * q.ldc + j0);
      for (int byte = 0; byte < cols * 4; byte += 64) _mm_prefetch(row + byte, _MM_HINT_T0);
    }
  }

  // The MR × NR tile of C at (r0, j0), steps p0 … p1 of the sum: `rows` and
  // `cols` of it are real; `add` adds to what C holds. Step p of the sum
  // reads B's NR columns at bp + p·b_step (a packed panel: b_step = NR).
  static void tile(const Product& q, int p0, const float* __restrict bp, long b_step, int steps, int r0, int rows,
                   int j0, int cols, bool add) {
    // Rows past m read row r0 again: their sums are never stored.
    const float* ar[static_cast<unsigned>(MR)];
    for (int r = 0; r < MR; ++r) ar[r] = q.a + static_cast<long>(r0 + (r < rows ? r : 0)) * q.lda + p0;
    V acc[static_cast<unsigned>(MR)][static_cast<unsigned>(Isa::NV)];
    for (int r = 0; r < MR; ++r)
      for (int v = 0; v < Isa::NV; ++v) acc[r][v] = Isa::zero();
    for (int p = 0; p < steps; ++p) {
      V bv[static_cast<unsigned>(Isa::NV)];
      for (int v = 0; v < Isa::NV; ++v) bv[v] = Isa::load(bp + p * b_step + v * Isa::W);
      for (int r = 0; r < MR; ++r) {
        const V a = Isa::broadcast(ar[r] + p);
        for (int v = 0; v < Isa::NV; ++v) acc[r][v] = Isa::fma(a, bv[v], acc[r][v]);
      }
    }
    // The sums leave their registers through a buffer stored at constant
    // indices: read with a run-time row below, the array would be kept in
    // memory, and with AVX2's 16 registers GCC 12 then stored every
    // accumulator on every step of the loop above (2.5× slower).
    alignas(64) float sums[static_cast<unsigned>(MR * NR)];
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
      for (int v = 0; v < Isa::NV; ++v) Isa::store(sums + r * NR + v * Isa::W, acc[r][v]);
    for (int r = 0; r < rows; ++r) {
      float* out = q.c + static_cast<long>(r0 + r) * q.ldc + j0;
      for (int v = 0; v < Isa::NV; ++v) {
        const int lanes = cols - v * Isa::W;
        if (lanes <= 0) break;
        float* at = out + v * Isa::W;
        const V sum = Isa::load(sums + r * NR + v * Isa::W);
        if (lanes >= Isa::W) {
          Isa::store(at, add ? Isa::add(Isa::load(at), sum) : sum);
        } else {
          Isa::store_first(at, add ? Isa::add(Isa::load_first(at, lanes), sum) : sum, lanes);
        }
      }
    }
  }

  static void run_whole_b(const Product& q, float* buffer, int threads) {
    const int blocks = row_blocks(q.m);
    const int panels = panels_of(q.n);
    float* bp = aligned(buffer);
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
      // packed as `pack` lays it out (panel j at j·k·NR)
#pragma omp for schedule(static)
      for (int panel = 0; panel < panels; ++panel) pack_b(q, 0, q.k, panel * NR, bp + static_cast<long>(panel) * q.k * NR);
      // (the loop's barrier: every panel is packed before any is read)
#pragma omp for schedule(static)
      for (int block = 0; block < blocks; ++block) run_blocks(q, bp, q.k, block, block + 1);
    }
  }

  // A product of a few rows (output rows computed again after edits):
  // each panel of B serves a row block or two, so B is read where it is.
  // Packed, all of B was copied (2.4 MB of W_o for 16 rows) to be read once
  // or twice, and the product took twice as long. A last panel narrower
  // than NR is packed still (its rows would be read past B's end), and so
  // is every panel of a B of 16-bit floats (the kernel reads floats).
  static constexpr int kMaxDirectRows = 4 * MR;
  static void run_direct(const Product& q, float* buffer, int threads) {
    const int blocks = row_blocks(q.m);
    const int panels = panels_of(q.n);
    const int per_slice = slice_steps(q.k);
    const long panel_floats = b_floats(q.k);
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
      float* bp = aligned(buffer + panel_floats * omp_get_thread_num());
#pragma omp for schedule(static)
      for (int panel = 0; panel < panels; ++panel) {
        const int j0 = panel * NR, cols = q.n - j0 < NR ? q.n - j0 : NR;
        for (int p0 = 0; p0 < q.k; p0 += per_slice) {
          const int steps = q.k - p0 < per_slice ? q.k - p0 : per_slice;
          const float* b = bp;
          long b_step = NR;
          if (cols < NR || q.b16 != nullptr) {
            pack_b(q, p0, steps, j0, bp);
          } else {
            b = q.b + static_cast<long>(p0) * q.ldb + j0;
            b_step = q.ldb;
          }
          for (int block = 0; block < blocks; ++block) {
            const int r0 = block * MR;
            tile(q, p0, b, b_step, steps, r0, q.m - r0 < MR ? q.m - r0 : MR, j0, cols, q.accumulate || p0 > 0);
          }
        }
      }
    }
  }

  // B packed whole once for several products with its first rows (a head's
  // values, read by each block of rows of its weights: packed per product,
  // they were copied 16 times per head): panel j at j·k·NR, its step p at p·NR.
  static long packed_floats(int k, int n) { return static_cast<long>(panels_of(n)) * NR * k + 16; }
  static void pack(const float* b, int ldb, int k, int n, float* out) {
    const Product q{0, n, k, nullptr, 0, b, ldb, false, nullptr, 0, false};
    float* bp = aligned(out);
    for (int panel = 0; panel < panels_of(n); ++panel) pack_b(q, 0, k, panel * NR, bp + static_cast<long>(panel) * k * NR);
  }
  // Row blocks first … last of C against a B packed whole (panel j at
  // j·packed_k·NR, its step p at p·NR), each tile's slices of k in order, as
  // run adds them: the same bits.
  static void run_blocks(const Product& q, const float* bp, int packed_k, int first, int last) {
    const int panels = panels_of(q.n), per_slice = slice_steps(q.k);
    for (int block = first; block < last; ++block) {
      const int r0 = block * MR, rows = q.m - r0 < MR ? q.m - r0 : MR;
      for (int panel = 0; panel < panels; ++panel) {
        const int j0 = panel * NR, cols = q.n - j0 < NR ? q.n - j0 : NR;
        const float* panel_start = bp + static_cast<long>(panel) * packed_k * NR;
        for (int p0 = 0; p0 < q.k; p0 += per_slice) {
          const int steps = q.k - p0 < per_slice ? q.k - p0 : per_slice;
          tile(q, p0, panel_start + static_cast<long>(p0) * NR, NR, steps, r0, rows, j0, cols, q.accumulate || p0 > 0);
        }
      }
    }
  }
  static void run_prepacked(const Product& q, const float* packed, int packed_k) {
    run_blocks(q, aligned(packed), packed_k, 0, row_blocks(q.m));
  }

  static void run(const Product& q, float* buffer, int threads) {
    if (direct(q)) {
      run_direct(q, buffer, threads);
      return;
    }
    if (whole_b(q)) {
      run_whole_b(q, buffer, threads);
      return;
    }
    float* b_panels = buffer;
    const int blocks = row_blocks(q.m);
    const int panels = (q.n + NR - 1) / NR;
    const long panel_floats = b_floats(q.k);
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
      const int team = omp_get_num_threads();
      // The panel of this thread, on a 64-byte boundary.
      float* bp = aligned(b_panels + panel_floats * omp_get_thread_num());
      // Each thread takes whole panels when there are enough to share (B is
      // packed once), else every panel is split by rows as well.
      const int chunks = panels >= 2 * team ? 1 : team;
      const int tasks = panels * chunks;
      const int per_slice = slice_steps(q.k);
      // Slice by slice, so a slice of A's rows stays in L2 across the
      // panels; the static schedule gives a thread the same tiles in every
      // slice, so each tile's slices are added in order without a barrier
      // between them.
      for (int p0 = 0; p0 < q.k; p0 += per_slice) {
        const int steps = q.k - p0 < per_slice ? q.k - p0 : per_slice;
#pragma omp for schedule(static) nowait
        for (int task = 0; task < tasks; ++task) {
          const int panel = task / chunks, chunk = task % chunks;
          const int first = static_cast<int>(static_cast<long>(blocks) * chunk / chunks);
          const int last = static_cast<int>(static_cast<long>(blocks) * (chunk + 1) / chunks);
          if (first == last) continue;
          const int j0 = panel * NR;
          const int cols = q.n - j0 < NR ? q.n - j0 : NR;
          pack_b(q, p0, steps, j0, bp);
          for (int block = first; block < last; ++block) {
            prefetch_b(q, p0, steps, j0 + NR, block - first, last - first);
            if (block + 1 < last) prefetch_c(q, (block + 1) * MR, j0, cols);
            const int r0 = block * MR;
            tile(q, p0, bp, NR, steps, r0, q.m - r0 < MR ? q.m - r0 : MR, j0, cols, q.accumulate || p0 > 0);
          }
        }
      }
    }
  }
};

}  // namespace attention_lab::packed
