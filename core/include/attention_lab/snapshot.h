#pragma once
// Compare: a snapshot remembers every stage of a document, so each stage can
// later show what changed since ("what changed when I edited this weight?"),
// and the snapshot's scenario can be restored as an undoable edit.
//
// A snapshot keeps a copy of the scenario (which shares every matrix with the
// document's until one of them is written: copy-on-write) and a read-only
// copy of the document's engine (Engine::read_only_copy): the contexts, the
// output, the mask and each row's softmax state, but neither Q, K, V nor the
// scores: when a stage of a head is compared it projects that head's blocks
// of Q, K and V again from its scenario and recomputes its scores from them,
// letting the previous head's go. So taking one costs a copy of a few
// matrices, not a forward pass, and at T=1024 with 12 heads, after an edit of
// X, it keeps about 14 MiB where the document's engine keeps 70 to 130 MiB.
// What it recomputes and the document's incrementally updated stages agree
// to within rounding, which diff() leaves out (kSnapshotRoundingTolerance).

#include "attention_lab/document.h"
#include "attention_lab/edit.h"
#include "attention_lab/engine.h"
#include "attention_lab/matrix.h"
#include "attention_lab/scenario.h"
#include "attention_lab/stage_id.h"

#include <cstdint>
#include <memory>
#include <string>

namespace attention_lab {

struct Snapshot {
  std::shared_ptr<const Scenario> scenario;
  Engine engine;  // every stage of *scenario; reads from it, so it lives as long

  // A stage as it was (see Engine::stage: use from one thread at a time).
  MatrixView stage(StageId id) const { return engine.stage(id); }
  bool has(StageId id) const;
  // Memory only the snapshot keeps: its engine, and those of its scenario's
  // matrices that the document no longer shares.
  std::uint64_t bytes() const;
};

// Computes every stage of `scenario` afresh (then keeps the read-only part).
// Safe on any thread: it reads only `scenario`. `control` (may be null) reports progress; setting its `cancel`
// throws Cancelled.
Snapshot compute_snapshot(std::shared_ptr<const Scenario> scenario, ComputeControl* control = nullptr);
// The document now (on the calling thread): copies, computes nothing.
Snapshot take_snapshot(const Document& doc);

// Changes this small, relative to the largest finite magnitude of the stage,
// count as rounding: the engine updates stages incrementally after single-cell
// edits and promises agreement with a full recompute to within 1e-5 of that
// magnitude (engine.h), so an edit and its undo can leave such traces, and so
// can the snapshot's fresh computation of what the document shows.
inline constexpr double kSnapshotRoundingTolerance = 1e-5;

// How one stage differs between the snapshot and the document now.
struct StageDiff {
  StageId stage;
  // The stage does not have the same shape as in the snapshot (or exists in
  // only one of them): then `note` says so and there is no difference matrix.
  bool shape_changed = false;
  std::string note;  // "shape changed: 7 x 7 then, 5 x 5 now", "not in the snapshot", …

  // current − snapshot, cell by cell. Equal values give 0, including −∞ and
  // −∞, +∞ and +∞, and NaN and NaN, and so does a change within `tolerance`.
  // A change from or to an infinity is ±∞ (1 − (−∞) = +∞); a change from or
  // to NaN is NaN.
  Matrix difference;
  bool changed = false;    // any cell of `difference` is not 0
  double tolerance = 0.0;  // the absolute size below which a change was taken for rounding
  // The cell with the largest |change| (a NaN change ranks above ±∞, which
  // ranks above any finite change; ties go to the first in row order), and the
  // signed change there. Row and column are −1 when nothing changed.
  int largest_row = -1;
  int largest_col = -1;
  float largest_change = 0.0f;
};

// `relative_tolerance` times the largest finite |value| of the stage (then or
// now) is the rounding allowance; 0 reports every change, however small.
StageDiff diff(const Snapshot& snapshot, const Document& doc, StageId stage,
               double relative_tolerance = kSnapshotRoundingTolerance);
// The same for two matrices of one shape (`then` and `now`); `stage` is only
// recorded in the result.
StageDiff diff_matrices(StageId stage, MatrixView then, MatrixView now,
                        double relative_tolerance = kSnapshotRoundingTolerance);

// The edit that brings the snapshot's scenario back; applied through the
// Document it is one undo step like any other.
ReplaceScenario restore_edit(const Snapshot& snapshot);

}  // namespace attention_lab
