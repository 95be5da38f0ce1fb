// Every checkpoint layout the loader reads (tests/models/fixtures, made by
// tests/models/generate_models.py): each intermediate of the forward pass
// against the float64 reference written from the architectures' formulas, the
// engine's attention of every layer, and greedy generation.

#include "attention_lab/block_stages.h"
#include "attention_lab/gemm.h"
#include "attention_lab/engine.h"
#include "attention_lab/safetensors.h"
#include "attention_lab/transformer_forward.h"
#include "test_support.h"
#include "model_fixture_paths.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace attention_lab {
namespace {

using attention_lab::test::near_reference;

using attention_lab::test::kFixtures;

struct Fixture {
  const char* name;
  ModelFamily family;
  DType dtype;
  int kv_heads;
  const char* layout;
};

const Fixture kModels[] = {
    {"gpt2-conv1d", ModelFamily::Gpt2, DType::F32, 4, "HF GPT-2 (Conv1D [in, out])"},
    {"gpt2-conv1d-f16", ModelFamily::Gpt2, DType::F16, 4, "HF GPT-2 (Conv1D [in, out])"},
    {"mingpt-linear-bf16", ModelFamily::Gpt2, DType::BF16, 4, "minGPT (nn.Linear [out, in])"},
    {"llama-gqa", ModelFamily::Llama, DType::F32, 2, "Llama (nn.Linear [out, in])"},
    {"qwen2-bias-tied-bf16", ModelFamily::Llama, DType::BF16, 2, "Llama (nn.Linear [out, in])"},
    {"mistral-window-sharded", ModelFamily::Llama, DType::F16, 1, "Llama (nn.Linear [out, in])"},
    {"smollm-tied", ModelFamily::Llama, DType::F32, 4, "Llama (nn.Linear [out, in])"},
    {"granite-multipliers", ModelFamily::Llama, DType::F32, 2, "Llama (nn.Linear [out, in])"},
    {"qwen3-head-dim-bf16", ModelFamily::Llama, DType::BF16, 2, "Llama (nn.Linear [out, in])"},
};

class Reference {
 public:
  explicit Reference(const std::filesystem::path& path) {
    std::string error;
    file_ = SafetensorsFile::open(path, error);
    if (!file_) throw std::runtime_error(error);
  }
  bool has(const std::string& name) const { return file_->find(name) != nullptr; }
  std::vector<double> values(const std::string& name) const {
    const TensorInfo* t = file_->find(name);
    if (!t) throw std::runtime_error("no reference tensor " + name);
    std::vector<double> v;
    std::string error;
    if (!file_->read_doubles(*t, v, error)) throw std::runtime_error(error);
    return v;
  }
  // A [rows, cols] tensor, or block `index` of a [n, rows, cols] one.
  Matrix matrix(const std::string& name, int index = 0) const {
    const TensorInfo* t = file_->find(name);
    if (!t) throw std::runtime_error("no reference tensor " + name);
    const auto& sh = t->shape;
    const Eigen::Index rows = sh[sh.size() - 2], cols = sh[sh.size() - 1];
    const std::vector<double> v = values(name);
    Matrix m(rows, cols);
    for (Eigen::Index r = 0; r < rows; ++r)
      for (Eigen::Index c = 0; c < cols; ++c)
        m(r, c) = static_cast<float>(v[static_cast<std::size_t>(index * rows * cols + r * cols + c)]);
    return m;
  }
  std::vector<int> ints(const std::string& name) const {
    std::vector<int> out;
    for (double x : values(name)) out.push_back(static_cast<int>(x));
    return out;
  }

