#pragma once
// Where the committed tiny checkpoints of every supported layout are
// (tests/models/fixtures, made by tests/models/generate_models.py), and the
// token ids the model tests feed them.

#include <filesystem>
#include <string>
#include <vector>

namespace attention_lab::test {

inline const std::filesystem::path kFixtures = ATTENTION_LAB_MODEL_FIXTURES_DIR;

// The folder or file of fixture `name`.
inline std::string fixture(const char* name) { return (kFixtures / name).string(); }

inline const std::vector<int> kFixtureIds = {3, 14, 15, 9, 2, 6, 53};

}  // namespace attention_lab::test
