#pragma once
// The edit codec's JSON side, for the readers of documents that hold edits
// (lessons): read_edit throws FieldError (json_document.h) naming the field.

#include "attention_lab/edit.h"
#include "attention_lab/scenario.h"

#include <nlohmann/json.hpp>

#include <string>

namespace attention_lab::io {

// The edit `key` (one of edit_keys()) with its value `v`; `where` names the
// value ("steps[2].apply[0].mask"), `s` is the scenario it will be applied to.
Edit read_edit_value(const std::string& key, const nlohmann::json& v, const std::string& where, const Scenario& s);

// {key: value}, what read_edit_value reads back.
nlohmann::json edit_json(const Edit& edit);

}  // namespace attention_lab::io
