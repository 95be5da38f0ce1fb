#include "attention_lab/model_session.h"

#include "attention_lab/run_cache.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace attention_lab {

namespace {

constexpr int kOverviewSize = 48;

void step(ComputeControl* control, double fraction) {
  if (!control) return;
  if (control->cancel) throw Cancelled();
  control->progress = static_cast<float>(fraction);
}

}  // namespace

Matrix pool_to(const Matrix& m, int size) {
  if (m.rows() <= size && m.cols() <= size) return m;
  const Eigen::Index R = std::min<Eigen::Index>(m.rows(), size), C = std::min<Eigen::Index>(m.cols(), size);
  // Bin i holds rows [i·rows/R, (i+1)·rows/R): sum each bin's rows (vectorised),
  // then each column bin of that sum.
  const auto edge = [](Eigen::Index i, Eigen::Index n, Eigen::Index bins) { return (i * n + bins - 1) / bins; };
  Matrix out(R, C);
  for (Eigen::Index pr = 0; pr < R; ++pr) {
    const Eigen::Index a = edge(pr, m.rows(), R), b = edge(pr + 1, m.rows(), R);
    const RowVector sum = m.middleRows(a, b - a).colwise().sum();
    for (Eigen::Index pc = 0; pc < C; ++pc) {
      const Eigen::Index x = edge(pc, m.cols(), C), y = edge(pc + 1, m.cols(), C);
      out(pr, pc) = sum.segment(x, y - x).sum() / static_cast<float>((b - a) * (y - x));
    }
  }
  return out;
}

