#pragma once
// Reading stage ids and cells from a hand-written JSON document (a lesson, an
// edit), checked against the scenario they will be used with: a stage that
// scenario does not have is refused with the reason (heads, a setting that is
// off) and the nearest id it has. Readers throw FieldError (json_document.h).

#include "attention_lab/cell_ref.h"
#include "attention_lab/scenario.h"
#include "attention_lab/stage_id.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace attention_lab::io {

// Appended to a head range: how many heads the scenario has at this step.
std::string heads_note(const Scenario& s);

// A stage id given as text ("scores[0]", or a TransformerLens hook name).
StageId read_stage(const nlohmann::json& j, const std::string& where, const Scenario& s);

// The stage must exist in `s`; the reason names heads or the setting that is off.
void require_stage(const Scenario& s, StageId id, const std::string& where);

// Why the gradient stage `id` has no cell in `s` ("" when it has): the
// scenario needs a loss whose gradients can be computed.
std::string gradient_problem(const Scenario& s, StageId id);

// A cell's problem in `s` ("" when it has it), for values and gradients alike.
std::string any_cell_problem(const Scenario& s, const CellRef& cell);

// {"stage": …, "row": r, "col": c} with the row and column inside the stage's
// shape in `s`; `keys` are the object's allowed keys, `allowed` the stage
// kinds it may name (described by `what_stage` when it names another); a
// gradient ("grad.W_q") only where `gradients` allows it.
CellRef read_cell(const nlohmann::json& j, const std::string& where, const Scenario& s,
                  const std::vector<std::string>& keys, bool (*allowed)(StageKind), const char* what_stage,
                  bool gradients = false);

bool is_input_kind(StageKind k);
bool is_computed_kind(StageKind k);

}  // namespace attention_lab::io
