// The logit lens's tracked token (logit_lens.h): after every layer, its
// logit and probability are those of the full row of logits, and its rank
// the number of tokens above it (ties to the lower id) — a token of the top
// k has its place in the top; a token outside the vocabulary is refused.

#include "attention_lab/logit_lens.h"
#include "attention_lab/transformer_forward.h"
#include "attention_lab/transformer_model.h"
#include "model_fixture_paths.h"

#include <gtest/gtest.h>

namespace attention_lab {
namespace {

TEST(LogitLens, TheTrackedTokenHasItsLogitProbabilityAndRankAfterEveryLayer) {
  LoadedModel lm = load_model(test::fixture("gpt2-conv1d"));
  ASSERT_TRUE(lm.model) << lm.error;
  const TransformerModel& m = *lm.model;
  const std::vector<int>& ids = test::kFixtureIds;
  const int row = 4;
  const std::vector<LensLayer> plain = logit_lens(m, ids, row, 3);
  EXPECT_EQ(plain[0].tracked.id, -1);
  EXPECT_EQ(plain[0].tracked_rank, -1);
  // A token of the top: its rank is its place there.
  for (int place = 0; place < 3; ++place) {
    const int id = plain.back().top[static_cast<std::size_t>(place)].id;
    const std::vector<LensLayer> lens = logit_lens(m, ids, row, 3, id);
    EXPECT_EQ(lens.back().tracked_rank, place);
    EXPECT_EQ(lens.back().tracked.logit, plain.back().top[static_cast<std::size_t>(place)].logit);
  }
  // Any token, after every layer: the full row's numbers.
  const int tracked = 11;
  const std::vector<LensLayer> lens = logit_lens(m, ids, row, 3, tracked);
  const ModelForward f = run_model(m, std::span<const int>(ids).first(row + 1), 1);
  ASSERT_EQ(lens.size(), f.residual.size());
  for (std::size_t l = 0; l < lens.size(); ++l) {
    const RowVector z = logits(m, f.residual[l], row, 1).row(0);
    const RowVector p = next_token_probabilities(z);
    int above = 0;
    for (Eigen::Index j = 0; j < z.size(); ++j) above += z(j) > z(tracked) || (z(j) == z(tracked) && j < tracked);
    EXPECT_EQ(lens[l].tracked.id, tracked);
    EXPECT_EQ(lens[l].tracked.logit, z(tracked)) << l;
    EXPECT_EQ(lens[l].tracked.probability, p(tracked)) << l;
    EXPECT_EQ(lens[l].tracked_rank, above) << l;
  }
  EXPECT_THROW(logit_lens(m, ids, row, 3, m.config.vocab), std::invalid_argument);
  EXPECT_THROW(logit_lens(m, ids, row, 3, -2), std::invalid_argument);
}

}  // namespace
}  // namespace attention_lab
