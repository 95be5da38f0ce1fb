#pragma once
// Training a scenario's matrices on its loss: seed 004's "W_q, W_k and W_v
// learn". One step takes the gradients (gradients.h) and moves every trained
// matrix by an optimizer with torch.optim's semantics, so a run here and the
// same run in PyTorch agree step for step (tests/golden/generate_training.py).
// The trainer returns the new matrices; the caller applies them (the app as
// SetMatrix edits, one undo entry for a run).

#include "attention_lab/engine.h"
#include "attention_lab/gradients.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace attention_lab {

enum class OptimizerKind { Sgd, Momentum, Adam, AdamW };

const char* to_string(OptimizerKind kind);                        // "sgd", "momentum", "adam", "adamw"
std::optional<OptimizerKind> parse_optimizer(const std::string& text);

struct TrainSettings {
  OptimizerKind optimizer = OptimizerKind::Adam;
  double learning_rate = 0.01;
  double weight_decay = 0.0;  // SGD and Adam: added to the gradient (L2); AdamW: decoupled
  double momentum = 0.9;      // Momentum
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;  // Adam, AdamW
  std::vector<StageKind> trained = {StageKind::W_q, StageKind::W_k, StageKind::W_v};
};

// Why `settings` cannot train `s` (a matrix that is not an input the
// scenario uses, a learning rate that is not positive…), or "".
std::string training_problem(const Scenario& s, const TrainSettings& settings);

struct TrainStep {
  int step = 0;          // 1 for the first
  double loss = 0.0;     // before the step
  std::map<StageKind, double> grad_norm;     // ‖∂L/∂W‖ of each trained matrix
  std::map<StageKind, double> update_ratio;  // ‖ΔW‖ / ‖W‖ (about 1e-3 is healthy)
  std::vector<std::pair<StageKind, Matrix>> updated;  // the trained matrices after the step
  // Set when the step would leave a number that is not finite: nothing is
  // updated, and it names the step and the matrix ("step 12: W_q: …").
  std::string error;
};

class Trainer {
 public:
  explicit Trainer(TrainSettings settings) : settings_(std::move(settings)) {}

  // One step on `s` (computed by `engine`) under `loss`. Throws
  // std::invalid_argument with training_problem's or gradients_problem's
  // message when they are not "".
  TrainStep step(const Engine& engine, const Scenario& s, const Loss& loss);

  // New settings for the next steps (a learning rate changed mid-run, as
  // torch allows): the optimizer's moments are kept; a matrix newly trained,
  // or one whose shape changed (T, d_k…), starts with fresh ones.
  void adjust(TrainSettings settings) { settings_ = std::move(settings); }

  int steps() const { return steps_; }
  const TrainSettings& settings() const { return settings_; }

 private:
  TrainSettings settings_;
  int steps_ = 0;
  // per trained matrix: momentum buffer, or Adam's first and second moments (float64)
  std::map<StageKind, Eigen::MatrixXd> first_, second_;
};

}  // namespace attention_lab
