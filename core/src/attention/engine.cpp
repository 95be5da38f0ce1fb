// The engine: what is stale after an edit, the order of the work, storage and the mask (see engine.h).

#include "attention/engine_internal.h"
#include "attention_lab/softmax.h"
#include "attention_lab/stage_registry.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attention_lab {

using namespace engine_detail;

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
  if (read_only_) {  // no scores and no U to update: start from scratch
    read_only_ = false;
    resident_ = -1;
    on_demand_ = OnDemand{};
    dims_ = Dims{};
  }
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
  const double divisor = score_divisor(s);
  const double inverse = 1.0 / divisor;
  // A temperature near 0: the factor would be ∞, and 0·∞ is NaN where x/tiny is 0.
  use_div_ = !(inverse <= static_cast<double>(std::numeric_limits<float>::max()));
  scale_mul_ = static_cast<float>(inverse);
  softcap_ = s.softcap;
  scale_div_ = static_cast<float>(divisor);
  sinks_.clear();
  if (s.use_sinks)
    for (Eigen::Index h = 0; h < s.sinks.cols(); ++h) sinks_.push_back(s.sinks(0, h));
  alibi_.clear();
  if (s.alibi)
    for (double m : alibi_slopes(dims_.heads)) alibi_.push_back(static_cast<float>(m));
  refresh_rope();
  refresh_qk_norm();
}

