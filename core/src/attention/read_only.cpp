// A read-only copy of the engine (Compare's snapshot): what it keeps, and
// what it computes again from its scenario when a stage is read. (Q and K
// before a q/k norm, Qp_ and Kp_, are kept.)
//
// After an edit of X the document replaces X, Q, K, V, the contexts and the
// output, so a copy that kept all of them would keep about a fifth of the
// engine. Q, K and V are the part it can get back cheaply: one head's blocks
// are three T × d_model by d_model × d_k products (about 2 ms at T=1024,
// d_model=768, as much as the head's scores), so the copy projects them when
// a stage of that head is read, and keeps only the contexts, the output, the
// mask and each row's softmax state. Its values then agree with what the
// document showed to within rounding (a product d_k wide may sum in another
// order than one as wide as Q), which Compare leaves out.

#include "attention/engine_internal.h"
#include "attention_lab/row_norm.h"
#include "attention_lab/stage_registry.h"

#include <algorithm>

namespace attention_lab {

using namespace engine_detail;

namespace {

bool is_projection(StageKind storage) {
  return storage == StageKind::Q || storage == StageKind::K || storage == StageKind::V ||
         storage == StageKind::QUnrotated || storage == StageKind::KUnrotated;
}

}  // namespace

Engine Engine::read_only_copy() const {
  // What the copy does not keep is set aside while the engine is copied, so
  // the copy never holds it even for a moment (the members are mutable for
  // this, and stage() fills heads_ and cache_): copying R alone, 36 MiB at
  // T=1024 once an edit built it, and dropping it made Ctrl+T take 150 ms.
  std::vector<Matrix> scores(heads_.size());
  std::vector<Derived> cache;
  Matrix* projections[] = {&Q_, &K_, &V_, &Qu_, &Ku_, &U_, &R_};
  Matrix set_aside[std::size(projections)];
  for (std::size_t h = 0; h < heads_.size(); ++h) scores[h].swap(heads_[h].S);
  cache.swap(cache_);
  for (std::size_t k = 0; k < std::size(projections); ++k) set_aside[k].swap(*projections[k]);
  struct PutBack {
    const Engine& e;
    std::vector<Matrix>& scores;
    std::vector<Derived>& cache;
    Matrix* const* projections;
    Matrix* set_aside;
    std::size_t count;
    ~PutBack() {
      for (std::size_t h = 0; h < e.heads_.size(); ++h) scores[h].swap(e.heads_[h].S);
      cache.swap(e.cache_);
      for (std::size_t k = 0; k < count; ++k) set_aside[k].swap(*projections[k]);
    }
  } put_back{*this, scores, cache, projections, set_aside, std::size(projections)};
  Engine copy(*this);
  copy.read_only_ = true;
  copy.resident_ = -1;
  copy.on_demand_ = OnDemand{};
  for (auto& hs : copy.heads_) std::fill(hs.valid.begin(), hs.valid.end(), std::uint8_t{0});
  std::fill(copy.r_valid_.begin(), copy.r_valid_.end(), std::uint8_t{0});
  copy.edits_.clear();
  return copy;
}

void Engine::resident_scores(int h) const {
  if (!read_only_ || resident_ == h) return;
  release_scores();
  HeadState& hs = heads_[uz(h)];
  hs.S.resize(dims_.T, dims_.T_k);
  advise_huge_pages(hs.S);
  try {
    complete_scores(h);  // every block, pins laid, from the head's Q and K projected again
  } catch (...) {  // (an allocation failed): nothing half-computed is taken for the head's scores
    hs.S = Matrix();
    std::fill(hs.valid.begin(), hs.valid.end(), std::uint8_t{0});
    throw;
  }
  resident_ = h;
}

void Engine::release_scores() const {
  if (!read_only_ || resident_ < 0) return;
  HeadState& hs = heads_[uz(resident_)];
  hs.S = Matrix();
  std::fill(hs.valid.begin(), hs.valid.end(), std::uint8_t{0});
  resident_ = -1;
}

void Engine::project_columns(StageKind kind, Index first, Index width, bool turn, Matrix& out,
                             Matrix* before) const {
  const Matrix& source = projection_source(kind);
  const Index T = source.rows();
  // a q/k norm over the whole row needs every column of it
  const bool whole = normalizes(kind) && qk_norm_.scope == QkNormScope::Whole;
  const Index f = whole ? 0 : first, w = whole ? projection_cols(kind) : width;
  Matrix row_wide;
  Matrix& m = whole ? row_wide : out;
  m.resize(T, w);
  block_product(source, weights_of(kind).middleCols(f, w), m);  // compute_projection's product
  if (scenario_->use_bias) m.rowwise() += bias_of(kind).row(0).segment(f, w);
  if (normalizes(kind)) {  // finish_rows' norm, in place
    const float* gain = (kind == StageKind::Q ? scenario_->q_norm : scenario_->k_norm).get().data();
    const Index n = whole ? w : dims_.d_k;
    for (Index r = 0; r < T; ++r)
      for (Index c0 = 0; c0 < w; c0 += n) rms_normalize(m.row(r).data() + c0, m.row(r).data() + c0, gain, n, qk_norm_.eps);
    if (whole) out = row_wide.middleCols(first, width);
  }
  if (rotates(kind)) {
    if (before) *before = out;
    if (!turn) return;  // before RoPE: no pins (they are laid on what enters the scores)
    const Index dk = dims_.d_k;
    for (Index r = 0; r < T; ++r)
      for (Index c0 = 0; c0 < width; c0 += dk) {
        float* row = out.row(r).data() + c0;
        rotate_head(row, row, rope_cos_.row(r).data(), rope_sin_.row(r).data(), dk, dims_.rotary_dims(), rope_.pairs);  // pairwise: in place
      }
  }
  lay_pins(kind, first, width, out, first);
}

void Engine::resident_projections(int h) const {
  if (!read_only_ || on_demand_.head == h) return;
  OnDemand& od = on_demand_;
  const Index dk = dims_.d_k, dv = dims_.d_v;
  od.head = -1;  // until every block is in place
  project_columns(StageKind::Q, ix(h) * dk, dk, true, od.q, rope_on_ ? &od.qu : nullptr);
  if (od.kv_block != kv(h)) {  // grouped-query heads of one K/V head share its blocks
    od.kv_block = -1;
    project_columns(StageKind::K, ix(kv(h)) * dk, dk, true, od.k, rope_on_ ? &od.ku : nullptr);
    project_columns(StageKind::V, ix(kv(h)) * dv, dv, true, od.v, nullptr);
    od.kv_block = kv(h);
  }
  if (!rope_on_) {
    od.qu = Matrix();
    od.ku = Matrix();
  }
  od.head = h;
}

MatrixView Engine::projection_on_demand(StageId id) const {
  const StageSpec& sp = spec(id.kind);
  // (Q_proj and K_proj come here only without a q/k norm: then they are Q and K before RoPE)
  const bool before_rope = sp.storage == StageKind::QUnrotated || sp.storage == StageKind::KUnrotated ||
                           sp.storage == StageKind::QProjected || sp.storage == StageKind::KProjected;
  const StageKind kind = sp.storage == StageKind::QUnrotated || sp.storage == StageKind::QProjected   ? StageKind::Q
                         : sp.storage == StageKind::KUnrotated || sp.storage == StageKind::KProjected ? StageKind::K
                                                                                                      : sp.storage;
  OnDemand& od = on_demand_;
  if (sp.view == ViewKind::HeadSlice || sp.view == ViewKind::KVSlice) {
    release_whole_projection();
    resident_projections(id.head);
    const bool unturned = before_rope && rope_on_;
    return kind == StageKind::Q ? (unturned ? od.qu : od.q) : kind == StageKind::K ? (unturned ? od.ku : od.k) : od.v;
  }
  if (od.whole_kind != sp.storage) {
    od.whole_kind.reset();
    project_columns(kind, 0, projection_cols(kind), !before_rope, od.whole, nullptr);
    od.whole_kind = sp.storage;
  }
  return od.whole;
}

void Engine::release_whole_projection() const {
  on_demand_.whole_kind.reset();
  on_demand_.whole = Matrix();
}

bool Engine::projected_on_demand(StageKind kind) const {
  const StageKind storage = spec(kind).storage;
  // Q and K before a q/k norm are kept; without the norm they are Q and K before RoPE
  const bool before_norm = storage == StageKind::QProjected || storage == StageKind::KProjected;
  return read_only_ && (is_projection(storage) || (before_norm && !norm_on_));
}

}  // namespace attention_lab
