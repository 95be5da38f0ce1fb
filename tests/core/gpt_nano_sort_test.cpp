// The real trained model in ../shared/models/gpt-nano-sort (minGPT layout,
// F32): every intermediate its authors recorded, and greedy sorting.

#include "attention_lab/engine.h"
#include "attention_lab/safetensors.h"
#include "attention_lab/transformer_forward.h"
#include "test_support.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>

namespace attention_lab {
namespace {

using attention_lab::test::near_reference;

const std::filesystem::path kModel = std::filesystem::path(ATTENTION_LAB_SHARED_MODELS_DIR) / "gpt-nano-sort";

#define REQUIRE_SHARED_MODEL()                                                                       \
  if (!std::filesystem::exists(kModel / "model.safetensors"))                                      \
  GTEST_SKIP() << kModel.string() << " is missing (the shared models folder is not here); the "    \
                  "project's own fixtures in tests/models cover every layout without it"

// One recorded activation: batch entry b (and head h for [B, H, T, X] tensors) as a matrix.
class Reference {
 public:
  Reference() {
    std::string error;
    file_ = SafetensorsFile::open(kModel / "reference-activations.safetensors", error);
    if (!file_) throw std::runtime_error(error);
  }
  Matrix get(const std::string& name, int b, int h = -1) const {
    const TensorInfo* t = file_->find(name);
    if (!t) throw std::runtime_error("no reference tensor " + name);
    std::vector<float> v;
    std::string error;
    if (!file_->read_floats(*t, v, error)) throw std::runtime_error(error);
    const auto& sh = t->shape;
    const Eigen::Index rows = sh[sh.size() - 2], cols = sh[sh.size() - 1];
    std::size_t offset = static_cast<std::size_t>(sh[0] == 1 ? 0 : b) * static_cast<std::size_t>(t->numel() / sh[0]);
    if (h >= 0) offset += static_cast<std::size_t>(h * rows * cols);
    return Eigen::Map<const Matrix>(v.data() + offset, rows, cols);
  }

