// The engine's values: masked and weights rows, pins, warnings, versions, and the derived-stage cache behind stage().

#include "attention/engine_internal.h"
#include "attention_lab/softmax.h"
#include "attention_lab/stage_registry.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <atomic>

namespace attention_lab {

using namespace engine_detail;

// [SECTION] Values

bool Engine::row_is_direct(int h, Index i) const { return heads_[uz(h)].direct[uz(i)] != 0; }

float Engine::masked_value(int h, Index i, Index j) const {
  const auto& pins = pins_;
  if (row_pins_[uz(ix(h) * dims_.T + i)] & kPinScaledMasked) {
    const int ri = static_cast<int>(i), rj = static_cast<int>(j);
    if (auto it = pins.find(PinKey{StageId{StageKind::Masked, h}, ri, rj}); it != pins.end()) return it->second;
    if (!allowed(i, j)) return -kInf;
    if (auto it = pins.find(PinKey{StageId{StageKind::Scaled, h}, ri, rj}); it != pins.end())
      return cap(it->second) + position_bias(h, i, j);
  } else if (!allowed(i, j)) {
    return -kInf;
  }
  return cap(scale_value(heads_[uz(h)].S(i, j))) + position_bias(h, i, j);
}

// Row i of masked_h (all T_k columns), pins included.
void Engine::masked_row(int h, Index i, float* x) const {
  const Index T = dims_.T_k;  // the row's length: one entry per key
  const float* s = heads_[uz(h)].S.row(i).data();
  const float* m = mask_.row(i).data();
  if (use_div_)
    for (Index j = 0; j < T; ++j) x[j] = s[j] / scale_div_;
  else
    for (Index j = 0; j < T; ++j) x[j] = s[j] * scale_mul_;
  if (row_pins_[uz(ix(h) * dims_.T + i)] & kPinScaledMasked) {
    const auto& pins = pins_;
    const StageId sid{StageKind::Scaled, h};
    for (auto it = pins.lower_bound(PinKey{sid, static_cast<int>(i), 0});
         it != pins.end() && it->first.stage == sid && it->first.row == i; ++it)
      x[it->first.col] = it->second;
    cap_row(x, T);
    add_position_bias(h, i, x, T);
    for (Index j = 0; j < T; ++j) x[j] = m[j] != 0.0f ? x[j] : -kInf;
    const StageId mid{StageKind::Masked, h};
    for (auto it = pins.lower_bound(PinKey{mid, static_cast<int>(i), 0});
         it != pins.end() && it->first.stage == mid && it->first.row == i; ++it)
      x[it->first.col] = it->second;
  } else {
    cap_row(x, T);
    add_position_bias(h, i, x, T);
    for (Index j = 0; j < T; ++j) x[j] = m[j] != 0.0f ? x[j] : -kInf;
  }
}

// Row i's e^(masked − m) (not a direct row) into e, its masked values into x;
// returns how many entries the row has before the mask ends it.
Index Engine::masked_exps(int h, Index i, float* x, float* e) const {
  const Index n = scaled_masked_prefix(h, i, extent(i / kBlock), x);
  exp_shifted(x, heads_[uz(h)].offset[uz(i)], e, n);
  return n;
}

// w = e/Z over the row's first n entries, 0 after them (e may be w).
void Engine::scale_exps(int h, Index i, const float* e, float* w, Index n) const {
  const float scale = heads_[uz(h)].cscale[uz(i)];
  for (Index j = 0; j < n; ++j) w[j] = e[j] * scale;
  std::fill(w + n, w + dims_.T_k, 0.0f);
}

// Row i of weights_h as shown (all T_k columns, pins included); x is scratch.
// Records the row's issue.
void Engine::weights_row(int h, Index i, float* w, float* x) const {
  const Index T = dims_.T_k;  // the row's length
  auto& hs = heads_[uz(h)];
  if (!hs.direct[uz(i)]) {
    // e^(masked − m)/Z, the same arithmetic the context was computed with
    // (a row that is not direct has no pins on scaled or masked)
    scale_exps(h, i, w, w, masked_exps(h, i, x, w));
    return;
  }
  masked_row(h, i, x);
  float share = 0.0f;
  hs.issue[uz(i)] = softmax_row_with_sink(Eigen::Map<const RowVector>(x, T), sink(h), Eigen::Map<RowVector>(w, T), share);
  if (row_pins_[uz(ix(h) * dims_.T + i)] & kPinWeights) {
    const auto& pins = pins_;
    const StageId id{StageKind::Weights, h};
    for (auto it = pins.lower_bound(PinKey{id, static_cast<int>(i), 0});
         it != pins.end() && it->first.stage == id && it->first.row == i; ++it)
      w[it->first.col] = it->second;
  }
}

// Lays pins over a whole stage (Q, K, V: one column block — a head, or a K/V
// head — or all of them when head < 0; output).
void Engine::apply_pins(StageKind kind, int head) {
  Matrix& target = kind == StageKind::Output ? output_ : projection(kind);
  Index first = 0, width = target.cols();
  if (head >= 0 && kind != StageKind::Output) {
    width = ix(kind == StageKind::V ? dims_.d_v : dims_.d_k);
    first = ix(head) * width;
  }
  lay_pins(kind, first, width, target, 0);
}

void Engine::lay_pins(StageKind kind, Index first, Index width, Matrix& target, Index shift) const {
  const StageId id{kind, 0};
  for (auto it = pins_.lower_bound(PinKey{id, 0, 0}); it != pins_.end() && it->first.stage == id; ++it) {
    const Index r = it->first.row, c = it->first.col;
    if (r < target.rows() && c >= first && c < first + width) target(r, c - shift) = it->second;
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
    case StageKind::Scaled: case StageKind::Capped: return 0;  // the cap changes where the scaled scores do
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

// The sink's share of row i: e^(sink − m)/Z from the row's softmax state, or
// for a direct row the softmax computed again from its masked row.
float Engine::sink_share(int h, Index i) const {
  const float sk = sink(h);
  if (!(sk > -kInf)) return 0.0f;
  const auto& hs = heads_[uz(h)];
  if (!hs.direct[uz(i)]) return static_cast<float>(sink_term(sk, hs.offset[uz(i)])) * hs.cscale[uz(i)];
  const Index T = dims_.T_k;
  float* x = scratch_a(T).data();
  float* w = scratch_b(T).data();
  masked_row(h, i, x);
  float share = 0.0f;
  softmax_row_with_sink(Eigen::Map<const RowVector>(x, T), sk, Eigen::Map<RowVector>(w, T), share);
  return share;
}

// [SECTION] Access

// Row i of scaled, masked or weights of a head, as stage() shows it.
void Engine::fill_derived_row(StageId id, Matrix& m, Index i) const { fill_derived_row(id, i, m.row(i).data()); }

void Engine::fill_derived_row(StageId id, Index i, float* out) const {
  const Index T = dims_.T_k;  // the row's length
  switch (id.kind) {
    case StageKind::Scaled: case StageKind::Capped: {
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
      if (id.kind == StageKind::Capped) cap_row(out, T);
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
// Calls row(i) for every row of a derived copy that changed since `since`
// (every row with `whole`), on OpenMP's threads when there are enough:
// each row costs about 4·T_k operations.
template <typename Row>
void Engine::each_changed_row(const Changes& c, bool whole, std::uint64_t since, Index T, Index Tk, Row&& row) {
  const auto n = static_cast<long>(T);
  long stale = 0;
  for (long i = 0; i < n && !whole; ++i) stale += c.rows[uz(i)] > since ? 1 : 0;
#pragma omp parallel for schedule(dynamic, 32) if ((whole || stale > 16) && rows_worth_threads(static_cast<double>(whole ? n : stale), 4.0 * static_cast<double>(Tk)))
  for (long i = 0; i < n; ++i)
    if (whole || c.rows[uz(i)] > since) row(static_cast<Index>(i));
}

void Engine::patch_derived(Derived& d) const {
  const int h = d.id.head;
  const Index T = dims_.T, Tk = dims_.T_k;
  const std::uint64_t since = d.version;
  const Changes& c = heads_[uz(h)].changes[changes_of(d.id.kind)];
  const bool whole = d.m.rows() != T || d.m.cols() != Tk || since < c.full || since == 0;
  if (d.m.rows() != T || d.m.cols() != Tk) {
    d.m.resize(T, Tk);
    advise_huge_pages(d.m);
  }
  if (d.id.kind == StageKind::Scaled || d.id.kind == StageKind::Capped) complete_scores(h);
  if (d.id.kind == StageKind::Weights && !read_only_) {
    patch_weights(d, whole, since);
    return;
  }
  each_changed_row(c, whole, since, T, Tk, [&](Index i) { fill_derived_row(d.id, d.m, i); });
  if (whole) return;
  for (const auto& [v, col] : c.cols) {
    if (v <= since) continue;
    for (Index i = 0; i < T; ++i) {
      if (c.rows[uz(i)] > since) continue;  // the whole row is fresh already
      switch (d.id.kind) {
        case StageKind::Scaled: case StageKind::Capped: {
          const auto it = pins_.find(PinKey{StageId{StageKind::Scaled, h}, static_cast<int>(i), static_cast<int>(col)});
          const float scaled = it != pins_.end() ? it->second : scale_value(heads_[uz(h)].S(i, col));
          d.m(i, col) = d.id.kind == StageKind::Capped ? cap(scaled) : scaled;
          break;
        }
        case StageKind::Masked: d.m(i, col) = masked_value(h, i, col); break;
        default: break;  // weights change by rows
      }
    }
  }
}

// The weights copy `d` brought up to date (see KeptExps): rows that changed
// since `since` (all with `whole`), each from its kept exponentials where
// they still hold, else computed whole.
void Engine::patch_weights(Derived& d, bool whole, std::uint64_t since) const {
  const int h = d.id.head;
  const Index T = dims_.T, Tk = dims_.T_k;
  const HeadState& hs = heads_[uz(h)];
  const Changes& c = hs.changes[changes_of(StageKind::Weights)];
  const Changes& masked = hs.changes[changes_of(StageKind::Masked)];
  KeptExps& kept = d.exps;
  if (kept.e.rows() != T || kept.e.cols() != Tk) {
    kept.e.resize(T, Tk);
    advise_huge_pages(kept.e);
    kept.offset.assign(uz(T), 0.0f);
    kept.length.assign(uz(T), -1);
  }
  // The columns of masked that moved since the copy was made, when masked
  // lists them all (else no row's exponentials can be trusted).
  const bool listed = !whole && masked.full <= since;
  std::vector<Index> moved;
  if (listed)
    for (const auto& [v, col] : masked.cols)
      if (v > since) moved.push_back(col);
  std::sort(moved.begin(), moved.end());  // (a column edited twice is listed twice)
  moved.erase(std::unique(moved.begin(), moved.end()), moved.end());
  each_changed_row(c, whole, since, T, Tk, [&](Index i) {
    weights_row_kept(h, i, d.m.row(i).data(), kept, listed && masked.rows[uz(i)] <= since ? &moved : nullptr);
  });
}

// Row i of head h's weights into w, as weights_row computes it. With
// `moved` (the columns where row i's masked values may have changed; the
// rest did not), from the row's kept exponentials when its offset and
// length are those they were taken with: those columns' exponentials again,
// then one multiply per entry. Otherwise computed whole, the exponentials kept.
void Engine::weights_row_kept(int h, Index i, float* w, KeptExps& kept, const std::vector<Index>* moved) const {
  const HeadState& hs = heads_[uz(h)];
  if (hs.direct[uz(i)]) {
    kept.length[uz(i)] = -1;
    weights_row(h, i, w, scratch_a(dims_.T_k).data());
    return;
  }
  float* e = kept.e.row(i).data();
  const float offset = hs.offset[uz(i)];
  const Index n = prefix_length(i, extent(i / kBlock));
  const bool holds = moved && kept.length[uz(i)] == n &&
                     std::memcmp(&kept.offset[uz(i)], &offset, sizeof offset) == 0;  // the very float
  if (holds) {
    for (Index j : *moved)
      if (j < n) e[j] = fast_exp(masked_value(h, i, j) - offset);  // scaled_masked_prefix's value of that column
  } else {
    masked_exps(h, i, w, e);  // weights_row's arithmetic, the exponentials kept on the way
    kept.offset[uz(i)] = offset;
    kept.length[uz(i)] = n;
  }
  scale_exps(h, i, e, w, n);
}

std::string Engine::not_held(StageId id) const {
  if (id.role != Role::Value)
    return to_string(id) + ": the engine holds the values of one layer; gradients come from the backward pass of a loss";
  if (id.layer != 0)
    return to_string(id) + ": the engine computes one layer (layer 0), not layer " + std::to_string(id.layer);
  if (is_per_head(id.kind) && (id.head < 0 || id.head >= dims_.heads))
    return to_string(id) + ": expected a head from 0 to " + std::to_string(dims_.heads - 1) + ", found " +
           std::to_string(id.head);
  return {};
}

namespace {

void require_held(const Engine& engine, StageId id) {
  // (two comparisons on the way of every read; the message only when refused)
  if (id.role != Role::Value || id.layer != 0 || (is_per_head(id.kind) && (id.head < 0 || id.head >= engine.dims().heads)))
    throw StageNotHeld(engine.not_held(id));
}

}  // namespace

Matrix Engine::rows(StageId id, Index first, Index count) const {
  require_held(*this, id);
  const bool derived_kind = id.kind == StageKind::Scaled || id.kind == StageKind::Capped || id.kind == StageKind::PositionBias ||
                            id.kind == StageKind::Masked || id.kind == StageKind::Weights;
  if (!derived_kind) {
    const MatrixView all = stage(id);
    first = std::clamp<Index>(first, 0, all.rows());
    return all.middleRows(first, std::clamp<Index>(count, 0, all.rows() - first));
  }
  if (read_only_) release_whole_projection();
  const Index T = dims_.T;
  first = std::clamp<Index>(first, 0, T);
  count = std::clamp<Index>(count, 0, T - first);
  // A materialized copy that is current already: copy from it.
  const std::uint64_t v = version(id);
  for (const auto& d : cache_)
    if (d.id == id && d.version == v && d.m.rows() == T) return d.m.middleRows(first, count);
  if (id.kind != StageKind::PositionBias) resident_scores(id.head);
  if (id.kind == StageKind::Scaled || id.kind == StageKind::Capped) complete_scores(id.head);
  Matrix out(count, dims_.T_k);
  for (Index i = 0; i < count; ++i) fill_derived_row(id, first + i, out.row(i).data());
  release_scores();  // (read-only copies) the rows are out: the scores are not needed
  return out;
}

// scaled, masked or weights of one head, materialized into the cache.
MatrixView Engine::derived(StageId id) const {
  if (id.kind != StageKind::PositionBias) resident_scores(id.head);  // the bias reads no scores
  const std::uint64_t v = version(id);
  Derived* slot = nullptr;
  for (auto& d : cache_)
    if (d.id == id) slot = &d;
  if (!slot) {
    if (cache_.capacity() < kDerivedCacheSize) cache_.reserve(kDerivedCacheSize);  // views never move
    if (cache_.size() < cache_limit()) {
      slot = &cache_.emplace_back();
    } else {
      slot = &*std::min_element(cache_.begin(), cache_.end(),
                                [](const Derived& a, const Derived& b) { return a.used < b.used; });
      slot->version = 0;  // another stage's values: rebuild
      slot->exps = KeptExps{};
    }
    slot->id = id;
  }
  slot->used = ++cache_clock_;
  if (slot->version != v && id.kind == StageKind::SinkShare) {
    // T values, each from its row's softmax state: rebuilt whole.
    slot->m.resize(dims_.T, 1);
    for (Index i = 0; i < dims_.T; ++i) slot->m(i, 0) = sink_share(id.head, i);
    slot->version = v;
  } else if (slot->version != v) {
    patch_derived(*slot);
    slot->version = v;
  }
  release_scores();  // (read-only copies) the matrix is materialized: the scores are not needed
  return slot->m;
}

MatrixView Engine::stage(StageId id) const {
  require_held(*this, id);
  if (projected_on_demand(id.kind)) return projection_on_demand(id);
  if (read_only_ && is_per_head(id.kind)) release_whole_projection();
  const Scenario& s = *scenario_;
  const auto h = to_index(id.head);
  const auto dk = to_index(dims_.d_k);
  const auto dv = to_index(dims_.d_v);
  switch (id.kind) {
    case StageKind::X: case StageKind::W_q: case StageKind::W_k: case StageKind::W_v: case StageKind::b_q:
    case StageKind::b_k: case StageKind::b_v: case StageKind::W_o: case StageKind::b_o: case StageKind::Sinks:
    case StageKind::X_kv: case StageKind::QNorm: case StageKind::KNorm:
      return (s.*spec(id.kind).member).get();  // an input: the scenario's own matrix
    case StageKind::Mask: return mask_.get();
    case StageKind::Q: return Q_;
    case StageKind::K: return K_;
    case StageKind::V: return V_;
    case StageKind::HeadQ: return Q_.middleCols(h * dk, dk);
    case StageKind::HeadK: return K_.middleCols(kv(id.head) * dk, dk);
    case StageKind::HeadV: return V_.middleCols(kv(id.head) * dv, dv);
    // before RoPE (without RoPE there is no rotation: the projection itself)
    case StageKind::QUnrotated: return rope_on_ ? Qu_ : Q_;
    case StageKind::KUnrotated: return rope_on_ ? Ku_ : K_;
    case StageKind::RopeAngle: return rope_angle_;
    case StageKind::HeadQUnrotated: return (rope_on_ ? Qu_ : Q_).middleCols(h * dk, dk);
    case StageKind::HeadKUnrotated: return (rope_on_ ? Ku_ : K_).middleCols(kv(id.head) * dk, dk);
    // before the q/k norm (kept whole by read-only copies too; without the norm, before RoPE)
    case StageKind::QProjected: return norm_on_ ? Qp_ : rope_on_ ? Qu_ : Q_;
    case StageKind::KProjected: return norm_on_ ? Kp_ : rope_on_ ? Ku_ : K_;
    case StageKind::HeadQProjected: return (norm_on_ ? Qp_ : rope_on_ ? Qu_ : Q_).middleCols(h * dk, dk);
    case StageKind::HeadKProjected: return (norm_on_ ? Kp_ : rope_on_ ? Ku_ : K_).middleCols(kv(id.head) * dk, dk);
    case StageKind::Scores:
      resident_scores(id.head);
      complete_scores(id.head);
      return heads_[static_cast<std::size_t>(h)].S;
    case StageKind::Scaled: case StageKind::Capped: case StageKind::PositionBias: case StageKind::Masked: case StageKind::Weights:
    case StageKind::SinkShare:
      return derived(id);
    case StageKind::Context: return concat_.middleCols(h * dv, dv);
    case StageKind::Concat: return concat_;
    case StageKind::Output: return output_;
  }
  return Q_;
}

std::uint64_t Engine::version(StageId id) const {
  require_held(*this, id);
  const auto h = is_per_head(id.kind) ? static_cast<std::size_t>(id.head) : 0u;
  // A head's block of Q, K or V shares the version its head's block of the
  // whole matrix is kept under.
  // Before RoPE: versioned with the rotated projection (an over-estimate when only a pin moved).
  StageKind storage = spec(id.kind).storage;
  if (storage == StageKind::QUnrotated || storage == StageKind::QProjected) storage = StageKind::Q;
  if (storage == StageKind::KUnrotated || storage == StageKind::KProjected) storage = StageKind::K;
  if (spec(id.kind).view == ViewKind::HeadSlice || spec(id.kind).view == ViewKind::KVSlice)
    return h < versions_.size() ? versions_[h][idx(storage)] : 0;
  // The soft-capped scores change exactly when the scaled ones do.
  if (id.kind == StageKind::Capped) return h < versions_.size() ? versions_[h][idx(StageKind::Scaled)] : 0;
  // The sink's share changes exactly when the head's softmax does.
  if (id.kind == StageKind::SinkShare) return h < versions_.size() ? versions_[h][idx(StageKind::Weights)] : 0;
  if (storage == StageKind::Q || storage == StageKind::K || storage == StageKind::V) {
    // Q as a whole changed when any head's block did.
    std::uint64_t v = 0;
    for (const auto& per_head : versions_) v = std::max(v, per_head[idx(storage)]);
    return v;
  }
  return h < versions_.size() ? versions_[h][idx(id.kind)] : 0;
}

std::size_t Engine::bytes_shared() const {
  return mask_.holders() > 1 ? static_cast<std::size_t>(mask_.size()) * sizeof(float) : 0;
}

std::size_t Engine::bytes_kept() const {
  auto bytes = [](const Matrix& m) { return static_cast<std::size_t>(m.size()) * sizeof(float); };
  std::size_t total = 0;
  const auto kept = {&Q_, &K_, &V_, &Qu_, &Ku_, &Qp_, &Kp_, &U_, &R_, &on_demand_.q, &on_demand_.k, &on_demand_.v,
                     &on_demand_.qu, &on_demand_.ku, &on_demand_.whole};  // (mutable members)
  for (const Matrix* m : kept) total += bytes(*m);
  for (const Matrix* m : {&concat_, &output_, &mask_.get(), &rope_cos_, &rope_sin_, &rope_angle_})
    total += bytes(*m);
  for (const auto& hs : heads_)
    total += bytes(hs.S) + hs.valid.capacity() + hs.offset.capacity() * sizeof(float) +
             hs.sum.capacity() * sizeof(double) + hs.cscale.capacity() * sizeof(float) +
             hs.issue.capacity() * sizeof(RowIssue) + hs.direct.capacity() + hs.drift.capacity() * sizeof(float);
  for (const auto& d : cache_) total += bytes(d.m) + bytes(d.exps.e) + d.exps.offset.capacity() * sizeof(float) +
                                         d.exps.length.capacity() * sizeof(Index);
  total += r_valid_.capacity() + mask_block_count_.capacity() * sizeof(int) + row_pins_.capacity() +
           out_age_.capacity();
  total += bytes(scratch_.concat_change.rows);
  for (const GemmRhs& values : scratch_.head_values) total += values.bytes();
  total += scratch_.row_updates.capacity() * sizeof(RowUpdate) + scratch_.score_column.capacity() * sizeof(float) +
           scratch_.deferred.capacity() + scratch_.output_waits.capacity();
  return total;
}

}  // namespace attention_lab
