#include "attention_lab/activation_patching.h"

#include "attention_lab/softcap.h"

#include <atomic>
#include <cmath>
#include <limits>
#include <mutex>

namespace attention_lab {

const char* to_string(PatchKind kind) {
  switch (kind) {
    case PatchKind::ResidPre: return "resid_pre";
    case PatchKind::AttnOut: return "attn_out";
    case PatchKind::MlpOut: return "mlp_out";
    case PatchKind::HeadOut: return "z";
    case PatchKind::HeadQ: return "q";
    case PatchKind::HeadK: return "k";
    case PatchKind::HeadV: return "v";
    case PatchKind::HeadPattern: return "pattern";
    case PatchKind::HeadOutByPosition: return "z_by_position";
  }
  return "?";
}

PatchColumns columns_of(PatchKind kind) {
  switch (kind) {
    case PatchKind::ResidPre:
    case PatchKind::AttnOut:
    case PatchKind::MlpOut: return PatchColumns::Positions;
    case PatchKind::HeadOutByPosition: return PatchColumns::PositionsByHeads;
    case PatchKind::HeadOut:
    case PatchKind::HeadQ:
    case PatchKind::HeadK:
    case PatchKind::HeadV:
    case PatchKind::HeadPattern: return PatchColumns::Heads;
  }
  return PatchColumns::Heads;
}

const char* to_string(PatchColumns columns) {
  switch (columns) {
    case PatchColumns::Positions: return "position";
    case PatchColumns::Heads: return "head";
    case PatchColumns::PositionsByHeads: return "position×head";
  }
  return "?";
}

bool parse_patch_kind(const std::string& name, PatchKind& kind) {
  for (const PatchKind k : kPatchKinds)
    if (name == to_string(k)) {
      kind = k;
      return true;
    }
  return false;
}

double PatchMetric::of(const RowVector& logits) const {
  if (kind == LogitDiff) return static_cast<double>(logits(answer)) - static_cast<double>(logits(wrong));
  const double m = static_cast<double>(logits.maxCoeff());
  double sum = 0.0;
  for (Eigen::Index i = 0; i < logits.size(); ++i) sum += std::exp(static_cast<double>(logits(i)) - m);
  return std::exp(static_cast<double>(logits(answer)) - m) / sum;
}

std::string PatchMetric::describe() const {
  return kind == LogitDiff ? "logit[" + std::to_string(answer) + "] − logit[" + std::to_string(wrong) + "]"
                           : "p(" + std::to_string(answer) + ")";
}

std::string check_patching(const ModelConfig& config, std::span<const int> clean, std::span<const int> corrupted,
                           const PatchMetric& metric) {
  if (std::string e = check_ids(config, clean); !e.empty()) return "the clean prompt: " + e;
  if (std::string e = check_ids(config, corrupted); !e.empty()) return "the corrupted prompt: " + e;
  if (clean.size() != corrupted.size())
    return "the clean prompt has " + std::to_string(clean.size()) + " tokens and the corrupted one " +
           std::to_string(corrupted.size()) + ": patching needs the same number of tokens";
  for (const int id : {metric.answer, metric.wrong}) {
    if (id == metric.wrong && metric.kind != PatchMetric::LogitDiff) continue;
    if (id < 0 || id >= config.vocab)
      return "answer token " + std::to_string(id) + ": expected 0 to " + std::to_string(config.vocab - 1);
  }
  return {};
}

Eigen::MatrixXd PatchSweep::normalised() const {
  const double span = clean - corrupted;
  if (span == 0.0 || !std::isfinite(span))
    return Eigen::MatrixXd::Constant(metric.rows(), metric.cols(), std::numeric_limits<double>::quiet_NaN());
  return (metric.array() - corrupted) / span;
}

namespace {

bool per_position(PatchKind k) { return columns_of(k) == PatchColumns::Positions; }

// The metric of a run's last layer output. A logit difference reads the two
// tokens' columns of the unembedding only (two dot products, not the whole
// vocabulary), as logits() would compute them.
class MetricReader {
 public:
  MetricReader(const TransformerModel& model, const PatchMetric& metric) : model_(model), metric_(metric) {
    if (metric.kind != PatchMetric::LogitDiff) return;
    for (const int t : {metric.answer, metric.wrong}) {
      RowVector w(model.config.d_model);
      for (int i = 0; i < model.config.d_model; ++i) w(i) = model.lm_head.at(i, t);
      columns_.push_back(std::move(w));
      biases_.push_back(model.lm_head.bias.size() > 0 ? model.lm_head.bias(t) : 0.0f);
    }
  }
  double operator()(const Matrix& last_output) const {
    const auto T = static_cast<int>(last_output.rows());
    if (metric_.kind != PatchMetric::LogitDiff) return metric_.of(row_logits(model_, last_output, T - 1));
    const Matrix normed = normalize(model_.final_norm, last_output.bottomRows(1));
    double z[2];
    for (int i = 0; i < 2; ++i) {
      float v = normed.row(0).dot(columns_[static_cast<std::size_t>(i)]) + biases_[static_cast<std::size_t>(i)];
      if (model_.config.logits_divisor != 1.0) v /= static_cast<float>(model_.config.logits_divisor);
      if (model_.config.logit_softcap > 0.0) v = softcap(v, static_cast<float>(model_.config.logit_softcap));
      z[i] = static_cast<double>(v);
    }
    return z[0] - z[1];
  }

