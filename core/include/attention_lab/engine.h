#pragma once
// The engine computes every stage of multi-head self-attention from a Scenario
// and keeps them, so a front end can show each one. It tracks which stages are
// stale and recomputes only those, head by head.
//
// Storage: Q, K, V hold all heads side by side (head i is column block i, the
// same memory the per-head views show). scores, scaled, masked and weights are
// T×T per head. concat holds the heads' contexts side by side, so context_i is
// a view of it, exactly as the math concatenates them.

#include "attention_lab/matrix.h"
#include "attention_lab/scenario.h"
#include "attention_lab/softmax.h"
#include "attention_lab/stage_id.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace attention_lab {

// Something the user should know about the numbers, e.g. a query row whose
// mask lets it attend to nothing.
struct Warning {
  int head = -1;  // -1 when not about one head
  int row = -1;
  std::string message;
};

// Which computed stages went stale. Head-level granularity: editing one column
// of W_q only touches the head that column belongs to.
class Invalidation {
 public:
  void mark(StageKind kind, int head);    // one head (ignored for per-layer kinds)
  void mark_all_heads(StageKind kind);
  void mark_everything();
  bool everything() const { return everything_; }

  struct Entry {
    StageKind kind;
    int head;  // -1 = every head
  };
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  bool everything_ = false;
  std::vector<Entry> entries_;
};

class Engine {
 public:
  // Forgets everything and computes all stages of `scenario`, which must stay
  // alive and unmoved until the next recompute_all (the engine reads inputs
  // through it).
  void recompute_all(const Scenario& scenario);

  // Recomputes the stages `what` names and everything downstream of them.
  void recompute(const Scenario& scenario, const Invalidation& what);

  // The current value of any stage (inputs included). Per-head views are
  // windows onto the shared storage.
  MatrixView stage(StageId id) const;

  // Bumped every time a stage's values are rewritten; front ends compare it to
  // know when to re-upload a texture.
  std::uint64_t version(StageId id) const;

  const std::vector<Warning>& warnings() const { return warnings_; }
  const Dims& dims() const { return dims_; }

  // How many times each stage kind was recomputed (summed over heads) since
  // the last reset_counters(); tests use it to prove work was skipped.
  int recompute_count(StageKind kind) const { return counts_[static_cast<std::size_t>(kind)]; }
  void reset_counters() { counts_.fill(0); }

 private:
  struct HeadStages {
    Matrix scores, scaled, masked, weights;
  };

  void resize_storage();
  void compute_projection(StageKind kind, int head);
  void compute_scores(int head);
  void compute_scaled(int head);
  void compute_masked(int head);
  void compute_weights(int head);
  void compute_context(int head);
  void compute_output();
  void apply_pins(StageKind kind, int head);
  void collect_warnings();
  void bump(StageKind kind, int head);

  const Scenario* scenario_ = nullptr;
  Dims dims_;
  Matrix Q_, K_, V_, concat_, output_, mask_;
  std::vector<HeadStages> heads_;
  std::vector<Warning> warnings_;
  std::vector<std::vector<RowIssue>> row_issues_;  // [head][row], from the last softmax
  std::uint64_t next_version_ = 1;
  // versions_[kind][head]; per-layer kinds use head 0
  std::vector<std::array<std::uint64_t, kStageKindCount>> versions_;
  std::array<int, kStageKindCount> counts_{};
};

}  // namespace attention_lab
