#pragma once
// What the engine's source files share (core/src/attention/): index
// helpers, the constants that bound its rounding and its blocks, thread-local
// scratch rows, and the progress/cancellation counter. Not a public header.

#include "attention_lab/engine.h"
#include "attention_lab/gemm.h"
#include "attention_lab/softmax.h"
#include "base/parallel.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <vector>

namespace attention_lab::engine_detail {

using Index = Eigen::Index;

constexpr std::size_t idx(StageKind k) { return static_cast<std::size_t>(k); }
inline std::size_t uz(Index i) { return static_cast<std::size_t>(i); }
inline Index ix(int i) { return static_cast<Index>(i); }
inline Index ix(std::size_t i) { return static_cast<Index>(i); }

constexpr float kInf = std::numeric_limits<float>::infinity();

// Row loops run on OpenMP's threads only when worth it (base/parallel.h):
// `rows` rows of `per_row` floating-point operations each.
inline bool rows_worth_threads(double rows, double per_row) { return parallel::worth_threads(rows * per_row); }

// Scores are computed in square blocks of this many cells per side; a block
// is skipped when the mask allows none of its cells.
constexpr Index kBlock = 64;
// Rows are recomputed from scratch before their error estimate (in float ulps
// of the head's largest context value) passes this.
constexpr float kDriftLimit = 64.0f;
// Output rows are recomputed exactly after this many rank-one updates.
constexpr std::uint8_t kOutAgeLimit = 64;
// How far an incrementally updated entry may rise above its row's offset
// (e^40 ≈ 2e17 stays far from float overflow) before the row is recomputed.
constexpr float kMaxRise = 40.0f;
// Rows of Q, K and V updated by X's changes keep an error bound below this
// fraction of their largest value (16 float ulps), else they are recomputed.
constexpr float kProjTolerance = 0x1p-20f;
// The unit roundoff of float: the largest relative error of one rounding.
constexpr float kUnitRoundoff = 0x1p-24f;
// A head's scores updated by rank-one products (W_q or W_k edits) keep their
// rounding below this fraction of the largest score (16 float ulps): then a
// weight moves by about 1e-6 at most, else the scores are computed anew.
constexpr float kScoreTolerance = 0x1p-20f;

// Kinds of pins a row of a head holds (Engine::row_pins_).
enum PinBits : std::uint8_t {
  kPinScores = 1,
  kPinScaledMasked = 2,  // the row's masked values need the pin lookups
  kPinWeights = 4,
  kPinContext = 8,
};

// A hash of the row index in [0, 1), so rows start their error budgets at
// different points and reach the refresh limit on different edits.
inline float stagger(Index i) {
  const std::uint32_t h = static_cast<std::uint32_t>(i) * 2654435761u;
  return static_cast<float>(h >> 8) / static_cast<float>(1u << 24);
}
inline float drift_start(Index i) { return stagger(i) * (kDriftLimit / 2.0f); }
inline std::uint8_t age_start(Index i) { return static_cast<std::uint8_t>(stagger(i) * (kOutAgeLimit / 2)); }

// out = in turned by RoPE pair by pair, one head's d_k values of one
// position with that position's cos and sin per pair, the first `rot` of
// them (partial rotary; the rest copied) (positions.cpp).
void rotate_head(const float* in, float* out, const float* c, const float* s, Index dk, Index rot, RopePairs pairs);

// c = a·b (with `accumulate`, c += a·b) for blocks of row-major matrices:
// the big products (projections, W_o, an edited head's change of the output)
// go to the chosen GEMM backend (base/gemm.h), so OpenBLAS runs them when
// installed.
template <typename A, typename B, typename C>
void block_product(const A& a, const B& b, C&& c, bool accumulate = false) {
  gemm(static_cast<int>(c.rows()), static_cast<int>(c.cols()), static_cast<int>(a.cols()), a.data(),
       static_cast<int>(a.outerStride()), b.data(), static_cast<int>(b.outerStride()), false, c.data(),
       static_cast<int>(c.outerStride()), accumulate);
}

// out = a·w for a column w of weights: a matrix-vector product bound by
// reading a (T × d floats), split into blocks of kBlock rows so both threads
// read. (Each block starts at a multiple of kBlock, so a row is summed as in
// one product over all rows.)
template <typename A, typename W, typename Out>
void column_product(const A& a, const W& w, Out&& out) {
  const Eigen::VectorXf column = w;  // contiguous once (a column of a row-major matrix is strided)
  const Index rows = a.rows(), blocks = (rows + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) if (rows >= 4 * kBlock && parallel::worth_threads(2.0 * static_cast<double>(rows * a.cols())))
  for (Index b = 0; b < blocks; ++b) {
    const Index i0 = b * kBlock, n = std::min(kBlock, rows - i0);
    out.segment(i0, n).noalias() = a.middleRows(i0, n) * column;
  }
}

// T×T matrices read down their columns (scores) and R, streamed on every
// edit, touch a new 4 KiB page every row: backed by 2 MiB pages where the
// kernel allows it, they cost far fewer TLB misses. Call before first touch.
inline void advise_huge_pages(Matrix& m) {
#ifdef MADV_HUGEPAGE
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  const auto begin = reinterpret_cast<std::uintptr_t>(m.data());
  const auto end = begin + static_cast<std::uintptr_t>(m.size()) * sizeof(float);
  const std::uintptr_t first = (begin + kHuge - 1) & ~(kHuge - 1), last = end & ~(kHuge - 1);
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);  // advice only
#else
  (void)m;
#endif
}

// The columns R is stored with for `used` columns: a few more when rows
// `used` floats apart would start at the same offset within a 4 KiB page
// (d_out = 768 with 12 heads: 36 KiB). Several rows updated side by side
// (edit_rows) then fall on different cache sets and do not stall on each
// other's stores (4K aliasing).
inline Index r_stride(Index used) {
  constexpr Index kPage = 4096 / sizeof(float), kLine = 64 / sizeof(float);
  const Index off = used % kPage;
  return off < 4 * kLine || off > kPage - 4 * kLine ? used + kLine : used;
}

// Scratch space for one thread (rows of T floats).
inline std::vector<float>& scratch_a(Index n) {
  thread_local std::vector<float> v;
  if (ix(v.size()) < n) v.resize(uz(n));
  return v;
}
inline std::vector<float>& scratch_b(Index n) {
  thread_local std::vector<float> v;
  if (ix(v.size()) < n) v.resize(uz(n));
  return v;
}


// The sink's term e^(sink − m) of a softmax sum whose offset is m (0 for no
// sink, −∞), computed as exp_shifted computes the keys' terms.
inline double sink_term(float sink, float m) {
  return sink > -kInf ? static_cast<double>(fast_exp(sink - m)) : 0.0;
}

}  // namespace attention_lab::engine_detail

namespace attention_lab {

// [SECTION] Progress and cancellation

class Engine::Work {
 public:
  Work(ComputeControl* control, double total) : control_(control), total_(std::max(total, 1.0)) {
    if (control_) control_->progress.store(0.0f);
  }
  // Called by any thread after finishing `amount` of the work; false once
  // the owner asked to cancel.
  bool step(double amount) {
    if (!control_) return true;
    const double done = done_.fetch_add(amount) + amount;
    control_->progress.store(static_cast<float>(std::min(1.0, done / total_)));
    return !control_->cancel.load(std::memory_order_relaxed);
  }
  void check() const {
    if (control_ && control_->cancel.load(std::memory_order_relaxed)) throw Cancelled();
  }

 private:
  ComputeControl* control_;
  double total_;
  std::atomic<double> done_{0.0};
};

}  // namespace attention_lab
