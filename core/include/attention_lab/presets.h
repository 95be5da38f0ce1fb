#pragma once
// Built-in scenarios: no file needed, values chosen so the patterns mean something.

#include "attention_lab/scenario.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attention_lab {

struct PresetInfo {
  std::string name;   // what the CLI and --preset take: "fat-cat"
  std::string title;  // what a menu shows
  std::string summary;
};

const std::vector<PresetInfo>& presets();

// The preset the app opens with.
inline constexpr std::string_view kDefaultPreset = "fat-cat";

// A built-in preset by name, or "random-T-D-H" (e.g. "random-1024-768-12"):
// a seeded random causal layer with d_k = d_v = D/H and W_o.
std::optional<Scenario> make_preset(std::string_view name);

// Why make_preset(name) gives nothing, or "" when it gives a scenario: a
// random-T-D-H beyond the size limits or the memory available is refused
// before anything is allocated, with the bytes it would need.
std::string preset_problem(std::string_view name);

// Seeded random weights and inputs of the given size (d_k = d_v = d_model / heads, W_o on).
Scenario random_scenario(int T, int d_model, int heads, MaskKind mask, std::uint64_t seed);

}  // namespace attention_lab
