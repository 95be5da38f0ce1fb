// Model mode: the unedited forward once, the focused layer as a document,
// predictions that follow its edits and pins through the later layers.

#include "attention_lab/document.h"
#include "attention_lab/model_session.h"
#include "attention_lab/run_cache.h"
#include "test_support.h"
#include "model_fixture_paths.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

namespace attention_lab {
namespace {

using attention_lab::test::kFixtures;

struct Opened {
  std::shared_ptr<const TransformerModel> model;
  std::shared_ptr<const Tokenizer> tokenizer;
};

Opened open(const char* name) {
  LoadedModel m = load_model(kFixtures / name);
  if (!m.model) throw std::runtime_error(m.error);
  std::string error;
  auto t = Tokenizer::load(kFixtures / name, m.model->config.vocab, error);
  if (!t) throw std::runtime_error(error);
  return {m.model, t};
}

std::unique_ptr<ModelSession> start(const Opened& o, int layer) {
  std::string error;
  auto s = ModelSession::start(o.model, o.tokenizer, test::kFixtureIds, layer, nullptr, error);
  if (!s) throw std::runtime_error(error);
  return s;
}

// The probabilities of `row` with layer L's attention replaced by `attention_out`, the long way.
RowVector full_recompute(const TransformerModel& m, int L, const Matrix& attention_out, int row) {
  Matrix x = embed(m, test::kFixtureIds);
  for (int l = 0; l < L; ++l) x = run_layer(m, l, x);
  x = finish_layer(m, L, x, attention_out);
  for (int l = L + 1; l < m.config.layers; ++l) x = run_layer(m, l, x);
  const RowVector z = logits(m, x, row, 1).row(0);
  RowVector p = (z.array() - z.maxCoeff()).exp().matrix();
  return p / p.sum();
}

Matrix output_of(const Document& doc) { return doc.stage(StageId::input(StageKind::Output)); }

// The app's way of computing the focused layer: its scenario becomes `doc`
// (counted in `calls`), and its output and weights go back to the session.
FocusedLayer focus_into(std::unique_ptr<Document>& doc, int* calls = nullptr) {
  return [&doc, calls](LayerScenario ls) {
    if (calls) ++*calls;
    EXPECT_EQ(ls.error, "");
    doc = std::make_unique<Document>(std::move(ls.scenario));
    FocusedAttention f;
    f.output = output_of(*doc);
    for (int h = 0; h < doc->scenario().heads; ++h) f.weights.emplace_back(doc->stage(StageId::of_head(StageKind::Weights, h)));
    return f;
  };
}

TEST(ModelSession, UneditedPredictionsAreTheModelsAndMatchTheirBeforeExactly) {
  for (const char* name : {"gpt2-conv1d", "llama-gqa"}) {
    SCOPED_TRACE(name);
    const Opened o = open(name);
    auto s = start(o, 0);
    LayerScenario ls = s->scenario();
    ASSERT_EQ(ls.error, "");
    Document doc(std::move(ls.scenario));
    s->set_unedited_attention(output_of(doc));
    const auto top = s->predictions(output_of(doc), 6, 5);
    ASSERT_EQ(top.size(), 5u);
    const ModelForward f = run_model(*o.model, test::kFixtureIds, 1);
    EXPECT_EQ(top[0].id, argmax(f.logits.row(0)));
    for (std::size_t i = 0; i < top.size(); ++i) {
      EXPECT_EQ(top[i].probability, top[i].before);
      if (i) {
        EXPECT_GE(top[i - 1].probability, top[i].probability);
      }
    }
  }
}

// The first predictions of an unedited layer are its baseline, computed once
// (prepare_baseline, on the app's worker) and equal to the long way's.
TEST(ModelSession, PreparedBaselinePredictionsAreTheUneditedProbabilities) {
  const Opened o = open("gpt2-conv1d");
  auto s = start(o, 0);
  LayerScenario ls = s->scenario();
  ASSERT_EQ(ls.error, "");
  Document doc(std::move(ls.scenario));
  s->set_unedited_attention(output_of(doc));
  s->prepare_baseline(1000);  // clamped to the last row
  const int last = s->T() - 1;
  const RowVector want = s->probabilities(output_of(doc), last);
  const auto top = s->predictions(output_of(doc), last, static_cast<int>(want.size()));
  ASSERT_EQ(top.size(), static_cast<std::size_t>(want.size()));
  for (const Prediction& p : top) {
    EXPECT_EQ(p.probability, want(p.id));
    EXPECT_EQ(p.probability, p.before);
  }
  const RowVector full = full_recompute(*o.model, 0, output_of(doc), last);
  for (const Prediction& p : top) EXPECT_NEAR(p.probability, full(p.id), 1e-5);
}

// The app's way in: the focused layer's document is made as the forward
// reaches it and the later layers run from its output, so the unedited
// predictions are this forward's logits (no second pass), match a full
// recompute from the document's output, and an edit's "before" is what was
// shown unedited.
TEST(ModelSession, AFocusedLayerComputedByTheCallerFeedsTheLaterLayersAndTheBaseline) {
  for (const char* name : {"llama-gqa", "gpt2-conv1d"}) {
    SCOPED_TRACE(name);
    const Opened o = open(name);
    const int layer = 0;
    std::unique_ptr<Document> doc;
    int calls = 0;
    const FocusedLayer focus = focus_into(doc, &calls);
    std::string error;
    auto s = ModelSession::start(o.model, o.tokenizer, test::kFixtureIds, layer, nullptr, error, focus);
    ASSERT_TRUE(s) << error;
    ASSERT_EQ(calls, 1);
    EXPECT_EQ(s->unedited_attention(), output_of(*doc));
    // The overview's focused layer shows the document's weights.
    const Matrix w0 = doc->stage(StageId::of_head(StageKind::Weights, 0));
    if (w0.rows() <= 48) {
      EXPECT_EQ(s->overview().at(layer, 0), w0);
    }
    const int last = s->T() - 1;
    const auto unedited = s->predictions(output_of(*doc), last, 8);
    const RowVector full = full_recompute(*o.model, layer, output_of(*doc), last);
    for (const Prediction& p : unedited) {
      EXPECT_EQ(p.probability, p.before);
      EXPECT_NEAR(p.probability, full(p.id), 1e-6);
    }
    ASSERT_EQ(doc->apply(SetPin{PinKey{StageId::of_head(StageKind::Weights, 0), last, 0}, 1.0f}), "");
    const auto edited = s->predictions(output_of(*doc), last, 8);
    const RowVector want = full_recompute(*o.model, layer, output_of(*doc), last);
    for (const Prediction& p : edited) {
      EXPECT_NEAR(p.probability, want(p.id), 1e-6);
      const auto it = std::find_if(unedited.begin(), unedited.end(), [&](const Prediction& u) { return u.id == p.id; });
      if (it != unedited.end()) {
        EXPECT_EQ(p.before, it->probability);
      }
    }
  }
}

// Ablations in the session: a head of an earlier layer, the focused layer's
// own head (in its scenario's W_o and b_o), its MLP and a later layer's
// attention at one position — the predictions for every row are those of
// run_with_cache with the same ablations (the CLI's `ablate`), their
// "before" is the model without them, and an edit still moves them.
TEST(ModelSession, AblationsAreTheAblatedModelsPredictionsWithTheUnablatedBefore) {
  for (const char* name : {"llama-gqa", "gpt2-conv1d"}) {
    SCOPED_TRACE(name);
    const Opened o = open(name);
    const int layer = 1;
    for (const AblationMode mode : {AblationMode::Zero, AblationMode::Mean}) {
      std::vector<Ablation> ablations = {{AblationTarget::Head, mode, 0, 1, -1},
                                         {AblationTarget::Head, mode, layer, 2, -1},
                                         {AblationTarget::Mlp, mode, layer, 0, -1},
                                         {AblationTarget::Attention, mode, 0, 0, 3}};
      std::unique_ptr<Document> doc;
      const FocusedLayer focus = focus_into(doc);
      std::string error;
      auto s = ModelSession::start(o.model, o.tokenizer, test::kFixtureIds, layer, nullptr, error, focus, ablations);
      ASSERT_TRUE(s) << error;
      EXPECT_NE(doc->scenario().description.find("Ablated here: L1H2"), std::string::npos) << doc->scenario().description;
      const RunCache plain = run_with_cache(*o.model, test::kFixtureIds, CacheAttention::None);
      const ActivationMeans means = activation_means(std::span<const RunCache>(&plain, 1));
      const RunCache ablated =
          run_with_cache(*o.model, test::kFixtureIds, CacheAttention::None, ablation_hooks(o.model->config, ablations, means));
      for (int row : {2, s->T() - 1}) {
        const RowVector want = next_token_probabilities(row_logits(*o.model, ablated.resid.back(), row));
        const RowVector before = next_token_probabilities(row_logits(*o.model, plain.resid.back(), row));
        for (const Prediction& p : s->predictions(output_of(*doc), row, 8)) {
          EXPECT_NEAR(p.probability, want(p.id), 2e-6) << "row " << row;
          EXPECT_NEAR(p.before, before(p.id), 2e-6) << "row " << row;
        }
      }
      ASSERT_EQ(doc->apply(SetPin{PinKey{StageId::of_head(StageKind::Weights, 0), s->T() - 1, 0}, 1.0f}), "");
      const auto edited = s->predictions(output_of(*doc), s->T() - 1, 1);
      const RowVector unedited = next_token_probabilities(row_logits(*o.model, ablated.resid.back(), s->T() - 1));
      EXPECT_GT(std::abs(edited[0].probability - unedited(edited[0].id)), 1e-6);
    }
    // One position of the focused layer's head: refused, by name.
    std::string error;
    EXPECT_FALSE(ModelSession::start(o.model, o.tokenizer, test::kFixtureIds, layer, nullptr, error, {},
                                     {{AblationTarget::Head, AblationMode::Zero, layer, 0, 2}}));
    EXPECT_NE(error.find("ablation L1H0@2: a head of the focused layer"), std::string::npos) << error;
    EXPECT_FALSE(ModelSession::start(o.model, o.tokenizer, test::kFixtureIds, layer, nullptr, error, {},
                                     {{AblationTarget::Mlp, AblationMode::Zero, 9, 0, -1}}));
    EXPECT_NE(error.find("ablation L9.mlp: layer 9: expected 0 to"), std::string::npos) << error;
  }
}

// A new ablation reruns only the layers from it on: the layers before it
// (and before either focused layer) are taken from the earlier ModelSession of
// the same model and text, and everything is as a session run from scratch.
TEST(ModelSession, AnAblationRerunsOnlyTheLayersFromItOn) {
  for (const char* name : {"gpt2-conv1d", "llama-gqa"}) {
    SCOPED_TRACE(name);
    const Opened o = open(name);
    const int layer = 1;
    const std::vector<Ablation> first = {{AblationTarget::Head, AblationMode::Mean, 0, 1, -1}};
    std::vector<Ablation> second = first;
    second.push_back({AblationTarget::Mlp, AblationMode::Zero, 1, 0, -1});
    std::string error;
    std::unique_ptr<Document> d0, d1, d2;
    auto before = ModelSession::start(o.model, o.tokenizer, test::kFixtureIds, layer, nullptr, error, focus_into(d0), first);
    ASSERT_TRUE(before) << error;
    auto reused = ModelSession::start(o.model, o.tokenizer, test::kFixtureIds, layer, nullptr, error, focus_into(d1), second,
                                      before.get());
    auto fresh = ModelSession::start(o.model, o.tokenizer, test::kFixtureIds, layer, nullptr, error, focus_into(d2), second);
    ASSERT_TRUE(reused && fresh) << error;
    EXPECT_EQ(reused->reused_layers(), 1);
    EXPECT_EQ(fresh->reused_layers(), 0);
    EXPECT_TRUE(reused->layer_input() == fresh->layer_input());
    for (int l = 0; l < o.model->config.layers; ++l)
      for (int h = 0; h < o.model->config.heads; ++h) EXPECT_TRUE(reused->overview().at(l, h) == fresh->overview().at(l, h));
    for (const HeadKind k : kHeadKinds) EXPECT_TRUE(reused->head_scores().of(k) == fresh->head_scores().of(k));
    const auto a = reused->predictions(output_of(*d1), reused->T() - 1, 5), b = fresh->predictions(output_of(*d2), fresh->T() - 1, 5);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].id, b[i].id);
      EXPECT_EQ(a[i].probability, b[i].probability);
      EXPECT_EQ(a[i].before, b[i].before);
    }
    // An ablation in layer 0, another text, another model's session: every layer runs.
    std::vector<Ablation> early = second;
    early.push_back({AblationTarget::Mlp, AblationMode::Zero, 0, 0, -1});
    EXPECT_EQ(ModelSession::start(o.model, o.tokenizer, test::kFixtureIds, layer, nullptr, error, {}, early, reused.get())
                  ->reused_layers(),
              0);
    const std::vector<int> other = {3, 14, 15, 9, 2, 6, 52};
    EXPECT_EQ(ModelSession::start(o.model, o.tokenizer, other, layer, nullptr, error, {}, second, reused.get())->reused_layers(), 0);
  }
}

