#pragma once
// Reading the values of a hand-written JSON document (a lesson, an edit) with
// messages that name the field, the expected and the found. Each reader
// throws FieldError (json_document.h) on a wrong value; the document's parser
// turns it into its result's error.

#include "io/json_document.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace attention_lab::io {

// What a value is, for "found …": strings quoted (and cut), numbers as written.
std::string found(const nlohmann::json& j);

std::string read_string(const nlohmann::json& j, const std::string& where, bool non_empty);
// A finite number that fits a float32.
double read_number(const nlohmann::json& j, const std::string& where);
// A whole number in [lo, hi]; `why` is added to the range in the message.
int read_int(const nlohmann::json& j, const std::string& where, int lo, int hi, const std::string& why = "");
bool read_bool(const nlohmann::json& j, const std::string& where);

// object[key], or a "missing" error that ends with `hint`.
const nlohmann::json& require_key(const nlohmann::json& object, const char* key, const std::string& where,
                                  const std::string& hint);

// Unknown keys are reported: in a hand-written file they are usually typos.
void check_keys(const nlohmann::json& object, const std::string& where, const std::vector<std::string>& known);

}  // namespace attention_lab::io
