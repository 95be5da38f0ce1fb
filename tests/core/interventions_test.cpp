// Ablation, activation patching, direct logit attribution, the logit lens
// (with a token followed) and the head detectors against a float64 reference written from TransformerLens's definitions
// (tests/interp/make_intervention_reference.py) on three real checkpoints:
// the trained kjv-gpt2 and the transformers-written gpt2 and llama-plain
// (grouped-query) fixtures. Plus what must hold exactly: a patch that puts
// back what was there changes no bit, patching the only differing position
// of the residual stream restores the clean run, the attribution's parts
// sum to the logit, and hooks that change nothing leave the layer as it was.

#include "attention_lab/ablation.h"
#include "attention_lab/activation_patching.h"
#include "attention_lab/head_detectors.h"
#include "attention_lab/logit_attribution.h"
#include "attention_lab/logit_lens.h"
#include "attention_lab/run_cache.h"
#include "attention_lab/transformer_model.h"
#include "model_fixture_paths.h"
#include "reference_json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

namespace attention_lab {
namespace {

namespace fs = std::filesystem;

const fs::path kReferences = fs::path(ATTENTION_LAB_TEST_DATA_DIR) / "interp";

fs::path model_folder(const std::string& name) {
  if (name == "kjv-gpt2") return fs::path(ATTENTION_LAB_SHARED_MODELS_DIR) / name;
  return fs::path(ATTENTION_LAB_HF_FIXTURES_DIR) / name;
}

struct Case {
  std::shared_ptr<const TransformerModel> model;
  nlohmann::json ref;
};

// The model and its reference; null model when the shared folder is absent.
Case load_case(const std::string& name) {
  Case c;
  const fs::path folder = model_folder(name);
  if (!fs::exists(folder / "model.safetensors")) return c;
  LoadedModel m = load_model(folder);
  if (!m.model) throw std::runtime_error(m.error);
  c.model = m.model;
  std::ifstream in(kReferences / ("interventions_" + name + ".json"));
  c.ref = nlohmann::json::parse(in);
  return c;
}

// Element i of a JSON array, as a double.
double at(const nlohmann::json& j, Eigen::Index i) { return j[static_cast<std::size_t>(i)].get<double>(); }

AblationTarget target_of(const std::string& s) {
  return s == "head" ? AblationTarget::Head : s == "attention" ? AblationTarget::Attention : AblationTarget::Mlp;
}

class Interventions : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    c_ = load_case(GetParam());
    if (!c_.model) GTEST_SKIP() << model_folder(GetParam()).string() << " is missing (the shared folder is not here)";
  }
  std::vector<int> ids(const char* key) const { return c_.ref[key].get<std::vector<int>>(); }
  PatchMetric metric() const {
    return {PatchMetric::LogitDiff, c_.ref["metric"]["answer"].get<int>(), c_.ref["metric"]["wrong"].get<int>()};
  }
  Case c_;
};

TEST_P(Interventions, AblationsChangeTheLogitsAsTheReference) {
  const TransformerModel& m = *c_.model;
  const std::vector<int> clean = ids("clean"), watched = c_.ref["watched"].get<std::vector<int>>();
  const RunCache run = run_with_cache(m, clean, CacheAttention::None);
  const ActivationMeans means = activation_means(std::span<const RunCache>(&run, 1));
  const auto watched_logits = [&](const RunCache& r) {
    const RowVector z = row_logits(m, r.resid.back(), static_cast<int>(clean.size()) - 1);
    std::vector<double> out;
    for (const int t : watched) out.push_back(z(t));
    return out;
  };
  const auto near = [](const std::vector<double>& ours, const nlohmann::json& ref, const std::string& what) {
    for (std::size_t i = 0; i < ours.size(); ++i) EXPECT_NEAR(ours[i], ref[i].get<double>(), 2e-4) << what << " token " << i;
  };
  near(watched_logits(run), c_.ref["unablated"], "unablated");
  for (const auto& a : c_.ref["ablations"]) {
    Ablation ab;
    ab.target = target_of(a["target"]);
    ab.mode = a["mode"] == "zero" ? AblationMode::Zero : AblationMode::Mean;
    ab.layer = a["layer"];
    ab.head = a["head"];
    ab.position = a["position"];
    ASSERT_EQ(check(ab, m.config, static_cast<int>(clean.size())), "");
    const std::vector<LayerHooks> hooks = ablation_hooks(m.config, std::span<const Ablation>(&ab, 1), means);
    const RunCache ablated = run_with_cache(m, clean, CacheAttention::None, hooks);
    const std::vector<double> ours = watched_logits(ablated);
    near(ours, a["logits"], to_spec(ab));
    // It changed something (each case was chosen to).
    double moved = 0.0;
    for (std::size_t i = 0; i < ours.size(); ++i) moved = std::max(moved, std::abs(ours[i] - c_.ref["unablated"][i].get<double>()));
    EXPECT_GT(moved, 1e-3) << to_spec(ab);
  }
}

