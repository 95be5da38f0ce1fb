#pragma once
// Which cells a cell is made from: hovering scores₀[2,3] lights row 2 of Q₀
// and row 3 of K₀, and so on through the pipeline.

#include "attention_lab/scenario.h"
#include "attention_lab/stage_id.h"

#include <vector>

namespace attention_lab::gui {

struct Lit {
  StageId stage;
  int row = -1;       // a whole row lights up (−1: none)
  int col = -1;       // a whole column lights up (−1: none)
  int cell_row = -1;  // one cell lights up (−1: none)
  int cell_col = -1;
};

// The sources of cell (row, col) of `stage`, one level up the pipeline.
std::vector<Lit> provenance(const Scenario& scenario, StageId stage, int row, int col);

}  // namespace attention_lab::gui
