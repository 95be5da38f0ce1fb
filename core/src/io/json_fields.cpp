#include "io/json_fields.h"

#include "attention_lab/excerpt.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attention_lab::io {

using nlohmann::json;

// What a value is, for "found …": strings quoted (and cut), numbers as written.
std::string found(const json& j) {
  if (j.is_string()) {
    std::string s = j.get<std::string>();
    const bool cut = s.size() > 40;
    if (cut) s.resize(40);
    std::string quoted = json(s).dump(-1, ' ', false, json::error_handler_t::replace);
    if (cut) quoted.insert(quoted.size() - 1, "…");
    return quoted;
  }
  if (j.is_boolean()) return j.get<bool>() ? "true" : "false";
  if (j.is_null()) return "null";
  if (j.is_array()) return "a list of " + std::to_string(j.size());
  if (j.is_object()) return "an object";
  return j.dump();
}

std::string read_string(const json& j, const std::string& where, bool non_empty) {
  if (!j.is_string()) fail_field(where + ": expected a string, found " + found(j));
  std::string s = j.get<std::string>();
  if (non_empty && s.empty()) fail_field(where + ": expected some text, found an empty string");
  return s;
}

double read_number(const json& j, const std::string& where) {
  if (!j.is_number()) fail_field(where + ": expected a number, found " + found(j));
  const double v = j.get<double>();
  // A float written in its shortest form may read as a double just past
  // FLT_MAX (3.4028235e38): what rounds to FLT_MAX is FLT_MAX.
  constexpr double kMax = static_cast<double>(std::numeric_limits<float>::max());
  constexpr double kRoundsToMax = kMax + 0x1p103;  // halfway to 2^128: from there it rounds to infinity
  if (!std::isfinite(v) || std::fabs(v) >= kRoundsToMax)
    fail_field(where + ": expected a finite float32 number, found " + j.dump());
  return std::clamp(v, -kMax, kMax);
}

int read_int(const json& j, const std::string& where, int lo, int hi, const std::string& why) {
  const std::string range = "a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) + why;
  if (!j.is_number()) fail_field(where + ": expected " + range + ", found " + found(j));
  const double v = j.get<double>();
  if (v != std::floor(v) || v < lo || v > hi) fail_field(where + ": expected " + range + ", found " + j.dump());
  return static_cast<int>(v);
}

bool read_bool(const json& j, const std::string& where) {
  if (!j.is_boolean()) fail_field(where + ": expected true or false, found " + found(j));
  return j.get<bool>();
}

const json& require_key(const json& object, const char* key, const std::string& where, const std::string& hint) {
  if (!object.contains(key)) fail_field(where + "." + key + ": missing" + hint);
  return object[key];
}

// Unknown keys are reported: in a hand-written file they are usually typos.
void check_keys(const json& object, const std::string& where, const std::vector<std::string>& known) {
  for (const auto& [key, value] : object.items()) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    fail_field((where.empty() ? "" : where + ".") + excerpt(key) + ": unknown key (expected one of " + list + ")");
  }
}

}  // namespace attention_lab::io
