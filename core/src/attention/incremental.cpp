// The engine's incremental paths: single-cell edits of X, the weights, the mask and pins (see engine.h).

#include "attention/engine_internal.h"
#include "attention/row_kernels.h"
#include "attention_lab/softmax.h"
#include "attention_lab/stage_registry.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attention_lab {

using namespace engine_detail;

// [SECTION] Incremental paths


// Columns [first, first + width) of row r of Q, K or V from X_r, pins
// included; with a q/k norm or RoPE, of Q or K as X·W + b (the caller
// normalises and turns the row and lays the pins: finish_rows).
void Engine::recompute_projection_row(StageKind kind, Index r, Index first, Index width) {
  const Scenario& s = *scenario_;
  const Matrix& W = weights_of(kind);
  const Matrix& b = bias_of(kind);
  auto row = raw(kind).row(r).segment(first, width);
  row.noalias() = projection_source(kind).row(r) * W.middleCols(first, width);
  if (s.use_bias) row += b.row(0).segment(first, width);
  if (!transforms(kind)) apply_projection_pins(kind, r, first, width);
}

// Row r of Q, K or V after X(r, c) changed by delta: the row plus delta times
// row c of W, when the rounding that adds stays far below the tolerance of
// incremental = full. The bound of each row's accumulated error (absolute,
// about one unit roundoff of the terms per update) decides; past it, or when
// delta is unknown or not finite, the caller recomputes the row exactly.
bool Engine::shift_projection_row(StageKind kind, Index r, Index c, float delta) {
  if (!std::isfinite(delta)) return false;
  const Matrix& W = weights_of(kind);
  Matrix& out = raw(kind);
  if (out.cols() == 0) return true;
  auto row = out.row(r);
  const auto w = W.row(c);
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
  if (!transforms(kind)) apply_projection_pins(kind, r, 0, out.cols());
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

// One cell of Q, K or V: its pin, or X_r·W_c + b_c (with RoPE: the cell's
// head block of the row turned again, which gives the same floats).
void Engine::recompute_projection_cell(StageKind kind, Index r, Index c) {
  const Scenario& s = *scenario_;
  const Matrix& W = weights_of(kind);
  const Matrix& b = bias_of(kind);
  Matrix& out = projection(kind);
  if (transforms(kind)) {  // the row normed and turned again: the same floats, its pins laid again
    finish_rows(kind, r, 1, 0, out.cols());
    apply_projection_pins(kind, r, 0, out.cols());
    return;
  }
  const auto it = pins_.find(PinKey{StageId{kind, 0}, static_cast<int>(r), static_cast<int>(c)});
  if (it != pins_.end()) {
    out(r, c) = it->second;
    return;
  }
  out(r, c) = projection_source(kind).row(r).dot(W.col(c));
  if (s.use_bias) out(r, c) += b(0, c);
}

// One cell of X (or of X_kv): row r of the projections it feeds (Q, K and V;
// with cross-attention X feeds Q and X_kv feeds K and V), a row and/or a
// column of every head's scores, a factor and an entry of every softmax row,
// a rank-one update of U and R, and the output rows re-summed.
void Engine::edit_x_row(StageKind input, Index r, Index c, float old_value) {
  const int H = dims_.heads;
  const bool cross = scenario_->cross();
  std::vector<StageKind> kinds;
  if (input == StageKind::X) kinds.push_back(StageKind::Q);
  if (input == StageKind::X_kv || !cross) kinds.push_back(StageKind::K), kinds.push_back(StageKind::V);
  const bool q = input == StageKind::X, kv = kinds.size() > 1;
  const RowVector v_old = kv ? RowVector(V_.row(r)) : RowVector();
  const Matrix& source = input == StageKind::X ? scenario_->X : scenario_->X_kv;
  const float delta = source(r, c) - old_value;
  const int n = static_cast<int>(kinds.size());
  bool shifted[3] = {false, false, false};
  bool all_shifted = true;
  for (int t = 0; t < n; ++t) all_shifted = (shifted[t] = shift_projection_row(kinds[uz(t)], r, c, delta)) && all_shifted;
  if (!all_shifted) {
    // the source row·W exactly, in column halves so both threads stream weights
    const double flops = 2.0 * n * static_cast<double>(source.cols() * projection(kinds[0]).cols());
#pragma omp parallel for schedule(static) if (parallel::worth_threads(flops))
    for (int t = 0; t < 2 * n; ++t) {
      if (shifted[t / 2]) continue;
      const StageKind kind = kinds[uz(t / 2)];
      const Index cols = projection(kind).cols(), half = cols / 2;
      recompute_projection_row(kind, r, t % 2 == 0 ? 0 : half, t % 2 == 0 ? half : cols - half);
    }
    for (int t = 0; t < n; ++t)
      if (!shifted[t]) proj_error(kinds[uz(t)])[uz(r)] = 0.0f;  // exact again
  }
  for (auto k : kinds)
    if (transforms(k)) {
      finish_rows(k, r, 1, 0, projection(k).cols());
      apply_projection_pins(k, r, 0, projection(k).cols());
    }
  for (auto k : kinds)
    for (int h = 0; h < H; ++h) bump(k, h, false);
  std::vector<int> all(uz(H));
  for (int h = 0; h < H; ++h) all[uz(h)] = h;
  if (scenario_->use_w_o && kv)
    for (int h = 0; h < H; ++h)
      if (!r_valid_[uz(h)]) build_r(h);
  edit_rows(all, r, q, kv, kv, v_old, !cross);
  for (int h = 0; h < H; ++h) {
    for (auto k : {StageKind::Scaled, StageKind::Masked}) {
      if (q) note_row(k, h, r);
      if (kv) note_col(k, h, r);
    }
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
void Engine::edit_rows(const std::vector<int>& heads, Index r, bool q, bool k, bool v, const RowVector& v_old,
                       bool self) {
  const Scenario& s = *scenario_;
  const Index T = dims_.T, dk = dims_.d_k, dv = dims_.d_v, dout = dims_.d_out;
  const auto n_heads = static_cast<long>(heads.size());
  if (edits_.size() < uz(dims_.heads)) edits_.resize(uz(dims_.heads));
  // Per head: the new scores row r, and V_h,r·W_o_h before and after (U's
  // rank-one change mapped to R).
#pragma omp parallel for schedule(dynamic) if (rows_worth_threads(static_cast<double>(n_heads), 2.0 * static_cast<double>(T * dk + 2 * dv * dout)))
  for (long t = 0; t < n_heads; ++t) {
    const int h = heads[uz(t)];
    HeadEdit& he = edits_[uz(h)];
    he.inv_unit = 1.0 / static_cast<double>(std::max(heads_[uz(h)].cmax, std::numeric_limits<float>::min()));
    he.vmax_old = he.vmax_new = 0.0f;
    he.has_y = false;
    // key row r changed (with cross-attention it need not be a query row too)
    if (k || v) {
      const auto v_new = V_.row(r).segment(ix(kv(h)) * dv, dv);
      const auto v_was = v_old.segment(ix(kv(h)) * dv, dv);
      he.vmax_old = dv > 0 ? v_was.cwiseAbs().maxCoeff<Eigen::PropagateNaN>() : 0.0f;
      he.vmax_new = dv > 0 ? v_new.cwiseAbs().maxCoeff<Eigen::PropagateNaN>() : 0.0f;
      he.has_y = s.use_w_o && r_valid_[uz(h)];
    }
    if (he.has_y) {
      const auto v_new = V_.row(r).segment(ix(kv(h)) * dv, dv);
      const auto v_was = v_old.segment(ix(kv(h)) * dv, dv);
      const auto Wo = s.W_o.middleRows(ix(h) * dv, dv);
      // both in one pass over W_o_h (two matrix-vector products would read it twice)
      he.y_old.setZero(1, dout);
      he.y_new.setZero(1, dout);
      for (Index c = 0; c < dv; ++c) {
        he.y_old.noalias() += v_was(c) * Wo.row(c);
        he.y_new.noalias() += v_new(c) * Wo.row(c);
      }
    }
    HeadState& hs = heads_[uz(h)];
    if (q) {
      // only the blocks computed so far (a causal row's prefix): the others
      // are computed whole when shown, and reading all of K_h would double the work
      const Index bi = r / kBlock, Tk = dims_.T_k;
      const auto q_row = Q_.row(r).segment(ix(h) * dk, dk);
      for (Index bj = 0; bj < nbc_;) {
        if (!hs.valid[uz(bi * nbc_ + bj)]) {
          ++bj;
          continue;
        }
        Index end = bj + 1;  // a run of computed blocks: one product
        while (end < nbc_ && hs.valid[uz(bi * nbc_ + end)]) ++end;
        const Index j0 = bj * kBlock, cols = std::min(end * kBlock, Tk) - j0;
        hs.S.row(r).segment(j0, cols).noalias() = q_row * K_.block(j0, ix(kv(h)) * dk, cols, dk).transpose();
        bj = end;
      }
      if (row_pins_[uz(ix(h) * T + r)] & kPinScores) apply_row_pins(StageKind::Scores, h, r);
    } else if (k && self) {
      hs.S(r, r) = Q_.row(r).segment(ix(h) * dk, dk).dot(K_.row(r).segment(ix(kv(h)) * dk, dk));
      if (row_pins_[uz(ix(h) * T + r)] & kPinScores) apply_row_pins(StageKind::Scores, h, r);
    }
    // query row r whole (when row r is a query that changed), while W_o_h is in cache from y
    if (q || self) recompute_row(h, r);
  }
  // every head keeps R: each output row is summed from R in the same pass
  bool fused = s.use_w_o && R_.rows() == T;
  for (int h = 0; h < dims_.heads && fused; ++h) fused = r_valid_[uz(h)] != 0;
  std::vector<long> slot(uz(dims_.heads), -1);  // each head's position in `heads`, or −1
  for (long t = 0; t < n_heads; ++t) slot[uz(heads[uz(t)])] = t;
  // A changed Q row changes only its own row; a changed K or V row every row
  // that may attend to it.
  const long first = k || v ? 0 : static_cast<long>(r);
  const long last = k || v ? static_cast<long>(T) : static_cast<long>(r) + 1;
  // Rows of a head that must be recomputed (state 3), and rows whose output
  // waits for them: done after the pass, batched per head.
  std::vector<std::uint8_t>& deferred = scratch_.deferred;
  std::vector<std::uint8_t>& output_waits = scratch_.output_waits;
  deferred.assign(uz(ix(dims_.heads) * T), 0);
  output_waits.assign(uz(T), 0);
  // Three passes over the rows. First column r of each head's scores, old
  // and new, per head and block of rows: a cache line per row on its own
  // page, which a loop doing nothing else keeps many of in flight (inside the
  // entries' work each was a stall). Then every head's entry of each row
  // (edit_entry), then each row's R and output (see fused_rows).
  // row-major, by position in `heads` (edit_entry writes each before it is read)
  std::vector<RowUpdate>& updates = scratch_.row_updates;
  updates.resize(uz((last - first) * n_heads));
  constexpr long kChunkRows = 16;
  const long n_chunks = (last - first + kChunkRows - 1) / kChunkRows;
  const long n_rows = last - first;
  std::vector<float>& column = scratch_.score_column;  // [t][0 old, 1 new][i − first]
  column.resize(uz(2 * n_heads * n_rows));
  const long n_blocks = (n_rows + kBlock - 1) / kBlock;
  // per row and head: a score (2·d_k), then its entry (≈ 4·d_v) and its R and output segments (≈ 4·d_out)
  const bool threads = rows_worth_threads(static_cast<double>(n_rows * n_heads), static_cast<double>(2 * dk + 4 * dv + 4 * dout));
#pragma omp parallel for schedule(dynamic, 1) if (threads)
  for (long task = 0; task < n_heads * n_blocks; ++task) {
    const long t = task / n_blocks, begin = first + task % n_blocks * kBlock, end = std::min(last, begin + kBlock);
    const int h = heads[uz(t)];
    HeadState& hs = heads_[uz(h)];
    float* old_col = column.data() + uz(2 * t * n_rows);
    float* new_col = old_col + n_rows;
    // (read only when K's row r changed; with cross-attention a query row r may be past K's last row)
    const auto k_row = K_.row(k ? r : 0).segment(ix(kv(h)) * dk, dk);
    constexpr long kAhead = 8;
    for (long li = begin; li < end; ++li) {
      if (!k && !v) {  // only Q's row r changed: column r of the scores plays no part (with cross-attention there may be none)
        old_col[li - first] = new_col[li - first] = 0.0f;
        continue;
      }
      if (li + kAhead < end) {
        __builtin_prefetch(&hs.S(li + kAhead, r), 1);
        // the head's query segment of that row: d_k floats, rows 3 KB apart at GPT-2 size
        if (k) {
          const char* query = reinterpret_cast<const char*>(Q_.row(li + kAhead).data() + ix(h) * dk);
          for (Index byte = 0; byte < dk * ix(sizeof(float)); byte += 64) __builtin_prefetch(query + byte);
        }
      }
      float& sir = hs.S(li, r);
      old_col[li - first] = new_col[li - first] = sir;
      if ((self && li == r) || !k) continue;  // (row r is redone whole)
      const bool allowed = mask_shape_ == MaskShape::Causal ? r <= li : mask_.get()(li, r) != 0.0f;
      // a block the mask hides that was never computed is computed whole when shown
      if (!allowed && !hs.valid[uz((li / kBlock) * nbc_ + r / kBlock)]) continue;
      sir = Q_.row(li).segment(ix(h) * dk, dk).dot(k_row);
      if (row_pins_[uz(ix(h) * T + li)] & kPinScores) {
        const auto it = pins_.find(PinKey{StageId{StageKind::Scores, h}, static_cast<int>(li), static_cast<int>(r)});
        if (it != pins_.end()) sir = it->second;
      }
      new_col[li - first] = sir;
    }
  }
#pragma omp parallel for schedule(dynamic, 1) if (threads)
  for (long chunk = 0; chunk < n_chunks; ++chunk) {
    const long begin = first + chunk * kChunkRows, end = std::min(last, begin + kChunkRows);
    for (long li = begin; li < end; ++li)
      for (long t = 0; t < n_heads; ++t) {
        const int h = heads[uz(t)];
        RowUpdate& u = updates[uz((li - first) * n_heads + t)];
        const float* col = column.data() + uz(2 * t * n_rows);
        edit_entry(h, li, r, k, v, (k || v) ? v_old.data() + ix(kv(h)) * dv : nullptr, col[li - first],
                   col[n_rows + li - first], edits_[uz(h)], u, self);
        if (u.state == 3) deferred[uz(ix(h) * T + li)] = 1;
      }
  }
  // Output rows summed from R (fused) go in groups of kGroupRows; the others one by one.
  auto fused_rows = [&](const Index* rows, int count) {
    for (int h = 0; h < dims_.heads; ++h) {
      const long t = slot[uz(h)];
      const HeadEdit& he = edits_[uz(h)];
      float* seg[kGroupRows];
      float* out[kGroupRows];
      float a[kGroupRows], b[kGroupRows], scale[kGroupRows];
      bool edited[kGroupRows];
      bool all_edited = count == kGroupRows;
      for (int g = 0; g < count; ++g) {
        // (a head not in `heads` has no updates: its segment is only added)
        const RowUpdate* u = t >= 0 ? &updates[uz((rows[g] - first) * n_heads + t)] : nullptr;
        edited[g] = u && u->state == 1;
        all_edited = all_edited && edited[g];
        seg[g] = R_.row(rows[g]).data() + ix(h) * dout;
        out[g] = output_.row(rows[g]).data();
        a[g] = edited[g] ? u->a : 0.0f;
        b[g] = edited[g] ? u->b : 0.0f;
        scale[g] = heads_[uz(h)].cscale[uz(rows[g])];
      }
      if (all_edited && h == 0)
        sum_output_segments<true>(seg, he.y_old.data(), he.y_new.data(), a, b, scale, out, dout);
      else if (all_edited)
        sum_output_segments<false>(seg, he.y_old.data(), he.y_new.data(), a, b, scale, out, dout);
      else
        for (int g = 0; g < count; ++g)
          sum_output_segment(seg[g], edited[g] ? he.y_old.data() : nullptr, edited[g] ? he.y_new.data() : nullptr,
                             a[g], b[g], scale[g], out[g], dout, h == 0);
    }
    for (int g = 0; g < count; ++g) {
      const Index i = rows[g];
      bool pinned = false;
      for (int h = 0; h < dims_.heads; ++h) pinned = pinned || (row_pins_[uz(ix(h) * T + i)] & kPinContext);
      auto out = output_.row(i);
      if (pinned) out.noalias() = concat_.row(i) * s.W_o.get();  // context pins: from concat
      if (s.use_output_bias) out += s.b_o.row(0);
      apply_row_pins(StageKind::Output, 0, i);
      out_age_[uz(i)] = 0;
    }
  };
#pragma omp parallel for schedule(dynamic, 1) if (threads)
  for (long chunk = 0; chunk < n_chunks; ++chunk) {
    const long begin = first + chunk * kChunkRows, end = std::min(last, begin + kChunkRows);
    Index group[kGroupRows];
    int grouped = 0;
    for (long li = begin; li < end; ++li) {
      const Index i = li;
      const RowUpdate* upd = &updates[uz((li - first) * n_heads)];  // by position in `heads`
      bool changed = false, waits = false;
      for (long t = 0; t < n_heads; ++t) changed = changed || upd[t].state != 0, waits = waits || upd[t].state == 3;
      if (!changed) continue;
      if (waits) {
        // R rows of the heads updated in place; the output once the others are recomputed
        for (long t = 0; t < n_heads; ++t) {
          const int h = heads[uz(t)];
          const HeadEdit& he = edits_[uz(h)];
          if (upd[t].state == 1 && he.has_y)
            R_.row(i).segment(ix(h) * dout, dout) += he.y_old * upd[t].a + he.y_new * upd[t].b;
        }
        output_waits[uz(i)] = 1;
        continue;
      }
      if (fused) {
        group[grouped++] = i;
        if (grouped == kGroupRows) fused_rows(group, grouped), grouped = 0;
        continue;
      }
      for (long t = 0; t < n_heads; ++t) {
        const int h = heads[uz(t)];
        const HeadEdit& he = edits_[uz(h)];
        if (upd[t].state == 1 && he.has_y)
          R_.row(i).segment(ix(h) * dout, dout) += he.y_old * upd[t].a + he.y_new * upd[t].b;
      }
      output_row(i);
    }
    if (grouped > 0) fused_rows(group, grouped);
  }
  std::vector<std::vector<Index>> redo(uz(dims_.heads));
  std::vector<Index> waiting;
  for (Index i = 0; i < T; ++i) {
    for (int h = 0; h < dims_.heads; ++h)
      if (deferred[uz(ix(h) * T + i)]) redo[uz(h)].push_back(i);
    if (output_waits[uz(i)]) waiting.push_back(i);
  }
  std::size_t n_redo = 0;
  for (const auto& rows : redo) n_redo += rows.size();
#pragma omp parallel for schedule(dynamic) if (rows_worth_threads(static_cast<double>(n_redo), 2.0 * static_cast<double>(dims_.T_k * (dk + dv))))
  for (int h = 0; h < dims_.heads; ++h) recompute_rows(h, redo[uz(h)]);
  output_rows(waiting);
  bump(StageKind::Concat, 0, false);
  bump(StageKind::Output, 0, false);
}

// Row i ≠ r of head h after row r of its K or V changed (see edit_rows):
// from scores entry (i, r) before and after (set by edit_rows), softmax
// entry r, U and concat of row i, or the whole row recomputed. Says in `out` what it did and, for an update, U_i's
// change as a·V_r(old) + b·V_r(new) (R's is a·y_old + b·y_new).
void Engine::edit_entry(int h, Index i, Index r, bool k, bool v, const float* v_old, float s_old, float s_new,
                        const HeadEdit& he, RowUpdate& out, bool self) {
  out.state = 0;
  if ((self && i == r) || (!k && !v)) {
    out.state = 2;  // recomputed whole by edit_rows (only query row r changed, or it is also key r)
    return;
  }
  HeadState& hs = heads_[uz(h)];
  const Index dv = dims_.d_v;
  const std::uint8_t pins = row_pins_[uz(ix(h) * dims_.T + i)];
  const bool causal = mask_shape_ == MaskShape::Causal;
  const bool allowed = causal ? r <= i : mask_.get()(i, r) != 0.0f;
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
  const float xo = cap(scale_value(s_old)) + bias;
  const float xn = k ? cap(scale_value(s_new)) + bias : xo;
  const float offset = hs.offset[uz(i)];
  const float eo = fast_exp(xo - offset), en = fast_exp(xn - offset);
  if (eo == 0.0f && en == 0.0f) return;  // neither reads V_r nor counts in Z
  const double z_old = hs.sum[uz(i)];
  // (only V_r changed: the sum stays exactly as it was)
  const double z = k ? z_old - static_cast<double>(eo) + static_cast<double>(en) : z_old;
  const bool exact = !(xn - offset <= kMaxRise) || !(z > 0.0);  // NaN, +∞ or a new max far above the offset
  if (exact) {
    out.state = 3;  // (the new score is in S: recompute_rows reads it)
    return;
  }
  const double inv_z = 1.0 / z;
  const auto scale = static_cast<float>(inv_z);
  // U_i is updated first, and concat with it: this update's rounding is
  // about one ulp of the values it leaves, so the estimate needs their size
  // (a recompute overwrites both if the estimate says no).
  const float u_max = update_context_row(U_.row(i).data() + ix(h) * dv, V_.row(r).data() + ix(kv(h)) * dv,
                                         v ? v_old : nullptr, en, eo, scale, concat_.row(i).data() + ix(h) * dv, dv);
  // The error U_i carries grows by Z_old/Z as the row renormalizes, plus
  // this update's own rounding: about one ulp of each term and of the result,
  // whose size after normalizing is the row's largest |context| (in units of
  // the head's largest, so rows with smaller contexts drift more slowly).
  const double terms = static_cast<double>(eo) * static_cast<double>(he.vmax_old) +
                       static_cast<double>(en) * static_cast<double>(he.vmax_new);
  const double result = static_cast<double>(u_max) * inv_z;
  const auto drift = static_cast<float>(
      (static_cast<double>(hs.drift[uz(i)]) * z_old + terms * he.inv_unit) * inv_z + result * he.inv_unit);
  if (!(drift <= kDriftLimit)) {
    out.state = 3;
    return;
  }
  hs.sum[uz(i)] = z;
  hs.cscale[uz(i)] = scale;
  hs.drift[uz(i)] = drift;
  if (k) note_row(StageKind::Weights, h, i);
  // (R_i is updated with the output, in edit_rows)
  if (pins & kPinContext) apply_row_pins(StageKind::Context, h, i);
  out.state = 1;
  out.a = -eo;
  out.b = en;
}

// A column of W_q or W_k (or a cell of b_q, b_k): one column of Q or K (two
// with RoPE: the column and the one it turns with), then the heads that read
// it from their scores on, and the output by their change in concat.
void Engine::edit_qk_column(StageKind kind, Index c) {
  // (never with a q/k norm: a column's change moves the whole head through
  // its mean square, so recompute_cells sends those edits head-level)
  const Scenario& s = *scenario_;
  const Index T = dims_.T, dk = dims_.d_k, dv = dims_.d_v;
  const int block = static_cast<int>(c / dk);
  const std::vector<int> heads = heads_of_block(kind, block);
  const Matrix& W = kind == StageKind::Q ? s.W_q : s.W_k;
  const Matrix& b = kind == StageKind::Q ? s.b_q : s.b_k;
  Matrix& P = projection(kind);
  // the columns of P that change, with their old values
  std::vector<std::pair<Index, Eigen::VectorXf>> changed;
  const Index partner =
      rotates(kind) ? c / dk * dk + rope_partner(rope_.pairs, dims_.rotary_dims(), static_cast<int>(c % dk)) : c;
  changed.emplace_back(c, P.col(c));
  if (partner != c) changed.emplace_back(partner, P.col(partner));
  Matrix& pre = unrotated(kind);
  column_product(projection_source(kind), W.col(c), pre.col(c));
  if (s.use_bias) pre.col(c).array() += b(0, c);
  if (rotates(kind)) {
    rotate_column_pair(kind, c);
  } else {
    lay_pins(kind, c, 1, P, 0);
  }
  bump_block(kind, block, false);

  ConcatChange& change = scratch_.concat_change;
  change.rows.resize(T, ix(heads.size()) * dv);
  change.column.assign(uz(dims_.heads), -1);
  change.started.assign(uz(dims_.heads), 0);
  for (std::size_t t = 0; t < heads.size(); ++t) change.column[uz(heads[t])] = static_cast<int>(ix(t) * dv);
  // the scores by a rank-one update per changed column when its rounding
  // stays small, else anew; the softmax and context of every row from them
  // (the update is applied by the head pass, and a head whose bound it
  // broke is passed again with its scores anew)
  std::vector<int> anew, shifted;
  std::vector<ScoreShift> shifts(uz(dims_.heads));
  for (int h : heads) {
    bool ok = true;
    for (const auto& [col, old] : changed) ok = ok && shift_factors(kind, h, col, old, shifts[uz(h)]);
    (ok && !shift_breaks_bound(h, shifts[uz(h)]) ? shifted : anew).push_back(h);
  }
  ConcatChange* record = s.use_w_o ? &change : nullptr;
  head_pass(shifted, false, nullptr, &shifts, record);
  for (int h : shifted)
    if (!finish_shift(h, shifts[uz(h)])) anew.push_back(h);
  head_pass(anew, true, nullptr, nullptr, record);
  for (int h : heads)
    for (auto k : {StageKind::Scores, StageKind::Scaled, StageKind::Masked, StageKind::Weights, StageKind::Context})
      bump(k, h, true);
  bump(StageKind::Concat, 0, false);
  if (s.use_w_o) {
    // T × d_v × d_out per head: on the GEMM backend, added in place
    for (std::size_t t = 0; t < heads.size(); ++t) {
      const int h = heads[t];
      block_product(change.rows.middleCols(ix(t) * dv, dv), s.W_o.middleRows(ix(h) * dv, dv), output_, true);
    }
    for (Index i = 0; i < T; ++i)
      out_age_[uz(i)] = static_cast<std::uint8_t>(std::min<int>(out_age_[uz(i)] + static_cast<int>(heads.size()), 255));
    // pinned output cells stay pinned
    const StageId oid{StageKind::Output, 0};
    for (auto it = pins_.lower_bound(PinKey{oid, 0, 0}); it != pins_.end() && it->first.stage == oid; ++it)
      if (it->first.row < output_.rows() && it->first.col < output_.cols()) output_(it->first.row, it->first.col) = it->second;
    refresh_aged_outputs();
  } else {
    for (Index i = 0; i < T; ++i) output_row(i);
  }
  bump(StageKind::Output, 0, false);
}

// Scores of head h after column c of Q (or K) changed from old_col: one
// column of Q_h·K_hᵀ's factors changed, so S_h moves by a rank-one product,
// ΔQ_c·K_cᵀ (or Q_c·ΔK_cᵀ), on the blocks computed so far (the others are
// computed whole when needed). This adds the product's factors to `shift`
// (head_block applies them, finish_shift the rest and the bound); false when
// they are not finite, and the caller computes the scores anew.
bool Engine::shift_factors(StageKind kind, int h, Index c, const Eigen::VectorXf& old_col, ScoreShift& shift) const {
  const HeadState& hs = heads_[uz(h)];
  const Index T = dims_.T, dk = dims_.d_k;
  const Matrix& P = kind == StageKind::Q ? Q_ : K_;
  const Matrix& other = kind == StageKind::Q ? K_ : Q_;
  // the same dimension of the head in the other factor (K's block is the K/V head's)
  const Index oc = (kind == StageKind::Q ? ix(kv(h)) : ix(h)) * dk + c % dk;
  // (NaN in a maximum would otherwise be dropped: Eigen's plain maxCoeff
  // skips it unless it comes first, so the checks below use PropagateNaN)
  ScoreShift::Pair pair;
  const Eigen::VectorXf delta = P.col(c) - old_col;
  pair.a = kind == StageKind::Q ? delta : Eigen::VectorXf(other.col(oc));  // S_ij += a_i·b_j
  pair.b = kind == StageKind::Q ? Eigen::VectorXf(other.col(oc)) : delta;
  pair.step = pair.a.size() > 0 && pair.b.size() > 0 ? pair.a.cwiseAbs().maxCoeff<Eigen::PropagateNaN>() *
                                                             pair.b.cwiseAbs().maxCoeff<Eigen::PropagateNaN>()
                                                       : 0.0f;
  if (!std::isfinite(pair.step) || T == 0) return false;
  if (shift.pairs.empty()) shift.blocks = hs.valid;  // (before the head pass computes any block the mask needs)
  shift.pairs.push_back(std::move(pair));
  shift.largest.resize(shift.pairs.size() * uz(nbr_), 0.0f);
  shift.finite.resize(shift.pairs.size() * uz(nbr_), 1);
  return true;
}

// Whether `shift` would break head h's bound (as finish_shift checks it)
// were its largest score what the last shift found: then the head pass
// would shift the scores only to compute them anew after it. (A guess — the
// largest score moves with every edit — that saved a twelfth of the time of
// random W_q edits: each head's budget lasts about eight of them.)
bool Engine::shift_breaks_bound(int h, const ScoreShift& shift) const {
  const HeadState& hs = heads_[uz(h)];
  const float largest = hs.score_largest;
  if (!(largest > 0.0f)) return false;  // not known yet: try
  float error = hs.score_error;
  for (const ScoreShift::Pair& pair : shift.pairs) error += kUnitRoundoff * (largest + pair.step);
  return !(error <= kScoreTolerance * largest);
}

// After the head pass shifted the blocks it read: the other computed blocks
// of head h (a causal row's keys past the diagonal, computed for showing),
// pins, and the bound. Each updated cell rounds by at most one unit roundoff
// of its value and of the product added; past kScoreTolerance of the largest
// score (or on a value that is not finite) this says no, and the caller
// computes the scores anew.
bool Engine::finish_shift(int h, ScoreShift& shift) {
  HeadState& hs = heads_[uz(h)];
  const Index T = dims_.T;
  std::vector<Index> rest;
  for (Index blk = 0; blk < nbr_ * nbc_; ++blk)
    if (shift.blocks[uz(blk)] && (blk % nbc_) * kBlock >= extent(blk / nbc_)) rest.push_back(blk);
  const std::size_t n_pairs = shift.pairs.size();
  const auto n = static_cast<long>(rest.size());
  for (std::size_t p = 0; p < n_pairs; ++p) {
    const ScoreShift::Pair& pair = shift.pairs[p];
    float largest = 0.0f;
    bool finite = true;
#pragma omp parallel for schedule(dynamic, 4) reduction(max : largest) reduction(&& : finite) if (rows_worth_threads(static_cast<double>(n), 2.0 * kBlock * kBlock))
    for (long t = 0; t < n; ++t) {
      const Index i0 = rest[uz(t)] / nbc_ * kBlock, j0 = rest[uz(t)] % nbc_ * kBlock;
      const Index rows = std::min(kBlock, T - i0), cols = std::min(kBlock, dims_.T_k - j0);
      bool nan = false;
      const float m = add_outer_product(&hs.S(i0, j0), hs.S.outerStride(), pair.a.data() + i0, pair.b.data() + j0,
                                        rows, cols, nan);
      finite = finite && !nan && std::isfinite(m);
      largest = std::max(largest, m);
    }
    shift.largest.push_back(largest);  // (read with the block rows' below)
    shift.finite.push_back(finite ? 1 : 0);
  }
  for (Index i = 0; i < T; ++i)
    if (row_pins_[uz(ix(h) * T + i)] & kPinScores) apply_row_pins(StageKind::Scores, h, i);
  float error = hs.score_error;
  for (std::size_t p = 0; p < n_pairs; ++p) {
    float largest = shift.largest[uz(ix(n_pairs) * nbr_) + p];
    bool finite = shift.finite[uz(ix(n_pairs) * nbr_) + p] != 0;
    for (Index bi = 0; bi < nbr_; ++bi) {
      largest = std::max(largest, shift.largest[p * uz(nbr_) + uz(bi)]);
      finite = finite && shift.finite[p * uz(nbr_) + uz(bi)] != 0;
    }
    const float grown = error + kUnitRoundoff * (largest + shift.pairs[p].step);
    if (finite) hs.score_largest = largest;
    if (!finite || !(grown <= kScoreTolerance * largest)) return false;
    error = grown;
  }
  hs.score_error = error;
  return true;
}

// A column of W_v (or a cell of b_v): one column of V; per head that reads
// it, one column of U (exactly, from the softmax state) and of concat, and
// the output by a rank-one product.
void Engine::edit_v_column(Index c) {
  const Scenario& s = *scenario_;
  const Index dv = dims_.d_v;
  const int block = static_cast<int>(c / dv);
  const Index cl = c - ix(block) * dv;
  column_product(s.kv_source().get(), s.W_v.col(c), V_.col(c));
  if (s.use_bias) V_.col(c).array() += s.b_v(0, c);
  const StageId vid{StageKind::V, 0};
  for (auto it = pins_.lower_bound(PinKey{vid, 0, 0}); it != pins_.end() && it->first.stage == vid; ++it)
    if (it->first.col == c) V_(it->first.row, c) = it->second;
  bump_block(StageKind::V, block, false);
  for (int h : heads_of_block(StageKind::V, block)) edit_context_column(h, ix(h) * dv + cl, V_.col(c));
  if (s.use_w_o) refresh_aged_outputs();
  bump(StageKind::Output, 0, false);
}

// Column c (of head h's block) of U and concat after the values it averages
// (vcol) changed; the output by its change in concat.
void Engine::edit_context_column(int h, Index c, const Eigen::Ref<const Eigen::VectorXf>& vcol) {
  const Scenario& s = *scenario_;
  const Index T = dims_.T, dv = dims_.d_v, dout = dims_.d_out;
  const Index cl = c - ix(h) * dv;
  HeadState& hs = heads_[uz(h)];
  const Eigen::VectorXf old_u = U_.col(c), old_concat = concat_.col(c);
  const auto n_rows = static_cast<long>(T);
#pragma omp parallel for schedule(dynamic, 16) if (rows_worth_threads(static_cast<double>(n_rows), 4.0 * static_cast<double>(dv + dout)))
  for (long li = 0; li < n_rows; ++li) {
    const Index i = li;
    float* x = scratch_a(dims_.T_k).data();
    float* e = scratch_b(dims_.T_k).data();
    if (hs.direct[uz(i)]) {
      weights_row(h, i, e, x);
      U_(i, c) = Eigen::Map<const Eigen::VectorXf>(e, dims_.T_k).dot(vcol);
    } else {
      const Index n = scaled_masked_prefix(h, i, extent(i / kBlock), x);
      exp_shifted(x, hs.offset[uz(i)], e, n);
      U_(i, c) = n > 0 ? Eigen::Map<const Eigen::VectorXf>(e, n).dot(vcol.head(n)) : 0.0f;
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
      if (it->first.row < output_.rows() && it->first.col < output_.cols()) output_(it->first.row, it->first.col) = it->second;
    // rows whose R drifted too far
    std::vector<Index> stale;
    for (Index i = 0; i < T; ++i)
      if (!hs.direct[uz(i)] && hs.drift[uz(i)] > kDriftLimit) stale.push_back(i);
    recompute_rows(h, stale);
    output_rows(stale);
  } else {
    // without W_o the output is concat (plus b_o): this one column
    edit_output_column(c);
  }
}

// A cell of W_o or b_o: one column of the output.
void Engine::edit_output_column(Index c) {
  const Scenario& s = *scenario_;
  if (s.use_w_o)
    column_product(concat_, s.W_o.col(c), output_.col(c));
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
  if (mask_.get()(i, j) == v) return;
  const Index b = (i / kBlock) * nbc_ + j / kBlock;
  mask_block_count_[uz(b)] += v != 0.0f ? 1 : -1;
  mask_.edit()(i, j) = v;  // copied first if a read-only copy shares it
  generated_mask_.reset();
  const int H = dims_.heads;
  if (v != 0.0f)
    for (int h = 0; h < H; ++h)
      if (!heads_[uz(h)].valid[uz(b)]) compute_block(h, i / kBlock, j / kBlock);
#pragma omp parallel for schedule(dynamic) if (rows_worth_threads(H, 2.0 * static_cast<double>(dims_.T_k * (dims_.d_k + dims_.d_v))))
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
                     : Q_.row(r).segment(ix(e.head) * dk, dk).dot(K_.row(c).segment(ix(kv(e.head)) * dk, dk));
    bump(StageKind::Scores, e.head, false);
  }
  switch (e.kind) {
    case StageKind::Q: case StageKind::K: case StageKind::V: {
      const int block = static_cast<int>(c / (e.kind == StageKind::V ? dv : dk));
      const std::vector<int> heads = heads_of_block(e.kind, block);
      const RowVector v_old = e.kind == StageKind::Q ? RowVector() : RowVector(V_.row(r));
      recompute_projection_cell(e.kind, r, c);
      bump_block(e.kind, block, false);
      if (scenario_->use_w_o && e.kind != StageKind::Q)
        for (int g = 0; g < dims_.heads; ++g)
          if (!r_valid_[uz(g)]) build_r(g);
      edit_rows(heads, r, e.kind == StageKind::Q, e.kind == StageKind::K, e.kind == StageKind::V, v_old,
                !scenario_->cross());
      for (int h : heads) {
        for (auto k : {StageKind::Scaled, StageKind::Masked}) {
          if (e.kind == StageKind::Q) note_row(k, h, r);
          if (e.kind == StageKind::K) note_col(k, h, r);
        }
        for (auto k : {StageKind::Scores, StageKind::Scaled, StageKind::Masked, StageKind::Weights, StageKind::Context})
          if (e.kind != StageKind::V || k == StageKind::Context) bump(k, h, false);
      }
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

}  // namespace attention_lab
