#pragma once
// The address of one cell of one stage ("weights[0][2][1]"), and whether a
// stage or a cell exists in a given scenario. Lessons highlight cells, quizzes
// ask for them and snapshots compare them.

#include "attention_lab/scenario.h"
#include "attention_lab/stage_id.h"

#include <compare>
#include <string>

namespace attention_lab {

struct CellRef {
  StageId stage;
  int row = 0;
  int col = 0;

  friend auto operator<=>(const CellRef&, const CellRef&) = default;
};

// "weights[0][2][1]": the stage id, then the row and the column.
std::string to_string(const CellRef& cell);

// Why `stage` is not part of `scenario`'s pipeline (a head that does not
// exist, biases or W_o turned off), or an empty string when it is.
std::string stage_problem(const Scenario& scenario, StageId stage);

// Rows and columns of `stage` in `scenario` (0 × 0 when it is not in use).
struct StageShape {
  int rows = 0;
  int cols = 0;
};
StageShape stage_shape(const Scenario& scenario, StageId stage);

// Why `cell` does not exist in `scenario` (its stage is not in use, or the row
// or column is outside the stage), or an empty string when it does.
std::string cell_problem(const Scenario& scenario, const CellRef& cell);

}  // namespace attention_lab
