#include "logic/training_run.h"

#include "attention_lab/stage_registry.h"

#include <stdexcept>

namespace attention_lab::gui {

void TrainingRun::restart() {
  // steps on the thread finish unread: the next batch starts after them
  batch_.cancel();
  batch_pending_ = false;
  trainer_.reset();
  history_ = {};
  message.clear();
}

bool TrainingRun::can_step(const Scenario& s) {
  const auto stop = [&](std::string why) {
    message = std::move(why);
    playing = false;
    return false;
  };
  if (!s.loss) return stop("The scenario has no loss: choose what the head should look at first.");
  if (const std::string p = training_problem(s, settings); !p.empty()) return stop(p);
  if (const std::string p = gradients_problem(s, *s.loss); !p.empty()) return stop(p);
  // another optimizer starts afresh; a new learning rate or set of matrices keeps the moments
  if (!trainer_ || trainer_->settings().optimizer != settings.optimizer) trainer_.emplace(settings);
  else trainer_->adjust(settings);
  return true;
}

void TrainingRun::record(const TrainStep& step) {
  history_.loss.push_back(static_cast<float>(step.loss));
  for (const auto& [kind, v] : step.grad_norm) history_.grad_norm[kind].push_back(static_cast<float>(v));
  for (const auto& [kind, v] : step.update_ratio) history_.update_ratio[kind].push_back(static_cast<float>(v));
}

void TrainingRun::play_steps(const Document& doc, int n) {
  if (computing() || !can_step(doc.scenario())) return;
  batch_revision_ = doc.revision();
  batch_pending_ = true;
  // The thread works on copies: the scenario (its matrices are shared until
  // a step replaces them) and the optimizer, which comes back with the result.
  batch_.start([s = doc.scenario(), trainer = *trainer_, n](const TaskThread<Batch>::Progress& progress) mutable {
    Batch b;
    for (int i = 0; i < n && progress(static_cast<double>(i) / n); ++i) {
      Engine engine;
      engine.recompute_all(s);
      TrainStep step = trainer.step(engine, s, *s.loss);
      if (!step.error.empty()) {
        b.error = std::move(step.error);
        break;
      }
      for (const auto& [kind, m] : step.updated) s.*spec(kind).member = SharedMatrix(m);
      // only the last step's matrices are applied: the others' are dropped as it goes
      if (!b.steps.empty()) b.steps.back().updated.clear();
      b.steps.push_back(std::move(step));
    }
    b.trainer = std::move(trainer);
    return b;
  });
}

int TrainingRun::poll(const Document& doc, const ApplyEdit& apply, std::uint64_t gesture) {
  if (!batch_pending_) return 0;
  std::string error;
  std::optional<Batch> b = batch_.take(error);
  if (!b && error.empty()) return 0;  // still computing
  batch_pending_ = false;
  if (!error.empty()) {
    message = error;
    playing = false;
    return 0;
  }
  // computed from matrices the document no longer has: dropped, the optimizer as it was
  if (doc.revision() != batch_revision_) return 0;
  trainer_ = std::move(b->trainer);
  for (const TrainStep& step : b->steps) record(step);
  if (!b->steps.empty())
    for (const auto& [kind, m] : b->steps.back().updated)
      if (!apply(SetMatrix{StageId::input(kind), SharedMatrix(m), "train"}, gesture)) {
        message = "Training paused: the app is busy.";
        playing = false;
        return static_cast<int>(b->steps.size());
      }
  if (!b->error.empty()) {
    message = b->error;
    playing = false;
  } else {
    message.clear();
  }
  return static_cast<int>(b->steps.size());
}

int TrainingRun::advance(const Document& doc, int n, const ApplyEdit& apply, std::uint64_t gesture) {
  const auto stop = [&](std::string why) {
    message = std::move(why);
    playing = false;
  };
  if (computing()) return 0;  // the thread's steps come first (poll)
  if (!can_step(doc.scenario())) return 0;
  int taken = 0;
  for (; taken < n; ++taken) {
    // (the engine is current: every edit recomputes what it changed)
    const TrainStep step = trainer_->step(doc.engine(), doc.scenario(), *doc.scenario().loss);
    if (!step.error.empty()) return stop(step.error), taken;
    for (const auto& [kind, m] : step.updated)
      if (!apply(SetMatrix{StageId::input(kind), SharedMatrix(m), "train"}, gesture))
        return stop("Training paused: the app is busy."), taken;
    record(step);
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
