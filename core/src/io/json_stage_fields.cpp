#include "io/json_stage_fields.h"

#include "attention_lab/gradients.h"
#include "attention_lab/hook_names.h"
#include "attention_lab/stage_info.h"
#include "base/nearest.h"
#include "io/json_fields.h"

#include <algorithm>

namespace attention_lab::io {

using nlohmann::json;

// Appended to a head range: how many heads the scenario has at this step.
std::string heads_note(const Scenario& s) {
  return s.heads == 1 ? " (the scenario has 1 head at this step)"
                      : " (the scenario has " + std::to_string(s.heads) + " heads at this step)";
}

// The stage ids of `s` in the order of the math, each head's stages folded
// into one entry ("scores[0…3]"), for a message.
std::string stage_list(const Scenario& s) {
  std::vector<std::string> entries;
  std::vector<StageKind> folded;
  for (const StageId id : pipeline(s)) {
    if (!is_per_head(id.kind)) {
      entries.push_back(to_string(id));
      continue;
    }
    if (std::find(folded.begin(), folded.end(), id.kind) != folded.end()) continue;
    folded.push_back(id.kind);
    std::string name = to_string(id);
    name.resize(name.find('['));
    entries.push_back(s.heads == 1 ? name + "[0]" : name + "[0…" + std::to_string(s.heads - 1) + "]");
  }
  std::string out;
  for (const std::string& e : entries) out += (out.empty() ? "" : ", ") + e;
  return out;
}

// "did you mean \"scores[0]\"? The stages at this step: …", for a stage id
// the scenario at this step does not have.
std::string stage_suggestion(const Scenario& s, const std::string& given) {
  std::vector<std::string> ids;
  for (const StageId id : pipeline(s)) ids.push_back(to_string(id));
  const std::vector<std::string> near = nearest_names(given, ids, 1);
  return (near.empty() ? std::string() : "did you mean \"" + near.front() + "\"? ") + "The stages at this step: " +
         stage_list(s);
}

// A stage id given as text ("scores[0]") that the scenario at this step has;
// the reason names heads or the setting that is off, and the nearest id.
StageId read_stage(const json& j, const std::string& where, const Scenario& s) {
  const std::string example = "expected a stage id such as \"scores[0]\"";
  if (!j.is_string()) fail_field(where + ": " + example + ", found " + found(j));
  const auto id = parse_stage_id(j.get<std::string>());
  if (const auto hook = read_hook_name(j.get<std::string>()); hook && !hook->id) fail_field(where + ": " + hook->problem);
  if (!id)
    fail_field(where + ": " + example + ", found " + found(j) + ": " + stage_suggestion(s, j.get<std::string>()));
  return *id;
}

// The stage must exist in `s`; the reason names heads or the setting that is off.
void require_stage(const Scenario& s, StageId id, const std::string& where) {
  if (auto problem = stage_problem(s, id); !problem.empty())
    fail_field(where + ": expected a stage of the scenario at this step, found \"" + to_string(id) + "\" (" +
         problem.substr(problem.find(": ") + 2) + ")" +
         // A head that is not there: the nearest that is (a stage a setting turns off has its reason only).
         (is_per_head(id.kind) ? ": " + stage_suggestion(s, to_string(id)) : std::string()));
}

// Why the gradient stage `id` has no cell at this step ("" when it has):
// the scenario needs a loss whose gradients can be computed.
std::string gradient_problem(const Scenario& s, StageId id) {
  if (!has_gradient(id.kind)) return to_string(id) + ": a constant, which has no gradient";
  if (!s.loss) return to_string(id) + ": the scenario has no \"loss\" at this step, so no gradients";
  if (auto problem = gradients_problem(s, *s.loss); !problem.empty()) return to_string(id) + ": no gradients (" + problem + ")";
  return {};
}

// A cell's problem at this step, for values and gradients alike.
std::string any_cell_problem(const Scenario& s, const CellRef& cell) {
  if (cell.stage.role != Role::Gradient) return cell_problem(s, cell);
  if (auto problem = gradient_problem(s, cell.stage); !problem.empty()) return problem;
  CellRef value = cell;
  value.stage.role = Role::Value;
  return cell_problem(s, value);
}

// {"stage": …, "row": r, "col": c} with the row and column inside the stage's
// shape; a gradient ("grad.W_q") only where `gradients` allows it.
CellRef read_cell(const json& j, const std::string& where, const Scenario& s, const std::vector<std::string>& keys,
                  bool (*allowed)(StageKind), const char* what_stage, bool gradients) {
  if (!j.is_object()) fail_field(where + ": expected {\"stage\": \"weights[0]\", \"row\": r, \"col\": c}, found " + found(j));
  check_keys(j, where, keys);
  const std::string hint = " (expected {\"stage\": …, \"row\": …, \"col\": …})";
  CellRef cell;
  cell.stage = read_stage(require_key(j, "stage", where, hint), where + ".stage", s);
  if (cell.stage.role == Role::Gradient) {
    if (!gradients)
      fail_field(where + ".stage: expected a stage's values here, found the gradient " + found(j["stage"]) +
                 " (a gradient may be highlighted, with \"pipeline\": \"gradients\" or \"both\")");
    if (auto problem = gradient_problem(s, cell.stage); !problem.empty()) fail_field(where + ".stage: " + problem);
  }
  StageId value = cell.stage;
  value.role = Role::Value;
  if (allowed && !allowed(cell.stage.kind)) fail_field(where + ".stage: expected " + what_stage + ", found " + found(j["stage"]));
  require_stage(s, value, where + ".stage");
  const StageShape shape = stage_shape(s, value);
  const std::string of = " (" + to_string(cell.stage) + " is " + std::to_string(shape.rows) + " x " +
                         std::to_string(shape.cols) + " at this step)";
  cell.row = read_int(require_key(j, "row", where, hint), where + ".row", 0, shape.rows - 1, of);
  cell.col = read_int(require_key(j, "col", where, hint), where + ".col", 0, shape.cols - 1, of);
  return cell;
}

bool is_input_kind(StageKind k) { return is_input(k); }
bool is_computed_kind(StageKind k) { return !is_input(k); }

}  // namespace attention_lab::io
