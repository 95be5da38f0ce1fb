#pragma once
// Every Edit as JSON and back: the one codec for anything that keeps an edit
// to apply later (a lesson's "apply", a file of edits). An edit is an object
// with exactly one key naming the change, as lesson files write it:
//
//   {"set": {"stage": "W_q", "row": 1, "col": 0, "value": 0.5}}
//   {"pin": {"stage": "weights[0]", "row": 2, "col": 1, "value": 1}}   (null unpins)
//   {"mask": "causal"}   {"mask": {"window": 3}}   {"mask": [[1, 0], [1, 1]]}
//   {"temperature": 0.5}   {"scale": false}   {"rope": {"theta": 10000}}   {"T": 6}
//
// and the rest in docs/formats.md ("Edits"). Writing then reading gives the
// same edit, bit for bit (floats in their shortest round-trip form), so an
// edit's inverse can be kept as well as the edit.

#include "attention_lab/edit.h"
#include "attention_lab/scenario.h"

#include <optional>
#include <string>
#include <vector>

namespace attention_lab {

// One line of JSON.
std::string edit_to_json(const Edit& edit);

// Reads an edit meant for `scenario`: the stages and cells it names are
// checked against it (a wrong one is named with the reason and the nearest
// stage it has). Whether the edit applies is apply_edit's to say.
struct ParsedEdit {
  std::optional<Edit> edit;
  std::string error;  // "set.row: expected a whole number from 0 to 3 (W_q is 4 x 2 …), found 7"
};
ParsedEdit parse_edit(const std::string& json_text, const Scenario& scenario);

// The keys an edit object may have, one of them a time.
const std::vector<std::string>& edit_keys();

}  // namespace attention_lab
