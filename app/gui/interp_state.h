#pragma once
// What the Interpret tab holds: a corrupted prompt beside the model's text,
// the answer tokens and the kind of patching asked for, the last sweep and
// attribution (with what they were of), and the threads computing new ones.

#include "attention_lab/activation_patching.h"
#include "attention_lab/logit_attribution.h"
#include "attention_lab/model_session.h"
#include "logic/task_thread.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attention_lab::gui {

struct PatchOutcome {
  std::shared_ptr<const ModelSession> session;  // the clean run's model, tokenizer and ids
  std::vector<int> corrupted;
  PatchMetric metric;
  PatchSweep sweep;
  double seconds = 0.0;
  bool complete = true;  // false: cancelled part way (the cells not run are NaN)
};

struct AttributionOutcome {
  std::shared_ptr<const ModelSession> session;
  LogitAttribution attribution;
};

struct InterpState {
  // Patching: what is typed (applied when the sweep runs).
  std::string corrupted_text;
  std::string answer_text;  // empty: the clean text's predicted next token
  std::string wrong_text;   // empty: the corrupted text's predicted next token
  int metric = 0;           // 0: logit difference, 1: probability of the answer
  int kind = 0;             // an index into kPatchKinds
  int shown_position = 0;   // z_by_position: which position's layers × heads grid is shown
  std::optional<PatchOutcome> patch;
  TaskThread<PatchOutcome> patch_task;
  std::string patch_error;    // why the last sweep failed
  std::string patch_problem;  // why a sweep cannot run now (the texts' lengths, an answer of two tokens), as shown

  // Direct logit attribution of a token (empty: the predicted one) at the predicted row.
  std::string attribution_token;
  std::optional<AttributionOutcome> attribution;
  TaskThread<AttributionOutcome> attribution_task;
  std::string attribution_error;

  // The hovered cell of a grid this frame ("" none), for the probe.
  std::string hovered;
};

}  // namespace attention_lab::gui