std::unique_ptr<ModelSession> ModelSession::start(std::shared_ptr<const TransformerModel> model,
                                                  std::shared_ptr<const Tokenizer> tokenizer, std::vector<int> ids,
                                                  int layer, ComputeControl* control, std::string& error,
                                                  const FocusedLayer& focused, std::vector<Ablation> ablations,
                                                  const ModelSession* previous) {
  const ModelConfig& c = model->config;
  if (!model->weights_read) {
    error = model->source.string() + ": only its headers were read (ModelParts::Headers): it cannot be run";
    return nullptr;
  }
  if (std::string e = check_ids(c, ids); !e.empty()) {
    error = e;
    return nullptr;
  }
  if (layer < 0 || layer >= c.layers) {
    error = "layer " + std::to_string(layer) + ": expected 0 to " + std::to_string(c.layers - 1);
    return nullptr;
  }
  for (const Ablation& a : ablations) {
    std::string e = check(a, c, static_cast<int>(ids.size()));
    if (e.empty() && a.target == AblationTarget::Head && a.layer == layer && a.position >= 0)
      e = "a head of the focused layer is ablated at every position (its rows of W_o are zero in the layer's scenario); "
          "to ablate it at one position, focus another layer";
    if (!e.empty()) {
      error = "ablation " + to_spec(a) + ": " + e;
      return nullptr;
    }
  }
  std::unique_ptr<ModelSession> s(new ModelSession());
  // What `previous` holds that this run would compute again: the layers
  // before `keep` (their input, ablations and focus are the same), and the
  // run without ablations.
  const bool same_run = previous && previous->model_ == model && previous->ids_ == ids;
  int keep = 0;
  if (same_run) {
    keep = std::min(layer, previous->layer_);  // a focused layer's residual comes from its engine: run again
    const auto differ = [](const std::vector<Ablation>& a, const std::vector<Ablation>& b) {
      for (const Ablation& x : a)
        if (std::find(b.begin(), b.end(), x) == b.end()) return true;
      return false;
    };
    for (const Ablation& a : ablations)
      if (differ({a}, previous->ablations_)) keep = std::min(keep, a.layer);
    for (const Ablation& a : previous->ablations_)
      if (differ({a}, ablations)) keep = std::min(keep, a.layer);
  }
  if (!ablations.empty()) {
    if (same_run && !previous->ablations_.empty()) {  // of the same model and text: the same numbers
      s->means_ = previous->means_;
      s->unablated_output_ = previous->unablated_output_;
    } else {
      // The model without them: the means a mean ablation reads, and the predictions' "before".
      const RunCache plain = run_with_cache(*model, ids, CacheAttention::None);
      s->means_ = activation_means(std::span<const RunCache>(&plain, 1));
      s->unablated_output_ = plain.resid.back();
    }
    s->hooks_ = ablation_hooks(c, ablations, s->means_);
    s->ablations_ = std::move(ablations);
  }
  s->model_ = std::move(model);
  s->tokenizer_ = std::move(tokenizer);
  s->ids_ = std::move(ids);
  s->layer_ = layer;
  s->overview_.layers = c.layers;
  s->overview_.heads = c.heads;
  const TransformerModel& m = *s->model_;
  s->head_scores_.ids = s->ids_;
  for (std::size_t k = 0; k < std::size(kHeadKinds); ++k) s->head_scores_.scores.push_back(Matrix::Zero(c.layers, c.heads));
  const HeadDetector detector(s->ids_);
  if (keep > 0) {  // layers 0 … keep − 1 as `previous` ran them
    s->residual_.assign(previous->residual_.begin(), previous->residual_.begin() + keep + 1);
    s->overview_.weights.assign(previous->overview_.weights.begin(),
                                previous->overview_.weights.begin() + static_cast<std::ptrdiff_t>(keep) * c.heads);
    for (std::size_t k = 0; k < s->head_scores_.scores.size(); ++k)
      s->head_scores_.scores[k].topRows(keep) = previous->head_scores_.scores[k].topRows(keep);
    s->reused_layers_ = keep;
  } else {
    s->residual_.push_back(embed(m, s->ids_));
  }
  for (int l = keep; l < c.layers; ++l) {
    step(control, static_cast<double>(l) / c.layers);
    const Matrix& x = s->residual_.back();
    const Matrix normed = attention_input(m, l, x);
    if (focused && l == layer) {
      LayerScenario scenario = layer_scenario(m, l, normed, s->token_labels());
      if (scenario.error.empty()) s->ablate_heads(scenario);
      if (!scenario.error.empty()) {
        error = scenario.error;
        return nullptr;
      }
      FocusedAttention f = focused(std::move(scenario));
      if (f.output.rows() != x.rows() || f.output.cols() != c.d_model || static_cast<int>(f.weights.size()) != c.heads)
        throw std::logic_error("ModelSession::start: the focused layer's attention has the wrong shape");
      for (int h = 0; h < c.heads; ++h) {
        s->head_scores_.set(l, h, detector.scores(f.weights[static_cast<std::size_t>(h)]));
        s->overview_.weights.push_back(pool_to(f.weights[static_cast<std::size_t>(h)], kOverviewSize));
      }
      s->unedited_attention_ = std::move(f.output);
      s->residual_from_unedited_ = true;
      s->residual_.push_back(finish_layer(m, l, x, s->unedited_attention_, s->focused_hooks()));
      continue;
    }
    AttentionDetail detail;
    detail.weights_only = true;
    if (!s->hooks_.empty()) {
      s->residual_.push_back(run_layer(m, l, x, s->hooks_[static_cast<std::size_t>(l)], &detail));
    } else {
      const Matrix attn = attention(m, l, normed, &detail);
      s->residual_.push_back(finish_layer(m, l, x, attn));
    }
    for (int h = 0; h < c.heads; ++h) {
      s->head_scores_.set(l, h, detector.scores(detail.weights[static_cast<std::size_t>(h)]));
      s->overview_.weights.push_back(pool_to(detail.weights[static_cast<std::size_t>(h)], kOverviewSize));
    }
  }
  step(control, 1.0);
  return s;
}

std::vector<std::string> ModelSession::token_labels() const { return tokenizer_->labels(ids_); }

LayerScenario ModelSession::scenario() const {
  const Matrix normed = attention_input(*model_, layer_, residual_[static_cast<std::size_t>(layer_)]);
  LayerScenario out = layer_scenario(*model_, layer_, normed, token_labels());
  if (out.error.empty()) ablate_heads(out);
  return out;
}

const LayerHooks* ModelSession::focused_hooks() const {
  if (hooks_.empty()) return nullptr;
  const LayerHooks& h = hooks_[static_cast<std::size_t>(layer_)];
  return h.attn_out || h.mlp_out ? &h : nullptr;
}