// The session scores every head as it opens (the Model tab's detector
// heatmaps): the scores detect_heads gives for the same text.
TEST(ModelSession, EveryHeadIsScoredAsTheDetectorsScoreIt) {
  const Opened o = open("llama-gqa");
  std::string error;
  const std::vector<int> ids = repeated_random_tokens(o.model->config.vocab, 6, 4);
  auto s = ModelSession::start(o.model, o.tokenizer, ids, 1, nullptr, error);
  ASSERT_TRUE(s) << error;
  const HeadScores want = detect_heads(*o.model, ids);
  EXPECT_EQ(s->head_scores().ids, ids);
  for (const HeadKind kind : kHeadKinds) {
    ASSERT_EQ(s->head_scores().of(kind).rows(), 2);
    ASSERT_EQ(s->head_scores().of(kind).cols(), 4);
    EXPECT_LT((s->head_scores().of(kind) - want.of(kind)).cwiseAbs().maxCoeff(), 1e-6f) << to_string(kind);
  }
  EXPECT_GT(s->head_scores().of(HeadKind::Induction).maxCoeff(), 0.0f);
}

TEST(ModelSession, APinInTheFocusedLayerChangesThePredictionsAsAFullRecomputeDoes) {
  const Opened o = open("llama-gqa");
  auto s = start(o, 0);
  Document doc(s->scenario().scenario);
  s->set_unedited_attention(output_of(doc));
  const auto before = s->predictions(output_of(doc), 6, 61);
  // Make the last token attend only to the first, in every head.
  for (int h = 0; h < 4; ++h) {
    ASSERT_EQ(doc.apply(SetPin{PinKey{StageId::of_head(StageKind::Weights, h), 6, 0}, 1.0f}), "");
    for (int j = 1; j < 7; ++j)
      ASSERT_EQ(doc.apply(SetPin{PinKey{StageId::of_head(StageKind::Weights, h), 6, j}, 0.0f}), "");
  }
  const auto after = s->predictions(output_of(doc), 6, 61);
  const RowVector want = full_recompute(*o.model, 0, output_of(doc), 6);
  double moved = 0;
  for (const auto& p : after) {
    EXPECT_NEAR(p.probability, want(p.id), 1e-6);
    moved += static_cast<double>(std::abs(p.probability - p.before));
  }
  EXPECT_GT(moved, 0.01) << "the pin should move the predictions";
  // The "before" column still shows the unedited model.
  for (const auto& p : after) {
    const auto it = std::find_if(before.begin(), before.end(), [&](const Prediction& b) { return b.id == p.id; });
    ASSERT_NE(it, before.end());
    EXPECT_EQ(p.before, it->probability);
  }
}

