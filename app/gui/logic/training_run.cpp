#include "logic/training_run.h"

#include "attention_lab/stage_registry.h"

#include <stdexcept>

namespace attention_lab::gui {

void TrainingRun::restart() {
  trainer_.reset();
  history_ = {};
  message.clear();
}

int TrainingRun::advance(const Document& doc, int n, const ApplyEdit& apply, std::uint64_t gesture) {
  const Scenario& s = doc.scenario();
  const auto stop = [&](std::string why) {
    message = std::move(why);
    playing = false;
  };
  if (!s.loss) {
    stop("The scenario has no loss: choose what the head should look at first.");
    return 0;
  }
  if (const std::string p = training_problem(s, settings); !p.empty()) return stop(p), 0;
  if (const std::string p = gradients_problem(s, *s.loss); !p.empty()) return stop(p), 0;
  // another optimizer starts afresh; a new learning rate or set of matrices keeps the moments
  if (!trainer_ || trainer_->settings().optimizer != settings.optimizer) trainer_.emplace(settings);
  else trainer_->adjust(settings);
  int taken = 0;
  for (; taken < n; ++taken) {
    // (the engine is current: every edit recomputes what it changed)
    const TrainStep step = trainer_->step(doc.engine(), doc.scenario(), *doc.scenario().loss);
    if (!step.error.empty()) return stop(step.error), taken;
    for (const auto& [kind, m] : step.updated)
      if (!apply(SetMatrix{StageId::input(kind), SharedMatrix(m), "train"}, gesture))
        return stop("Training paused: the app is busy."), taken;
    history_.loss.push_back(static_cast<float>(step.loss));
    for (const auto& [kind, v] : step.grad_norm) history_.grad_norm[kind].push_back(static_cast<float>(v));
    for (const auto& [kind, v] : step.update_ratio) history_.update_ratio[kind].push_back(static_cast<float>(v));
  }
  message.clear();
  return taken;
}

std::vector<int> attend_targets(const Scenario& s, const std::string& pattern) {
  std::vector<int> out;
  const int T = s.T(), Tk = s.dims().T_k;
  for (int i = 0; i < T; ++i) {
    int want = pattern == "first" ? 0 : pattern == "itself" ? i : std::max(0, i - 1);
    want = std::min(want, Tk - 1);
    int j = want;
    while (j >= 0 && !s.mask_allows(i, j)) --j;  // the nearest allowed key before it
    if (j < 0)
      for (j = want + 1; j < Tk && !s.mask_allows(i, j); ++j) {
      }
    if (j >= Tk) return {};
    out.push_back(j);
  }
  return out;
}

}  // namespace attention_lab::gui
