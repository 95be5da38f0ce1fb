// The real trained model in ../shared/models/kjv-gpt2 (HF GPT-2, F16, 4
// layers × 8 heads, a byte-level BPE of 4096; see its README): its prompt
// tokenizes to transformers' ids; every hidden state, every head's attention
// weights and the logits match transformers' float64 forward; the greedy
// continuation is its reference's; and the head detectors find the heads its
// README names, scoring every head as TransformerLens's detect_head does;
// its logit lens reads each layer's residual stream as a float64 reference
// does (both written by tests/interp/make_interp_reference.py).

#include "attention_lab/head_detectors.h"
#include "attention_lab/logit_lens.h"
#include "attention_lab/model_gradient.h"
#include "attention_lab/tokenizer.h"
#include "attention_lab/transformer_forward.h"
#include "reference_json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

namespace attention_lab {
namespace {

namespace fs = std::filesystem;

const fs::path kKjv = fs::path(ATTENTION_LAB_SHARED_MODELS_DIR) / "kjv-gpt2";
const fs::path kDetectorReference = fs::path(ATTENTION_LAB_TEST_DATA_DIR) / "interp" / "kjv_detect_heads.json";
const fs::path kLensReference = fs::path(ATTENTION_LAB_TEST_DATA_DIR) / "interp" / "kjv_logit_lens.json";

#define REQUIRE_KJV()                                                                           \
  if (!fs::exists(kKjv / "model.safetensors"))                                                  \
  GTEST_SKIP() << kKjv.string() << " is missing (the shared models folder is not here); the "   \
                  "trained model is not checked"

struct Kjv {
  std::shared_ptr<const TransformerModel> model;
  std::shared_ptr<const Tokenizer> tokenizer;
  nlohmann::json expected;
};

const Kjv& kjv() {
  static const Kjv k = [] {
    Kjv out;
    LoadedModel m = load_model(kKjv);
    if (!m.model) throw std::runtime_error(m.error);
    out.model = m.model;
    std::string error;
    out.tokenizer = Tokenizer::load(kKjv, out.model->config.vocab, error);
    if (!out.tokenizer) throw std::runtime_error(error);
    out.expected = test::read_gzipped_json(kKjv / "reference.expected.json.gz");
    return out;
  }();
  return k;
}

TEST(KjvGpt2, TheForwardIsTransformersFloat64ForwardToFloat32Rounding) {
  REQUIRE_KJV();
  const Kjv& k = kjv();
  const Encoded e = k.tokenizer->encode(k.expected["text"].get<std::string>());
  ASSERT_EQ(e.error, "");
  ASSERT_EQ(e.ids, k.expected["ids"].get<std::vector<int>>());
  const ModelForward f = run_model(*k.model, e.ids, static_cast<int>(e.ids.size()));
  const auto& hidden = k.expected["hidden_states"];  // the embeddings, each layer's output, the last one normed
  const int layers = k.model->config.layers;
  ASSERT_EQ(static_cast<int>(hidden.size()), layers + 1);
  for (int l = 0; l < layers; ++l) {
    EXPECT_LT(test::relative_difference(f.residual[static_cast<std::size_t>(l)], test::matrix_of(hidden[static_cast<std::size_t>(l)])), 1e-5)
        << "hidden state " << l;
    AttentionDetail detail;
    detail.weights_only = true;
    attention(*k.model, l, attention_input(*k.model, l, f.residual[static_cast<std::size_t>(l)]), &detail);
    for (std::size_t h = 0; h < detail.weights.size(); ++h)
      EXPECT_LT(test::relative_difference(detail.weights[h], test::matrix_of(k.expected["attentions"][static_cast<std::size_t>(l)][h])), 1e-5)
          << "layer " << l << " head " << h;
  }
  EXPECT_LT(test::relative_difference(normalize(k.model->final_norm, f.residual.back()), test::matrix_of(hidden.back())), 1e-5);
  EXPECT_LT(test::relative_difference(f.logits, test::matrix_of(k.expected["logits"])), 2e-5);
}

TEST(KjvGpt2, GreedyContinuationIsTheReferences) {
  REQUIRE_KJV();
  const Kjv& k = kjv();
  const std::vector<int> ids = k.expected["ids"].get<std::vector<int>>();
  const std::vector<int> all = generate_greedy(*k.model, ids, 20);
  EXPECT_EQ(std::vector<int>(all.begin() + static_cast<std::ptrdiff_t>(ids.size()), all.end()),
            k.expected["greedy_20"].get<std::vector<int>>());
  EXPECT_EQ(k.tokenizer->decode(std::vector<int>(all.begin() + static_cast<std::ptrdiff_t>(ids.size()), all.end())),
            k.expected["greedy_text"].get<std::string>());
}

TEST(KjvGpt2, HeadDetectorsScoreEveryHeadAsTransformerLens) {
  REQUIRE_KJV();
  const Kjv& k = kjv();
  std::ifstream in(kDetectorReference);
  ASSERT_TRUE(in) << kDetectorReference;
  const nlohmann::json ref = nlohmann::json::parse(in);
  const HeadScores scores = detect_heads(*k.model, ref["ids"].get<std::vector<int>>());
  for (const HeadKind kind : kHeadKinds) {
    SCOPED_TRACE(to_string(kind));
    const auto& want = ref["scores"][to_string(kind)];
    for (int l = 0; l < k.model->config.layers; ++l)
      for (int h = 0; h < k.model->config.heads; ++h)
        EXPECT_NEAR(scores.of(kind)(l, h), want[static_cast<std::size_t>(l)][static_cast<std::size_t>(h)].get<double>(), 1e-5)
            << "layer " << l << " head " << h;
  }
  // The README's previous-token head on real text: layer 2, head 6.
  Eigen::Index l = 0, h = 0;
  scores.of(HeadKind::PreviousToken).maxCoeff(&l, &h);
  EXPECT_EQ(l, 2);
  EXPECT_EQ(h, 6);
}

// On random tokens repeated once, the README's induction head stands out:
// layer 3, head 1, with no other layer's head near it.
TEST(KjvGpt2, TheInductionHeadIsFoundOnRepeatedRandomTokens) {
  REQUIRE_KJV();
  const Kjv& k = kjv();
  const std::vector<int> ids = repeated_random_tokens(k.model->config.vocab, 60, 1);
  const HeadScores scores = detect_heads(*k.model, ids);
  const Matrix& induction = scores.of(HeadKind::Induction);
  Eigen::Index l = 0, h = 0;
  const float best = induction.maxCoeff(&l, &h);
  EXPECT_EQ(l, 3);
  EXPECT_EQ(h, 1);
  EXPECT_GT(best, 5.0f * induction.topRows(3).maxCoeff()) << "the layers before the last have no induction head";
}

// After each layer, the last token's residual stream through ln_f and the
// unembedding gives the reference's five most likely tokens, in its order,
// with its logits and probabilities; after the last layer, the model's own
// prediction.
TEST(KjvGpt2, TheLogitLensReadsEveryLayerAsTheReference) {
  REQUIRE_KJV();
  const Kjv& k = kjv();
  std::ifstream in(kLensReference);
  ASSERT_TRUE(in) << kLensReference;
  const nlohmann::json ref = nlohmann::json::parse(in);
  const std::vector<int> ids = ref["ids"].get<std::vector<int>>();
  const std::vector<LensLayer> lens = logit_lens(*k.model, ids, ref["row"].get<int>(), 5);
  ASSERT_EQ(lens.size(), ref["layers"].size());
  for (std::size_t l = 0; l < lens.size(); ++l) {
    SCOPED_TRACE("after " + std::to_string(l) + " layers");
    EXPECT_EQ(lens[l].after, static_cast<int>(l));
    const auto& want = ref["layers"][l]["top"];
    ASSERT_EQ(lens[l].top.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(lens[l].top[i].id, want[i]["id"].get<int>()) << "rank " << i;
      const double logit = want[i]["logit"].get<double>();
      EXPECT_NEAR(lens[l].top[i].logit, logit, 2e-4 * std::max(1.0, std::abs(logit))) << "rank " << i;
      EXPECT_NEAR(lens[l].top[i].probability, want[i]["p"].get<double>(), 1e-5) << "rank " << i;
    }
  }
  EXPECT_EQ(lens.back().top[0].id, k.expected["greedy_20"][0].get<int>());
  // Another row: what the model reads after the fifth token, the rows after it not run.
  const std::vector<LensLayer> early = logit_lens(*k.model, ids, 4, 3);
  const ModelForward f = run_model(*k.model, std::vector<int>(ids.begin(), ids.begin() + 5), 1);
  EXPECT_EQ(early.back().top[0].id, argmax(f.logits.row(0)));
  EXPECT_THROW(logit_lens(*k.model, ids, static_cast<int>(ids.size()), 3), std::invalid_argument);
}

// The model's next-token loss (what the gradients in model mode are of) is
// the mean cross-entropy transformers' float64 logits give, and its
// gradient at every layer's attention output agrees with central
// differences of that loss.
TEST(KjvGpt2, ItsLossIsTransformersAndItsLayerGradientsAreTheLossesSlopes) {
  REQUIRE_KJV();
  const Kjv& k = kjv();
  const std::vector<int> ids = k.expected["ids"].get<std::vector<int>>();
  const Matrix logits = test::matrix_of(k.expected["logits"]);
  double want = 0.0;
  for (std::size_t i = 0; i + 1 < ids.size(); ++i) {
    const auto row = logits.row(static_cast<Eigen::Index>(i)).cast<double>();
    const double top = row.maxCoeff();
    want += std::log((row.array() - top).exp().sum()) + top - row(ids[i + 1]);
  }
  want /= static_cast<double>(ids.size() - 1);
  std::string error;
  const auto grad = ModelGradient::make(*k.model, error);
  ASSERT_TRUE(grad) << error;
  const ModelForward f = run_model(*k.model, ids, 1);
  for (int layer = 0; layer < k.model->config.layers; ++layer) {
    const LayerOutputGradient g = grad->at_layer(ids, layer, nullptr);
    EXPECT_NEAR(g.loss, want, 1e-4 * want) << "layer " << layer;
    // the layer's own attention output, and cells moved by ±ε from it
    const Matrix normed = attention_input(*k.model, layer, f.residual[static_cast<std::size_t>(layer)]);
    const Matrix out = attention(*k.model, layer, normed);
    for (const auto& [r, c] : {std::pair{3, 7}, {12, 100}, {29, 255}}) {
      const float eps = 0.05f;
      Matrix up = out, down = out;
      up(r, c) += eps;
      down(r, c) -= eps;
      // over the step the floats really took (out ± ε rounds)
      const double step = static_cast<double>(up(r, c)) - static_cast<double>(down(r, c));
      const double slope = (grad->at_layer(ids, layer, &up).loss - grad->at_layer(ids, layer, &down).loss) / step;
      EXPECT_NEAR(g.d_output(r, c), slope, 2e-3 * std::abs(slope) + 2e-5) << "layer " << layer << " [" << r << "," << c << "]";
    }
  }
}

}  // namespace
}  // namespace attention_lab
