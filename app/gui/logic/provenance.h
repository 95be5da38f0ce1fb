#pragma once
// Which cells a cell is made from: hovering scores₀[2,3] lights row 2 of Q₀
// and row 3 of K₀, and so on through the pipeline. The rules are the stage
// registry's (StageSpec::sources); this is the app's name for them.

#include "attention_lab/scenario.h"
#include "attention_lab/stage_id.h"
#include "attention_lab/stage_registry.h"

#include <vector>

namespace attention_lab::gui {

using Lit = CellSource;

// The sources of cell (row, col) of `stage`, one level up the pipeline.
inline std::vector<Lit> provenance(const Scenario& scenario, StageId stage, int row, int col) {
  return cell_sources(scenario, stage, row, col);
}

}  // namespace attention_lab::gui
