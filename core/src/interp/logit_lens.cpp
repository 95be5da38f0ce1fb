#include "attention_lab/logit_lens.h"

#include "attention_lab/transformer_forward.h"
#include "attention_lab/transformer_model.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

namespace attention_lab {

std::vector<LensLayer> logit_lens(const TransformerModel& model, std::span<const int> ids, int row, int k, int track) {
  if (const std::string e = check_ids(model.config, ids); !e.empty()) throw std::invalid_argument("logit_lens: " + e);
  if (row < 0 || row >= static_cast<int>(ids.size()))
    throw std::invalid_argument("logit_lens: row " + std::to_string(row) + ": expected 0 to " + std::to_string(ids.size() - 1));
  if (track < -1 || track >= model.config.vocab)
    throw std::invalid_argument("logit_lens: tracked token " + std::to_string(track) + ": expected 0 to " +
                                std::to_string(model.config.vocab - 1));
  // The rows after `row` cannot change it (causal): the forward stops there.
  const ModelForward f = run_model(model, ids.first(static_cast<std::size_t>(row) + 1), 1);
  std::vector<LensLayer> out;
  for (std::size_t l = 0; l < f.residual.size(); ++l) {
    const RowVector z = logits(model, f.residual[l], row, 1).row(0);
    const RowVector p = next_token_probabilities(z);
    std::vector<int> order(static_cast<std::size_t>(z.size()));
    std::iota(order.begin(), order.end(), 0);
    const auto n = static_cast<std::size_t>(std::clamp(k, 0, static_cast<int>(order.size())));
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), order.end(),
                      [&](int a, int b) { return z(a) != z(b) ? z(a) > z(b) : a < b; });
    LensLayer layer;
    layer.after = static_cast<int>(l);
    for (std::size_t i = 0; i < n; ++i) layer.top.push_back({order[i], z(order[i]), p(order[i])});
    if (track >= 0) {
      layer.tracked = {track, z(track), p(track)};
      layer.tracked_rank = 0;
      for (Eigen::Index j = 0; j < z.size(); ++j)
        layer.tracked_rank += z(j) > z(track) || (z(j) == z(track) && j < track);
    }
    out.push_back(std::move(layer));
  }
  return out;
}

}  // namespace attention_lab
