#include "attention_lab/engine.h"

#include "attention_lab/softmax.h"

#include <cmath>
#include <limits>

namespace attention_lab {

namespace {

constexpr std::size_t idx(StageKind k) { return static_cast<std::size_t>(k); }

// The computed stages of one head, in the order they depend on each other.
constexpr StageKind kHeadChain[] = {StageKind::Scores, StageKind::Scaled, StageKind::Masked,
                                    StageKind::Weights, StageKind::Context};

}  // namespace

// [SECTION] Invalidation

void Invalidation::mark(StageKind kind, int head) { entries_.push_back({kind, head}); }
void Invalidation::mark_all_heads(StageKind kind) { entries_.push_back({kind, -1}); }
void Invalidation::mark_everything() { everything_ = true; }

// [SECTION] Recompute scheduling

void Engine::recompute_all(const Scenario& scenario) {
  Invalidation all;
  all.mark_everything();
  recompute(scenario, all);
}

void Engine::recompute(const Scenario& scenario, const Invalidation& what) {
  scenario_ = &scenario;
  const bool reshape = dims_ != scenario.dims() || heads_.size() != static_cast<std::size_t>(scenario.heads);
  const int H = scenario.heads;

  // dirty[h][kind]: this head's copy of the stage must be recomputed.
  std::vector<std::array<bool, kStageKindCount>> dirty(static_cast<std::size_t>(H));
  bool output_dirty = false;
  bool mask_dirty = false;

  auto mark = [&](StageKind kind, int head) {
    for (int h = 0; h < H; ++h)
      if (head < 0 || head == h) dirty[static_cast<std::size_t>(h)][idx(kind)] = true;
  };

  if (reshape || what.everything()) {
    if (reshape) resize_storage();
    for (auto& d : dirty) d.fill(true);
    output_dirty = true;
    mask_dirty = true;
    for (auto k : {StageKind::X, StageKind::W_q, StageKind::W_k, StageKind::W_v, StageKind::b_q,
                   StageKind::b_k, StageKind::b_v, StageKind::W_o, StageKind::b_o})
      bump(k, 0);
  }

  // Map what changed onto the computed stages that read it directly; the
  // propagation below takes care of everything further downstream.
  for (const auto& [kind, head] : what.entries()) {
    const int h = head < H ? head : -1;
    switch (kind) {
      case StageKind::X:
        bump(kind, 0);
        mark(StageKind::Q, -1), mark(StageKind::K, -1), mark(StageKind::V, -1);
        break;
      case StageKind::W_q: case StageKind::b_q: bump(kind, 0); mark(StageKind::Q, h); break;
      case StageKind::W_k: case StageKind::b_k: bump(kind, 0); mark(StageKind::K, h); break;
      case StageKind::W_v: case StageKind::b_v: bump(kind, 0); mark(StageKind::V, h); break;
      case StageKind::W_o: case StageKind::b_o: bump(kind, 0); output_dirty = true; break;
      case StageKind::Mask: mask_dirty = true; break;
      case StageKind::Q: case StageKind::HeadQ: mark(StageKind::Q, h); break;
      case StageKind::K: case StageKind::HeadK: mark(StageKind::K, h); break;
      case StageKind::V: case StageKind::HeadV: mark(StageKind::V, h); break;
      case StageKind::Concat: mark(StageKind::Context, h); break;
      case StageKind::Output: output_dirty = true; break;
      default: mark(kind, h); break;
    }
  }

  if (mask_dirty) {
    mask_ = scenario.effective_mask();
    bump(StageKind::Mask, 0);
    mark(StageKind::Masked, -1);
  }

  // Propagate staleness down each head's chain, then into the output.
  for (auto& d : dirty) {
    if (d[idx(StageKind::Q)] || d[idx(StageKind::K)]) d[idx(StageKind::Scores)] = true;
    for (std::size_t i = 1; i < std::size(kHeadChain); ++i)
      if (d[idx(kHeadChain[i - 1])]) d[idx(kHeadChain[i])] = true;
    if (d[idx(StageKind::V)]) d[idx(StageKind::Context)] = true;
    if (d[idx(StageKind::Context)]) output_dirty = true;
  }

  for (int h = 0; h < H; ++h) {
    const auto& d = dirty[static_cast<std::size_t>(h)];
    for (auto k : {StageKind::Q, StageKind::K, StageKind::V})
      if (d[idx(k)]) compute_projection(k, h);
    if (d[idx(StageKind::Scores)]) compute_scores(h);
    if (d[idx(StageKind::Scaled)]) compute_scaled(h);
    if (d[idx(StageKind::Masked)]) compute_masked(h);
    if (d[idx(StageKind::Weights)]) compute_weights(h);
    if (d[idx(StageKind::Context)]) compute_context(h);
  }
  if (output_dirty) compute_output();
  collect_warnings();
}

void Engine::resize_storage() {
  const Scenario& s = *scenario_;
  dims_ = s.dims();
  const auto T = to_index(dims_.T);
  Q_.resize(T, to_index(dims_.heads * dims_.d_k));
  K_.resize(T, to_index(dims_.heads * dims_.d_k));
  V_.resize(T, to_index(dims_.heads * dims_.d_v));
  concat_.resize(T, to_index(dims_.heads * dims_.d_v));
  output_.resize(T, to_index(dims_.d_out));
  heads_.assign(static_cast<std::size_t>(dims_.heads), HeadStages{});
  for (auto& hs : heads_)
    for (Matrix* m : {&hs.scores, &hs.scaled, &hs.masked, &hs.weights}) m->resize(T, T);
  versions_.assign(static_cast<std::size_t>(std::max(dims_.heads, 1)), {});
  row_issues_.assign(static_cast<std::size_t>(dims_.heads), {});
}

// [SECTION] Stages
// Each compute_* writes one head's slice of one stage, then lays the user's
// pins over it so they flow downstream like computed values.

void Engine::compute_projection(StageKind kind, int head) {
  const Scenario& s = *scenario_;
  const bool is_v = kind == StageKind::V;
  const Matrix& W = kind == StageKind::Q ? s.W_q : kind == StageKind::K ? s.W_k : s.W_v;
  const Matrix& b = kind == StageKind::Q ? s.b_q : kind == StageKind::K ? s.b_k : s.b_v;
  Matrix& out = kind == StageKind::Q ? Q_ : kind == StageKind::K ? K_ : V_;
  const auto width = to_index(is_v ? dims_.d_v : dims_.d_k);
  const auto first = to_index(head) * width;

  // pass 1: this head's columns of X·W
  out.middleCols(first, width).noalias() = s.X * W.middleCols(first, width);
  // pass 2: + b, broadcast over tokens
  if (s.use_bias) out.middleCols(first, width).rowwise() += b.row(0).segment(first, width);
  apply_pins(kind, head);
  bump(kind, head);
  ++counts_[idx(kind)];
}

void Engine::compute_scores(int head) {
  const auto dk = to_index(dims_.d_k);
  const auto first = to_index(head) * dk;
  auto& hs = heads_[static_cast<std::size_t>(head)];
  // scores_i = Q_i · K_iᵀ: entry (r, c) is how well token r's query matches token c's key.
  hs.scores.noalias() = Q_.middleCols(first, dk) * K_.middleCols(first, dk).transpose();
  apply_pins(StageKind::Scores, head);
  bump(StageKind::Scores, head);
  ++counts_[idx(StageKind::Scores)];
}

void Engine::compute_scaled(int head) {
  const Scenario& s = *scenario_;
  auto& hs = heads_[static_cast<std::size_t>(head)];
  // Computed in double, then rounded once, so scaling adds no error of its own.
  const double divisor = (s.scale ? std::sqrt(static_cast<double>(dims_.d_k)) : 1.0) *
                         static_cast<double>(s.temperature);
  const double inverse = 1.0 / divisor;
  if (inverse <= static_cast<double>(std::numeric_limits<float>::max()))
    hs.scaled = hs.scores * static_cast<float>(inverse);
  else  // a temperature near 0: the factor would be ∞, and 0·∞ is NaN where x/tiny is 0
    hs.scaled = hs.scores / static_cast<float>(divisor);
  apply_pins(StageKind::Scaled, head);
  bump(StageKind::Scaled, head);
  ++counts_[idx(StageKind::Scaled)];
}

void Engine::compute_masked(int head) {
  auto& hs = heads_[static_cast<std::size_t>(head)];
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  hs.masked = (mask_.array() != 0.0f).select(hs.scaled, kNegInf);
  apply_pins(StageKind::Masked, head);
  bump(StageKind::Masked, head);
  ++counts_[idx(StageKind::Masked)];
}

void Engine::compute_weights(int head) {
  auto& hs = heads_[static_cast<std::size_t>(head)];
  auto& issues = row_issues_[static_cast<std::size_t>(head)];
  issues.assign(static_cast<std::size_t>(dims_.T), RowIssue::None);
  for (Eigen::Index r = 0; r < hs.masked.rows(); ++r) {
    const auto issue = softmax_row(hs.masked.row(r), hs.weights.row(r));
    issues[static_cast<std::size_t>(r)] = issue;
  }
  apply_pins(StageKind::Weights, head);
  bump(StageKind::Weights, head);
  ++counts_[idx(StageKind::Weights)];
}

void Engine::compute_context(int head) {
  const auto dv = to_index(dims_.d_v);
  const auto first = to_index(head) * dv;
  const auto& hs = heads_[static_cast<std::size_t>(head)];
  // context_i = weights_i · V_i: each token's weighted average of the values.
  concat_.middleCols(first, dv).noalias() = hs.weights * V_.middleCols(first, dv);
  apply_pins(StageKind::Context, head);
  bump(StageKind::Context, head);
  bump(StageKind::Concat, 0);
  ++counts_[idx(StageKind::Context)];
}

void Engine::compute_output() {
  const Scenario& s = *scenario_;
  if (s.use_w_o)
    output_.noalias() = concat_ * s.W_o;
  else
    output_ = concat_;
  if (s.use_output_bias) output_.rowwise() += s.b_o.row(0);
  apply_pins(StageKind::Output, 0);
  bump(StageKind::Output, 0);
  ++counts_[idx(StageKind::Output)];
}

void Engine::apply_pins(StageKind kind, int head) {
  const auto& pins = scenario_->pins;
  const bool per_head = is_per_head(kind);
  const StageId id{kind, per_head ? head : 0};
  Matrix* target = nullptr;
  Eigen::Index col_offset = 0;
  Eigen::Index col_count = 0;
  switch (kind) {
    case StageKind::Q: case StageKind::K: case StageKind::V: {
      // Pins on Q/K/V address the full matrix; only this head's columns apply now.
      target = kind == StageKind::Q ? &Q_ : kind == StageKind::K ? &K_ : &V_;
      col_count = to_index(kind == StageKind::V ? dims_.d_v : dims_.d_k);
      col_offset = to_index(head) * col_count;
      break;
    }
    case StageKind::Scores: target = &heads_[static_cast<std::size_t>(head)].scores; break;
    case StageKind::Scaled: target = &heads_[static_cast<std::size_t>(head)].scaled; break;
    case StageKind::Masked: target = &heads_[static_cast<std::size_t>(head)].masked; break;
    case StageKind::Weights: target = &heads_[static_cast<std::size_t>(head)].weights; break;
    case StageKind::Context:
      target = &concat_;
      col_count = to_index(dims_.d_v);
      col_offset = to_index(head) * col_count;
      break;
    case StageKind::Output: target = &output_; break;
    default: return;
  }
  if (col_count == 0) col_count = target->cols();
  for (auto it = pins.lower_bound(PinKey{id, 0, 0}); it != pins.end() && it->first.stage == id; ++it) {
    const auto r = to_index(it->first.row);
    const auto c = to_index(it->first.col);
    const bool in_block = kind == StageKind::Context ? c < col_count
                          : (kind == StageKind::Q || kind == StageKind::K || kind == StageKind::V)
                              ? c >= col_offset && c < col_offset + col_count
                              : true;
    if (!in_block || r >= target->rows()) continue;
    const auto tc = kind == StageKind::Context ? col_offset + c : c;
    if (tc < target->cols()) (*target)(r, tc) = it->second;
  }
}

void Engine::collect_warnings() {
  warnings_.clear();
  for (std::size_t h = 0; h < row_issues_.size(); ++h) {
    for (std::size_t r = 0; r < row_issues_[h].size(); ++r) {
      const RowIssue issue = row_issues_[h][r];
      if (issue == RowIssue::None) continue;
      const int hi = static_cast<int>(h);
      const int ri = static_cast<int>(r);
      std::string msg = "head " + std::to_string(hi) + ", row " + std::to_string(ri) + " ('" +
                        scenario_->token_label(ri) + "'): " + describe(issue);
      warnings_.push_back({hi, ri, std::move(msg)});
    }
  }
}

void Engine::bump(StageKind kind, int head) {
  if (versions_.empty()) versions_.resize(1);
  // Q, K and V are versioned per head block as well, so a head's view knows
  // whether its own columns changed.
  const bool per_block = is_per_head(kind) || kind == StageKind::Q || kind == StageKind::K ||
                         kind == StageKind::V;
  const auto h = per_block ? static_cast<std::size_t>(head) : 0u;
  if (h < versions_.size()) versions_[h][idx(kind)] = next_version_++;
}

// [SECTION] Access

MatrixView Engine::stage(StageId id) const {
  const Scenario& s = *scenario_;
  const auto h = to_index(id.head);
  const auto dk = to_index(dims_.d_k);
  const auto dv = to_index(dims_.d_v);
  switch (id.kind) {
    case StageKind::X: return s.X;
    case StageKind::W_q: return s.W_q;
    case StageKind::W_k: return s.W_k;
    case StageKind::W_v: return s.W_v;
    case StageKind::b_q: return s.b_q;
    case StageKind::b_k: return s.b_k;
    case StageKind::b_v: return s.b_v;
    case StageKind::W_o: return s.W_o;
    case StageKind::b_o: return s.b_o;
    case StageKind::Mask: return mask_;
    case StageKind::Q: return Q_;
    case StageKind::K: return K_;
    case StageKind::V: return V_;
    case StageKind::HeadQ: return Q_.middleCols(h * dk, dk);
    case StageKind::HeadK: return K_.middleCols(h * dk, dk);
    case StageKind::HeadV: return V_.middleCols(h * dv, dv);
    case StageKind::Scores: return heads_[static_cast<std::size_t>(h)].scores;
    case StageKind::Scaled: return heads_[static_cast<std::size_t>(h)].scaled;
    case StageKind::Masked: return heads_[static_cast<std::size_t>(h)].masked;
    case StageKind::Weights: return heads_[static_cast<std::size_t>(h)].weights;
    case StageKind::Context: return concat_.middleCols(h * dv, dv);
    case StageKind::Concat: return concat_;
    case StageKind::Output: return output_;
  }
  return Q_;
}

std::uint64_t Engine::version(StageId id) const {
  StageKind kind = id.kind;
  int head = id.head;
  // Views share the version of the storage they show.
  if (kind == StageKind::HeadQ) kind = StageKind::Q;
  if (kind == StageKind::HeadK) kind = StageKind::K;
  if (kind == StageKind::HeadV) kind = StageKind::V;
  const auto h = is_per_head(kind) ? static_cast<std::size_t>(head) : 0u;
  if (kind == StageKind::Q || kind == StageKind::K || kind == StageKind::V) {
    // Q as a whole changed when any head's block did.
    std::uint64_t v = 0;
    for (const auto& per_head : versions_) v = std::max(v, per_head[idx(kind)]);
    if (id.kind == StageKind::HeadQ || id.kind == StageKind::HeadK || id.kind == StageKind::HeadV)
      return h < versions_.size() ? versions_[h][idx(kind)] : 0;
    return v;
  }
  return h < versions_.size() ? versions_[h][idx(kind)] : 0;
}

}  // namespace attention_lab