TEST(ModelSession, AnEditedWeightInTheFirstLayerReachesEveryRowsPredictionAsAFullRecompute) {
  const Opened o = open("gpt2-conv1d");
  auto s = start(o, 0);
  Document doc(s->scenario().scenario);
  s->set_unedited_attention(output_of(doc));
  ASSERT_EQ(doc.apply(SetCell{StageId::input(StageKind::W_q), 3, 5, 4.0f}), "");
  for (int row : {0, 3, 6}) {
    SCOPED_TRACE(row);
    const RowVector got = s->probabilities(output_of(doc), row);
    EXPECT_TRUE(test::matrices_near(got, full_recompute(*o.model, 0, output_of(doc), row), 0.0, 1e-6, "probabilities"));
  }
}

TEST(ModelSession, APinInTheLastLayerNeedsOnlyItsRowAndMatchesAFullRecompute) {
  const Opened o = open("qwen2-bias-tied-bf16");
  auto s = start(o, 1);
  Document doc(s->scenario().scenario);
  s->set_unedited_attention(output_of(doc));
  ASSERT_EQ(doc.apply(SetPin{PinKey{StageId::of_head(StageKind::Scores, 2), 5, 1}, 6.0f}), "");
  for (int row : {5, 6}) {
    SCOPED_TRACE(row);
    EXPECT_TRUE(test::matrices_near(s->probabilities(output_of(doc), row), full_recompute(*o.model, 1, output_of(doc), row),
                                    0.0, 1e-6, "probabilities"));
  }
}