 private:
  std::shared_ptr<const SafetensorsFile> file_;
};

class ModelFixture : public ::testing::TestWithParam<Fixture> {
 protected:
  void SetUp() override {
    dir_ = kFixtures / GetParam().name;
    LoadedModel m = load_model(dir_);
    ASSERT_TRUE(m.model) << m.error;
    model_ = m.model;
    ref_ = std::make_unique<Reference>(dir_ / "reference.safetensors");
  }
  std::filesystem::path dir_;
  std::shared_ptr<const TransformerModel> model_;
  std::unique_ptr<Reference> ref_;
};

TEST_P(ModelFixture, LoadsWithTheRightFamilyLayoutAndDtype) {
  const ModelConfig& c = model_->config;
  EXPECT_EQ(c.family, GetParam().family);
  EXPECT_EQ(model_->dtype, GetParam().dtype);
  EXPECT_EQ(model_->layout, GetParam().layout);
  EXPECT_EQ(c.layers, 2);
  EXPECT_EQ(c.heads, 4);
  EXPECT_EQ(c.kv_heads, GetParam().kv_heads);
  EXPECT_EQ(c.d_model, 32);
  EXPECT_EQ(c.vocab, 61);
  // Every weight is used where the mapping put it, in the file's type:
  // F16 and BF16 are not widened into copies.
  EXPECT_TRUE(model_->owned.empty());
  EXPECT_EQ(model_->owned_bytes, 0u);
}

TEST_P(ModelFixture, EveryIntermediateMatchesTheFloat64Reference) {
  const ModelConfig& c = model_->config;
  const std::vector<int> ids = ref_->ints("ids");
  Matrix x = embed(*model_, ids);
  EXPECT_TRUE(near_reference(x, ref_->matrix("embed"), "embed"));
  for (int l = 0; l < c.layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    SCOPED_TRACE("layer " + std::to_string(l));
    EXPECT_TRUE(near_reference(x, ref_->matrix(p + "input"), p + "input"));
    const TransformerLayer& L = model_->layers[static_cast<std::size_t>(l)];
    const Matrix n1 = normalize(L.norm1, x);
    EXPECT_TRUE(near_reference(n1, ref_->matrix(p + "norm1"), p + "norm1"));
    AttentionDetail d;
    const Matrix a = attention(*model_, l, n1, &d);
    EXPECT_TRUE(near_reference(d.q, ref_->matrix(p + "q"), p + "q"));
    EXPECT_TRUE(near_reference(d.k, ref_->matrix(p + "k"), p + "k"));
    EXPECT_TRUE(near_reference(d.v, ref_->matrix(p + "v"), p + "v"));
    if (ref_->has(p + "q_rot")) {
      EXPECT_TRUE(near_reference(d.q_rot, ref_->matrix(p + "q_rot"), p + "q_rot"));
      EXPECT_TRUE(near_reference(d.k_rot, ref_->matrix(p + "k_rot"), p + "k_rot"));
    }
    for (int h = 0; h < c.heads; ++h) {
      EXPECT_TRUE(near_reference(d.scores[static_cast<std::size_t>(h)], ref_->matrix(p + "scores", h), p + "scores"));
      EXPECT_TRUE(near_reference(d.weights[static_cast<std::size_t>(h)], ref_->matrix(p + "weights", h), p + "weights"));
    }
    EXPECT_TRUE(near_reference(d.context, ref_->matrix(p + "context"), p + "context"));
    EXPECT_TRUE(near_reference(a, ref_->matrix(p + "attn_out"), p + "attn_out"));
    const Matrix mid = x + a * c.residual_scale;  // (Granite scales what the residual sums add)
    EXPECT_TRUE(near_reference(mid, ref_->matrix(p + "resid_mid"), p + "resid_mid"));
    const Matrix n2 = normalize(L.norm2, mid);
    EXPECT_TRUE(near_reference(n2, ref_->matrix(p + "norm2"), p + "norm2"));
    Matrix act;
    const Matrix m = mlp(*model_, l, n2, &act);
    EXPECT_TRUE(near_reference(act, ref_->matrix(p + "mlp_act"), p + "mlp_act"));
    EXPECT_TRUE(near_reference(m, ref_->matrix(p + "mlp_out"), p + "mlp_out"));
    x = run_layer(*model_, l, x);
    EXPECT_TRUE(near_reference(x, ref_->matrix(p + "output"), p + "output"));
  }
  EXPECT_TRUE(near_reference(normalize(model_->final_norm, x), ref_->matrix("final_norm"), "final_norm"));
  const ModelForward f = run_model(*model_, ids, 1000);
  EXPECT_EQ(f.first_logit_row, 0);
  EXPECT_TRUE(near_reference(f.logits, ref_->matrix("logits"), "logits"));
  // Only the last row, as the app and trace ask for a large vocabulary.
  const ModelForward last = run_model(*model_, ids, 1);
  EXPECT_EQ(last.first_logit_row, 6);
  EXPECT_TRUE(near_reference(last.logits, ref_->matrix("logits").bottomRows(1), "last logits"));
}

// The forward on each matrix-product backend (OpenBLAS when installed:
// scripts/test installs it; the packed kernel when the CPU runs it).
TEST_P(ModelFixture, TheForwardMatchesTheReferenceOnEveryProductBackend) {
  const GemmBackend before = gemm_backend();
  const std::vector<int> ids = ref_->ints("ids");
  for (const GemmBackend backend : available_gemm_backends()) {
    ASSERT_TRUE(set_gemm_backend(backend));
    SCOPED_TRACE(to_string(backend));
    const ModelForward f = run_model(*model_, ids, 1000);
    for (int l = 0; l < model_->config.layers; ++l)
      EXPECT_TRUE(near_reference(f.residual[static_cast<std::size_t>(l + 1)], ref_->matrix("layers." + std::to_string(l) + ".output"), "output"));
    EXPECT_TRUE(near_reference(f.logits, ref_->matrix("logits"), "logits"));
  }
  set_gemm_backend(before);
}

TEST_P(ModelFixture, TheBlockStagesMatchTheFloat64Reference) {
  const std::vector<int> ids = ref_->ints("ids");
  for (int l = 0; l < model_->config.layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    SCOPED_TRACE("layer " + std::to_string(l));
    BlockTrace trace(model_, ids, l, ref_->matrix(p + "input"));
    trace.update(ref_->matrix(p + "attn_out"));
    EXPECT_TRUE(near_reference(trace.values(trace.info(BlockStage::Embedded) ? BlockStage::Embedded : BlockStage::TokenEmbedding),
                     ref_->matrix("embed"), "embed"));
    EXPECT_TRUE(near_reference(trace.values(BlockStage::Norm1), ref_->matrix(p + "norm1"), p + "norm1"));
    EXPECT_TRUE(near_reference(trace.values(BlockStage::Residual), ref_->matrix(p + "resid_mid"), p + "resid_mid"));
    EXPECT_TRUE(near_reference(trace.values(BlockStage::Norm2), ref_->matrix(p + "norm2"), p + "norm2"));
    EXPECT_TRUE(near_reference(trace.values(BlockStage::Hidden), ref_->matrix(p + "mlp_act"), p + "mlp_act"));
    EXPECT_TRUE(near_reference(trace.values(BlockStage::Down), ref_->matrix(p + "mlp_out"), p + "mlp_out"));
    EXPECT_TRUE(near_reference(trace.values(BlockStage::Output), ref_->matrix(p + "output"), p + "output"));
  }
}

TEST_P(ModelFixture, TheEngineComputesEveryLayersAttentionFromItsScenario) {
  const ModelConfig& c = model_->config;
  const std::vector<int> ids = ref_->ints("ids");
  for (int l = 0; l < c.layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    SCOPED_TRACE("layer " + std::to_string(l));
    LayerScenario ls = layer_scenario(*model_, l, ref_->matrix(p + "norm1"), std::vector<std::string>(ids.size()));
    ASSERT_EQ(ls.error, "");
    Engine engine;
    engine.recompute_all(ls.scenario);
    EXPECT_TRUE(near_reference(engine.stage(StageId::input(StageKind::Output)), ref_->matrix(p + "attn_out"), "output"));
    for (int h = 0; h < c.heads; ++h) {
      EXPECT_TRUE(near_reference(engine.stage(StageId::of_head(StageKind::Weights, h)), ref_->matrix(p + "weights", h), "weights"));
    }
    const bool rope = ref_->has(p + "q_rot");
    EXPECT_TRUE(near_reference(engine.stage(StageId::input(StageKind::Q)), ref_->matrix(p + (rope ? "q_rot" : "q")), "Q"));
    EXPECT_TRUE(near_reference(engine.stage(StageId::input(StageKind::K)), ref_->matrix(p + (rope ? "k_rot" : "k")), "K"));
    EXPECT_TRUE(near_reference(engine.stage(StageId::input(StageKind::V)), ref_->matrix(p + "v"), "V"));
  }
}

TEST_P(ModelFixture, GreedyGenerationContinuesAsTheReference) {
  const std::vector<int> ids = ref_->ints("ids");
  std::vector<int> want = ids;
  for (int t : ref_->ints("greedy")) want.push_back(t);
  EXPECT_EQ(generate_greedy(*model_, ids, 5), want);
}

INSTANTIATE_TEST_SUITE_P(EveryLayout, ModelFixture, ::testing::ValuesIn(kModels),
                         [](const ::testing::TestParamInfo<Fixture>& p) {
                           std::string n = p.param.name;
                           for (char& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

}  // namespace
}  // namespace attention_lab