TEST_P(Interventions, EveryPatchingSweepIsTheReferences) {
  const TransformerModel& m = *c_.model;
  const std::vector<int> clean = ids("clean"), corrupted = ids("corrupted");
  ASSERT_EQ(check_patching(m.config, clean, corrupted, metric()), "");
  for (const auto& r : c_.ref["patching"]) {
    PatchKind kind{};
    ASSERT_TRUE(parse_patch_kind(r["kind"], kind)) << r["kind"];
    const PatchSweep s = patch_sweep(*c_.model, clean, corrupted, kind, metric());
    EXPECT_NEAR(s.clean, r["clean"].get<double>(), 2e-4);
    EXPECT_NEAR(s.corrupted, r["corrupted"].get<double>(), 2e-4);
    const Eigen::MatrixXd n = s.normalised();
    const auto& rows = r["normalised"];
    ASSERT_EQ(n.rows(), static_cast<Eigen::Index>(rows.size())) << r["kind"];
    for (Eigen::Index l = 0; l < n.rows(); ++l) {
      const auto& row = rows[static_cast<std::size_t>(l)];
      ASSERT_EQ(n.cols(), static_cast<Eigen::Index>(row.size())) << r["kind"];
      for (Eigen::Index i = 0; i < n.cols(); ++i) EXPECT_NEAR(n(l, i), at(row, i), 5e-4) << r["kind"] << " " << l << "," << i;
    }
  }
  const auto& p = c_.ref["patching_probability"];
  const PatchMetric prob{PatchMetric::Probability, metric().answer, 0};
  const PatchSweep s = patch_sweep(m, clean, corrupted, PatchKind::ResidPre, prob);
  EXPECT_NEAR(s.clean, p["clean"].get<double>(), 2e-5);
  const Eigen::MatrixXd n = s.normalised();
  for (Eigen::Index l = 0; l < n.rows(); ++l)
    for (Eigen::Index i = 0; i < n.cols(); ++i) EXPECT_NEAR(n(l, i), at(p["normalised"][static_cast<std::size_t>(l)], i), 5e-4);
}

TEST_P(Interventions, PatchingWhatIsAlreadyThereChangesNoBit) {
  const TransformerModel& m = *c_.model;
  const std::vector<int> clean = ids("clean"), corrupted = ids("corrupted");
  const PatchSweep s = patch_sweep(m, clean, corrupted, PatchKind::ResidPre, metric());
  for (int p = 0; p < s.positions; ++p) {
    // Layer 0's input differs only where the tokens do: elsewhere the patch
    // puts back the same row, there it makes the clean run's input.
    if (clean[static_cast<std::size_t>(p)] == corrupted[static_cast<std::size_t>(p)]) {
      EXPECT_EQ(s.metric(0, p), s.corrupted) << p;
    }
  }
  std::vector<int> one_change = corrupted;
  one_change[9] = clean[9];  // differs from clean at position 4 only
  const PatchSweep t = patch_sweep(m, clean, one_change, PatchKind::ResidPre, metric());
  EXPECT_EQ(t.metric(0, 4), t.clean);
  EXPECT_EQ(t.normalised()(0, 4), 1.0);
}