void Engine::add_position_bias(int h, Index i, float* x, Index n) const {
  if (alibi_.empty()) return;
  const float m = alibi_[uz(h)];
  // position_bias's product, then the sum, as masked_value rounds them (a
  // compiler that contracts would fuse `x += m·(j − i)` written in one statement)
  for (Index j = 0; j < n; ++j) {
    const float bias = m * static_cast<float>(j - i);
    x[j] += bias;
  }
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
  if (!mask_is_current()) load_mask();
  const double T = dims_.T, Tk = dims_.T_k, hk = dims_.heads * dims_.d_k, hv = dims_.heads * dims_.d_v;
  const double total = 2.0 * T * dims_.d_model * (2.0 * hk + hv) + 2.0 * T * Tk * (hk + hv) +
                       (scenario_->use_w_o ? 2.0 * T * hv * dims_.d_out : 0.0);
  Work work(control_.p, total);
  for (const StageSpec& sp : all_stages())  // the inputs: the scenario's new values
    if (sp.input) bump(sp.kind, 0, true);
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
  // K and V (and their weights and biases) name a K/V head: every query head that reads it.
  auto mark_kv = [&](StageKind kind, int kv_head) {
    for (int h = 0; h < H; ++h)
      if (kv_head < 0 || kv(h) == kv_head) dirty[uz(h)][idx(kind)] = true;
  };

  const bool whole_norm = norm_on_ && qk_norm_.scope == QkNormScope::Whole;
  // Map what changed onto the computed stages that read it directly; the
  // propagation below takes care of everything further downstream.
  for (const auto& e : what.entries()) {
    const StageKind kind = e.kind;
    const int h = e.head < H ? e.head : -1;
    switch (kind) {
      case StageKind::X:  // with cross-attention X feeds only Q
        bump(kind, 0, true);
        mark(StageKind::Q, -1);
        if (!scenario_->cross()) mark(StageKind::K, -1), mark(StageKind::V, -1);
        break;
      case StageKind::X_kv:
        bump(kind, 0, true);
        mark(StageKind::K, -1), mark(StageKind::V, -1);
        break;
      // (a q/k norm over the whole row: a column of W moves every head's block)
      case StageKind::W_q: case StageKind::b_q: bump(kind, 0, true); mark(StageKind::Q, whole_norm ? -1 : h); break;
      case StageKind::W_k: case StageKind::b_k: bump(kind, 0, true); mark_kv(StageKind::K, whole_norm ? -1 : h); break;
      case StageKind::QNorm: bump(kind, 0, true); mark(StageKind::Q, -1); break;  // its gains serve every head
      case StageKind::KNorm: bump(kind, 0, true); mark_kv(StageKind::K, -1); break;
      case StageKind::W_v: case StageKind::b_v: bump(kind, 0, true); mark_kv(StageKind::V, h); break;
      case StageKind::W_o:
        bump(kind, 0, true);
        output_dirty = true;
        std::fill(r_valid_.begin(), r_valid_.end(), std::uint8_t{0});
        break;
      case StageKind::b_o: bump(kind, 0, true); output_dirty = true; break;
      case StageKind::Mask: mask_dirty = true; break;
      case StageKind::Sinks: bump(kind, 0, true); mark(StageKind::Weights, h); break;  // that head's softmax
      case StageKind::Q: case StageKind::HeadQ: mark(StageKind::Q, h); break;
      case StageKind::K: mark_kv(StageKind::K, h); break;
      case StageKind::V: mark_kv(StageKind::V, h); break;
      case StageKind::HeadK: mark_kv(StageKind::K, h < 0 ? -1 : kv(h)); break;
      case StageKind::HeadV: mark_kv(StageKind::V, h < 0 ? -1 : kv(h)); break;
      case StageKind::Concat: mark(StageKind::Context, h); break;
      case StageKind::Output: output_dirty = true; break;
      default: mark(kind, h); break;
    }
  }

  bool any_head = false;
  for (const auto& d : dirty)
    for (bool b : d) any_head = any_head || b;

  if (mask_dirty) {
    const SharedMatrix old = mask_;  // load_mask gives mask_ a buffer of its own
    load_mask();
    // A few rows changed (undo of a toggle, a causal mask made custom): only
    // those rows of every head.
    std::vector<Index> rows;
    for (Index i = 0; i < mask_.rows(); ++i)
      if (old.rows() != mask_.rows() || mask_.row(i) != old.row(i)) rows.push_back(i);
    bump(StageKind::Mask, 0, true);
    if (!any_head && !output_dirty && ix(rows.size()) <= std::max<Index>(4, dims_.T / 16)) {
      for (int h = 0; h < H; ++h) ensure_blocks_for_mask(h);
      const double per_row = 2.0 * static_cast<double>(dims_.T_k * (dims_.d_k + dims_.d_v));
#pragma omp parallel for schedule(dynamic) if (rows_worth_threads(static_cast<double>(ix(H) * ix(rows.size())), per_row))
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
    const double T = dims_.T, Tk = dims_.T_k;
    total += (d[idx(StageKind::Scores)] ? 2.0 * T * Tk * dims_.d_k : 0.0) +
             (d[idx(StageKind::Context)] ? 2.0 * T * Tk * dims_.d_v : 0.0);
  }
  Work work(control_.p, total + 2.0 * dims_.T * dims_.heads * dims_.d_v * dims_.d_out);

  for (auto k : {StageKind::Q, StageKind::K, StageKind::V}) {
    bool all_heads = H > 0;
    for (const auto& d : dirty) all_heads = all_heads && d[idx(k)];
    if (all_heads) {
      compute_projection(k, -1, &work);
    } else {
      // by column block: a K/V head once, however many query heads read it
      std::vector<std::uint8_t> done(uz(H), 0);
      for (int h = 0; h < H; ++h) {
        const int block = k == StageKind::Q ? h : kv(h);
        if (dirty[uz(h)][idx(k)] && !done[uz(block)]) {
          done[uz(block)] = 1;
          compute_projection(k, block, &work);
        }
      }
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
    // A head pass recomputes every row's softmax state from scratch, so a
    // row that edits had updated incrementally may round its weights anew
    // even when only V changed: copies of them are stale.
    if (!d[idx(StageKind::Weights)] && d[idx(StageKind::Context)]) bump(StageKind::Weights, h, true);
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
      case StageKind::X: case StageKind::X_kv:
        bump(e.kind, 0, false);
        edit_x_row(e.kind, e.row, e.col, e.old_value);
        return true;
      case StageKind::W_q: case StageKind::b_q:
        if (normalizes(StageKind::Q)) return false;  // the column moves its head's mean square: head-level
        bump(e.kind, 0, false);
        edit_qk_column(StageKind::Q, e.col);
        return true;
      case StageKind::W_k: case StageKind::b_k:
        if (normalizes(StageKind::K)) return false;
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
      case StageKind::Sinks:
        return false;  // a sink changes every row of its head: head-level
      case StageKind::QNorm: case StageKind::KNorm:
        return false;  // a gain changes one column of every head's Q or K: head-level
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
  const Index T = dims_.T, Tk = dims_.T_k;
  Q_.resize(T, projection_cols(StageKind::Q));
  K_.resize(Tk, projection_cols(StageKind::K));
  V_.resize(Tk, projection_cols(StageKind::V));
  Qu_.resize(0, 0);  // made (at these sizes) by the first rotation or norm
  Ku_.resize(0, 0);
  Qp_.resize(0, 0);
  Kp_.resize(0, 0);
  U_.resize(T, ix(dims_.heads * dims_.d_v));
  concat_.resize(T, ix(dims_.heads * dims_.d_v));
  output_.resize(T, ix(dims_.d_out));
  R_.resize(0, 0);
  r_valid_.assign(uz(dims_.heads), 0);
  nbr_ = (T + kBlock - 1) / kBlock;
  nbc_ = (Tk + kBlock - 1) / kBlock;
  heads_.clear();
  heads_.resize(uz(dims_.heads));
  for (auto& hs : heads_) {
    hs.S.resize(T, Tk);
    advise_huge_pages(hs.S);
    hs.S.setZero();  // blocks not computed yet hold 0, never garbage
    hs.valid.assign(uz(nbr_ * nbc_), 0);
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
  proj_err_[0].assign(uz(T), 0.0f);  // rows of Q
  proj_err_[1].assign(uz(Tk), 0.0f);  // rows of K and V
  proj_err_[2].assign(uz(Tk), 0.0f);
  versions_.assign(static_cast<std::size_t>(std::max(dims_.heads, 1)), {});
  cache_.clear();
}

// The mask the scenario applies (Scenario::effective_mask), written in place.
void Engine::load_mask() {
  const Scenario& s = *scenario_;
  const Index T = dims_.T, Tk = dims_.T_k;
  // A new buffer, never written in place: a read-only copy (Compare) may share the old one.
  Matrix m(T, Tk);
  advise_huge_pages(m);
  switch (s.mask_kind) {
    case MaskKind::None: m.setOnes(); break;
    case MaskKind::Causal:
      m.setZero();
      m.triangularView<Eigen::Lower>().setOnes();  // query r may see keys 0…r
      break;
    case MaskKind::Window: m = s.effective_mask(); break;
    case MaskKind::Custom: m = s.custom_mask.get(); break;  // a copy: mask cell edits write it
  }
  mask_ = std::move(m);
  mask_shape_ = shape_of(s.mask_kind);
  generated_mask_.reset();
  if (s.mask_kind == MaskKind::None || s.mask_kind == MaskKind::Causal) generated_mask_ = s.mask_kind;
  mask_block_count_.assign(uz(nbr_ * nbc_), 0);
  for (Index i = 0; i < T; ++i) {
    const Index bi = i / kBlock;
    for (Index bj = 0; bj < nbc_; ++bj) {
      const Index j0 = bj * kBlock, w = std::min(kBlock, Tk - j0);
      mask_block_count_[uz(bi * nbc_ + bj)] += static_cast<int>((mask_.row(i).segment(j0, w).array() != 0.0f).count());
    }
  }
}

// mask_ holds the scenario's no-mask or causal mask of this size, unedited
// (building it again was 3 % of a full forward at T = 1024).
bool Engine::mask_is_current() const {
  return generated_mask_ && *generated_mask_ == scenario_->mask_kind && mask_.rows() == dims_.T &&
         mask_.cols() == dims_.T_k && mask_block_count_.size() == uz(nbr_ * nbc_);
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
  for (Index bj = nbc_ - 1; bj >= 0; --bj)
    if (mask_block_count_[uz(bi * nbc_ + bj)] > 0) return std::min(ix(dims_.T_k), (bj + 1) * kBlock);
  return 0;
}

}  // namespace attention_lab
