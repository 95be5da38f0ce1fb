// Prompt batches (prompt_batch.h): a prompts file is read line by line and
// refused by line number with what was expected; the means of detector
// scores, attributions and patching sweeps are the element-wise means of the
// per-prompt results, and a batch's normalised sweep is (mean patched − mean
// corrupted) / (mean clean − mean corrupted).

#include "attention_lab/transformer_model.h"
#include "attention_lab/prompt_batch.h"
#include "model_fixture_paths.h"

#include <gtest/gtest.h>

namespace attention_lab {
namespace {

struct Loaded {
  std::shared_ptr<const TransformerModel> model;
  std::shared_ptr<const Tokenizer> tokenizer;
};

// A committed fixture without a BPE tokenizer: its text is token ids separated by spaces.
const Loaded& gpt2() {
  static const Loaded l = [] {
    Loaded out;
    LoadedModel m = load_model(test::fixture("gpt2-conv1d"), {}, ModelParts::Everything);
    if (!m.model) throw std::runtime_error(m.error);
    out.model = m.model;
    std::string error;
    out.tokenizer = Tokenizer::load(test::fixture("gpt2-conv1d"), m.model->config.vocab, error);
    if (!out.tokenizer) throw std::runtime_error(error);
    return out;
  }();
  return l;
}

std::string read(std::string_view text, PromptLayout layout, std::vector<Prompt>& out, int most = 4096) {
  return read_prompts(text, "p.txt", *gpt2().tokenizer, gpt2().model->config, layout, out, most);
}

TEST(PromptBatch, ReadsOnePromptALineAndPairsWithTheirAnswers) {
  std::vector<Prompt> p;
  ASSERT_EQ(read("3 14 15\r\n9 2\n", PromptLayout::Single, p), "");
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].ids, (std::vector<int>{3, 14, 15}));
  EXPECT_EQ(p[1].ids, (std::vector<int>{9, 2}));
  EXPECT_EQ(p[1].line, 2);
  EXPECT_EQ(p[0].text, "3 14 15");  // the line ending is not part of it

  ASSERT_EQ(read("3 14 15\t3 14 16\t7\t8\n1 2\t1 4\n", PromptLayout::Pairs, p), "");
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].corrupted_ids, (std::vector<int>{3, 14, 16}));
  EXPECT_EQ(p[0].answer, 7);
  EXPECT_EQ(p[0].wrong, 8);
  EXPECT_EQ(p[1].answer, -1);
  EXPECT_EQ(p[1].wrong, -1);
  ASSERT_EQ(read("3 14 15\t3 14 16\t7\n", PromptLayout::Pairs, p), "");
  EXPECT_EQ(p[0].answer, 7);
  EXPECT_EQ(p[0].wrong, -1);
}

