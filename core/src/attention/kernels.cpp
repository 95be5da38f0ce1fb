// The engine's kernels: projections, the blocked scores, one head's softmax and context, the output.

#include "attention/engine_internal.h"
#include "attention/row_kernels.h"
#include "attention_lab/gemm.h"
#include "attention_lab/softmax.h"
#include "attention_lab/stage_registry.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

namespace attention_lab {

using namespace engine_detail;

// [SECTION] Kernels

// Q, K or V for one column block (head < 0: all of them; for K and V a block
// is a K/V head), in chunks of rows so a cancel is noticed within a few
// milliseconds; with a q/k norm or RoPE, Q and K are computed as X·W + b and
// then normed and turned (finish_rows).
void Engine::compute_projection(StageKind kind, int head, Work* work) {
  const Scenario& s = *scenario_;
  const Matrix& W = weights_of(kind);
  const Matrix& b = bias_of(kind);
  // a norm over the whole row changes every head's block: compute them all
  if (normalizes(kind) && qk_norm_.scope == QkNormScope::Whole) head = -1;
  ensure_transform_storage(kind);
  Matrix& out = raw(kind);
  const Index width = head < 0 ? out.cols() : ix(kind == StageKind::V ? dims_.d_v : dims_.d_k);
  const Index first = head < 0 ? 0 : ix(head) * width;
  const Matrix& source = projection_source(kind);  // X, or X_kv for K and V with cross-attention
  const Index T = source.rows();
  constexpr Index kChunk = 256;
  for (Index r0 = 0; r0 < T; r0 += kChunk) {
    const Index rows = std::min(kChunk, T - r0);
    // this head's columns of X·W
    block_product(source.middleRows(r0, rows), W.middleCols(first, width), out.block(r0, first, rows, width));
    if (work) {
      work->step(2.0 * static_cast<double>(rows * width * W.rows()));
      work->check();
    }
  }
  // + b, broadcast over tokens
  if (s.use_bias) out.middleCols(first, width).rowwise() += b.row(0).segment(first, width);
  if (transforms(kind)) finish_rows(kind, 0, T, first, width);
  if (head < 0) {
    std::fill(proj_error(kind).begin(), proj_error(kind).end(), 0.0f);  // every row exact again
    apply_pins(kind, -1);
    for (int h = 0; h < dims_.heads; ++h) bump(kind, h, true);
  } else {
    apply_pins(kind, head);
    bump_block(kind, head, true);
  }
}

// Scores (optionally), softmax state, U and concat of every row of `heads`,
// in tasks of one block of rows, the largest first. R of those heads becomes
// stale.
void Engine::head_pass(const std::vector<int>& heads, bool with_scores, Work* work, std::vector<ScoreShift>* shifts,
                       ConcatChange* change) {
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
  // each K/V head's values packed once for all blocks that read them
  const Index dv = dims_.d_v;
  auto& values = scratch_.head_values;
  values.resize(uz(dims_.kv_heads));
  std::vector<std::uint8_t> prepared(uz(dims_.kv_heads), 0);
  for (int h : heads) {
    const int g = kv(h);
    if (prepared[uz(g)]) continue;
    prepared[uz(g)] = 1;
    values[uz(g)].prepare(V_.data() + ix(g) * dv, dims_.T_k, static_cast<int>(dv),
                          static_cast<int>(V_.outerStride()));
  }
  std::vector<std::pair<int, Index>> tasks;
  for (Index bi = nbr_ - 1; bi >= 0; --bi)
    for (int h : heads) tasks.emplace_back(h, bi);
  std::atomic<bool> stop{false};
  const auto n = static_cast<long>(tasks.size());
  const double per_cell = 2.0 * ((with_scores ? dims_.d_k : 0) + dims_.d_v);
  const double flops = per_cell * static_cast<double>(dims_.T) * static_cast<double>(dims_.T_k) * static_cast<double>(heads.size());
#pragma omp parallel if (parallel::worth_threads(flops))
  {
    thread_local std::vector<float> scratch;  // kept: a fresh one would page-fault every pass
#pragma omp for schedule(dynamic, 1)
    for (long t = 0; t < n; ++t) {
      if (stop.load(std::memory_order_relaxed)) continue;
      const auto [h, bi] = tasks[uz(t)];
      head_block(h, bi, with_scores, scratch, shifts ? &(*shifts)[uz(h)] : nullptr, change);
      if (work) {
        const double rows = static_cast<double>(std::min(kBlock, ix(dims_.T) - bi * kBlock));
        if (!work->step(per_cell * rows * static_cast<double>(extent(bi)))) stop.store(true);
      }
    }
  }
  if (stop.load()) throw Cancelled();
  if (change)
    for (int h : heads) change->started[uz(h)] = 1;
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
Index Engine::prefix_length(Index i, Index limit) const {
  const bool ends_at_diagonal = mask_shape_ == MaskShape::Causal || mask_shape_ == MaskShape::Window;
  return ends_at_diagonal ? std::min(limit, i + 1) : limit;
}

Index Engine::scaled_masked_prefix(int h, Index i, Index limit, float* x) const {
  const Index n = prefix_length(i, limit);
  const float* s = heads_[uz(h)].S.row(i).data();
  if (use_div_)
    for (Index j = 0; j < n; ++j) x[j] = s[j] / scale_div_;
  else
    for (Index j = 0; j < n; ++j) x[j] = s[j] * scale_mul_;
  cap_row(x, n);
  add_position_bias(h, i, x, n);
  if (mask_shape_ == MaskShape::Custom || mask_shape_ == MaskShape::Window) {
    const float* m = mask_.row(i).data();
    for (Index j = 0; j < n; ++j) x[j] = m[j] != 0.0f ? x[j] : -kInf;
  }
  return n;
}

void Engine::head_block(int h, Index bi, bool with_scores, std::vector<float>& scratch, ScoreShift* shift,
                        ConcatChange* change) {
  HeadState& hs = heads_[uz(h)];
  const Index T = dims_.T, dk = dims_.d_k, dv = dims_.d_v;
  const Index i0 = bi * kBlock, rows = std::min(kBlock, T - i0), jn = extent(bi);
  if (shift && !shift->pairs.empty()) {
    // The edit's rank-one change of the blocks this pass reads, while they
    // are in cache for the softmax below (a pass of its own read the head's
    // scores from memory twice). Pair by pair within a block: the values
    // and each pair's largest are those of one pass per pair over all blocks.
    const std::size_t n_pairs = shift->pairs.size();
    for (Index bj = 0; bj * kBlock < jn; ++bj) {
      if (!shift->blocks[uz(bi * nbc_ + bj)]) continue;
      const Index j0 = bj * kBlock, cols = std::min(kBlock, dims_.T_k - j0);
      for (std::size_t p = 0; p < n_pairs; ++p) {
        const ScoreShift::Pair& pair = shift->pairs[p];
        bool nan = false;
        const float m = add_outer_product(&hs.S(i0, j0), hs.S.outerStride(), pair.a.data() + i0, pair.b.data() + j0,
                                          rows, cols, nan);
        const std::size_t at = p * uz(nbr_) + uz(bi);
        shift->largest[at] = std::max(shift->largest[at], m);
        if (nan || !std::isfinite(m)) shift->finite[at] = 0;
      }
    }
    for (Index i = i0; i < i0 + rows; ++i)
      if (row_pins_[uz(ix(h) * T + i)] & kPinScores) apply_row_pins(StageKind::Scores, h, i);
  }
  if (with_scores && jn > 0) {
    // scores_i = Q_i · K_iᵀ: entry (r, c) is how well token r's query matches token c's key.
    // (Eigen's product, as compute_block and a single recomputed score use:
    // OpenBLAS sums in another order, and an unpinned score must be the very
    // float the forward pass made.)
    const auto Qh = Q_.middleCols(ix(h) * dk, dk);
    const auto Kh = K_.middleCols(ix(kv(h)) * dk, dk);
    hs.S.block(i0, 0, rows, jn).noalias() = Qh.middleRows(i0, rows) * Kh.topRows(jn).transpose();
    for (Index bj = 0; bj * kBlock < jn; ++bj) hs.valid[uz(bi * nbc_ + bj)] = 1;
    for (Index i = i0; i < i0 + rows; ++i)
      if (row_pins_[uz(ix(h) * T + i)] & kPinScores) apply_row_pins(StageKind::Scores, h, i);
  }
  scratch.resize(uz(std::max<Index>(rows * jn, 1)));
  Eigen::Map<Matrix> E(scratch.data(), rows, jn);
  bool is_direct[kBlock] = {};
  const float sk = sink(h);
  for (Index r = 0; r < rows; ++r) {
    const Index i = i0 + r;
    float* e = scratch.data() + r * jn;
    const bool pinned = (row_pins_[uz(ix(h) * T + i)] & (kPinScaledMasked | kPinWeights)) != 0;
    const Index n = pinned ? jn : scaled_masked_prefix(h, i, jn, e);
    bool nan = false;
    float max = pinned ? 0.0f : max_and_nan(e, n, nan);
    if (!pinned && !nan && max != kInf) max = std::max(max, sk);  // the sink is one more key
    if (pinned || nan || max == -kInf || max == kInf) {
      is_direct[r] = true;
      std::fill(e, e + jn, 0.0f);
      continue;
    }
    exp_shifted(e, max, e, n);
    std::fill(e + n, e + jn, 0.0f);
    set_softmax_state(hs, i, max, sum_in_double(e, n) + sink_term(sk, max));
  }
  // context_i = weights_i · V_i = (Σ_j e^(masked_ij − m_i) V_j) / Z_i
  // (On the GEMM backend: the packed kernel made a W_q edit 4 % faster than
  // Eigen's product here. A row recomputed alone need not be these very
  // bits — its context is compared within the rounding budget —, unlike a
  // score, which stays on Eigen above.)
  auto U = U_.block(i0, ix(h) * dv, rows, dv);
  if (jn > 0)
    scratch_.head_values[uz(kv(h))].multiply(static_cast<int>(rows), static_cast<int>(jn), E.data(),
                                             static_cast<int>(E.outerStride()), U.data(),
                                             static_cast<int>(U.outerStride()));
  else
    U.setZero();
  // (the change of a row: −old + new is new − old, bit for bit)
  const bool record = change && change->column[uz(h)] >= 0;
  const bool add = record && change->started[uz(h)];
  for (Index r = 0; r < rows; ++r) {
    const Index i = i0 + r;
    const auto now = concat_.row(i).segment(ix(h) * dv, dv);
    if (record) {
      auto d = change->rows.row(i).segment(change->column[uz(h)], dv);
      if (add) d -= now;
      else d = -now;
    }
    if (is_direct[r])
      recompute_row(h, i);
    else
      set_concat_row(h, i);
    if (record) change->rows.row(i).segment(change->column[uz(h)], dv) += now;
  }
}

// Row i's softmax state from scratch: offset m, sum Z (1/Z scales its
// context), no issue, not direct, a fresh error budget.
void Engine::set_softmax_state(HeadState& hs, Index i, float offset, double z) {
  hs.offset[uz(i)] = offset;
  hs.sum[uz(i)] = z;
  hs.cscale[uz(i)] = static_cast<float>(1.0 / z);
  hs.issue[uz(i)] = RowIssue::None;
  hs.direct[uz(i)] = 0;
  hs.drift[uz(i)] = drift_start(i);
}

// Block (bi, bj) of one head's scores, pins included.
void Engine::compute_block(int h, Index bi, Index bj) const {
  HeadState& hs = heads_[uz(h)];
  const Index T = dims_.T, Tk = dims_.T_k, dk = dims_.d_k;
  const Index i0 = bi * kBlock, j0 = bj * kBlock;
  const Index rows = std::min(kBlock, T - i0), cols = std::min(kBlock, Tk - j0);
  if (read_only_)  // the head's blocks, projected again (complete_scores made them resident)
    hs.S.block(i0, j0, rows, cols).noalias() =
        on_demand_.q.middleRows(i0, rows) * on_demand_.k.middleRows(j0, cols).transpose();
  else
    hs.S.block(i0, j0, rows, cols).noalias() =
        Q_.block(i0, ix(h) * dk, rows, dk) * K_.block(j0, ix(kv(h)) * dk, cols, dk).transpose();
  const auto& pins = pins_;
  const StageId id{StageKind::Scores, h};
  for (auto it = pins.lower_bound(PinKey{id, static_cast<int>(i0), 0});
       it != pins.end() && it->first.stage == id && it->first.row < i0 + rows; ++it)
    if (it->first.col >= j0 && it->first.col < j0 + cols) hs.S(it->first.row, it->first.col) = it->second;
  hs.valid[uz(bi * nbc_ + bj)] = 1;
}

// Computes the blocks of scores the current mask reads but were skipped.
void Engine::ensure_blocks_for_mask(int h) {
  auto& hs = heads_[uz(h)];
  for (Index bi = 0; bi < nbr_; ++bi)
    for (Index bj = 0; bj < nbc_; ++bj)
      if (mask_block_count_[uz(bi * nbc_ + bj)] > 0 && !hs.valid[uz(bi * nbc_ + bj)]) compute_block(h, bi, bj);
}

// Every block of one head's scores, for showing them.
void Engine::complete_scores(int h) const {
  const auto& hs = heads_[uz(h)];
  std::vector<Index> missing;
  for (Index b = 0; b < nbr_ * nbc_; ++b)
    if (!hs.valid[uz(b)]) missing.push_back(b);
  if (missing.empty()) return;
  resident_projections(h);  // (a read-only copy) the Q and K the blocks are computed from
  const auto n = static_cast<long>(missing.size());
  const double flops = 2.0 * static_cast<double>(n) * kBlock * kBlock * static_cast<double>(dims_.d_k);
#pragma omp parallel for schedule(dynamic, 4) if (parallel::worth_threads(flops))
  for (long t = 0; t < n; ++t) compute_block(h, missing[uz(t)] / nbc_, missing[uz(t)] % nbc_);
}

// Everything of row i of head h from its scores: softmax state, U, concat and
// (when kept) R. Exact: used for edited rows, refreshes and direct rows.
void Engine::recompute_row(int h, Index i) {
  HeadState& hs = heads_[uz(h)];
  note_row(StageKind::Weights, h, i);
  const Index Tk = dims_.T_k, dv = dims_.d_v;
  const auto Vh = V_.middleCols(ix(kv(h)) * dv, dv);
  float* x = scratch_a(Tk).data();
  float* e = scratch_b(Tk).data();
  auto u = U_.row(i).segment(ix(h) * dv, dv);
  if ((row_pins_[uz(ix(h) * dims_.T + i)] & (kPinScaledMasked | kPinWeights)) == 0) {
    const Index n = scaled_masked_prefix(h, i, extent(i / kBlock), x);
    bool nan = false;
    float max = max_and_nan(x, n, nan);
    if (!nan && max != kInf) max = std::max(max, sink(h));  // the sink is one more key
    if (!nan && max != -kInf && max != kInf) {
      exp_shifted(x, max, e, n);
      set_softmax_state(hs, i, max, sum_in_double(e, n) + sink_term(sink(h), max));
      if (n > 0)
        u.noalias() = Eigen::Map<const RowVector>(e, n) * Vh.topRows(n);
      else
        u.setZero();
      set_concat_row(h, i);
      return;
    }
  }
  // A direct row: the weights explicitly, as softmax_row gives them, pins included.
  Eigen::Map<RowVector> w(e, Tk);
  hs.direct[uz(i)] = 1;
  weights_row(h, i, e, x);
  hs.offset[uz(i)] = 0.0f;
  hs.sum[uz(i)] = 1.0;
  hs.cscale[uz(i)] = 1.0f;
  hs.drift[uz(i)] = 0.0f;
  u.noalias() = w * Vh;
  set_concat_row(h, i);
}

// recompute_row for several rows of head h (ascending), batched: their
// exponentials side by side (zeros past each row's prefix) make U's rows one
// product with V and R's rows one product with W_o_h, each read once. Row by
// row those are matrix-vector products that stream V_h and W_o_h per row.
// Rows with weight pins or that turn out direct go the single-row way.
void Engine::recompute_rows(int h, const std::vector<Index>& rows) {
  if (rows.size() < 4) {
    for (Index i : rows) recompute_row(h, i);
    return;
  }
  HeadState& hs = heads_[uz(h)];
  const Scenario& s = *scenario_;
  const Index T = dims_.T, dv = dims_.d_v, dout = dims_.d_out;
  const Index width = std::min(ix(dims_.T_k), extent(rows.back() / kBlock));  // the longest prefix
  Matrix E(ix(rows.size()), width);
  std::vector<Index> batched;
  batched.reserve(rows.size());
  for (Index i : rows) {
    float* e = E.row(ix(batched.size())).data();
    bool single = (row_pins_[uz(ix(h) * T + i)] & (kPinScaledMasked | kPinWeights)) != 0;
    Index n = 0;
    if (!single) {
      n = scaled_masked_prefix(h, i, extent(i / kBlock), e);
      bool nan = false;
      float max = max_and_nan(e, n, nan);
      if (!nan && max != kInf) max = std::max(max, sink(h));
      single = nan || max == -kInf || max == kInf;
      if (!single) {
        exp_shifted(e, max, e, n);
        set_softmax_state(hs, i, max, sum_in_double(e, n) + sink_term(sink(h), max));
      }
    }
    if (single) {
      recompute_row(h, i);
      continue;
    }
    std::fill(e + n, e + width, 0.0f);
    note_row(StageKind::Weights, h, i);
    batched.push_back(i);
  }
  const Index n = ix(batched.size());
  if (n == 0) return;
  const Matrix Ub = E.topRows(n) * V_.block(0, ix(kv(h)) * dv, width, dv);
  const bool keeps_r = s.use_w_o && r_valid_[uz(h)];
  const Matrix Rb = keeps_r ? Matrix(Ub * s.W_o.middleRows(ix(h) * dv, dv)) : Matrix();
  for (Index t = 0; t < n; ++t) {
    const Index i = batched[uz(t)];
    U_.row(i).segment(ix(h) * dv, dv) = Ub.row(t);
    concat_.row(i).segment(ix(h) * dv, dv) = Ub.row(t) * hs.cscale[uz(i)];
    if (row_pins_[uz(ix(h) * T + i)] & kPinContext) apply_row_pins(StageKind::Context, h, i);
    if (keeps_r) R_.row(i).segment(ix(h) * dout, dout) = Rb.row(t);
  }
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
  const Index cols = r_stride(ix(dims_.heads) * dout);
  if (R_.rows() != T || R_.cols() != cols) {
    R_.resize(T, cols);
    advise_huge_pages(R_);
  }
  block_product(U_.middleCols(ix(h) * dv, dv), scenario_->W_o.middleRows(ix(h) * dv, dv), R_.middleCols(ix(h) * dout, dout));
  r_valid_[uz(h)] = 1;
}

void Engine::full_output(Work* work) {
  const Scenario& s = *scenario_;
  const Index T = dims_.T;
  if (s.use_w_o) {
    constexpr Index kChunk = 256;
    for (Index r0 = 0; r0 < T; r0 += kChunk) {
      const Index rows = std::min(kChunk, T - r0);
      block_product(concat_.middleRows(r0, rows), s.W_o.get(), output_.middleRows(r0, rows));
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

// Whether output row i can be summed from R: every head keeps it and no
// context pin sits in the row.
bool Engine::output_from_r(Index i) const {
  const Index T = dims_.T;
  bool from_r = R_.rows() == T;
  for (int h = 0; h < dims_.heads && from_r; ++h)
    from_r = r_valid_[uz(h)] && !(row_pins_[uz(ix(h) * T + i)] & kPinContext);
  return from_r;
}

// Output row i exactly: from R when output_from_r, else from concat · W_o.
void Engine::output_row(Index i) {
  const Scenario& s = *scenario_;
  const Index dout = dims_.d_out;
  auto out = output_.row(i);
  if (s.use_w_o) {
    if (output_from_r(i)) {
      out.setZero();
      for (int h = 0; h < dims_.heads; ++h)
        out += R_.row(i).segment(ix(h) * dout, dout) * heads_[uz(h)].cscale[uz(i)];
    } else {
      out.noalias() = concat_.row(i) * s.W_o.get();
    }
  } else {
    out = concat_.row(i);
  }
  finish_output_row(i);
}

// Row i of the output after its product: b_o, pins, a fresh age.
void Engine::finish_output_row(Index i) {
  const Scenario& s = *scenario_;
  if (s.use_output_bias) output_.row(i) += s.b_o.row(0);
  apply_row_pins(StageKind::Output, 0, i);
  out_age_[uz(i)] = 0;
}

// Output rows that took kOutAgeLimit rank-one updates, exactly. Rows summed
// from R are cheap one by one; the others are gathered into one product with
// W_o, which reads W_o once instead of once per row (a row alone is a
// memory-bound matrix-vector product).
void Engine::refresh_aged_outputs() {
  const Index T = dims_.T;
  std::vector<Index> aged;
  for (Index i = 0; i < T; ++i)
    if (out_age_[uz(i)] >= kOutAgeLimit) aged.push_back(i);
  output_rows(aged);
}

// Output rows `rows` exactly (as output_row does each).
void Engine::output_rows(const std::vector<Index>& rows) {
  const Scenario& s = *scenario_;
  std::vector<Index> from_concat;
  if (s.use_w_o)
    for (Index i : rows)
      if (!output_from_r(i)) from_concat.push_back(i);
  // a few rows, or no W_o: row by row
  if (from_concat.size() < 4) {
    const auto n = static_cast<long>(rows.size());
#pragma omp parallel for schedule(dynamic, 16) if (n > 16 && rows_worth_threads(static_cast<double>(n), 2.0 * static_cast<double>(concat_.cols() * output_.cols())))
    for (long t = 0; t < n; ++t) output_row(rows[uz(t)]);
    return;
  }
  const auto n = static_cast<long>(from_concat.size());
  Matrix gathered(n, concat_.cols()), product(n, output_.cols());
  for (long t = 0; t < n; ++t) gathered.row(t) = concat_.row(from_concat[uz(t)]);
  block_product(gathered, s.W_o.get(), product);
  for (long t = 0; t < n; ++t) {
    const Index i = from_concat[uz(t)];
    output_.row(i) = product.row(t);
    finish_output_row(i);
  }
  std::vector<Index> rest;
  std::set_difference(rows.begin(), rows.end(), from_concat.begin(), from_concat.end(), std::back_inserter(rest));
  const auto m = static_cast<long>(rest.size());
#pragma omp parallel for schedule(dynamic, 16) if (m > 16 && rows_worth_threads(static_cast<double>(m), 2.0 * static_cast<double>(concat_.cols() * output_.cols())))
  for (long t = 0; t < m; ++t) output_row(rest[uz(t)]);
}

}  // namespace attention_lab
