#pragma once
// What the Interpret tab holds: a corrupted prompt beside the model's text,
// the answer tokens and the kind of patching asked for, the last sweep and
// attribution (with what they were of), and the threads computing new ones.

#include "attention_lab/activation_patching.h"
#include "attention_lab/logit_attribution.h"
#include "attention_lab/logit_lens.h"
#include "attention_lab/model_session.h"
#include "attention_lab/prompt_batch.h"
#include "attention_lab/snapshot.h"
#include "logic/task_thread.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attention_lab::gui {

// Whether a result computed on `then` holds for `now`: the Interpret tab's
// results are of the model as loaded and its text, not of the focused layer
// (focusing another head keeps them).
inline bool same_model_and_text(const ModelSession& then, const ModelSession& now) {
  return then.model_ptr() == now.model_ptr() && then.ids() == now.ids();
}
inline bool same_model(const ModelSession& then, const ModelSession& now) { return then.model_ptr() == now.model_ptr(); }

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
  LogitAttribution attribution;  // the mean, over a batch
  // Over the prompts file: each prompt's (at its last row), in its order,
  // and which reading of the file they are of (InterpState::prompts_revision).
  std::vector<LogitAttribution> each;
  int prompts_revision = -1;
};

// The focused layer run on the corrupted text, as a Compare snapshot: every
// stage then shows clean − corrupted.
struct CorruptedSnapshot {
  std::shared_ptr<const ModelSession> session;  // the clean run it was made beside
  std::vector<int> ids;
  int layer = 0;
  std::optional<Snapshot> snapshot;
};

// The logit lens at one row: the top tokens after each layer, and one token followed.
struct LensOutcome {
  std::shared_ptr<const ModelSession> session;
  int row = 0;
  int k = 0;
  std::vector<LensLayer> layers;
};

// Head detectors on text made for them: repeated random tokens, or the
// prompts file (each prompt, their mean, and the mean pattern of each head
// when the prompts are of one length).
struct DetectorOutcome {
  std::shared_ptr<const ModelSession> session;
  std::string source;  // what they ran on, as shown ("the mean of 12 prompts of FILE")
  bool batch = false;  // over the prompts file (else one generated sequence)
  std::vector<Prompt> prompts;
  int prompts_revision = -1;  // batch: which reading of the file
  BatchHeads heads;
};

struct InterpState {
  // A prompts file, one a line: the detectors and the attribution run over it.
  std::string prompts_field;  // the path as typed
  std::string prompts_path;   // the file read
  std::vector<Prompt> prompts;
  std::shared_ptr<const Tokenizer> prompts_tokenizer;  // what they were read with (another model reads them again)
  std::string prompts_error;
  int prompts_revision = 0;  // counts the readings: what ran over an earlier one is not shown as of this one
  int shown_prompt = -1;  // the grids show: −1 the mean, else this prompt's own values

  // Head detectors: 0 on repeated random tokens, 1 on the prompts file.
  int detector_source = 0;
  int random_length = 25;  // the sequence is twice as long
  int random_seed = 1;
  std::optional<DetectorOutcome> detectors;
  TaskThread<DetectorOutcome> detector_task;
  std::string detector_error;

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
  TaskThread<CorruptedSnapshot> compare_task;  // "Compare the stages": the corrupted run's focused layer
  std::string compare_error;

  // Direct logit attribution of a token (empty: the predicted one) at the predicted row,
  // or over the prompts file (each at its last row).
  std::string attribution_token;
  std::string attribution_minus;  // a second token: the attribution of the difference of the two logits
  bool attribution_batch = false;
  std::optional<AttributionOutcome> attribution;
  TaskThread<AttributionOutcome> attribution_task;
  std::string attribution_error;

  // The logit lens at the predicted row: k tokens a layer, and a token
  // followed (empty: the model's prediction).
  int lens_k = 5;
  std::string lens_track;
  std::optional<LensOutcome> lens;
  TaskThread<LensOutcome> lens_task;
  std::string lens_error;

  // The hovered cell of a grid this frame ("" none), for the probe.
  std::string hovered;
};

}  // namespace attention_lab::gui
