#include "attention_lab/engine.h"

#include "attention_lab/softmax.h"
#include "attention_lab/stage_registry.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

namespace attention_lab {

namespace {

using Index = Eigen::Index;

constexpr std::size_t idx(StageKind k) { return static_cast<std::size_t>(k); }
std::size_t uz(Index i) { return static_cast<std::size_t>(i); }
Index ix(int i) { return static_cast<Index>(i); }
Index ix(std::size_t i) { return static_cast<Index>(i); }

constexpr float kInf = std::numeric_limits<float>::infinity();

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
// A head's scores updated by rank-one products (W_q or W_k edits) keep their
// rounding below this fraction of the largest score (16 float ulps): then a
// weight moves by about 1e-6 at most, else the scores are computed anew.
constexpr float kScoreTolerance = 0x1p-20f;
// How many rows ahead a pass down a column of the scores prefetches.
constexpr long kPrefetchRows = 4;

// Kinds of pins a row of a head holds (Engine::row_pins_).
enum PinBits : std::uint8_t {
  kPinScores = 1,
  kPinScaledMasked = 2,  // the row's masked values need the pin lookups
  kPinWeights = 4,
  kPinContext = 8,
};

// A hash of the row index in [0, 1), so rows start their error budgets at
// different points and reach the refresh limit on different edits.
float stagger(Index i) {
  const std::uint32_t h = static_cast<std::uint32_t>(i) * 2654435761u;
  return static_cast<float>(h >> 8) / static_cast<float>(1u << 24);
}
float drift_start(Index i) { return stagger(i) * (kDriftLimit / 2.0f); }
std::uint8_t age_start(Index i) { return static_cast<std::uint8_t>(stagger(i) * (kOutAgeLimit / 2)); }

// T×T matrices read down their columns (scores) and R, streamed on every
// edit, touch a new 4 KiB page every row: backed by 2 MiB pages where the
// kernel allows it, they cost far fewer TLB misses. Call before first touch.
void advise_huge_pages(Matrix& m) {
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

// Scratch space for one thread (rows of T floats).
std::vector<float>& scratch_a(Index n) {
  thread_local std::vector<float> v;
  if (ix(v.size()) < n) v.resize(uz(n));
  return v;
}
std::vector<float>& scratch_b(Index n) {
  thread_local std::vector<float> v;
  if (ix(v.size()) < n) v.resize(uz(n));
  return v;
}

}  // namespace

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

// [SECTION] Invalidation

void Invalidation::mark(StageKind kind, int head) { entries_.push_back({kind, head}); }
void Invalidation::mark_all_heads(StageKind kind) { entries_.push_back({kind, -1}); }
void Invalidation::mark_everything() { everything_ = true; }
void Invalidation::mark_cell(StageKind kind, int head, int row, int col, float old_value) {
  entries_.push_back({kind, head, row, col, old_value});
}

// [SECTION] Scheduling

void Engine::recompute_all(const Scenario& scenario) {
  Invalidation all;
  all.mark_everything();
  recompute(scenario, all);
}

void Engine::recompute(const Scenario& scenario, const Invalidation& what) {
  scenario_ = &scenario;
  const bool reshape = dims_ != scenario.dims() || heads_.size() != static_cast<std::size_t>(scenario.heads);
  try {
    if (reshape || what.everything()) {
      if (reshape) resize_storage();
      full_forward();
    } else {
      refresh_settings();
      index_pins();
      if (!recompute_cells(what)) recompute_heads(what);
    }
  } catch (const Cancelled&) {
    // Half-computed: make sure any further recompute starts from scratch.
    dims_ = Dims{};
    heads_.clear();
    cache_.clear();
    throw;
  }
  finish();
}

void Engine::finish() {
  // R is rebuilt by the next edit that needs it when no head keeps it now
  if (std::none_of(r_valid_.begin(), r_valid_.end(), [](std::uint8_t v) { return v != 0; })) R_.resize(0, 0);
  collect_warnings();
  if (control_.p) control_.p->progress.store(1.0f);
}

void Engine::refresh_settings() {
  const Scenario& s = *scenario_;
  // Computed in double, then rounded once, so scaling adds no error of its own.
  const double divisor = (s.scale ? std::sqrt(static_cast<double>(dims_.d_k)) : 1.0) *
                         static_cast<double>(s.temperature);
  const double inverse = 1.0 / divisor;
  // A temperature near 0: the factor would be ∞, and 0·∞ is NaN where x/tiny is 0.
  use_div_ = !(inverse <= static_cast<double>(std::numeric_limits<float>::max()));
  scale_mul_ = static_cast<float>(inverse);
  scale_div_ = static_cast<float>(divisor);
  alibi_.clear();
  if (s.alibi)
    for (double m : alibi_slopes(dims_.heads)) alibi_.push_back(static_cast<float>(m));
}

void Engine::add_position_bias(int h, Index i, float* x, Index n) const {
  if (alibi_.empty()) return;
  const float m = alibi_[uz(h)];
  for (Index j = 0; j < n; ++j) x[j] += m * static_cast<float>(j - i);
}

void Engine::index_pins() {
  const Index T = dims_.T;
  row_pins_.assign(uz(T * dims_.heads), 0);
  pins_ = scenario_->pins;  // kept, so stage() never reads the scenario for computed stages
  for (const auto& [key, value] : pins_) {
    std::uint8_t bit = 0;
    switch (key.stage.kind) {
      case StageKind::Scores: bit = kPinScores; break;
      case StageKind::Scaled: case StageKind::Masked: bit = kPinScaledMasked; break;
      case StageKind::Weights: bit = kPinWeights; break;
      case StageKind::Context: bit = kPinContext; break;
      default: break;
    }
    const int h = key.stage.head;
    if (bit != 0 && h >= 0 && h < dims_.heads && key.row >= 0 && key.row < dims_.T)
      row_pins_[uz(ix(h) * T + key.row)] |= bit;
  }
}

void Engine::full_forward() {
  refresh_settings();
  index_pins();
  load_mask();
  const double T = dims_.T, hk = dims_.heads * dims_.d_k, hv = dims_.heads * dims_.d_v;
  const double total = 2.0 * T * dims_.d_model * (2.0 * hk + hv) + 2.0 * T * T * (hk + hv) +
                       (scenario_->use_w_o ? 2.0 * T * hv * dims_.d_out : 0.0);
  Work work(control_.p, total);
  for (auto k : {StageKind::X, StageKind::W_q, StageKind::W_k, StageKind::W_v, StageKind::b_q, StageKind::b_k,
                 StageKind::b_v, StageKind::W_o, StageKind::b_o, StageKind::Mask})
    bump(k, 0, true);
  for (auto k : {StageKind::Q, StageKind::K, StageKind::V}) compute_projection(k, -1, &work);
  std::vector<int> all(uz(dims_.heads));
  for (int h = 0; h < dims_.heads; ++h) all[uz(h)] = h;
  head_pass(all, true, &work);
  for (int h = 0; h < dims_.heads; ++h)
    for (auto k : {StageKind::Scores, StageKind::Scaled, StageKind::PositionBias, StageKind::Masked,
                   StageKind::Weights, StageKind::Context})
      bump(k, h, true);
  bump(StageKind::Concat, 0, true);
  full_output(&work);
}

// Head-level invalidation: whole stages of whole heads, as settings and
// whole-matrix edits need.
void Engine::recompute_heads(const Invalidation& what) {
  const int H = dims_.heads;
  std::vector<std::array<bool, kStageKindCount>> dirty(uz(H));
  for (auto& d : dirty) d.fill(false);
  bool output_dirty = false;
  bool mask_dirty = false;

  auto mark = [&](StageKind kind, int head) {
    for (int h = 0; h < H; ++h)
      if (head < 0 || head == h) dirty[uz(h)][idx(kind)] = true;
  };

  // Map what changed onto the computed stages that read it directly; the
  // propagation below takes care of everything further downstream.
  for (const auto& e : what.entries()) {
    const StageKind kind = e.kind;
    const int h = e.head < H ? e.head : -1;
    switch (kind) {
      case StageKind::X:
        bump(kind, 0, true);
        mark(StageKind::Q, -1), mark(StageKind::K, -1), mark(StageKind::V, -1);
        break;
      case StageKind::W_q: case StageKind::b_q: bump(kind, 0, true); mark(StageKind::Q, h); break;
      case StageKind::W_k: case StageKind::b_k: bump(kind, 0, true); mark(StageKind::K, h); break;
      case StageKind::W_v: case StageKind::b_v: bump(kind, 0, true); mark(StageKind::V, h); break;
      case StageKind::W_o:
        bump(kind, 0, true);
        output_dirty = true;
        std::fill(r_valid_.begin(), r_valid_.end(), std::uint8_t{0});
        break;
      case StageKind::b_o: bump(kind, 0, true); output_dirty = true; break;
      case StageKind::Mask: mask_dirty = true; break;
      case StageKind::Q: case StageKind::HeadQ: mark(StageKind::Q, h); break;
      case StageKind::K: case StageKind::HeadK: mark(StageKind::K, h); break;
      case StageKind::V: case StageKind::HeadV: mark(StageKind::V, h); break;
      case StageKind::Concat: mark(StageKind::Context, h); break;
      case StageKind::Output: output_dirty = true; break;
      default: mark(kind, h); break;
    }
  }

  bool any_head = false;
  for (const auto& d : dirty)
    for (bool b : d) any_head = any_head || b;

  if (mask_dirty) {
    const Matrix old = mask_;
    load_mask();
    // A few rows changed (undo of a toggle, a causal mask made custom): only
    // those rows of every head.
    std::vector<Index> rows;
    for (Index i = 0; i < mask_.rows(); ++i)
      if (old.rows() != mask_.rows() || mask_.row(i) != old.row(i)) rows.push_back(i);
    bump(StageKind::Mask, 0, true);
    if (!any_head && !output_dirty && ix(rows.size()) <= std::max<Index>(4, dims_.T / 16)) {
      for (int h = 0; h < H; ++h) ensure_blocks_for_mask(h);
#pragma omp parallel for schedule(dynamic)
      for (int h = 0; h < H; ++h)
        for (Index i : rows) recompute_row(h, i);
      for (Index i : rows) output_row(i);
      for (int h = 0; h < H; ++h)
        for (Index i : rows) note_row(StageKind::Masked, h, i);
      if (!rows.empty()) {
        for (int h = 0; h < H; ++h)
          for (auto k : {StageKind::Masked, StageKind::Weights, StageKind::Context}) bump(k, h, false);
        bump(StageKind::Concat, 0, false);
        bump(StageKind::Output, 0, false);
      }
      return;
    }
    mark(StageKind::Masked, -1);
  }

  // Propagate staleness down each head's chain, then into the output.
  for (auto& d : dirty) {
    if (d[idx(StageKind::Q)] || d[idx(StageKind::K)]) d[idx(StageKind::Scores)] = true;
    if (d[idx(StageKind::Scores)]) d[idx(StageKind::Scaled)] = true;
    if (d[idx(StageKind::Scaled)] || d[idx(StageKind::PositionBias)]) d[idx(StageKind::Masked)] = true;
    if (d[idx(StageKind::Masked)]) d[idx(StageKind::Weights)] = true;
    if (d[idx(StageKind::Weights)] || d[idx(StageKind::V)]) d[idx(StageKind::Context)] = true;
    if (d[idx(StageKind::Context)]) output_dirty = true;
  }

  double total = 0.0;
  for (const auto& d : dirty) {
    const double T = dims_.T;
    total += (d[idx(StageKind::Scores)] ? 2.0 * T * T * dims_.d_k : 0.0) +
             (d[idx(StageKind::Context)] ? 2.0 * T * T * dims_.d_v : 0.0);
  }
  Work work(control_.p, total + 2.0 * dims_.T * dims_.heads * dims_.d_v * dims_.d_out);

  for (auto k : {StageKind::Q, StageKind::K, StageKind::V}) {
    bool all_heads = H > 0;
    for (const auto& d : dirty) all_heads = all_heads && d[idx(k)];
    if (all_heads) {
      compute_projection(k, -1, &work);
    } else {
      for (int h = 0; h < H; ++h)
        if (dirty[uz(h)][idx(k)]) compute_projection(k, h, &work);
    }
  }
  std::vector<int> with_scores, without;
  for (int h = 0; h < H; ++h) {
    const auto& d = dirty[uz(h)];
    if (d[idx(StageKind::Scores)])
      with_scores.push_back(h);
    else if (d[idx(StageKind::Context)])
      without.push_back(h);
  }
  head_pass(with_scores, true, &work);
  head_pass(without, false, &work);
  for (int h = 0; h < H; ++h) {
    const auto& d = dirty[uz(h)];
    for (auto k : {StageKind::Scores, StageKind::Scaled, StageKind::PositionBias, StageKind::Masked,
                   StageKind::Weights, StageKind::Context})
      if (d[idx(k)]) bump(k, h, true);
  }
  if (!with_scores.empty() || !without.empty()) bump(StageKind::Concat, 0, true);
  if (output_dirty) full_output(&work);
}

// Cell-level invalidation. Returns false when `what` is better handled by
// recompute_heads (head-level entries, or many cells at once).
bool Engine::recompute_cells(const Invalidation& what) {
  const auto& entries = what.entries();
  if (entries.empty()) return true;  // no number changed (a token label): finish() refreshes the warnings
  for (const auto& e : entries)
    if (!e.is_cell()) return false;
  if (entries.size() == 1) {
    const auto& e = entries.front();
    switch (e.kind) {
      case StageKind::X:
        bump(e.kind, 0, false);
        edit_x_row(e.row, e.col, e.old_value);
        return true;
      case StageKind::W_q: case StageKind::b_q:
        bump(e.kind, 0, false);
        edit_qk_column(StageKind::Q, e.col);
        return true;
      case StageKind::W_k: case StageKind::b_k:
        bump(e.kind, 0, false);
        edit_qk_column(StageKind::K, e.col);
        return true;
      case StageKind::W_v: case StageKind::b_v:
        bump(e.kind, 0, false);
        edit_v_column(e.col);
        return true;
      case StageKind::W_o:
        bump(e.kind, 0, false);
        edit_output_column(e.col);
        if (scenario_->use_w_o && R_.size() != 0 && dims_.d_v > 0) {
          const int h = e.row / dims_.d_v;
          if (h < dims_.heads && r_valid_[uz(h)]) {
            const Index dv = dims_.d_v, dout = dims_.d_out;
            R_.col(ix(h) * dout + e.col).noalias() =
                U_.middleCols(ix(h) * dv, dv) * scenario_->W_o.block(ix(h) * dv, e.col, dv, 1);
          }
        }
        return true;
      case StageKind::b_o:
        bump(e.kind, 0, false);
        edit_output_column(e.col);
        return true;
      case StageKind::Mask:
        edit_mask_cell(e.row, e.col);
        return true;
      default:
        edit_pin(e);
        return true;
    }
  }
  // Several pins at once (SetPins): those that recompute whole rows can be
  // applied one by one against the final state; Q, K and V pins go head-level.
  if (entries.size() > 256) return false;
  for (const auto& e : entries)
    switch (e.kind) {
      case StageKind::Scores: case StageKind::Scaled: case StageKind::Masked: case StageKind::Weights:
      case StageKind::Context: case StageKind::Output: break;
      default: return false;
    }
  for (const auto& e : entries) edit_pin(e);
  return true;
}

// [SECTION] Storage and the mask

void Engine::resize_storage() {
  const Scenario& s = *scenario_;
  dims_ = s.dims();
  const Index T = dims_.T;
  Q_.resize(T, ix(dims_.heads * dims_.d_k));
  K_.resize(T, ix(dims_.heads * dims_.d_k));
  V_.resize(T, ix(dims_.heads * dims_.d_v));
  U_.resize(T, ix(dims_.heads * dims_.d_v));
  concat_.resize(T, ix(dims_.heads * dims_.d_v));
  output_.resize(T, ix(dims_.d_out));
  R_.resize(0, 0);
  r_valid_.assign(uz(dims_.heads), 0);
  nb_ = (T + kBlock - 1) / kBlock;
  heads_.clear();
  heads_.resize(uz(dims_.heads));
  for (auto& hs : heads_) {
    hs.S.resize(T, T);
    advise_huge_pages(hs.S);
    hs.S.setZero();  // blocks not computed yet hold 0, never garbage
    hs.valid.assign(uz(nb_ * nb_), 0);
    hs.offset.assign(uz(T), 0.0f);
    hs.sum.assign(uz(T), 0.0);
    hs.cscale.assign(uz(T), 0.0f);
    hs.issue.assign(uz(T), RowIssue::None);
    hs.direct.assign(uz(T), 0);
    hs.drift.assign(uz(T), 0.0f);
    hs.cmax = 0.0f;
    for (auto& c : hs.changes) c.rows.assign(uz(T), 0);
  }
  out_age_.assign(uz(T), 0);
  for (auto& e : proj_err_) e.assign(uz(T), 0.0f);
  versions_.assign(static_cast<std::size_t>(std::max(dims_.heads, 1)), {});
  cache_.clear();
}

// The mask the scenario applies (Scenario::effective_mask), written in place.
void Engine::load_mask() {
  const Scenario& s = *scenario_;
  const Index T = dims_.T;
  if (mask_.rows() != T || mask_.cols() != T) {
    mask_.resize(T, T);
    advise_huge_pages(mask_);
  }
  switch (s.mask_kind) {
    case MaskKind::None: mask_.setOnes(); break;
    case MaskKind::Causal:
      mask_.setZero();
      mask_.triangularView<Eigen::Lower>().setOnes();  // query r may see keys 0…r
      break;
    case MaskKind::Window: mask_ = s.effective_mask(); break;
    case MaskKind::Custom: mask_ = s.custom_mask; break;
  }
  mask_shape_ = shape_of(s.mask_kind);
  mask_block_count_.assign(uz(nb_ * nb_), 0);
  for (Index i = 0; i < T; ++i) {
    const Index bi = i / kBlock;
    for (Index bj = 0; bj < nb_; ++bj) {
      const Index j0 = bj * kBlock, w = std::min(kBlock, T - j0);
      mask_block_count_[uz(bi * nb_ + bj)] += static_cast<int>((mask_.row(i).segment(j0, w).array() != 0.0f).count());
    }
  }
}

Engine::MaskShape Engine::shape_of(MaskKind kind) {
  switch (kind) {
    case MaskKind::None: return MaskShape::None;
    case MaskKind::Causal: return MaskShape::Causal;
    case MaskKind::Window: return MaskShape::Window;
    case MaskKind::Custom: return MaskShape::Custom;
  }
  return MaskShape::Custom;
}

// The columns [0, extent) that hold every allowed cell of block row bi.
Index Engine::extent(Index bi) const {
  for (Index bj = nb_ - 1; bj >= 0; --bj)
    if (mask_block_count_[uz(bi * nb_ + bj)] > 0) return std::min(ix(dims_.T), (bj + 1) * kBlock);
  return 0;
}

// [SECTION] Kernels

// Q, K or V for one head's column block (head < 0: all of them), in chunks of
// rows so a cancel is noticed within a few milliseconds.
void Engine::compute_projection(StageKind kind, int head, Work* work) {
  const Scenario& s = *scenario_;
  const Matrix& W = kind == StageKind::Q ? s.W_q : kind == StageKind::K ? s.W_k : s.W_v;
  const Matrix& b = kind == StageKind::Q ? s.b_q : kind == StageKind::K ? s.b_k : s.b_v;
  Matrix& out = kind == StageKind::Q ? Q_ : kind == StageKind::K ? K_ : V_;
  const Index width = head < 0 ? out.cols() : ix(kind == StageKind::V ? dims_.d_v : dims_.d_k);
  const Index first = head < 0 ? 0 : ix(head) * width;
  const Index T = dims_.T;
  constexpr Index kChunk = 256;
  for (Index r0 = 0; r0 < T; r0 += kChunk) {
    const Index rows = std::min(kChunk, T - r0);
    // this head's columns of X·W
    out.block(r0, first, rows, width).noalias() = s.X.middleRows(r0, rows) * W.middleCols(first, width);
    if (work) {
      work->step(2.0 * static_cast<double>(rows * width * W.rows()));
      work->check();
    }
  }
  // + b, broadcast over tokens
  if (s.use_bias) out.middleCols(first, width).rowwise() += b.row(0).segment(first, width);
  if (head < 0) {
    std::fill(proj_error(kind).begin(), proj_error(kind).end(), 0.0f);  // every row exact again
    apply_pins(kind, -1);
    for (int h = 0; h < dims_.heads; ++h) bump(kind, h, true);
  } else {
    apply_pins(kind, head);
    bump(kind, head, true);
  }
}

// Scores (optionally), softmax state, U and concat of every row of `heads`,
// in tasks of one block of rows, the largest first. R of those heads becomes
// stale.
void Engine::head_pass(const std::vector<int>& heads, bool with_scores, Work* work) {
  if (heads.empty()) return;
  for (int h : heads) {
    auto& hs = heads_[uz(h)];
    if (with_scores) {
      std::fill(hs.valid.begin(), hs.valid.end(), std::uint8_t{0});
      hs.score_error = 0.0f;  // every score is computed anew
    } else
      ensure_blocks_for_mask(h);
    r_valid_[uz(h)] = 0;
  }
  std::vector<std::pair<int, Index>> tasks;
  for (Index bi = nb_ - 1; bi >= 0; --bi)
    for (int h : heads) tasks.emplace_back(h, bi);
  std::atomic<bool> stop{false};
  const auto n = static_cast<long>(tasks.size());
  const double per_cell = 2.0 * ((with_scores ? dims_.d_k : 0) + dims_.d_v);
#pragma omp parallel
  {
    thread_local std::vector<float> scratch;  // kept: a fresh one would page-fault every pass
#pragma omp for schedule(dynamic, 1)
    for (long t = 0; t < n; ++t) {
      if (stop.load(std::memory_order_relaxed)) continue;
      const auto [h, bi] = tasks[uz(t)];
      head_block(h, bi, with_scores, scratch);
      if (work) {
        const double rows = static_cast<double>(std::min(kBlock, ix(dims_.T) - bi * kBlock));
        if (!work->step(per_cell * rows * static_cast<double>(extent(bi)))) stop.store(true);
      }
    }
  }
  if (stop.load()) throw Cancelled();
  const Index dv = dims_.d_v;
  for (int h : heads) {
    auto& hs = heads_[uz(h)];
    const auto block = concat_.middleCols(ix(h) * dv, dv);
    hs.cmax = block.size() > 0 ? block.cwiseAbs().maxCoeff<Eigen::PropagateNaN>() : 0.0f;
    if (!std::isfinite(hs.cmax)) hs.cmax = 0.0f;  // then every incremental update recomputes its row
  }
}

// masked_ij = S_ij / √d_k / temperature for j < n, −∞ where a custom mask
// forbids; n is `limit` cut to the causal extent of row i. The forward pass,
// a recomputed row and a weights row share this arithmetic, so they agree
// bit for bit.
Index Engine::scaled_masked_prefix(int h, Index i, Index limit, float* x) const {
  const bool ends_at_diagonal = mask_shape_ == MaskShape::Causal || mask_shape_ == MaskShape::Window;
  const Index n = ends_at_diagonal ? std::min(limit, i + 1) : limit;
  const float* s = heads_[uz(h)].S.row(i).data();
  if (use_div_)
    for (Index j = 0; j < n; ++j) x[j] = s[j] / scale_div_;
  else
    for (Index j = 0; j < n; ++j) x[j] = s[j] * scale_mul_;
  add_position_bias(h, i, x, n);
  if (mask_shape_ == MaskShape::Custom || mask_shape_ == MaskShape::Window) {
    const float* m = mask_.row(i).data();
    for (Index j = 0; j < n; ++j) x[j] = m[j] != 0.0f ? x[j] : -kInf;
  }
  return n;
}

void Engine::head_block(int h, Index bi, bool with_scores, std::vector<float>& scratch) {
  HeadState& hs = heads_[uz(h)];
  const Index T = dims_.T, dk = dims_.d_k, dv = dims_.d_v;
  const Index i0 = bi * kBlock, rows = std::min(kBlock, T - i0), jn = extent(bi);
  const auto Qh = Q_.middleCols(ix(h) * dk, dk);
  const auto Kh = K_.middleCols(ix(h) * dk, dk);
  const auto Vh = V_.middleCols(ix(h) * dv, dv);
  if (with_scores && jn > 0) {
    // scores_i = Q_i · K_iᵀ: entry (r, c) is how well token r's query matches token c's key.
    hs.S.block(i0, 0, rows, jn).noalias() = Qh.middleRows(i0, rows) * Kh.topRows(jn).transpose();
    for (Index bj = 0; bj * kBlock < jn; ++bj) hs.valid[uz(bi * nb_ + bj)] = 1;
    for (Index i = i0; i < i0 + rows; ++i)
      if (row_pins_[uz(ix(h) * T + i)] & kPinScores) apply_row_pins(StageKind::Scores, h, i);
  }
  scratch.resize(uz(std::max<Index>(rows * jn, 1)));
  Eigen::Map<Matrix> E(scratch.data(), rows, jn);
  bool is_direct[kBlock] = {};
  for (Index r = 0; r < rows; ++r) {
    const Index i = i0 + r;
    float* e = scratch.data() + r * jn;
    const bool pinned = (row_pins_[uz(ix(h) * T + i)] & (kPinScaledMasked | kPinWeights)) != 0;
    const Index n = pinned ? jn : scaled_masked_prefix(h, i, jn, e);
    bool nan = false;
    const float max = pinned ? 0.0f : max_and_nan(e, n, nan);
    if (pinned || nan || max == -kInf || max == kInf) {
      is_direct[r] = true;
      std::fill(e, e + jn, 0.0f);
      continue;
    }
    exp_shifted(e, max, e, n);
    std::fill(e + n, e + jn, 0.0f);
    const double z = sum_in_double(e, n);
    hs.offset[uz(i)] = max;
    hs.sum[uz(i)] = z;
    hs.cscale[uz(i)] = static_cast<float>(1.0 / z);
    hs.issue[uz(i)] = RowIssue::None;
    hs.direct[uz(i)] = 0;
    hs.drift[uz(i)] = drift_start(i);
  }
  // context_i = weights_i · V_i = (Σ_j e^(masked_ij − m_i) V_j) / Z_i
  auto U = U_.block(i0, ix(h) * dv, rows, dv);
  if (jn > 0)
    U.noalias() = E * Vh.topRows(jn);
  else
    U.setZero();
  for (Index r = 0; r < rows; ++r) {
    if (is_direct[r])
      recompute_row(h, i0 + r);
    else
      set_concat_row(h, i0 + r);
  }
}

// Block (bi, bj) of one head's scores, pins included.
void Engine::compute_block(int h, Index bi, Index bj) const {
  HeadState& hs = heads_[uz(h)];
  const Index T = dims_.T, dk = dims_.d_k;
  const Index i0 = bi * kBlock, j0 = bj * kBlock;
  const Index rows = std::min(kBlock, T - i0), cols = std::min(kBlock, T - j0);
  hs.S.block(i0, j0, rows, cols).noalias() =
      Q_.block(i0, ix(h) * dk, rows, dk) * K_.block(j0, ix(h) * dk, cols, dk).transpose();
  const auto& pins = pins_;
  const StageId id{StageKind::Scores, h};
  for (auto it = pins.lower_bound(PinKey{id, static_cast<int>(i0), 0});
       it != pins.end() && it->first.stage == id && it->first.row < i0 + rows; ++it)
    if (it->first.col >= j0 && it->first.col < j0 + cols) hs.S(it->first.row, it->first.col) = it->second;
  hs.valid[uz(bi * nb_ + bj)] = 1;
}

// Computes the blocks of scores the current mask reads but were skipped.
void Engine::ensure_blocks_for_mask(int h) {
  auto& hs = heads_[uz(h)];
  for (Index bi = 0; bi < nb_; ++bi)
    for (Index bj = 0; bj < nb_; ++bj)
      if (mask_block_count_[uz(bi * nb_ + bj)] > 0 && !hs.valid[uz(bi * nb_ + bj)]) compute_block(h, bi, bj);
}

// Every block of one head's scores, for showing them.
void Engine::complete_scores(int h) const {
  const auto& hs = heads_[uz(h)];
  std::vector<Index> missing;
  for (Index b = 0; b < nb_ * nb_; ++b)
    if (!hs.valid[uz(b)]) missing.push_back(b);
  if (missing.empty()) return;
  const auto n = static_cast<long>(missing.size());
#pragma omp parallel for schedule(dynamic, 4)
  for (long t = 0; t < n; ++t) compute_block(h, missing[uz(t)] / nb_, missing[uz(t)] % nb_);
}

// Everything of row i of head h from its scores: softmax state, U, concat and
// (when kept) R. Exact: used for edited rows, refreshes and direct rows.
void Engine::recompute_row(int h, Index i) {
  HeadState& hs = heads_[uz(h)];
  note_row(StageKind::Weights, h, i);
  const Index T = dims_.T, dv = dims_.d_v;
  const auto Vh = V_.middleCols(ix(h) * dv, dv);
  float* x = scratch_a(T).data();
  float* e = scratch_b(T).data();
  auto u = U_.row(i).segment(ix(h) * dv, dv);
  if ((row_pins_[uz(ix(h) * T + i)] & (kPinScaledMasked | kPinWeights)) == 0) {
    const Index n = scaled_masked_prefix(h, i, extent(i / kBlock), x);
    bool nan = false;
    const float max = max_and_nan(x, n, nan);
    if (!nan && max != -kInf && max != kInf) {
      exp_shifted(x, max, e, n);
      const double z = sum_in_double(e, n);
      hs.offset[uz(i)] = max;
      hs.sum[uz(i)] = z;
      hs.cscale[uz(i)] = static_cast<float>(1.0 / z);
      hs.issue[uz(i)] = RowIssue::None;
      hs.direct[uz(i)] = 0;
      hs.drift[uz(i)] = drift_start(i);
      if (n > 0)
        u.noalias() = Eigen::Map<const RowVector>(e, n) * Vh.topRows(n);
      else
        u.setZero();
      set_concat_row(h, i);
      return;
    }
  }
  // A direct row: the weights explicitly, as softmax_row gives them, pins included.
  Eigen::Map<RowVector> w(e, T);
  hs.direct[uz(i)] = 1;
  weights_row(h, i, e, x);
  hs.offset[uz(i)] = 0.0f;
  hs.sum[uz(i)] = 1.0;
  hs.cscale[uz(i)] = 1.0f;
  hs.drift[uz(i)] = 0.0f;
  u.noalias() = w * Vh;
  set_concat_row(h, i);
}

// concat row i of head h from U (and R row i, when kept), context pins included.
void Engine::set_concat_row(int h, Index i) {
  const Index T = dims_.T, dv = dims_.d_v;
  const auto& hs = heads_[uz(h)];
  concat_.row(i).segment(ix(h) * dv, dv) = U_.row(i).segment(ix(h) * dv, dv) * hs.cscale[uz(i)];
  if (row_pins_[uz(ix(h) * T + i)] & kPinContext) apply_row_pins(StageKind::Context, h, i);
  if (scenario_->use_w_o && r_valid_[uz(h)]) {
    const Index dout = dims_.d_out;
    R_.row(i).segment(ix(h) * dout, dout).noalias() =
        U_.row(i).segment(ix(h) * dv, dv) * scenario_->W_o.middleRows(ix(h) * dv, dv);
  }
}

// R_h = U_h · W_o_h, for incremental updates of the output.
void Engine::build_r(int h) {
  const Index T = dims_.T, dv = dims_.d_v, dout = dims_.d_out;
  if (R_.rows() != T || R_.cols() != ix(dims_.heads) * dout) {
    R_.resize(T, ix(dims_.heads) * dout);
    advise_huge_pages(R_);
  }
  R_.middleCols(ix(h) * dout, dout).noalias() = U_.middleCols(ix(h) * dv, dv) * scenario_->W_o.middleRows(ix(h) * dv, dv);
  r_valid_[uz(h)] = 1;
}

void Engine::full_output(Work* work) {
  const Scenario& s = *scenario_;
  const Index T = dims_.T;
  if (s.use_w_o) {
    constexpr Index kChunk = 256;
    for (Index r0 = 0; r0 < T; r0 += kChunk) {
      const Index rows = std::min(kChunk, T - r0);
      output_.middleRows(r0, rows).noalias() = concat_.middleRows(r0, rows) * s.W_o;
      if (work) {
        work->step(2.0 * static_cast<double>(rows * s.W_o.rows() * s.W_o.cols()));
        work->check();
      }
    }
  } else {
    output_ = concat_;
  }
  if (s.use_output_bias) output_.rowwise() += s.b_o.row(0);
  apply_pins(StageKind::Output, 0);
  for (Index i = 0; i < T; ++i) out_age_[uz(i)] = age_start(i);
  bump(StageKind::Output, 0, true);
}

// Output row i exactly: from R when every head keeps it and no context pin
// sits in the row, else from concat · W_o.
void Engine::output_row(Index i) {
  const Scenario& s = *scenario_;
  const Index T = dims_.T, dout = dims_.d_out;
  auto out = output_.row(i);
  if (s.use_w_o) {
    bool from_r = R_.rows() == T;
    for (int h = 0; h < dims_.heads && from_r; ++h)
      from_r = r_valid_[uz(h)] && !(row_pins_[uz(ix(h) * T + i)] & kPinContext);
    if (from_r) {
      out.setZero();
      for (int h = 0; h < dims_.heads; ++h)
        out += R_.row(i).segment(ix(h) * dout, dout) * heads_[uz(h)].cscale[uz(i)];
    } else {
      out.noalias() = concat_.row(i) * s.W_o;
    }
  } else {
    out = concat_.row(i);
  }
  if (s.use_output_bias) out += s.b_o.row(0);
  apply_row_pins(StageKind::Output, 0, i);
  out_age_[uz(i)] = 0;
}

void Engine::refresh_aged_outputs() {
  const auto T = static_cast<long>(dims_.T);
#pragma omp parallel for schedule(dynamic, 16)
  for (long i = 0; i < T; ++i)
    if (out_age_[uz(i)] >= kOutAgeLimit) output_row(i);
}

// [SECTION] Incremental paths

// Columns [first, first + width) of row r of Q, K or V from X_r, pins included.
void Engine::recompute_projection_row(StageKind kind, Index r, Index first, Index width) {
  const Scenario& s = *scenario_;
  const Matrix& W = kind == StageKind::Q ? s.W_q : kind == StageKind::K ? s.W_k : s.W_v;
  const Matrix& b = kind == StageKind::Q ? s.b_q : kind == StageKind::K ? s.b_k : s.b_v;
  Matrix& out = kind == StageKind::Q ? Q_ : kind == StageKind::K ? K_ : V_;
  auto row = out.row(r).segment(first, width);
  row.noalias() = s.X.row(r) * W.middleCols(first, width);
  if (s.use_bias) row += b.row(0).segment(first, width);
  apply_projection_pins(kind, r, first, width);
}

// Row r of Q, K or V after X(r, c) changed by delta: the row plus delta times
// row c of W, when the rounding that adds stays far below the tolerance of
// incremental = full. The bound of each row's accumulated error (absolute,
// about one unit roundoff of the terms per update) decides; past it, or when
// delta is unknown or not finite, the caller recomputes the row exactly.
bool Engine::shift_projection_row(StageKind kind, Index r, Index c, float delta) {
  if (!std::isfinite(delta)) return false;
  const Scenario& s = *scenario_;
  const Matrix& W = kind == StageKind::Q ? s.W_q : kind == StageKind::K ? s.W_k : s.W_v;
  Matrix& out = kind == StageKind::Q ? Q_ : kind == StageKind::K ? K_ : V_;
  if (out.cols() == 0) return true;
  auto row = out.row(r);
  const auto w = W.row(c);
  constexpr float kUnitRoundoff = 0x1p-24f;
  const float before = row.cwiseAbs().maxCoeff<Eigen::PropagateNaN>();
  const float step = std::abs(delta) * w.cwiseAbs().maxCoeff<Eigen::PropagateNaN>();
  float& bound = proj_error(kind)[uz(r)];
  const float grown = bound + kUnitRoundoff * (before + 2.0f * step);
  if (!std::isfinite(grown) || grown > kProjTolerance * (before + step)) return false;
  row.noalias() += delta * w;
  const float after = row.cwiseAbs().maxCoeff<Eigen::PropagateNaN>();
  // cancellation: the row shrank so much that the bound is no longer small next to it
  if (!std::isfinite(after) || grown > kProjTolerance * after) return false;
  bound = grown;
  apply_projection_pins(kind, r, 0, out.cols());
  return true;
}

// Pinned cells of row r of Q, K or V within [first, first + width).
void Engine::apply_projection_pins(StageKind kind, Index r, Index first, Index width) {
  Matrix& out = kind == StageKind::Q ? Q_ : kind == StageKind::K ? K_ : V_;
  const StageId id{kind, 0};
  const auto& pins = pins_;
  for (auto it = pins.lower_bound(PinKey{id, static_cast<int>(r), 0});
       it != pins.end() && it->first.stage == id && it->first.row == r; ++it)
    if (it->first.col >= first && it->first.col < first + width) out(r, it->first.col) = it->second;
}

// One cell of Q, K or V: its pin, or X_r·W_c + b_c.
void Engine::recompute_projection_cell(StageKind kind, Index r, Index c) {
  const Scenario& s = *scenario_;
  const Matrix& W = kind == StageKind::Q ? s.W_q : kind == StageKind::K ? s.W_k : s.W_v;
  const Matrix& b = kind == StageKind::Q ? s.b_q : kind == StageKind::K ? s.b_k : s.b_v;
  Matrix& out = kind == StageKind::Q ? Q_ : kind == StageKind::K ? K_ : V_;
  const auto it = pins_.find(PinKey{StageId{kind, 0}, static_cast<int>(r), static_cast<int>(c)});
  if (it != pins_.end()) {
    out(r, c) = it->second;
    return;
  }
  out(r, c) = s.X.row(r).dot(W.col(c));
  if (s.use_bias) out(r, c) += b(0, c);
}

// One cell of X: row r of Q, K and V, a row and a column of every head's
// scores, a factor and an entry of every softmax row, a rank-one update of
// U and R, and the output rows re-summed.
void Engine::edit_x_row(Index r, Index c, float old_value) {
  const int H = dims_.heads;
  const RowVector v_old = V_.row(r);
  const StageKind kinds[] = {StageKind::Q, StageKind::K, StageKind::V};
  const float delta = scenario_->X(r, c) - old_value;
  bool shifted[3] = {false, false, false};
  for (int t = 0; t < 3; ++t) shifted[t] = shift_projection_row(kinds[t], r, c, delta);
  if (!(shifted[0] && shifted[1] && shifted[2])) {
    // X_r·W exactly, in column halves so both threads stream weights
#pragma omp parallel for schedule(static)
    for (int t = 0; t < 6; ++t) {
      if (shifted[t / 2]) continue;
      const Index cols = (kinds[t / 2] == StageKind::V ? V_ : Q_).cols(), half = cols / 2;
      recompute_projection_row(kinds[t / 2], r, t % 2 == 0 ? 0 : half, t % 2 == 0 ? half : cols - half);
    }
    for (int t = 0; t < 3; ++t)
      if (!shifted[t]) proj_error(kinds[t])[uz(r)] = 0.0f;  // exact again
  }
  for (auto k : kinds)
    for (int h = 0; h < H; ++h) bump(k, h, false);
  std::vector<int> all(uz(H));
  for (int h = 0; h < H; ++h) all[uz(h)] = h;
  if (scenario_->use_w_o)
    for (int h = 0; h < H; ++h)
      if (!r_valid_[uz(h)]) build_r(h);
  edit_rows(all, r, true, true, true, v_old);
  for (int h = 0; h < H; ++h) {
    note_row(StageKind::Scaled, h, r);
    note_col(StageKind::Scaled, h, r);
    note_row(StageKind::Masked, h, r);
    note_col(StageKind::Masked, h, r);
    for (auto k : {StageKind::Scores, StageKind::Scaled, StageKind::Masked, StageKind::Weights, StageKind::Context})
      bump(k, h, false);
  }
}

// Row r of Q (q), K (k) and/or V (v) changed in the columns of `heads`;
// v_old is V's old row r (every head's columns). Row r of each head is
// recomputed; every other row's softmax changes in entry r only, so its sum,
// U and R change by that entry, unless the row must be recomputed: a direct
// row, a new maximum far above its offset, or an error estimate past
// kDriftLimit (see engine.h). One pass over the rows does every head of a row
// and then its output, so each row's Q, U, concat, R and output are read once
// while in cache (threads take different rows).
void Engine::edit_rows(const std::vector<int>& heads, Index r, bool q, bool k, bool v, const RowVector& v_old) {
  const Scenario& s = *scenario_;
  const Index T = dims_.T, dk = dims_.d_k, dv = dims_.d_v, dout = dims_.d_out;
  const auto n_heads = static_cast<long>(heads.size());
  if (edits_.size() < uz(dims_.heads)) edits_.resize(uz(dims_.heads));
  // Per head: the new scores row r, and V_h,r·W_o_h before and after (U's
  // rank-one change mapped to R).
#pragma omp parallel for schedule(dynamic)
  for (long t = 0; t < n_heads; ++t) {
    const int h = heads[uz(t)];
    HeadEdit& he = edits_[uz(h)];
    const auto v_new = V_.row(r).segment(ix(h) * dv, dv);
    const auto v_was = v_old.segment(ix(h) * dv, dv);
    he.vmax_old = dv > 0 ? v_was.cwiseAbs().maxCoeff<Eigen::PropagateNaN>() : 0.0f;
    he.vmax_new = dv > 0 ? v_new.cwiseAbs().maxCoeff<Eigen::PropagateNaN>() : 0.0f;
    he.inv_unit = 1.0 / static_cast<double>(std::max(heads_[uz(h)].cmax, std::numeric_limits<float>::min()));
    he.has_y = (k || v) && s.use_w_o && r_valid_[uz(h)];
    if (he.has_y) {
      const auto Wo = s.W_o.middleRows(ix(h) * dv, dv);
      he.y_old.resize(1, dout);
      he.y_new.resize(1, dout);
      he.y_old.noalias() = v_was * Wo;
      he.y_new.noalias() = v_new * Wo;
    }
    HeadState& hs = heads_[uz(h)];
    if (q) {
      hs.S.row(r).noalias() = Q_.row(r).segment(ix(h) * dk, dk) * K_.middleCols(ix(h) * dk, dk).transpose();
      if (row_pins_[uz(ix(h) * T + r)] & kPinScores) apply_row_pins(StageKind::Scores, h, r);
    } else if (k) {
      hs.S(r, r) = Q_.row(r).segment(ix(h) * dk, dk).dot(K_.row(r).segment(ix(h) * dk, dk));
      if (row_pins_[uz(ix(h) * T + r)] & kPinScores) apply_row_pins(StageKind::Scores, h, r);
    }
    // row r whole, while W_o_h is in cache from y
    recompute_row(h, r);
  }
  // every head keeps R: each output row is summed from R in the same pass
  bool fused = s.use_w_o && R_.rows() == T;
  for (int h = 0; h < dims_.heads && fused; ++h) fused = r_valid_[uz(h)] != 0;
  std::vector<std::uint8_t> is_edited(uz(dims_.heads), 0);
  for (int h : heads) is_edited[uz(h)] = 1;
  // A changed Q row changes only its own row; a changed K or V row every row
  // that may attend to it.
  const long first = k || v ? 0 : static_cast<long>(r);
  const long last = k || v ? static_cast<long>(T) : static_cast<long>(r) + 1;
#pragma omp parallel for schedule(dynamic, 16)
  for (long li = first; li < last; ++li) {
    const Index i = li;
    thread_local std::vector<RowUpdate> upd;
    if (upd.size() < uz(dims_.heads)) upd.resize(uz(dims_.heads));
    // Column r of each head's scores is one cache line per row, each on its
    // own page, where the hardware does not prefetch: ask for a later row's.
    if (li + kPrefetchRows < last)
      for (long t = 0; t < n_heads; ++t) __builtin_prefetch(&heads_[uz(heads[uz(t)])].S(i + kPrefetchRows, r), 1);
    bool changed = false;
    for (long t = 0; t < n_heads; ++t) {
      const int h = heads[uz(t)];
      edit_entry(h, i, r, k, v, v_old.data() + ix(h) * dv, edits_[uz(h)], upd[uz(h)]);
      changed = changed || upd[uz(h)].state != 0;
    }
    if (!changed) continue;
    if (fused) {
      auto out = output_.row(i);
      out.setZero();
      bool pinned = false;
      for (int h = 0; h < dims_.heads; ++h) {
        auto seg = R_.row(i).segment(ix(h) * dout, dout);
        if (is_edited[uz(h)] && upd[uz(h)].state == 1) {
          const HeadEdit& he = edits_[uz(h)];
          seg += he.y_old * upd[uz(h)].a + he.y_new * upd[uz(h)].b;
        }
        out += seg * heads_[uz(h)].cscale[uz(i)];
        pinned = pinned || (row_pins_[uz(ix(h) * T + i)] & kPinContext);
      }
      if (pinned) out.noalias() = concat_.row(i) * s.W_o;  // context pins: from concat
      if (s.use_output_bias) out += s.b_o.row(0);
      apply_row_pins(StageKind::Output, 0, i);
      out_age_[uz(i)] = 0;
      continue;
    }
    for (long t = 0; t < n_heads; ++t) {
      const int h = heads[uz(t)];
      const HeadEdit& he = edits_[uz(h)];
      if (upd[uz(h)].state == 1 && he.has_y)
        R_.row(i).segment(ix(h) * dout, dout) += he.y_old * upd[uz(h)].a + he.y_new * upd[uz(h)].b;
    }
    output_row(i);
  }
  bump(StageKind::Concat, 0, false);
  bump(StageKind::Output, 0, false);
}

// Row i ≠ r of head h after row r of its K or V changed (see edit_rows):
// scores entry (i, r), then softmax entry r, U and concat of row i, or the
// whole row recomputed. Says in `out` what it did and, for an update, U_i's
// change as a·V_r(old) + b·V_r(new) (R's is a·y_old + b·y_new).
void Engine::edit_entry(int h, Index i, Index r, bool k, bool v, const float* v_old, const HeadEdit& he,
                        RowUpdate& out) {
  out.state = 0;
  if (i == r) {
    out.state = 2;  // recomputed whole by edit_rows
    return;
  }
  HeadState& hs = heads_[uz(h)];
  const Index dk = dims_.d_k, dv = dims_.d_v;
  const std::uint8_t pins = row_pins_[uz(ix(h) * dims_.T + i)];
  float& sir = hs.S(i, r);
  const float s_old = sir;
  const bool causal = mask_shape_ == MaskShape::Causal;
  const bool allowed = causal ? r <= i : mask_(i, r) != 0.0f;
  // the new score; a block the mask hides that was never computed is
  // computed whole when shown
  if (k && (allowed || hs.valid[uz((i / kBlock) * nb_ + r / kBlock)])) {
    sir = Q_.row(i).segment(ix(h) * dk, dk).dot(K_.row(r).segment(ix(h) * dk, dk));
    if (pins & kPinScores) {
      const auto it = pins_.find(PinKey{StageId{StageKind::Scores, h}, static_cast<int>(i), static_cast<int>(r)});
      if (it != pins_.end()) sir = it->second;
    }
  }
  if (hs.direct[uz(i)]) {
    // weights computed explicitly: only a pin or an allowed key at r can make them read column r
    if (allowed || (pins & (kPinScaledMasked | kPinWeights))) {
      recompute_row(h, i);
      out.state = 2;
    }
    return;
  }
  if (!allowed) return;  // (rows that are not direct have no pins on scaled or masked)
  const float bias = position_bias(h, i, r);
  const float xo = scale_value(s_old) + bias;
  const float xn = k ? scale_value(sir) + bias : xo;
  const float offset = hs.offset[uz(i)];
  const float eo = fast_exp(xo - offset), en = fast_exp(xn - offset);
  if (eo == 0.0f && en == 0.0f) return;  // neither reads V_r nor counts in Z
  const double z_old = hs.sum[uz(i)];
  // (only V_r changed: the sum stays exactly as it was)
  const double z = k ? z_old - static_cast<double>(eo) + static_cast<double>(en) : z_old;
  bool exact = !(xn - offset <= kMaxRise) || !(z > 0.0);  // NaN, +∞ or a new max far above the offset
  const double inv_z = 1.0 / z;
  float drift = 0.0f;
  if (!exact) {
    // The error U_i carries grows by Z_old/Z as the row renormalizes, plus
    // this update's own rounding (about one ulp of the result and of each term).
    const double terms = static_cast<double>(eo) * static_cast<double>(he.vmax_old) +
                         static_cast<double>(en) * static_cast<double>(he.vmax_new);
    drift = static_cast<float>((static_cast<double>(hs.drift[uz(i)]) * z_old + terms * he.inv_unit) * inv_z + 1.0);
    exact = !(drift <= kDriftLimit);
  }
  if (exact) {
    recompute_row(h, i);
    out.state = 2;
    return;
  }
  auto u = U_.row(i).segment(ix(h) * dv, dv);
  const auto v_new = V_.row(r).segment(ix(h) * dv, dv);
  if (v)
    u += v_new * en - Eigen::Map<const RowVector>(v_old, dv) * eo;
  else
    u += v_new * (en - eo);
  hs.sum[uz(i)] = z;
  hs.cscale[uz(i)] = static_cast<float>(inv_z);
  hs.drift[uz(i)] = drift;
  if (k) note_row(StageKind::Weights, h, i);
  // concat only: R_i is updated with the output, in edit_rows
  concat_.row(i).segment(ix(h) * dv, dv) = u * hs.cscale[uz(i)];
  if (pins & kPinContext) apply_row_pins(StageKind::Context, h, i);
  out.state = 1;
  out.a = -eo;
  out.b = en;
}

// A column of W_q or W_k (or a cell of b_q, b_k): one column of Q or K, then
// that head from its scores on, and the output by its change in concat.
void Engine::edit_qk_column(StageKind kind, Index c) {
  const Scenario& s = *scenario_;
  const Index T = dims_.T, dk = dims_.d_k, dv = dims_.d_v;
  const int h = static_cast<int>(c / dk);
  const Matrix& W = kind == StageKind::Q ? s.W_q : s.W_k;
  const Matrix& b = kind == StageKind::Q ? s.b_q : s.b_k;
  Matrix& P = kind == StageKind::Q ? Q_ : K_;
  const Eigen::VectorXf old_col = P.col(c);
  P.col(c).noalias() = s.X * W.col(c);
  if (s.use_bias) P.col(c).array() += b(0, c);
  const StageId id{kind, 0};
  for (auto it = pins_.lower_bound(PinKey{id, 0, 0}); it != pins_.end() && it->first.stage == id; ++it)
    if (it->first.col == c) P(it->first.row, c) = it->second;
  bump(kind, h, false);

  const Matrix old_concat = concat_.middleCols(ix(h) * dv, dv);
  // the scores by a rank-one update when its rounding stays small, else anew;
  // the softmax and context of every row from them
  head_pass({h}, !shift_scores(kind, h, c, old_col), nullptr);
  for (auto k : {StageKind::Scores, StageKind::Scaled, StageKind::Masked, StageKind::Weights, StageKind::Context})
    bump(k, h, true);
  bump(StageKind::Concat, 0, false);
  if (s.use_w_o) {
    output_.noalias() += (concat_.middleCols(ix(h) * dv, dv) - old_concat) * s.W_o.middleRows(ix(h) * dv, dv);
    for (Index i = 0; i < T; ++i) out_age_[uz(i)] = static_cast<std::uint8_t>(std::min<int>(out_age_[uz(i)] + 1, 255));
    // pinned output cells stay pinned
    const StageId oid{StageKind::Output, 0};
    for (auto it = pins_.lower_bound(PinKey{oid, 0, 0}); it != pins_.end() && it->first.stage == oid; ++it)
      output_(it->first.row, it->first.col) = it->second;
    refresh_aged_outputs();
  } else {
    for (Index i = 0; i < T; ++i) output_row(i);
  }
  bump(StageKind::Output, 0, false);
}

// Scores of head h after column c of Q (or K) changed from old_col: one
// column of Q_h·K_hᵀ's factors changed, so S_h moves by a rank-one product,
// ΔQ_c·K_cᵀ (or Q_c·ΔK_cᵀ), on the blocks computed so far (the others are
// computed whole when needed). The head keeps a bound of the rounding these
// updates added; past kScoreTolerance of the largest score (or on a value
// that is not finite) this says no, and the caller computes the scores anew.
bool Engine::shift_scores(StageKind kind, int h, Index c, const Eigen::VectorXf& old_col) {
  HeadState& hs = heads_[uz(h)];
  const Index T = dims_.T;
  const Matrix& P = kind == StageKind::Q ? Q_ : K_;
  const Matrix& other = kind == StageKind::Q ? K_ : Q_;
  // (NaN in a maximum would otherwise be dropped: Eigen's plain maxCoeff
  // skips it unless it comes first, so the checks below use PropagateNaN)
  const Eigen::VectorXf delta = P.col(c) - old_col;
  const auto a = kind == StageKind::Q ? delta : Eigen::VectorXf(other.col(c));  // S_ij += a_i·b_j
  const auto b = kind == StageKind::Q ? Eigen::VectorXf(other.col(c)) : delta;
  const float step =
      T > 0 ? a.cwiseAbs().maxCoeff<Eigen::PropagateNaN>() * b.cwiseAbs().maxCoeff<Eigen::PropagateNaN>() : 0.0f;
  if (!std::isfinite(step)) return false;
  std::vector<Index> blocks;
  for (Index blk = 0; blk < nb_ * nb_; ++blk)
    if (hs.valid[uz(blk)]) blocks.push_back(blk);
  float largest = 0.0f;
  bool finite = true;
  const auto n = static_cast<long>(blocks.size());
#pragma omp parallel for schedule(dynamic, 4) reduction(max : largest) reduction(&& : finite)
  for (long t = 0; t < n; ++t) {
    const Index i0 = blocks[uz(t)] / nb_ * kBlock, j0 = blocks[uz(t)] % nb_ * kBlock;
    const Index rows = std::min(kBlock, T - i0), cols = std::min(kBlock, T - j0);
    auto block = hs.S.block(i0, j0, rows, cols);
    block.noalias() += a.segment(i0, rows) * b.segment(j0, cols).transpose();
    const float m = block.cwiseAbs().maxCoeff<Eigen::PropagateNaN>();
    finite = finite && std::isfinite(m);
    largest = std::max(largest, m);
  }
  for (Index i = 0; i < T; ++i)
    if (row_pins_[uz(ix(h) * T + i)] & kPinScores) apply_row_pins(StageKind::Scores, h, i);
  // each updated cell rounds by at most one unit roundoff of its value and of the product added
  constexpr float kUnitRoundoff = 0x1p-24f;
  const float grown = hs.score_error + kUnitRoundoff * (largest + step);
  if (!finite || !(grown <= kScoreTolerance * largest)) return false;
  hs.score_error = grown;
  return true;
}

// A column of W_v (or a cell of b_v): one column of V, of U (exactly, from
// the softmax state) and of concat; the output by a rank-one product.
void Engine::edit_v_column(Index c) {
  const Scenario& s = *scenario_;
  const Index T = dims_.T, dv = dims_.d_v, dout = dims_.d_out;
  const int h = static_cast<int>(c / dv);
  const Index cl = c - ix(h) * dv;
  V_.col(c).noalias() = s.X * s.W_v.col(c);
  if (s.use_bias) V_.col(c).array() += s.b_v(0, c);
  const StageId vid{StageKind::V, 0};
  for (auto it = pins_.lower_bound(PinKey{vid, 0, 0}); it != pins_.end() && it->first.stage == vid; ++it)
    if (it->first.col == c) V_(it->first.row, c) = it->second;
  bump(StageKind::V, h, false);

  HeadState& hs = heads_[uz(h)];
  const Eigen::VectorXf old_u = U_.col(c), old_concat = concat_.col(c);
  const auto vcol = V_.col(c);
  const auto n_rows = static_cast<long>(T);
#pragma omp parallel for schedule(dynamic, 16)
  for (long li = 0; li < n_rows; ++li) {
    const Index i = li;
    float* x = scratch_a(T).data();
    float* e = scratch_b(T).data();
    if (hs.direct[uz(i)]) {
      weights_row(h, i, e, x);
      U_(i, c) = Eigen::Map<const RowVector>(e, T).dot(vcol.transpose());
    } else {
      const Index n = scaled_masked_prefix(h, i, extent(i / kBlock), x);
      exp_shifted(x, hs.offset[uz(i)], e, n);
      U_(i, c) = n > 0 ? Eigen::Map<const RowVector>(e, n).dot(vcol.head(n).transpose()) : 0.0f;
    }
    concat_(i, c) = U_(i, c) * hs.cscale[uz(i)];
  }
  const StageId cid{StageKind::Context, h};
  for (auto it = pins_.lower_bound(PinKey{cid, 0, 0}); it != pins_.end() && it->first.stage == cid; ++it)
    if (it->first.col == cl) concat_(it->first.row, c) = it->second;
  bump(StageKind::Context, h, false);
  bump(StageKind::Concat, 0, false);

  if (s.use_w_o) {
    const auto wrow = s.W_o.row(c);
    output_.noalias() += (concat_.col(c) - old_concat) * wrow;
    if (r_valid_[uz(h)]) {
      R_.middleCols(ix(h) * dout, dout).noalias() += (U_.col(c) - old_u) * wrow;
      for (Index i = 0; i < T; ++i) hs.drift[uz(i)] += 1.0f;
    }
    for (Index i = 0; i < T; ++i) out_age_[uz(i)] = static_cast<std::uint8_t>(std::min<int>(out_age_[uz(i)] + 1, 255));
    const StageId oid{StageKind::Output, 0};
    for (auto it = pins_.lower_bound(PinKey{oid, 0, 0}); it != pins_.end() && it->first.stage == oid; ++it)
      output_(it->first.row, it->first.col) = it->second;
    // rows whose R drifted too far, then output rows updated too often
    std::vector<Index> stale;
    for (Index i = 0; i < T; ++i)
      if (!hs.direct[uz(i)] && hs.drift[uz(i)] > kDriftLimit) stale.push_back(i);
    const auto n_stale = static_cast<long>(stale.size());
#pragma omp parallel for schedule(dynamic, 8)
    for (long t = 0; t < n_stale; ++t) {
      recompute_row(h, stale[uz(t)]);
      output_row(stale[uz(t)]);
    }
    refresh_aged_outputs();
  } else {
    output_.col(c) = concat_.col(c);
    if (s.use_output_bias) output_.col(c).array() += s.b_o(0, c);
    const StageId oid{StageKind::Output, 0};
    for (auto it = pins_.lower_bound(PinKey{oid, 0, 0}); it != pins_.end() && it->first.stage == oid; ++it)
      if (it->first.col == c) output_(it->first.row, c) = it->second;
  }
  bump(StageKind::Output, 0, false);
}

// A cell of W_o or b_o: one column of the output.
void Engine::edit_output_column(Index c) {
  const Scenario& s = *scenario_;
  if (s.use_w_o)
    output_.col(c).noalias() = concat_ * s.W_o.col(c);
  else
    output_.col(c) = concat_.col(c);
  if (s.use_output_bias) output_.col(c).array() += s.b_o(0, c);
  const StageId oid{StageKind::Output, 0};
  for (auto it = pins_.lower_bound(PinKey{oid, 0, 0}); it != pins_.end() && it->first.stage == oid; ++it)
    if (it->first.col == c) output_(it->first.row, c) = it->second;
  bump(StageKind::Output, 0, false);
}

// One mask cell: row i of every head.
void Engine::edit_mask_cell(Index i, Index j) {
  const Scenario& s = *scenario_;
  const float v = s.mask_allows(static_cast<int>(i), static_cast<int>(j)) ? 1.0f : 0.0f;
  const MaskShape shape = shape_of(s.mask_kind);
  if (shape != mask_shape_) {
    // The kind changed (to custom) while the values stayed: the row
    // arithmetic is the same for every shape, so nothing else is stale.
    mask_shape_ = shape;
  }
  bump(StageKind::Mask, 0, false);
  if (mask_(i, j) == v) return;
  const Index b = (i / kBlock) * nb_ + j / kBlock;
  mask_block_count_[uz(b)] += v != 0.0f ? 1 : -1;
  mask_(i, j) = v;
  const int H = dims_.heads;
  if (v != 0.0f)
    for (int h = 0; h < H; ++h)
      if (!heads_[uz(h)].valid[uz(b)]) compute_block(h, i / kBlock, j / kBlock);
#pragma omp parallel for schedule(dynamic)
  for (int h = 0; h < H; ++h) recompute_row(h, i);
  for (int h = 0; h < H; ++h) note_row(StageKind::Masked, h, i);
  output_row(i);
  for (int h = 0; h < H; ++h)
    for (auto k : {StageKind::Masked, StageKind::Weights, StageKind::Context}) bump(k, h, false);
  bump(StageKind::Concat, 0, false);
  bump(StageKind::Output, 0, false);
}

// A pin set or removed (its canonical key): the row it sits in.
void Engine::edit_pin(const Invalidation::Entry& e) {
  const Index r = e.row, c = e.col;
  const Index dk = dims_.d_k, dv = dims_.d_v;
  if (e.kind == StageKind::Scores) {
    auto& hs = heads_[uz(e.head)];
    const auto it = pins_.find(PinKey{StageId{StageKind::Scores, e.head}, e.row, e.col});
    hs.S(r, c) = it != pins_.end()
                     ? it->second
                     : Q_.row(r).segment(ix(e.head) * dk, dk).dot(K_.row(c).segment(ix(e.head) * dk, dk));
    bump(StageKind::Scores, e.head, false);
  }
  switch (e.kind) {
    case StageKind::Q: case StageKind::K: case StageKind::V: {
      const int h = static_cast<int>(c / (e.kind == StageKind::V ? dv : dk));
      const RowVector v_old = V_.row(r);
      recompute_projection_cell(e.kind, r, c);
      bump(e.kind, h, false);
      if (scenario_->use_w_o && e.kind != StageKind::Q)
        for (int g = 0; g < dims_.heads; ++g)
          if (!r_valid_[uz(g)]) build_r(g);
      edit_rows({h}, r, e.kind == StageKind::Q, e.kind == StageKind::K, e.kind == StageKind::V, v_old);
      for (auto k : {StageKind::Scaled, StageKind::Masked}) {
        if (e.kind == StageKind::Q) note_row(k, h, r);
        if (e.kind == StageKind::K) note_col(k, h, r);
      }
      for (auto k : {StageKind::Scores, StageKind::Scaled, StageKind::Masked, StageKind::Weights, StageKind::Context})
        if (e.kind != StageKind::V || k == StageKind::Context) bump(k, h, false);
      return;
    }
    case StageKind::Scores: case StageKind::Scaled: case StageKind::Masked: case StageKind::Weights:
      if (e.kind == StageKind::Scores || e.kind == StageKind::Scaled) note_row(StageKind::Scaled, e.head, r);
      if (e.kind != StageKind::Weights) note_row(StageKind::Masked, e.head, r);
      recompute_row(e.head, r);
      if (e.kind == StageKind::Scores || e.kind == StageKind::Scaled) bump(StageKind::Scaled, e.head, false);
      if (e.kind != StageKind::Weights) bump(StageKind::Masked, e.head, false);
      bump(StageKind::Weights, e.head, false);
      [[fallthrough]];
    case StageKind::Context:
      if (e.kind == StageKind::Context) set_concat_row(e.head, r);
      bump(StageKind::Context, e.head, false);
      bump(StageKind::Concat, 0, false);
      [[fallthrough]];
    case StageKind::Output:
      output_row(r);
      bump(StageKind::Output, 0, false);
      return;
    default:
      return;
  }
}

// [SECTION] Values

bool Engine::row_is_direct(int h, Index i) const { return heads_[uz(h)].direct[uz(i)] != 0; }

float Engine::masked_value(int h, Index i, Index j) const {
  const auto& pins = pins_;
  if (row_pins_[uz(ix(h) * dims_.T + i)] & kPinScaledMasked) {
    const int ri = static_cast<int>(i), rj = static_cast<int>(j);
    if (auto it = pins.find(PinKey{StageId{StageKind::Masked, h}, ri, rj}); it != pins.end()) return it->second;
    if (!allowed(i, j)) return -kInf;
    if (auto it = pins.find(PinKey{StageId{StageKind::Scaled, h}, ri, rj}); it != pins.end())
      return it->second + position_bias(h, i, j);
  } else if (!allowed(i, j)) {
    return -kInf;
  }
  return scale_value(heads_[uz(h)].S(i, j)) + position_bias(h, i, j);
}

// Row i of masked_h (all T columns), pins included.
void Engine::masked_row(int h, Index i, float* x) const {
  const Index T = dims_.T;
  const float* s = heads_[uz(h)].S.row(i).data();
  const float* m = mask_.row(i).data();
  if (use_div_)
    for (Index j = 0; j < T; ++j) x[j] = s[j] / scale_div_;
  else
    for (Index j = 0; j < T; ++j) x[j] = s[j] * scale_mul_;
  if (row_pins_[uz(ix(h) * T + i)] & kPinScaledMasked) {
    const auto& pins = pins_;
    const StageId sid{StageKind::Scaled, h};
    for (auto it = pins.lower_bound(PinKey{sid, static_cast<int>(i), 0});
         it != pins.end() && it->first.stage == sid && it->first.row == i; ++it)
      x[it->first.col] = it->second;
    add_position_bias(h, i, x, T);
    for (Index j = 0; j < T; ++j) x[j] = m[j] != 0.0f ? x[j] : -kInf;
    const StageId mid{StageKind::Masked, h};
    for (auto it = pins.lower_bound(PinKey{mid, static_cast<int>(i), 0});
         it != pins.end() && it->first.stage == mid && it->first.row == i; ++it)
      x[it->first.col] = it->second;
  } else {
    add_position_bias(h, i, x, T);
    for (Index j = 0; j < T; ++j) x[j] = m[j] != 0.0f ? x[j] : -kInf;
  }
}

// Row i of weights_h as shown (all T columns, pins included); x is scratch.
// Records the row's issue.
void Engine::weights_row(int h, Index i, float* w, float* x) const {
  const Index T = dims_.T;
  auto& hs = heads_[uz(h)];
  if (!hs.direct[uz(i)]) {
    // e^(masked − m)/Z, the same arithmetic the context was computed with
    // (a row that is not direct has no pins on scaled or masked)
    const Index n = scaled_masked_prefix(h, i, extent(i / kBlock), x);
    exp_shifted(x, hs.offset[uz(i)], w, n);
    const float scale = hs.cscale[uz(i)];
    for (Index j = 0; j < n; ++j) w[j] *= scale;
    std::fill(w + n, w + T, 0.0f);
    return;
  }
  masked_row(h, i, x);
  hs.issue[uz(i)] = softmax_row(Eigen::Map<const RowVector>(x, T), Eigen::Map<RowVector>(w, T));
  if (row_pins_[uz(ix(h) * T + i)] & kPinWeights) {
    const auto& pins = pins_;
    const StageId id{StageKind::Weights, h};
    for (auto it = pins.lower_bound(PinKey{id, static_cast<int>(i), 0});
         it != pins.end() && it->first.stage == id && it->first.row == i; ++it)
      w[it->first.col] = it->second;
  }
}

// Lays pins over a whole stage (Q, K, V: one head's columns, or all of them
// when head < 0; output).
void Engine::apply_pins(StageKind kind, int head) {
  const auto& pins = pins_;
  Matrix* target = kind == StageKind::Q ? &Q_ : kind == StageKind::K ? &K_ : kind == StageKind::V ? &V_ : &output_;
  Index first = 0, width = target->cols();
  if (head >= 0 && kind != StageKind::Output) {
    width = ix(kind == StageKind::V ? dims_.d_v : dims_.d_k);
    first = ix(head) * width;
  }
  const StageId id{kind, 0};
  for (auto it = pins.lower_bound(PinKey{id, 0, 0}); it != pins.end() && it->first.stage == id; ++it) {
    const Index r = it->first.row, c = it->first.col;
    if (r < target->rows() && c >= first && c < first + width) (*target)(r, c) = it->second;
  }
}

// Lays the pins of one row over scores[h], context[h] (in concat) or the output.
void Engine::apply_row_pins(StageKind kind, int head, Index row) {
  const auto& pins = pins_;
  const bool per_head = is_per_head(kind);
  const StageId id{kind, per_head ? head : 0};
  const Index dv = dims_.d_v;
  for (auto it = pins.lower_bound(PinKey{id, static_cast<int>(row), 0});
       it != pins.end() && it->first.stage == id && it->first.row == row; ++it) {
    const Index c = it->first.col;
    switch (kind) {
      case StageKind::Scores: heads_[uz(head)].S(row, c) = it->second; break;
      case StageKind::Context:
        if (c < dv) concat_(row, ix(head) * dv + c) = it->second;
        break;
      case StageKind::Output:
        if (c < output_.cols()) output_(row, c) = it->second;
        break;
      default: break;
    }
  }
}

void Engine::collect_warnings() {
  warnings_.clear();
  for (std::size_t h = 0; h < heads_.size(); ++h) {
    const auto& issues = heads_[h].issue;
    for (std::size_t r = 0; r < issues.size(); ++r) {
      const RowIssue issue = issues[r];
      if (issue == RowIssue::None) continue;
      const int hi = static_cast<int>(h);
      const int ri = static_cast<int>(r);
      std::string msg = "head " + std::to_string(hi) + ", row " + std::to_string(ri) + " ('" +
                        scenario_->token_label(ri) + "'): " + describe(issue);
      warnings_.push_back({hi, ri, std::move(msg)});
    }
  }
}

// Versions come from one counter for every engine in the process: an engine
// computed on a worker and moved in (an undo of a resize, a toggle at a large
// size) never hands out a version an earlier engine gave, so a front end's
// caches keyed by version (textures, Compare's differences) cannot mistake
// new values for old ones.
namespace {
std::atomic<std::uint64_t> g_next_version{1};
}  // namespace

// Which of a head's Changes tracks a derived stage.
int Engine::changes_of(StageKind kind) {
  switch (kind) {
    case StageKind::Scaled: return 0;
    case StageKind::Masked: return 1;
    case StageKind::PositionBias: return 3;
    default: return 2;  // weights
  }
}

void Engine::bump(StageKind kind, int head, bool full) {
  ++counts_[idx(kind)];
  if (full) ++full_counts_[idx(kind)];
  if (versions_.empty()) versions_.resize(1);
  // Q, K and V are versioned per head block as well, so a head's view knows
  // whether its own columns changed.
  const bool per_block = is_per_head(kind) || kind == StageKind::Q || kind == StageKind::K ||
                         kind == StageKind::V;
  const auto h = per_block && head >= 0 ? static_cast<std::size_t>(head) : 0u;
  const std::uint64_t v = g_next_version.fetch_add(1, std::memory_order_relaxed);
  if (h < versions_.size()) versions_[h][idx(kind)] = v;
  if (full && h < heads_.size() &&
      (kind == StageKind::Scaled || kind == StageKind::Masked || kind == StageKind::Weights ||
       kind == StageKind::PositionBias)) {
    Changes& c = heads_[h].changes[changes_of(kind)];
    c.full = v;
    c.cols.clear();
  }
}

// Row `row` (or column `col`) of scaled, masked or weights of `head` changed
// in place; the bump that follows gives it a version ≥ the next one now.
void Engine::note_row(StageKind kind, int head, Index row) {
  Changes& c = heads_[uz(head)].changes[changes_of(kind)];
  c.rows[uz(row)] = g_next_version.load(std::memory_order_relaxed);
}

void Engine::note_col(StageKind kind, int head, Index col) {
  Changes& c = heads_[uz(head)].changes[changes_of(kind)];
  constexpr std::size_t kMaxCols = 64;
  if (c.cols.size() >= kMaxCols) {
    // forget the older half: copies older than what was forgotten are rebuilt whole
    const auto half = c.cols.begin() + static_cast<std::ptrdiff_t>(kMaxCols / 2);
    c.full = std::max(c.full, std::prev(half)->first);
    c.cols.erase(c.cols.begin(), half);
  }
  c.cols.emplace_back(g_next_version.load(std::memory_order_relaxed), col);
}

// [SECTION] Access

// Row i of scaled, masked or weights of a head, as stage() shows it.
void Engine::fill_derived_row(StageId id, Matrix& m, Index i) const { fill_derived_row(id, i, m.row(i).data()); }

void Engine::fill_derived_row(StageId id, Index i, float* out) const {
  const Index T = dims_.T;
  switch (id.kind) {
    case StageKind::Scaled: {
      const float* s = heads_[uz(id.head)].S.row(i).data();
      if (use_div_)
        for (Index j = 0; j < T; ++j) out[j] = s[j] / scale_div_;
      else
        for (Index j = 0; j < T; ++j) out[j] = s[j] * scale_mul_;
      const StageId sid{StageKind::Scaled, id.head};
      const auto& pins = pins_;
      for (auto it = pins.lower_bound(PinKey{sid, static_cast<int>(i), 0});
           it != pins.end() && it->first.stage == sid && it->first.row == i; ++it)
        out[it->first.col] = it->second;
      break;
    }
    case StageKind::Masked: masked_row(id.head, i, out); break;
    case StageKind::PositionBias:
      std::fill(out, out + T, 0.0f);
      add_position_bias(id.head, i, out, T);
      break;
    default: weights_row(id.head, i, out, scratch_a(T).data()); break;
  }
}

// Brings a cached copy up to date from the rows and columns that changed
// since it was made, or rebuilds it.
void Engine::patch_derived(Derived& d) const {
  const int h = d.id.head;
  const Index T = dims_.T;
  const std::uint64_t since = d.version;
  const Changes& c = heads_[uz(h)].changes[changes_of(d.id.kind)];
  const bool whole = d.m.rows() != T || d.m.cols() != T || since < c.full || since == 0;
  if (d.m.rows() != T || d.m.cols() != T) {
    d.m.resize(T, T);
    advise_huge_pages(d.m);
  }
  if (d.id.kind == StageKind::Scaled) complete_scores(h);
  const auto n = static_cast<long>(T);
  long stale = 0;
  for (long i = 0; i < n && !whole; ++i) stale += c.rows[uz(i)] > since ? 1 : 0;
#pragma omp parallel for schedule(dynamic, 32) if (whole || stale > 16)
  for (long i = 0; i < n; ++i)
    if (whole || c.rows[uz(i)] > since) fill_derived_row(d.id, d.m, i);
  if (whole) return;
  for (const auto& [v, col] : c.cols) {
    if (v <= since) continue;
    for (Index i = 0; i < T; ++i) {
      if (c.rows[uz(i)] > since) continue;  // the whole row is fresh already
      switch (d.id.kind) {
        case StageKind::Scaled: {
          const auto it = pins_.find(PinKey{StageId{StageKind::Scaled, h}, static_cast<int>(i), static_cast<int>(col)});
          d.m(i, col) = it != pins_.end() ? it->second : scale_value(heads_[uz(h)].S(i, col));
          break;
        }
        case StageKind::Masked: d.m(i, col) = masked_value(h, i, col); break;
        default: break;  // weights change by rows
      }
    }
  }
}

Matrix Engine::rows(StageId id, Index first, Index count) const {
  const bool derived_kind = id.kind == StageKind::Scaled || id.kind == StageKind::PositionBias ||
                            id.kind == StageKind::Masked || id.kind == StageKind::Weights;
  if (!derived_kind) {
    const MatrixView all = stage(id);
    first = std::clamp<Index>(first, 0, all.rows());
    return all.middleRows(first, std::clamp<Index>(count, 0, all.rows() - first));
  }
  const Index T = dims_.T;
  first = std::clamp<Index>(first, 0, T);
  count = std::clamp<Index>(count, 0, T - first);
  // A materialized copy that is current already: copy from it.
  const std::uint64_t v = version(id);
  for (const auto& d : cache_)
    if (d.id == id && d.version == v && d.m.rows() == T) return d.m.middleRows(first, count);
  if (id.kind == StageKind::Scaled) complete_scores(id.head);
  Matrix out(count, T);
  for (Index i = 0; i < count; ++i) fill_derived_row(id, first + i, out.row(i).data());
  return out;
}

// scaled, masked or weights of one head, materialized into the cache.
MatrixView Engine::derived(StageId id) const {
  const std::uint64_t v = version(id);
  Derived* slot = nullptr;
  for (auto& d : cache_)
    if (d.id == id) slot = &d;
  if (!slot) {
    if (cache_.capacity() < kDerivedCacheSize) cache_.reserve(kDerivedCacheSize);  // views never move
    if (cache_.size() < kDerivedCacheSize) {
      slot = &cache_.emplace_back();
    } else {
      slot = &*std::min_element(cache_.begin(), cache_.end(),
                                [](const Derived& a, const Derived& b) { return a.used < b.used; });
      slot->version = 0;  // another stage's values: rebuild
    }
    slot->id = id;
  }
  slot->used = ++cache_clock_;
  if (slot->version != v) {
    patch_derived(*slot);
    slot->version = v;
  }
  return slot->m;
}

MatrixView Engine::stage(StageId id) const {
  const Scenario& s = *scenario_;
  const auto h = to_index(id.head);
  const auto dk = to_index(dims_.d_k);
  const auto dv = to_index(dims_.d_v);
  switch (id.kind) {
    case StageKind::X: case StageKind::W_q: case StageKind::W_k: case StageKind::W_v: case StageKind::b_q:
    case StageKind::b_k: case StageKind::b_v: case StageKind::W_o: case StageKind::b_o:
      return s.*spec(id.kind).member;  // an input: the scenario's own matrix
    case StageKind::Mask: return mask_;
    case StageKind::Q: return Q_;
    case StageKind::K: return K_;
    case StageKind::V: return V_;
    case StageKind::HeadQ: return Q_.middleCols(h * dk, dk);
    case StageKind::HeadK: return K_.middleCols(h * dk, dk);
    case StageKind::HeadV: return V_.middleCols(h * dv, dv);
    case StageKind::Scores:
      complete_scores(id.head);
      return heads_[static_cast<std::size_t>(h)].S;
    case StageKind::Scaled: case StageKind::PositionBias: case StageKind::Masked: case StageKind::Weights:
      return derived(id);
    case StageKind::Context: return concat_.middleCols(h * dv, dv);
    case StageKind::Concat: return concat_;
    case StageKind::Output: return output_;
  }
  return Q_;
}

std::uint64_t Engine::version(StageId id) const {
  const auto h = is_per_head(id.kind) ? static_cast<std::size_t>(id.head) : 0u;
  // A head's block of Q, K or V shares the version its head's block of the
  // whole matrix is kept under.
  if (spec(id.kind).view == ViewKind::HeadSlice)
    return h < versions_.size() ? versions_[h][idx(spec(id.kind).storage)] : 0;
  if (id.kind == StageKind::Q || id.kind == StageKind::K || id.kind == StageKind::V) {
    // Q as a whole changed when any head's block did.
    std::uint64_t v = 0;
    for (const auto& per_head : versions_) v = std::max(v, per_head[idx(id.kind)]);
    return v;
  }
  return h < versions_.size() ? versions_[h][idx(id.kind)] : 0;
}

std::size_t Engine::bytes_kept() const {
  auto bytes = [](const Matrix& m) { return static_cast<std::size_t>(m.size()) * sizeof(float); };
  std::size_t total = 0;
  for (const Matrix* m : {&Q_, &K_, &V_, &concat_, &output_, &mask_, &U_, &R_}) total += bytes(*m);
  for (const auto& hs : heads_)
    total += bytes(hs.S) + hs.valid.capacity() + hs.offset.capacity() * sizeof(float) +
             hs.sum.capacity() * sizeof(double) + hs.cscale.capacity() * sizeof(float) +
             hs.issue.capacity() * sizeof(RowIssue) + hs.direct.capacity() + hs.drift.capacity() * sizeof(float);
  for (const auto& d : cache_) total += bytes(d.m);
  total += r_valid_.capacity() + mask_block_count_.capacity() * sizeof(int) + row_pins_.capacity() +
           out_age_.capacity();
  return total;
}

}  // namespace attention_lab