TEST(PromptBatch, RefusesEveryBadFileByLine) {
  const struct {
    const char* text;
    PromptLayout layout;
    const char* message;
  } cases[] = {
      {"", PromptLayout::Single, "p.txt has no prompts"},
      {"\n", PromptLayout::Single, "p.txt line 1 is empty: expected a prompt on every line"},
      {"3\n\n", PromptLayout::Single, "p.txt line 2 is empty"},
      {"1 2\n\n3 4\n", PromptLayout::Single, "p.txt line 2 is empty: expected a prompt on every line"},
      {"1 2\n  \t\n", PromptLayout::Single, "p.txt line 2 is empty"},
      {"1 2\n3 4 5\n", PromptLayout::OneLength, "p.txt line 2 has 3 tokens and line 1 has 2: a batch needs prompts of one length"},
      {"1 2\n99999\n", PromptLayout::Single, "p.txt line 2: "},
      {"1 2\n", PromptLayout::Pairs, "p.txt line 1: expected clean<TAB>corrupted, optionally <TAB>answer<TAB>wrong (2 to 4 fields), found 1 (no tab)"},
      {"1\t2\t3\t4\t5\n", PromptLayout::Pairs, "found 5"},
      {"1 2\t1 2 3\n", PromptLayout::Pairs, "p.txt line 1: the clean prompt has 2 tokens and the corrupted one 3: a pair needs the same number"},
      {"\t1 2\n", PromptLayout::Pairs, "p.txt line 1: the clean prompt (before the tab) is empty"},
      {"1 2\t \n", PromptLayout::Pairs, "p.txt line 1: the corrupted prompt (after the tab) is empty"},
      {"1 2\t1 99999\n", PromptLayout::Pairs, "p.txt line 1, corrupted: "},
      {"1 2\t1 3\t4 5\n", PromptLayout::Pairs, "p.txt line 1, the answer '4 5' is 2 tokens"},
      {"1 2\t1 3\t4\t\n", PromptLayout::Pairs, "p.txt line 1, the wrong "},
  };
  for (const auto& c : cases) {
    std::vector<Prompt> p;
    const std::string e = read(c.text, c.layout, p);
    EXPECT_NE(e.find(c.message), std::string::npos) << "'" << c.text << "': " << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
  std::vector<Prompt> p;
  EXPECT_EQ(read("1\n2\n3\n", PromptLayout::Single, p, 2), "p.txt has more than 2 prompts: expected at most 2");
}

TEST(PromptBatch, MeansAreElementWiseAndTheSweepNormalisesByTheMeanRuns) {
  const TransformerModel& m = *gpt2().model;
  const std::vector<int> a = {3, 14, 15, 9, 3, 14}, b = {2, 6, 53, 5, 2, 6};
  const HeadScores sa = detect_heads(m, a), sb = detect_heads(m, b);
  const std::vector<HeadScores> both = {sa, sb};
  const HeadScores mean = mean_head_scores(both);
  for (const HeadKind k : kHeadKinds)
    EXPECT_TRUE(mean.of(k).isApprox((sa.of(k) + sb.of(k)) / 2.0f, 1e-6f)) << to_string(k);
  EXPECT_TRUE(mean_head_scores(std::span<const HeadScores>(&sa, 1)).of(HeadKind::Induction) == sa.of(HeadKind::Induction));

  const RunCache ra = run_with_cache(m, a, CacheAttention::None), rb = run_with_cache(m, b, CacheAttention::None);
  const std::vector<LogitAttribution> parts = {direct_logit_attribution(m, ra, 5, 7), direct_logit_attribution(m, rb, 5, 9, 4)};
  const LogitAttribution d = mean_attribution(parts);
  EXPECT_NEAR(d.logit, (parts[0].logit + parts[1].logit) / 2, 1e-12);
  EXPECT_TRUE(d.heads.isApprox((parts[0].heads + parts[1].heads) / 2, 1e-12));
  EXPECT_NEAR(d.total(), d.logit, 1e-4);  // the parts still sum to the (mean) logit

  PatchMetric metric;
  metric.answer = 7;
  metric.wrong = 9;
  const std::vector<int> ca = {3, 14, 16, 9, 3, 14}, cb = {2, 6, 53, 5, 2, 7};
  const std::vector<PatchSweep> sweeps = {patch_sweep(m, a, ca, PatchKind::HeadOut, metric),
                                          patch_sweep(m, b, cb, PatchKind::HeadOut, metric)};
  const PatchSweep w = mean_sweep(sweeps);
  const double clean = (sweeps[0].clean + sweeps[1].clean) / 2, corrupted = (sweeps[0].corrupted + sweeps[1].corrupted) / 2;
  EXPECT_NEAR(w.clean, clean, 1e-12);
  const Eigen::MatrixXd expected = ((sweeps[0].metric + sweeps[1].metric) / 2).array() - corrupted;
  EXPECT_TRUE(w.normalised().isApprox(expected / (clean - corrupted), 1e-9));
  // Sweeps over positions of two lengths have no element-wise mean.
  const std::vector<PatchSweep> lengths = {patch_sweep(m, a, ca, PatchKind::ResidPre, metric),
                                           patch_sweep(m, std::vector<int>{1, 2, 3}, std::vector<int>{1, 4, 3}, PatchKind::ResidPre, metric)};
  EXPECT_THROW(mean_sweep(lengths), std::invalid_argument);
  EXPECT_THROW(mean_sweep(std::span<const PatchSweep>()), std::invalid_argument);
}

TEST(PromptBatch, DetectorsOverPromptsKeepEachAndAverageThePatterns) {
  const TransformerModel& m = *gpt2().model;
  std::vector<Prompt> p;
  ASSERT_EQ(read("3 14 15 9 3 14\n2 6 53 5 2 6\n", PromptLayout::Single, p), "");
  int calls = 0;
  const BatchHeads b = detect_heads_over(m, p, [&](int done, int total) {
    EXPECT_EQ(total, 2);
    EXPECT_EQ(done, ++calls);
    return true;
  });
  ASSERT_TRUE(b.complete);
  ASSERT_EQ(b.each.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i)
    for (const HeadKind k : kHeadKinds) EXPECT_TRUE(b.each[i].of(k) == detect_heads(m, p[i].ids).of(k));
  const int heads = m.config.heads;
  ASSERT_EQ(b.mean_patterns.size(), static_cast<std::size_t>(m.config.layers * heads));
  const RunCache r0 = run_with_cache(m, p[0].ids, CacheAttention::Everything), r1 = run_with_cache(m, p[1].ids, CacheAttention::Everything);
  for (int l = 0; l < m.config.layers; ++l)
    for (int h = 0; h < heads; ++h) {
      const auto at = static_cast<std::size_t>(l * heads + h), hh = static_cast<std::size_t>(h);
      const auto li = static_cast<std::size_t>(l);
      EXPECT_TRUE(b.mean_patterns[at].isApprox((r0.attention[li].weights[hh] + r1.attention[li].weights[hh]) / 2.0f, 1e-5f));
    }
  // Two lengths: scores, no mean pattern; a stop after the first prompt: the first one's.
  ASSERT_EQ(read("3 14 15 9 3 14\n2 6 53\n", PromptLayout::Single, p), "");
  EXPECT_TRUE(detect_heads_over(m, p).mean_patterns.empty());
  const BatchHeads stopped = detect_heads_over(m, p, [](int, int) { return false; });
  EXPECT_FALSE(stopped.complete);
  EXPECT_TRUE(stopped.mean.of(HeadKind::Induction) == stopped.each[0].of(HeadKind::Induction));
  ASSERT_EQ(read("3\n", PromptLayout::Single, p), "");
  EXPECT_THROW(detect_heads_over(m, p), std::invalid_argument);
}

}  // namespace
}  // namespace attention_lab
