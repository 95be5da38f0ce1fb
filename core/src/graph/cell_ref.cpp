#include "attention_lab/cell_ref.h"

#include "attention_lab/stage_info.h"
#include "attention_lab/stage_registry.h"

#include <algorithm>

namespace attention_lab {

std::string to_string(const CellRef& cell) {
  return to_string(cell.stage) + "[" + std::to_string(cell.row) + "][" + std::to_string(cell.col) + "]";
}

std::string stage_problem(const Scenario& scenario, StageId stage) {
  const std::string name = to_string(stage);
  if (stage.layer != 0) return name + ": a scenario is one layer (layer 0); there is no layer " + std::to_string(stage.layer);
  if (stage.role != Role::Value)
    return name + ": a gradient is drawn in the Pipeline (View ▸ Pipeline shows, or a lesson step's \"pipeline\"), not here";
  const auto stages = pipeline(scenario);
  if (std::find(stages.begin(), stages.end(), stage) != stages.end()) return {};
  if (is_per_head(stage.kind)) {
    if (scenario.heads == 1) return name + ": the scenario has 1 head, so the only head is 0";
    return name + ": the scenario has " + std::to_string(scenario.heads) + " heads, numbered 0 to " +
           std::to_string(scenario.heads - 1);
  }
  if (const Requires r = spec(stage.kind).requires_setting; r != Requires::Nothing)
    return name + ": " + setting_name(r) + (setting_plural(r) ? " are" : " is") + " off in this scenario";
  return name + ": not a stage of this scenario";
}

StageShape stage_shape(const Scenario& scenario, StageId stage) {
  if (!stage_problem(scenario, stage).empty()) return {};
  const Dims d = scenario.dims();
  return {stage_rows(stage.kind, d), stage_cols(stage.kind, d)};
}

std::string cell_problem(const Scenario& scenario, const CellRef& cell) {
  if (auto problem = stage_problem(scenario, cell.stage); !problem.empty()) return problem;
  const StageShape shape = stage_shape(scenario, cell.stage);
  if (cell.row < 0 || cell.row >= shape.rows || cell.col < 0 || cell.col >= shape.cols)
    return to_string(cell) + ": expected a cell within " + std::to_string(shape.rows) + " x " +
           std::to_string(shape.cols) + ", found row " + std::to_string(cell.row) + ", column " +
           std::to_string(cell.col);
  return {};
}

}  // namespace attention_lab