void ModelSession::ablate_heads(LayerScenario& out) const {
  Scenario& sc = out.scenario;
  const int dh = model_->config.d_head;
  std::string heads;
  Matrix w_o = sc.W_o, b_o = sc.b_o;  // copies to change (the scenario shares its matrices)
  for (const Ablation& a : ablations_) {
    if (a.target != AblationTarget::Head || a.layer != layer_) continue;
    if (a.position >= 0) {  // (start refuses these; a later set_layer may meet one)
      out.error = "ablation " + to_spec(a) + ": a head of the focused layer is ablated at every position or not at all";
      return;
    }
    const Eigen::Index r0 = static_cast<Eigen::Index>(a.head) * dh;
    if (a.mode == AblationMode::Mean) {  // its mean z through its rows of W_o, at every position
      const RowVector mean = means_.z[static_cast<std::size_t>(a.layer)].segment(r0, dh);
      b_o.row(0) += mean * w_o.middleRows(r0, dh);
      sc.use_output_bias = true;
    }
    w_o.middleRows(r0, dh).setZero();
    heads += (heads.empty() ? "" : ", ") + to_spec(a);
  }
  if (heads.empty()) return;
  sc.W_o = std::move(w_o);
  sc.b_o = std::move(b_o);
  sc.description += " Ablated here: " + heads + " (each head's rows of W_o are zero; a mean ablation adds the head's mean "
                      "output to b_o).";
}

void ModelSession::set_layer(int layer) {
  layer_ = std::clamp(layer, 0, model_->config.layers - 1);
  unedited_attention_.resize(0, 0);
  residual_from_unedited_ = false;
  baseline_.clear();
}

RowVector ModelSession::probabilities(const Matrix& attention_out, int row) const {
  const Matrix& input = residual_[static_cast<std::size_t>(layer_)];
  const LayerHooks* hooks = focused_hooks();
  if (layer_ == model_->config.layers - 1 && !hooks) {
    // The last layer: no later attention mixes rows, so only the predicted
    // row goes through the MLP (a pin in the last layer costs one row).
    const Matrix x = finish_layer(*model_, layer_, input.middleRows(row, 1), attention_out.middleRows(row, 1));
    return next_token_probabilities(logits(*model_, x, 0, 1).row(0));
  }
  const auto n = static_cast<Eigen::Index>(row) + 1;
  Matrix x = finish_layer(*model_, layer_, input.topRows(n), attention_out.topRows(n), hooks);
  for (int l = layer_ + 1; l < model_->config.layers; ++l)
    x = hooks_.empty() ? run_layer(*model_, l, x) : run_layer(*model_, l, x, hooks_[static_cast<std::size_t>(l)]);
  return next_token_probabilities(logits(*model_, x, row, 1).row(0));
}

const RowVector& ModelSession::baseline(int row) const {
  auto it = baseline_.find(row);
  if (it != baseline_.end()) return it->second;
  RowVector p = !ablations_.empty() ? next_token_probabilities(logits(*model_, unablated_output_, row, 1).row(0))
                : unedited_attention_.size() > 0 && !residual_from_unedited_
                    ? probabilities(unedited_attention_, row)
                    : next_token_probabilities(logits(*model_, residual_.back(), row, 1).row(0));
  return baseline_.emplace(row, std::move(p)).first->second;
}

std::vector<Prediction> ModelSession::predictions(const Matrix& attention_out, int row, int k) const {
  row = std::clamp(row, 0, T() - 1);
  const RowVector& before = baseline(row);
  // Unedited (the output it counts as "before"): the same numbers, not a second pass.
  const bool unedited = ablations_.empty() && unedited_attention_.size() > 0 && attention_out.rows() == unedited_attention_.rows() &&
                        attention_out.cols() == unedited_attention_.cols() && attention_out == unedited_attention_;
  const RowVector p = unedited ? before : probabilities(attention_out, row);
  std::vector<int> order(static_cast<std::size_t>(p.size()));
  std::iota(order.begin(), order.end(), 0);
  k = std::clamp(k, 0, static_cast<int>(order.size()));
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int a, int b) {
    return p(a) != p(b) ? p(a) > p(b) : a < b;
  });
  std::vector<Prediction> out;
  for (int i = 0; i < k; ++i) {
    const int id = order[static_cast<std::size_t>(i)];
    out.push_back({id, p(id), before(id)});
  }
  return out;
}

}  // namespace attention_lab
