#include "attention_lab/snapshot.h"

#include "attention_lab/cell_ref.h"
#include "attention_lab/stage_info.h"

#include <algorithm>
#include <cmath>

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

std::uint64_t Snapshot::bytes() const {
  std::uint64_t total = 0;
  for (const auto& [id, m] : stages) total += static_cast<std::uint64_t>(m.size()) * sizeof(float);
  return total;
}

Snapshot take_snapshot(const Document& doc) {
  Snapshot snap;
  snap.scenario = std::make_shared<const Scenario>(doc.scenario());
  for (const StageId id : pipeline(doc.scenario())) snap.stages.emplace(id, Matrix(doc.stage(id)));
  return snap;
}

StageDiff diff(const Snapshot& snapshot, const Document& doc, StageId stage, double relative_tolerance) {
  StageDiff out;
  out.stage = stage;
  const auto then_it = snapshot.stages.find(stage);
  const bool in_now = stage_problem(doc.scenario(), stage).empty();
  if (then_it == snapshot.stages.end() || !in_now) {
    out.shape_changed = true;
    out.note = then_it == snapshot.stages.end() && !in_now ? "in neither the snapshot nor the scenario now"
               : then_it == snapshot.stages.end()          ? "not in the snapshot"
                                                           : "no longer in the scenario";
    return out;
  }
  const Matrix& then = then_it->second;
  const Matrix now = doc.stage(stage);
  if (then.rows() != now.rows() || then.cols() != now.cols()) {
    out.shape_changed = true;
    out.note = "shape changed: " + shape_text(then.rows(), then.cols()) + " then, " + shape_text(now.rows(), now.cols()) +
               " now";
    return out;
  }
  double scale = 0.0;
  for (const Matrix* m : {&then, &now})
    for (Eigen::Index i = 0; i < m->size(); ++i)
      if (std::isfinite(m->data()[i])) scale = std::max(scale, std::fabs(static_cast<double>(m->data()[i])));
  out.tolerance = relative_tolerance * scale;
  out.difference.resize(now.rows(), now.cols());
  for (Eigen::Index r = 0; r < now.rows(); ++r)
    for (Eigen::Index c = 0; c < now.cols(); ++c) {
      const float a = then(r, c), b = now(r, c);
      if (same(a, b) || std::fabs(static_cast<double>(b) - static_cast<double>(a)) <= out.tolerance) {
        out.difference(r, c) = 0.0f;
        continue;
      }
      const float change = b - a;  // equal infinities were caught above, so this is never ∞ − ∞
      out.difference(r, c) = change;
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
  return out;
}

ReplaceScenario restore_edit(const Snapshot& snapshot) { return ReplaceScenario{snapshot.scenario, "restore snapshot"}; }

}  // namespace attention_lab
