#pragma once
// The golden fixtures' folder and files, for the tests that replay them
// (gradients_test.cpp, training_test.cpp).

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace attention_lab::test {

inline const std::filesystem::path& golden_dir() {
  static const std::filesystem::path dir = std::filesystem::path(ATTENTION_LAB_TEST_DATA_DIR) / "golden" / "fixtures";
  return dir;
}

// The fixtures whose file name holds `kind` (".grad-", ".fit-"), without ".json", sorted.
inline std::vector<std::string> golden_files_of(const std::string& kind) {
  std::vector<std::string> names;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(golden_dir(), ec), end; !ec && it != end; it.increment(ec)) {
    const std::string file = it->path().filename().string();
    if (file.find(kind) != std::string::npos && file.ends_with(".json")) names.push_back(file.substr(0, file.size() - 5));
  }
  std::sort(names.begin(), names.end());
  return names;
}

inline nlohmann::json read_golden_json(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path.string() + ": cannot open");
  return nlohmann::json::parse(in);
}

// A gtest parameter name from a fixture's: "preset_fat_cat.grad-mse" → "preset_fat_cat_grad_mse".
inline std::string golden_test_name(std::string name) {
  std::replace(name.begin(), name.end(), '.', '_');
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

}  // namespace attention_lab::test
