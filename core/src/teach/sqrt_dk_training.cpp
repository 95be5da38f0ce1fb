// The √d_k experiment as two training runs (sqrt_dk_training.h), on the
// scenario engine, its backward pass and its SGD.
#include "attention_lab/sqrt_dk_training.h"

#include "attention_lab/gradients.h"
#include "attention_lab/presets.h"
#include "attention_lab/stage_registry.h"
#include "attention_lab/training.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace attention_lab {
namespace {

std::string number(double v) {  // three significant digits
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", v);
  return text;
}

SqrtDkTrainingRun train(Scenario s, const Loss& loss, const SqrtDkTrainingOptions& o) {
  SqrtDkTrainingRun run;
  TrainSettings settings;
  settings.optimizer = OptimizerKind::Sgd;
  settings.learning_rate = o.learning_rate;
  settings.trained = {StageKind::W_q, StageKind::W_k};
  Trainer trainer(settings);
  const StageId masked_grad{StageKind::Masked, 0, 0, Role::Gradient};
  for (int step = 0; step < o.steps; ++step) {
    Engine engine;
    engine.recompute_all(s);
    const Gradients g = backward(engine, s, loss);
    const Matrix& a = engine.stage(StageId::of_head(StageKind::Weights, 0));
    double entropy = 0.0;
    for (Eigen::Index i = 0; i < a.rows(); ++i)
      for (Eigen::Index j = 0; j < a.cols(); ++j)
        if (a(i, j) > 0.0f) entropy -= static_cast<double>(a(i, j)) * std::log(static_cast<double>(a(i, j)));
    run.loss.push_back(g.loss);
    run.entropy.push_back(entropy / static_cast<double>(a.rows()));
    const Matrix* dmasked = g.find(masked_grad);
    run.softmax_gradient.push_back(dmasked ? static_cast<double>(dmasked->norm()) : 0.0);
    const TrainStep t = trainer.step(engine, s, loss);
    if (!t.error.empty()) {
      run.error = t.error;
      break;
    }
    for (const auto& [kind, m] : t.updated) s.*(spec(kind).member) = SharedMatrix(m);
  }
  return run;
}

}  // namespace

std::string validate(const SqrtDkTrainingOptions& o) {
  if (o.d_k < 1 || o.d_k > 256) return "d_k: expected 1 to 256, found " + std::to_string(o.d_k);
  if (o.T < 2 || o.T > 64) return "T: expected 2 to 64, found " + std::to_string(o.T);
  if (o.steps < 1 || o.steps > 5000) return "steps: expected 1 to 5000, found " + std::to_string(o.steps);
  if (!(o.learning_rate > 0.0 && o.learning_rate < 100.0))
    return "learning rate: expected a number above 0 and below 100, found " + number(o.learning_rate);
  return "";
}

SqrtDkTrainingResult run_sqrt_dk_training(const SqrtDkTrainingOptions& o) {
  SqrtDkTrainingResult r;
  r.options = o;
  if (r.error = validate(o); !r.error.empty()) return r;
  // One causal head, X of unit variance, W_q and W_k of variance 1/d_k: q and
  // k have entries of variance 1, so q·k has variance d_k, as the seed says.
  Scenario s = random_scenario(o.T, o.d_k, 1, MaskKind::Causal, o.seed);
  s.X = SharedMatrix(Matrix(s.X.get() * std::sqrt(3.0f)));
  // The loss reaches the scores through V, as a model's does: the output
  // should be what a head that looks at the word before would give, each
  // row the previous row's V through W_o (row 0 its own). A loss on the
  // weights themselves (−log A) would not show the effect: its gradient
  // A − y does not vanish when the softmax saturates on a wrong key.
  const Matrix v = s.X.get() * s.W_v.get();
  Matrix previous(v.rows(), v.cols());
  for (Eigen::Index i = 0; i < v.rows(); ++i) previous.row(i) = v.row(i == 0 ? 0 : i - 1);
  Loss loss;
  loss.kind = LossKind::Mse;
  loss.target = SharedMatrix(Matrix(previous * s.W_o.get()));
  Scenario unscaled = s;
  unscaled.scale = false;
  r.scaled = train(s, loss, o);
  r.unscaled = train(unscaled, loss, o);

  const auto& a = r.scaled;
  const auto& b = r.unscaled;
  const bool slower = b.loss.back() > 1.5 * a.loss.back(), faster = a.loss.back() > 1.5 * b.loss.back();
  r.summary = "At d_k = " + std::to_string(o.d_k) + " the scores without 1/√d_k start " +
              number(std::sqrt(static_cast<double>(o.d_k))) + " times wider: the weights rows start with entropy " +
              number(b.entropy.front()) + " nats against " + number(a.entropy.front()) + " with it. After " +
              std::to_string(static_cast<int>(a.loss.size())) + " steps the loss is " + number(b.loss.back()) +
              " without the scaling and " + number(a.loss.back()) + " with it, and the gradient through the softmax " +
              number(b.softmax_gradient.back()) + " against " + number(a.softmax_gradient.back()) +
              (slower   ? ": the unscaled run learns more slowly; its saturated softmax passes little back."
               : faster ? ": here the unscaled run learns faster (its larger scores act as a larger learning rate)."
                        : ": at this d_k the two runs hardly differ.");
  return r;
}

}  // namespace attention_lab