 private:
  std::shared_ptr<const SafetensorsFile> file_;
};

// The token ids of recorded input b (stored as floats).
std::vector<int> recorded_ids(const Reference& ref, int b) {
  const Matrix idx = ref.get("idx", 0).row(b);
  std::vector<int> ids;
  for (Eigen::Index t = 0; t < idx.cols(); ++t) ids.push_back(static_cast<int>(idx(0, t)));
  return ids;
}

std::shared_ptr<const TransformerModel> load_nano() {
  LoadedModel m = load_model(kModel);
  if (!m.model) throw std::runtime_error(m.error);
  return m.model;
}

TEST(GptNanoSort, LoadsAsMinGptWithItsConfig) {
  REQUIRE_SHARED_MODEL();
  const auto model = load_nano();
  const ModelConfig& c = model->config;
  EXPECT_EQ(c.family, ModelFamily::Gpt2);
  EXPECT_EQ(c.layers, 3);
  EXPECT_EQ(c.heads, 3);
  EXPECT_EQ(c.d_model, 48);
  EXPECT_EQ(c.d_head, 16);
  EXPECT_EQ(c.d_ff, 192);
  EXPECT_EQ(c.vocab, 3);
  EXPECT_EQ(c.max_positions, 11);
  EXPECT_EQ(model->layout, "minGPT (nn.Linear [out, in])");
  EXPECT_EQ(model->dtype, DType::F32);
  // F32 weights are used where the mapping put them: nothing converted.
  EXPECT_TRUE(model->owned.empty());
  EXPECT_EQ(model->parameters, 3u * 48 + 11u * 48 + 3u * (4 * 48 + 144 * 48 + 144 + 48 * 48 + 48 + 192 * 48 + 192 + 48 * 192 + 48) +
                                   2u * 48 + 3u * 48);
}

TEST(GptNanoSort, EveryRecordedIntermediateOfEveryInputMatches) {
  REQUIRE_SHARED_MODEL();
  const auto model = load_nano();
  const Reference ref;
  for (int b = 0; b < 3; ++b) {
    SCOPED_TRACE("input " + std::to_string(b));
    const std::vector<int> ids = recorded_ids(ref, b);
    const Matrix x = embed(*model, ids);
    EXPECT_TRUE(near_reference(x, ref.get("x", b), "x"));
    const Matrix ln1 = normalize(model->layers[0].norm1, x);
    EXPECT_TRUE(near_reference(ln1, ref.get("ln1", b), "ln1"));
    AttentionDetail detail;
    const Matrix attn = attention(*model, 0, ln1, &detail);
    for (int h = 0; h < 3; ++h) {
      EXPECT_TRUE(near_reference(detail.q.middleCols(16 * h, 16), ref.get("q", b, h), "q"));
      EXPECT_TRUE(near_reference(detail.k.middleCols(16 * h, 16), ref.get("k", b, h), "k"));
      EXPECT_TRUE(near_reference(detail.v.middleCols(16 * h, 16), ref.get("v", b, h), "v"));
      EXPECT_TRUE(near_reference(detail.scores[static_cast<std::size_t>(h)], ref.get("att", b, h), "att"));
      EXPECT_TRUE(near_reference(detail.weights[static_cast<std::size_t>(h)], ref.get("attSm", b, h), "attSm"));
    }
    EXPECT_TRUE(near_reference(detail.context, ref.get("y", b), "y"));
    EXPECT_TRUE(near_reference(attn, ref.get("yProj", b), "yProj"));
    const Matrix resid = x + attn;
    EXPECT_TRUE(near_reference(resid, ref.get("attnResid", b), "attnResid"));
    const Matrix ln2 = normalize(model->layers[0].norm2, resid);
    EXPECT_TRUE(near_reference(ln2, ref.get("ln2", b), "ln2"));
    Matrix act;
    const Matrix m = mlp(*model, 0, ln2, &act);
    EXPECT_TRUE(near_reference(act, ref.get("gelu", b), "gelu"));
    EXPECT_TRUE(near_reference(m, ref.get("mlp", b), "mlp"));
    const ModelForward f = run_model(*model, ids, 11);
    for (int l = 0; l < 3; ++l)
      EXPECT_TRUE(near_reference(f.residual[static_cast<std::size_t>(l + 1)], ref.get("block" + std::to_string(l), b), "block"));
    EXPECT_TRUE(near_reference(normalize(model->final_norm, f.residual[3]), ref.get("ln_f", b), "ln_f"));
    EXPECT_TRUE(near_reference(f.logits, ref.get("lm_head", b), "lm_head"));
  }
}

TEST(GptNanoSort, TheEngineComputesLayerZerosAttentionFromItsScenario) {
  REQUIRE_SHARED_MODEL();
  const auto model = load_nano();
  const Reference ref;
  const std::vector<int> ids = recorded_ids(ref, 0);
  const Matrix x = embed(*model, ids);
  const Matrix ln1 = normalize(model->layers[0].norm1, x);
  LayerScenario ls = layer_scenario(*model, 0, ln1, std::vector<std::string>(ids.size(), ""));
  ASSERT_EQ(ls.error, "");
  Engine engine;
  engine.recompute_all(ls.scenario);
  EXPECT_TRUE(near_reference(engine.stage(StageId::input(StageKind::Output)), ref.get("yProj", 0), "engine output"));
  for (int h = 0; h < 3; ++h)
    EXPECT_TRUE(near_reference(engine.stage(StageId::of_head(StageKind::Weights, h)), ref.get("attSm", 0, h), "weights"));
}

TEST(GptNanoSort, GreedyGenerationSortsTheRecordedInputAndRandomOnes) {
  REQUIRE_SHARED_MODEL();
  const auto model = load_nano();
  EXPECT_EQ(generate_greedy(*model, {0, 0, 2, 1, 0, 1}, 6), (std::vector<int>{0, 0, 2, 1, 0, 1, 0, 0, 0, 1, 1, 2}));
  std::mt19937 rng(7);
  for (int trial = 0; trial < 60; ++trial) {
    std::vector<int> in(6);
    for (int& v : in) v = static_cast<int>(rng() % 3);
    std::vector<int> sorted = in;
    std::sort(sorted.begin(), sorted.end());
    const std::vector<int> out = generate_greedy(*model, in, 6);
    ASSERT_EQ(out.size(), 12u);
    EXPECT_EQ(std::vector<int>(out.begin() + 6, out.end()), sorted) << "trial " << trial;
  }
  // A twelfth position does not exist (11 learned positions): the twelfth
  // token is the last one generation can add.
  EXPECT_EQ(generate_greedy(*model, {0, 0, 2, 1, 0, 1}, 9).size(), 12u);
}

}  // namespace
}  // namespace attention_lab
