#pragma once
// "Did you mean …?": the names nearest a mistyped one, for error messages
// that name what the user could have meant (a hook, a stage id).

#include <cstddef>
#include <string>
#include <vector>

namespace attention_lab {

// The Levenshtein distance: single-character insertions, deletions and substitutions.
std::size_t edit_distance(const std::string& a, const std::string& b);

// Up to `count` of `candidates`, nearest `query` first (ties in the given order).
std::vector<std::string> nearest_names(const std::string& query, const std::vector<std::string>& candidates, std::size_t count);

}  // namespace attention_lab