TEST_P(Interventions, AttributionIsTheReferencesAndSumsToTheLogit) {
  const TransformerModel& m = *c_.model;
  const RunCache run = run_with_cache(m, ids("clean"), CacheAttention::None);
  for (const auto& r : c_.ref["attribution"]) {
    const LogitAttribution a = direct_logit_attribution(m, run, r["row"], r["token"], r["minus"]);
    const double tol = 2e-4 * std::max(1.0, std::abs(r["logit"].get<double>()));
    EXPECT_NEAR(a.logit, r["logit"].get<double>(), tol);
    EXPECT_NEAR(a.total(), a.logit, 1e-9 * std::max(1.0, std::abs(a.logit)) + 1e-5);
    // And the model's own logit at that row.
    const RowVector z = row_logits(m, run.resid.back(), a.row);
    EXPECT_NEAR(a.logit, z(a.token) - (a.minus >= 0 ? z(a.minus) : 0.0f), tol);
    EXPECT_NEAR(a.constant, r["constant"].get<double>(), tol);
    EXPECT_NEAR(a.embeddings, r["embeddings"].get<double>(), tol);
    for (int l = 0; l < m.config.layers; ++l) {
      EXPECT_NEAR(a.mlp(l), at(r["mlp"], l), tol);
      EXPECT_NEAR(a.attention_bias(l), at(r["attention_bias"], l), tol);
      for (int h = 0; h < m.config.heads; ++h) EXPECT_NEAR(a.heads(l, h), at(r["heads"][static_cast<std::size_t>(l)], h), tol) << l << "," << h;
    }
  }
}

TEST_P(Interventions, TheLogitLensIsTheReferencesWithTheWrongTokenFollowed) {
  const TransformerModel& m = *c_.model;
  const auto& r = c_.ref["logit_lens"];
  const int tracked = r["layers"][0]["tracked"]["id"];
  const std::vector<LensLayer> lens = logit_lens(m, ids("clean"), r["row"], 5, tracked);
  ASSERT_EQ(lens.size(), r["layers"].size());
  for (std::size_t l = 0; l < lens.size(); ++l) {
    SCOPED_TRACE("after " + std::to_string(l) + " layers");
    const auto& want = r["layers"][l];
    for (std::size_t i = 0; i < want["top"].size(); ++i) {
      EXPECT_EQ(lens[l].top[i].id, want["top"][i]["id"].get<int>()) << "rank " << i;
      const double logit = want["top"][i]["logit"].get<double>();
      EXPECT_NEAR(lens[l].top[i].logit, logit, 2e-4 * std::max(1.0, std::abs(logit)));
      EXPECT_NEAR(lens[l].top[i].probability, want["top"][i]["p"].get<double>(), 2e-5);
    }
    EXPECT_NEAR(lens[l].tracked.probability, want["tracked"]["p"].get<double>(), 2e-5);
    EXPECT_EQ(lens[l].tracked_rank, want["tracked"]["rank"].get<int>());
  }
}

