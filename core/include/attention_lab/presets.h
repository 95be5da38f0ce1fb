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

std::optional<Scenario> make_preset(std::string_view name);

}  // namespace attention_lab
