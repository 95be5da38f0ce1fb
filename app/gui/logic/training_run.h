#pragma once
// The Train tab's run, without GL: a Trainer over the document's scenario,
// the curves it drew (loss, and per trained matrix the gradient norm and the
// update-to-data ratio), and whether it is playing. Each step's new matrices
// go back as SetMatrix edits under one gesture, so a whole run is one undo
// entry and the pipeline animates as the matrices learn.

#include "attention_lab/document.h"
#include "attention_lab/training.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace attention_lab::gui {

struct TrainingHistory {
  std::vector<float> loss;                               // before each step
  std::map<StageKind, std::vector<float>> grad_norm;     // per trained matrix
  std::map<StageKind, std::vector<float>> update_ratio;  // ‖ΔW‖ / ‖W‖
};

class TrainingRun {
 public:
  TrainSettings settings;     // edited by the panel; call restart() after a change
  int steps_per_frame = 1;
  bool playing = false;
  std::string message;        // why the run stopped or cannot start; empty: fine

  // Applies one edit under a gesture; false when it was refused (busy).
  using ApplyEdit = std::function<bool(const Edit&, std::uint64_t gesture)>;

  // Up to `n` steps on `doc` under its scenario's loss, each step's matrices
  // applied through `apply` under `gesture`. Stops (and stops playing) at a
  // refusal or a step that would leave a number that is not finite, with
  // `message` saying why. Returns the steps taken.
  int advance(const Document& doc, int n, const ApplyEdit& apply, std::uint64_t gesture);

  // A fresh optimizer (its moments forgotten) and empty curves.
  void restart();

  const TrainingHistory& history() const { return history_; }
  int steps() const { return static_cast<int>(history_.loss.size()); }

 private:
  std::optional<Trainer> trainer_;
  TrainingHistory history_;
};

// The attend targets the Train tab offers when the scenario has no loss:
// each query row's key for "previous" (i − 1, row 0 itself), "first" (0) or
// "itself" (i), within what the mask allows (else the nearest allowed key
// before it). Empty when a row allows no key.
std::vector<int> attend_targets(const Scenario& s, const std::string& pattern);

}  // namespace attention_lab::gui