TEST(ModelSession, FocusingAnotherLayerGivesThatLayersScenario) {
  const Opened o = open("mistral-window-sharded");
  auto s = start(o, 0);
  s->set_layer(1);
  EXPECT_EQ(s->layer(), 1);
  LayerScenario ls = s->scenario();
  ASSERT_EQ(ls.error, "");
  EXPECT_EQ(ls.scenario.mask_kind, MaskKind::Window);
  EXPECT_EQ(ls.scenario.window, 3);
  EXPECT_EQ(ls.scenario.kv_heads, 1);
  Matrix x = embed(*o.model, test::kFixtureIds);
  x = run_layer(*o.model, 0, x);
  EXPECT_TRUE(test::matrices_near(ls.scenario.X.get(), normalize(o.model->layers[1].norm1, x), 0.0, 1e-6, "X"));
  EXPECT_EQ(ls.scenario.tokens.size(), 7u);
}

TEST(ModelSession, TheOverviewHoldsEveryLayersEveryHeadsWeights) {
  const Opened o = open("llama-gqa");
  auto s = start(o, 1);
  const ModelOverview& ov = s->overview();
  EXPECT_EQ(ov.layers, 2);
  EXPECT_EQ(ov.heads, 4);
  ASSERT_EQ(ov.weights.size(), 8u);
  Matrix x = embed(*o.model, test::kFixtureIds);
  for (int l = 0; l < 2; ++l) {
    AttentionDetail d;
    attention(*o.model, l, normalize(o.model->layers[static_cast<std::size_t>(l)].norm1, x), &d);
    for (int h = 0; h < 4; ++h) EXPECT_TRUE(test::matrices_near(ov.at(l, h), d.weights[static_cast<std::size_t>(h)], 0, 0, "overview"));
    x = run_layer(*o.model, l, x);
  }
}

