#include "base/nearest.h"

#include <algorithm>
#include <utility>

namespace attention_lab {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::vector<std::string> nearest_names(const std::string& query, const std::vector<std::string>& candidates, std::size_t count) {
  std::vector<std::pair<std::size_t, std::string>> near;
  near.reserve(candidates.size());
  for (const std::string& c : candidates) near.emplace_back(edit_distance(query, c), c);
  std::stable_sort(near.begin(), near.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (std::size_t i = 0; i < std::min(count, near.size()); ++i) out.push_back(std::move(near[i].second));
  return out;
}

}  // namespace attention_lab
