#include "attention_lab/snapshot.h"

#include "attention_lab/cell_ref.h"
#include "attention_lab/stage_info.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attention_lab {

namespace {

std::string shape_text(Eigen::Index rows, Eigen::Index cols) {
  return std::to_string(rows) + " x " + std::to_string(cols);
}

// The same value: bit-equal numbers, equal infinities, or NaN on both sides.
bool same(float then, float now) { return then == now || (std::isnan(then) && std::isnan(now)); }

// How a change ranks when looking for the largest: NaN, then ±∞, then |d|.
int rank(float change) { return std::isnan(change) ? 2 : std::isinf(change) ? 1 : 0; }

}  // namespace

bool Snapshot::has(StageId id) const { return scenario && stage_problem(*scenario, id).empty(); }

std::uint64_t Snapshot::bytes() const {
  std::uint64_t total = engine.bytes_kept() - engine.bytes_shared();
  if (scenario)
    for (const SharedMatrix* m : scenario->matrices())
      if (m->holders() == 1) total += static_cast<std::uint64_t>(m->size()) * sizeof(float);
  return total;
}

Snapshot compute_snapshot(std::shared_ptr<const Scenario> scenario, ComputeControl* control) {
  Engine full;
  full.set_control(control);
  full.recompute_all(*scenario);
  full.set_control(nullptr);
  Snapshot snap;
  snap.scenario = std::move(scenario);
  snap.engine = full.read_only_copy();
  snap.engine.rebind(*snap.scenario);
  return snap;
}

Snapshot take_snapshot(const Document& doc) {
  Snapshot snap;
  snap.scenario = std::make_shared<const Scenario>(doc.scenario());  // shares every matrix
  snap.engine = doc.engine().read_only_copy();
  snap.engine.rebind(*snap.scenario);
  return snap;
}

StageDiff diff(const Snapshot& snapshot, const Document& doc, StageId stage, double relative_tolerance) {
  const bool in_then = snapshot.has(stage);
  const bool in_now = stage_problem(doc.scenario(), stage).empty();
  if (!in_then || !in_now) {
    StageDiff out;
    out.stage = stage;
    out.shape_changed = true;
    out.note = !in_then && !in_now ? "in neither the snapshot nor the scenario now"
               : !in_then          ? "not in the snapshot"
                                   : "no longer in the scenario";
    return out;
  }
  return diff_matrices(stage, snapshot.stage(stage), doc.stage(stage), relative_tolerance);
}

StageDiff diff_matrices(StageId stage, MatrixView then, MatrixView now, double relative_tolerance) {
  StageDiff out;
  out.stage = stage;
  if (then.rows() != now.rows() || then.cols() != now.cols()) {
    out.shape_changed = true;
    out.note = "shape changed: " + shape_text(then.rows(), then.cols()) + " then, " + shape_text(now.rows(), now.cols()) +
               " now";
    return out;
  }
  // Row by row through raw pointers: per-head stages are strided views, and a
  // drag in Compare diffs every changed stage each frame (1M cells at T=1024).
  const Eigen::Index rows = now.rows(), cols = now.cols();
  float scale = 0.0f;  // the largest finite magnitude, then or now (a max of floats is exact)
  for (const MatrixView* m : {&then, &now})
    for (Eigen::Index r = 0; r < rows; ++r) {
      const float* p = m->data() + r * m->outerStride();
      for (Eigen::Index c = 0; c < cols; ++c) {
        const float a = std::fabs(p[c]);
        if (a > scale && a <= std::numeric_limits<float>::max()) scale = a;  // false for NaN and ∞
      }
    }
  out.tolerance = relative_tolerance * static_cast<double>(scale);
  out.difference.resize(rows, cols);
  for (Eigen::Index r = 0; r < rows; ++r) {
    const float* before = then.data() + r * then.outerStride();
    const float* after = now.data() + r * now.outerStride();
    float* change_row = out.difference.data() + r * cols;
    for (Eigen::Index c = 0; c < cols; ++c) {
      const float a = before[c], b = after[c];
      if (same(a, b) || std::fabs(static_cast<double>(b) - static_cast<double>(a)) <= out.tolerance) {
        change_row[c] = 0.0f;
        continue;
      }
      const float change = b - a;  // equal infinities were caught above, so this is never ∞ − ∞
      change_row[c] = change;
      const bool larger = !out.changed || rank(change) > rank(out.largest_change) ||
                          (rank(change) == rank(out.largest_change) && rank(change) == 0 &&
                           std::fabs(change) > std::fabs(out.largest_change));
      out.changed = true;
      if (larger) {
        out.largest_row = static_cast<int>(r);
        out.largest_col = static_cast<int>(c);
        out.largest_change = change;
      }
    }
  }
  return out;
}

ReplaceScenario restore_edit(const Snapshot& snapshot) { return ReplaceScenario{snapshot.scenario, "restore snapshot"}; }

}  // namespace attention_lab
