#pragma once
// The Train tab's run, without GL: a Trainer over the document's scenario,
// the curves it drew (loss, and per trained matrix the gradient norm and the
// update-to-data ratio), and whether it is playing. Each step's new matrices
// go back as SetMatrix edits under one gesture, so a whole run is one undo
// entry and the pipeline animates as the matrices learn. While it plays, the
// steps are computed on a thread of their own (play_steps, poll): at T = 1024
// a step takes longer than a frame, and the window stays live meanwhile.

#include "attention_lab/document.h"
#include "attention_lab/training.h"
#include "logic/task_thread.h"

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

  // Playing: starts up to `n` steps on a thread of their own, from a copy of
  // `doc`'s scenario, unless steps are being computed already (or the run
  // cannot go on: then it stops, with `message` saying why).
  void play_steps(const Document& doc, int n);
  // The steps the thread finished, applied as advance() applies its own;
  // dropped when `doc` changed meanwhile (an edit, an undo: they were
  // computed from matrices it no longer has). Returns the steps applied.
  int poll(const Document& doc, const ApplyEdit& apply, std::uint64_t gesture);
  bool computing() const { return batch_.running() || batch_pending_; }

  // A fresh optimizer (its moments forgotten) and empty curves.
  void restart();

  const TrainingHistory& history() const { return history_; }
  int steps() const { return static_cast<int>(history_.loss.size()); }

 private:
  // Whether the run can take a step on `s`; stops with the reason if not.
  bool can_step(const Scenario& s);
  void record(const TrainStep& step);

  // Steps computed on the thread: each step's numbers, the matrices after
  // the last, the optimizer after them, and the document's revision they
  // started from.
  struct Batch {
    std::vector<TrainStep> steps;
    std::optional<Trainer> trainer;
    std::string error;
  };
  std::optional<Trainer> trainer_;
  TrainingHistory history_;
  TaskThread<Batch> batch_;
  bool batch_pending_ = false;
  std::uint64_t batch_revision_ = 0;
};

// The attend targets the Train tab offers when the scenario has no loss:
// each query row's key for "previous" (i − 1, row 0 itself), "first" (0) or
// "itself" (i), within what the mask allows (else the nearest allowed key
// before it). Empty when a row allows no key.
std::vector<int> attend_targets(const Scenario& s, const std::string& pattern);

}  // namespace attention_lab::gui