TEST_P(Interventions, TheHeadDetectorsAreTheReferences) {
  const TransformerModel& m = *c_.model;
  for (const auto& r : c_.ref["detectors"]) {
    const std::vector<int> text = r["ids"].get<std::vector<int>>();
    const HeadScores scores = detect_heads(m, text);
    for (const HeadKind kind : kHeadKinds) {
      const auto& want = r["scores"][to_string(kind)];
      for (int l = 0; l < m.config.layers; ++l)
        for (int h = 0; h < m.config.heads; ++h)
          EXPECT_NEAR(scores.of(kind)(l, h), want[static_cast<std::size_t>(l)][static_cast<std::size_t>(h)].get<double>(), 2e-5)
              << to_string(kind) << " " << l << "," << h;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(RealCheckpoints, Interventions, ::testing::Values("kjv-gpt2", "gpt2", "llama-plain"),
                         [](const auto& param) {
                           std::string s = param.param;
                           for (char& ch : s) if (ch == '-') ch = '_';
                           return s;
                         });

// Every committed fixture shape and every transformers-written one (biases,
// tied heads, windows, q/k norms, parallel residuals, post-norms, BF16): hooks that change nothing leave every layer as
// the plain forward computes it, and the attribution sums to the logit.
TEST(InterventionsOnEveryFixture, EmptyHooksAndTheAttributionsSum) {
  int models = 0;
  std::vector<fs::directory_entry> folders(fs::directory_iterator(test::kFixtures), fs::directory_iterator());
  if (fs::exists(ATTENTION_LAB_HF_FIXTURES_DIR))  // post-norms, parallel residuals, soft-caps: the transformers-written ones
    folders.insert(folders.end(), fs::directory_iterator(ATTENTION_LAB_HF_FIXTURES_DIR), fs::directory_iterator());
  for (const auto& entry : folders) {
    if (!fs::exists(entry.path() / "config.json")) continue;  // a scenario fixture, not a model
    LoadedModel lm = load_model(entry.path());
    ASSERT_TRUE(lm.model) << entry.path() << ": " << lm.error;
    const TransformerModel& m = *lm.model;
    ++models;
    const ModelForward plain = run_model(m, test::kFixtureIds, 1);
    const RunCache run = run_with_cache(m, test::kFixtureIds, CacheAttention::Everything);
    for (std::size_t l = 0; l < plain.residual.size(); ++l)
      EXPECT_LT((run.resid[l] - plain.residual[l]).cwiseAbs().maxCoeff(), 1e-4f) << entry.path() << " layer " << l;
    const int last = static_cast<int>(test::kFixtureIds.size()) - 1;
    if (!attribution_unsupported(m.config).empty()) {
      EXPECT_THROW(direct_logit_attribution(m, run, last, 1), std::invalid_argument);
      continue;
    }
    const LogitAttribution a = direct_logit_attribution(m, run, last, 1, 2);
    EXPECT_NEAR(a.total(), a.logit, 1e-4 * std::max(1.0, std::abs(a.logit))) << entry.path();
    if (m.config.logit_softcap == 0.0) {
      const RowVector z = row_logits(m, run.resid.back(), last);
      EXPECT_NEAR(a.logit, z(1) - z(2), 1e-4 * std::max(1.0, std::abs(a.logit))) << entry.path();
    }
  }
  EXPECT_GE(models, 9);
}

TEST(InterventionsBadInput, NamedAndRefused) {
  LoadedModel lm = load_model(test::fixture("gpt2-conv1d"));
  ASSERT_TRUE(lm.model) << lm.error;
  const ModelConfig& c = lm.model->config;
  const std::vector<int> a = {1, 2, 3, 4}, b = {1, 2, 3};
  EXPECT_EQ(check_patching(c, a, b, {}),
            "the clean prompt has 4 tokens and the corrupted one 3: patching needs the same number of tokens");
  EXPECT_NE(check_patching(c, a, a, {PatchMetric::LogitDiff, c.vocab, 0}).find("answer token"), std::string::npos);
  EXPECT_EQ(check_patching(c, a, a, {PatchMetric::Probability, 3, -1}), "");
  Ablation ab;
  ab.layer = c.layers;
  EXPECT_EQ(check(ab, c, 4), "layer " + std::to_string(c.layers) + ": expected 0 to " + std::to_string(c.layers - 1));
  ab.layer = 0;
  ab.head = -1;
  EXPECT_NE(check(ab, c, 4).find("head -1"), std::string::npos);
  ab.head = 0;
  ab.position = 4;
  EXPECT_NE(check(ab, c, 4).find("position 4"), std::string::npos);
  PatchKind k{};
  EXPECT_FALSE(parse_patch_kind("hook_z", k));
  // Specs read back what to_spec writes; anything else is named.
  for (const char* spec : {"L3H1", "L0.attn", "L2.mlp@5:mean", "L1H0@0", "L12H11:mean"}) {
    Ablation parsed;
    EXPECT_EQ(parse_ablation(spec, parsed), "") << spec;
    EXPECT_EQ(to_spec(parsed), spec);
  }
  Ablation parsed;
  EXPECT_EQ(parse_ablation("L3H1:zero", parsed), "");
  EXPECT_EQ(to_spec(parsed), "L3H1");
  for (const char* bad : {"", "L", "3H1", "L3", "L3H", "L3.att", "L3H1@", "L3H1:avg", "L3H1 ", "L99999999999H1"})
    EXPECT_NE(parse_ablation(bad, parsed).find("expected L<layer>H<head>"), std::string::npos) << bad;
  // Same prompts: nothing to normalise by.
  const PatchSweep s = patch_sweep(*lm.model, a, a, PatchKind::AttnOut, {PatchMetric::LogitDiff, 1, 2});
  EXPECT_TRUE(std::isnan(s.normalised()(0, 0)));
  EXPECT_THROW(direct_logit_attribution(*lm.model, run_with_cache(*lm.model, a, CacheAttention::None), 4, 1),
               std::invalid_argument);
}

}  // namespace
}  // namespace attention_lab
