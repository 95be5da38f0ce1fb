#include "attention_lab/training.h"

#include "attention_lab/stage_registry.h"

#include <cmath>
#include <stdexcept>

namespace attention_lab {

const char* to_string(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::Sgd: return "sgd";
    case OptimizerKind::Momentum: return "momentum";
    case OptimizerKind::Adam: return "adam";
    case OptimizerKind::AdamW: return "adamw";
  }
  return "sgd";
}

std::optional<OptimizerKind> parse_optimizer(const std::string& text) {
  for (const OptimizerKind k : {OptimizerKind::Sgd, OptimizerKind::Momentum, OptimizerKind::Adam, OptimizerKind::AdamW})
    if (text == to_string(k)) return k;
  return std::nullopt;
}

std::string training_problem(const Scenario& s, const TrainSettings& settings) {
  if (!(settings.learning_rate > 0.0) || !std::isfinite(settings.learning_rate))
    return "learning rate: expected a number greater than 0, found " + std::to_string(settings.learning_rate);
  if (!(settings.weight_decay >= 0.0) || !std::isfinite(settings.weight_decay))
    return "weight decay: expected a number of 0 or more, found " + std::to_string(settings.weight_decay);
  if (settings.trained.empty()) return "trained: expected at least one matrix to train";
  for (const StageKind k : settings.trained) {
    const StageSpec& sp = spec(k);
    if (!sp.input || !sp.member)
      return std::string("trained: ") + sp.id_name + " is computed, not a matrix of the scenario (train W_q, W_k, W_v, …)";
    if (!setting_on(s, sp.requires_setting)) return std::string("trained: ") + sp.id_name + " is not used by this scenario";
  }
  return {};
}

TrainStep Trainer::step(const Engine& engine, const Scenario& s, const Loss& loss) {
  if (const std::string problem = training_problem(s, settings_); !problem.empty()) throw std::invalid_argument(problem);
  const Gradients grads = backward(engine, s, loss);
  TrainStep out;
  out.step = steps_ + 1;
  out.loss = grads.loss;
  if (!std::isfinite(grads.loss)) {
    out.error = "step " + std::to_string(out.step) + ": the loss is " + std::to_string(grads.loss) +
                "; nothing was changed (a learning rate that is too large is the likely cause)";
    return out;
  }
  const TrainSettings& o = settings_;
  const int t = out.step;
  // the optimizer's state after this step, kept only if every matrix stays finite
  std::map<StageKind, Eigen::MatrixXd> first = first_, second = second_;
  for (const StageKind k : o.trained) {
    const Matrix* g32 = grads.find(StageId::input(k));
    if (!g32) throw std::logic_error(std::string("no gradient of ") + kind_name(k));
    const Matrix& p32 = (s.*spec(k).member).get();
    const Eigen::MatrixXd p = p32.cast<double>();
    Eigen::MatrixXd g = g32->cast<double>();
    out.grad_norm[k] = g.norm();
    Eigen::MatrixXd next = p;
    switch (o.optimizer) {
      case OptimizerKind::Sgd:
        next = p - o.learning_rate * (g + o.weight_decay * p);
        break;
      case OptimizerKind::Momentum: {
        g += o.weight_decay * p;
        Eigen::MatrixXd& buf = first[k];
        // torch: the first step's buffer is the gradient (and so after a change of the matrix's shape)
        const bool fresh = buf.rows() != g.rows() || buf.cols() != g.cols();
        buf = fresh ? g : Eigen::MatrixXd(o.momentum * buf + g);
        next = p - o.learning_rate * buf;
        break;
      }
      case OptimizerKind::Adam:
      case OptimizerKind::AdamW: {
        if (o.optimizer == OptimizerKind::AdamW) next = p * (1.0 - o.learning_rate * o.weight_decay);
        else g += o.weight_decay * p;
        Eigen::MatrixXd& m = first[k];
        Eigen::MatrixXd& v = second[k];
        if (m.rows() != p.rows() || m.cols() != p.cols()) m = Eigen::MatrixXd::Zero(p.rows(), p.cols()), v = m;  // new, or resized
        m = o.beta1 * m + (1.0 - o.beta1) * g;
        v = o.beta2 * v + (1.0 - o.beta2) * g.cwiseProduct(g);
        const double c1 = 1.0 - std::pow(o.beta1, t), c2 = 1.0 - std::pow(o.beta2, t);
        const Eigen::MatrixXd denom = (v.cwiseSqrt() / std::sqrt(c2)).array() + o.eps;
        next -= (o.learning_rate / c1) * m.cwiseQuotient(denom);
        break;
      }
    }
    Matrix stored = next.cast<float>();  // the scenario keeps float32: a number past its range is not finite either
    if (!stored.allFinite()) {
      out.error = "step " + std::to_string(t) + ": " + kind_name(k) +
                  " would hold a number that is not finite; nothing was changed (a learning rate that is too large "
                  "is the likely cause)";
      out.updated.clear();
      return out;
    }
    const double norm = p.norm();
    out.update_ratio[k] = norm > 0.0 ? (next - p).norm() / norm : 0.0;
    out.updated.emplace_back(k, std::move(stored));
  }
  steps_ = t;
  first_ = std::move(first);
  second_ = std::move(second);
  return out;
}

}  // namespace attention_lab