TEST(ModelSession, BadInputsAreRefusedWithTheReason) {
  const Opened o = open("gpt2-conv1d");
  std::string error;
  EXPECT_FALSE(ModelSession::start(o.model, o.tokenizer, {1, 99}, 0, nullptr, error));
  EXPECT_NE(error.find("id 99"), std::string::npos) << error;
  EXPECT_FALSE(ModelSession::start(o.model, o.tokenizer, {1, 2}, 2, nullptr, error));
  EXPECT_NE(error.find("layer 2: expected 0 to 1"), std::string::npos) << error;
  ComputeControl control;
  control.cancel = true;
  EXPECT_THROW(ModelSession::start(o.model, o.tokenizer, {1, 2}, 0, &control, error), Cancelled);
}

TEST(Activation, EachMatchesItsFormulaInDouble) {
  Matrix m(1, 9);
  m << -6.0f, -2.5f, -1.0f, -0.1f, 0.0f, 0.3f, 1.0f, 2.0f, 7.0f;
  for (Activation a : {Activation::GeluTanh, Activation::GeluErf, Activation::Relu, Activation::Silu}) {
    SCOPED_TRACE(to_string(a));
    Matrix got = m;
    activate(a, got);
    for (Eigen::Index i = 0; i < m.cols(); ++i) {
      const double x = m(0, i);
      double want = 0;
      switch (a) {
        case Activation::GeluTanh: want = 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); break;
        case Activation::GeluErf: want = 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); break;
        case Activation::Relu: want = std::max(x, 0.0); break;
        case Activation::Silu: want = x / (1 + std::exp(-x)); break;
      }
      EXPECT_NEAR(got(0, i), want, 2e-6 * std::max(1.0, std::abs(want))) << "x = " << x;
    }
  }
}

TEST(PoolTo, AveragesBlocksAndKeepsSmallMatrices) {
  Matrix m(4, 6);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 6; ++c) m(r, c) = static_cast<float>(r * 6 + c);
  EXPECT_EQ(pool_to(m, 8), m);
  const Matrix p = pool_to(m, 2);
  ASSERT_EQ(p.rows(), 2);
  ASSERT_EQ(p.cols(), 2);
  EXPECT_FLOAT_EQ(p(0, 0), (0 + 1 + 2 + 6 + 7 + 8) / 6.0f);
  EXPECT_FLOAT_EQ(p(1, 1), (15 + 16 + 17 + 21 + 22 + 23) / 6.0f);
}

}  // namespace
}  // namespace attention_lab