 private:
  const TransformerModel& model_;
  PatchMetric metric_;
  std::vector<RowVector> columns_;
  std::vector<float> biases_;
};

// Layers [from, layers) of x with no intervention, the way the cached runs
// computed them (run_layer with hooks: the same order of sums).
Matrix run_rest(const TransformerModel& model, int from, Matrix x) {
  const LayerHooks none;
  for (int l = from; l < static_cast<int>(model.layers.size()); ++l) x = run_layer(model, l, x, none);
  return x;
}

// Per layer and head, a copy of the clean run's q, k or v block (T × d_head).
std::vector<std::vector<Matrix>> head_blocks(const RunCache& clean, PatchKind kind, int heads, int d_head) {
  std::vector<std::vector<Matrix>> out(clean.attention.size());
  for (std::size_t l = 0; l < clean.attention.size(); ++l) {
    const AttentionDetail& d = clean.attention[l];
    const Matrix& m = kind == PatchKind::HeadQ ? d.q : kind == PatchKind::HeadK ? d.k : d.v;
    for (int h = 0; h < heads; ++h) out[l].push_back(m.middleCols(static_cast<Eigen::Index>(h) * d_head, d_head));
  }
  return out;
}

}  // namespace

PatchSweep patch_sweep(const TransformerModel& model, std::span<const int> clean_ids, std::span<const int> corrupted_ids,
                       PatchKind kind, const PatchMetric& metric, const PatchProgress& progress, bool* complete) {
  const ModelConfig& c = model.config;
  const bool needs_attention = kind == PatchKind::HeadQ || kind == PatchKind::HeadK || kind == PatchKind::HeadV ||
                               kind == PatchKind::HeadPattern;
  const RunCache clean = run_with_cache(model, clean_ids, needs_attention ? CacheAttention::Everything : CacheAttention::None);
  const RunCache corrupted = run_with_cache(model, corrupted_ids, CacheAttention::None);
  const MetricReader read(model, metric);

  PatchSweep s;
  s.kind = kind;
  s.layers = c.layers;
  s.positions = static_cast<int>(clean_ids.size());
  s.heads = kind == PatchKind::HeadK || kind == PatchKind::HeadV ? c.kv_heads : c.heads;
  s.clean = read(clean.resid.back());
  s.corrupted = read(corrupted.resid.back());
  const int per_layer = per_position(kind) ? s.positions
                        : kind == PatchKind::HeadOutByPosition ? s.positions * s.heads
                                                               : s.heads;
  s.metric = Eigen::MatrixXd::Constant(s.layers, per_layer, std::numeric_limits<double>::quiet_NaN());
  const std::vector<std::vector<Matrix>> blocks =
      needs_attention && kind != PatchKind::HeadPattern ? head_blocks(clean, kind, s.heads, c.d_head)
                                                        : std::vector<std::vector<Matrix>>{};

  const int total = s.layers * per_layer;
  std::atomic<int> done{0};
  std::atomic<bool> stop{false};
  std::mutex report;
  const Eigen::Index dh = c.d_head;
#pragma omp parallel for schedule(dynamic)
  for (int task = 0; task < total; ++task) {
    if (stop.load()) continue;
    const int l = task / per_layer, i = task % per_layer;
    const auto L = static_cast<std::size_t>(l);
    Matrix x = corrupted.resid[L];
    LayerHooks hooks;
    switch (kind) {
      case PatchKind::ResidPre: x.row(i) = clean.resid[L].row(i); break;
      case PatchKind::AttnOut: hooks.attn_out = [&, i](Matrix& m) { m.row(i) = clean.attn_out[L].row(i); }; break;
      case PatchKind::MlpOut: hooks.mlp_out = [&, i](Matrix& m) { m.row(i) = clean.mlp_out[L].row(i); }; break;
      case PatchKind::HeadOut:
        hooks.z = [&, i](Matrix& m) { m.middleCols(i * dh, dh) = clean.z[L].middleCols(i * dh, dh); };
        break;
      case PatchKind::HeadOutByPosition: {
        const int p = i / s.heads, h = i % s.heads;
        hooks.z = [&, p, h](Matrix& m) { m.block(p, h * dh, 1, dh) = clean.z[L].block(p, h * dh, 1, dh); };
        break;
      }
      case PatchKind::HeadQ:
      case PatchKind::HeadK:
      case PatchKind::HeadV: {
        auto& slot = kind == PatchKind::HeadQ ? hooks.q : kind == PatchKind::HeadK ? hooks.k : hooks.v;
        slot.assign(static_cast<std::size_t>(s.heads), nullptr);
        slot[static_cast<std::size_t>(i)] = &blocks[L][static_cast<std::size_t>(i)];
        break;
      }
      case PatchKind::HeadPattern:
        hooks.pattern.assign(static_cast<std::size_t>(c.heads), nullptr);
        hooks.pattern[static_cast<std::size_t>(i)] = &clean.attention[L].weights[static_cast<std::size_t>(i)];
        break;
    }
    Matrix out = kind == PatchKind::ResidPre ? run_rest(model, l, std::move(x))
                                             : run_rest(model, l + 1, run_layer(model, l, x, hooks));
    s.metric(l, i) = read(out);
    const int n = ++done;
    if (progress) {
      const std::lock_guard<std::mutex> lock(report);
      if (!progress(n, total)) stop = true;
    }
  }
  if (complete) *complete = !stop.load();
  return s;
}

}  // namespace attention_lab
