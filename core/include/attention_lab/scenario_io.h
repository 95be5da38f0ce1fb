#pragma once
// Scenario files (JSON): loading with full validation, atomic saving.
// The format is documented in docs/formats.md ("Scenario files").

#include "attention_lab/scenario.h"

#include <filesystem>
#include <optional>
#include <string>

namespace attention_lab {

struct LoadResult {
  std::optional<Scenario> scenario;  // set on success
  std::string error;                 // the first problem found, naming the field
};

// Files larger than this are refused before parsing.
inline constexpr std::uintmax_t kMaxScenarioFileBytes = 512ull * 1024 * 1024;

LoadResult parse_scenario(const std::string& json_text);
LoadResult load_scenario(const std::filesystem::path& path);

std::string scenario_to_json(const Scenario& scenario);

// Reads a RoPE setting, {"theta": θ, "pairs": "half" | "interleaved"} (both
// optional), as the scenario key "rope" and lessons write it; `where` names
// it in the error returned ("" when it reads).
std::string parse_rope_setting(const std::string& json_text, const std::string& where, Rope& out);
// The setting of `rope` in that form (its `on` aside): what parse_rope_setting reads back.
std::string rope_setting_json(const Rope& rope);

// Writes to a temporary file in the same folder, flushes it to disk, then
// renames it over `path`: the old file survives any failure. Returns an error
// message, or an empty string on success.
std::string write_file_atomically(const std::filesystem::path& path, const std::string& contents);
std::string save_scenario(const Scenario& scenario, const std::filesystem::path& path);

}  // namespace attention_lab
