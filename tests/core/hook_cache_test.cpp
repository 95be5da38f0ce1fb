// Activations by TransformerLens hook name: on every transformers-written
// fixture, hook_resid_pre and hook_pattern are transformers' own hidden
// states and attentions; on every committed fixture the hooks agree with
// each other (resid_mid = resid_pre + attn_out, the heads' results and W_o's
// bias sum to attn_out, z is the run's z) and each model has the names its
// layout allows; globs select, unknown names are refused with the nearest;
// the safetensors and .npy bytes read back through the loaders' readers.

#include "attention_lab/hook_cache.h"
#include "attention_lab/run_cache.h"
#include "attention_lab/safetensors.h"
#include "io/npy.h"
#include "model_fixture_paths.h"
#include "reference_json.h"
#include "temp_dir.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

namespace attention_lab {
namespace {

namespace fs = std::filesystem;

// Rows × cols of a tensor's values (a [rows, cols] or [1, rows, cols] slice at `offset`).
Matrix slice(const NamedTensor& t, std::size_t offset, Eigen::Index rows, Eigen::Index cols) {
  Matrix m(rows, cols);
  std::memcpy(m.data(), t.values.data() + offset, static_cast<std::size_t>(rows * cols) * sizeof(float));
  return m;
}

const NamedTensor& named(const std::vector<NamedTensor>& ts, const std::string& name) {
  for (const NamedTensor& t : ts)
    if (t.name == name) return t;
  throw std::runtime_error("no " + name);
}

TEST(HookCache, ResidualsAndPatternsAreTransformersOwn) {
  const fs::path hf = ATTENTION_LAB_HF_FIXTURES_DIR;
  if (!fs::exists(hf)) GTEST_SKIP() << hf << " is missing";
  int checked = 0;
  for (const char* name : {"gpt2", "llama-plain", "gpt-neox-pythia", "qwen3", "mistral-window"}) {
    SCOPED_TRACE(name);
    LoadedModel lm = load_model(hf / name);
    ASSERT_TRUE(lm.model) << lm.error;
    const TransformerModel& m = *lm.model;
    const nlohmann::json expected = test::read_gzipped_json(hf / (std::string(name) + ".expected.json.gz"));
    const std::vector<int> ids = expected["ids"].get<std::vector<int>>();
    std::vector<std::string> names;
    ASSERT_EQ(select_hooks(m.config, "blocks.*.hook_resid_pre,blocks.*.attn.hook_pattern", names), "");
    const std::vector<NamedTensor> ts = cache_hooks(m, ids, names);
    const auto T = static_cast<Eigen::Index>(ids.size());
    for (int l = 0; l < m.config.layers; ++l) {
      const NamedTensor& r = named(ts, "blocks." + std::to_string(l) + ".hook_resid_pre");
      EXPECT_EQ(r.shape, (std::vector<std::int64_t>{T, m.config.d_model}));
      EXPECT_LT(test::relative_difference(slice(r, 0, T, m.config.d_model),
                                          test::matrix_of(expected["hidden_states"][static_cast<std::size_t>(l)])),
                2e-5)
          << "layer " << l;
      const NamedTensor& p = named(ts, "blocks." + std::to_string(l) + ".attn.hook_pattern");
      EXPECT_EQ(p.shape, (std::vector<std::int64_t>{m.config.heads, T, T}));
      for (int h = 0; h < m.config.heads; ++h)
        EXPECT_LT(test::relative_difference(slice(p, static_cast<std::size_t>(h * T * T), T, T),
                                            test::matrix_of(expected["attentions"][static_cast<std::size_t>(l)][static_cast<std::size_t>(h)])),
                  1e-4)
            << "layer " << l << " head " << h;
    }
    ++checked;
  }
  EXPECT_EQ(checked, 5);
}

TEST(HookCache, TheHooksAgreeWithEachOtherOnEveryFixture) {
  int models = 0;
  for (const auto& entry : fs::directory_iterator(test::kFixtures)) {
    if (!fs::exists(entry.path() / "config.json")) continue;
    SCOPED_TRACE(entry.path().string());
    LoadedModel lm = load_model(entry.path());
    ASSERT_TRUE(lm.model) << lm.error;
    const TransformerModel& m = *lm.model;
    const ModelConfig& c = m.config;
    ++models;
    std::vector<std::string> all = hook_names(c);
    const std::size_t per_layer = 16u - (c.parallel_residual ? 1u : 0u) - (c.pre_norms ? 0u : 2u);
    EXPECT_EQ(all.size(), (c.learned_positions() ? 3u : 2u) + static_cast<std::size_t>(c.layers) * per_layer);
    const std::vector<NamedTensor> ts = cache_hooks(m, test::kFixtureIds, all);
    ASSERT_EQ(ts.size(), all.size());
    const RunCache run = run_with_cache(m, test::kFixtureIds, CacheAttention::None);
    const auto T = static_cast<Eigen::Index>(test::kFixtureIds.size());
    const Eigen::Index d = c.d_model;
    for (int l = 0; l < c.layers; ++l) {
      const std::string b = "blocks." + std::to_string(l) + ".";
      const Matrix pre = slice(named(ts, b + "hook_resid_pre"), 0, T, d), attn = slice(named(ts, b + "hook_attn_out"), 0, T, d);
      EXPECT_EQ(pre, run.resid[static_cast<std::size_t>(l)]);
      EXPECT_EQ(slice(named(ts, b + "hook_resid_mid"), 0, T, d), Matrix(pre + attn));
      EXPECT_EQ(slice(named(ts, b + "attn.hook_z"), 0, T, c.heads * c.d_head), run.z[static_cast<std::size_t>(l)]);
      // Each head's result, summed, plus W_o's bias: what the attention adds (no post-norm, no scale in these).
      const NamedTensor& result = named(ts, b + "attn.hook_result");
      Matrix sum = Matrix::Zero(T, d);
      for (Eigen::Index p = 0; p < T; ++p)
        for (int h = 0; h < c.heads; ++h)
          sum.row(p) += Eigen::Map<const RowVector>(result.values.data() + (p * c.heads + h) * d, d);
      if (m.layers[static_cast<std::size_t>(l)].o.bias.size() > 0) sum.rowwise() += m.layers[static_cast<std::size_t>(l)].o.bias;
      const float scale = c.residual_scale;
      EXPECT_LT((sum * scale - attn).cwiseAbs().maxCoeff(), 1e-4f * std::max(1.0f, attn.cwiseAbs().maxCoeff())) << "layer " << l;
      EXPECT_EQ(named(ts, b + "attn.hook_k").shape, (std::vector<std::int64_t>{T, c.kv_heads, c.d_head}));
      EXPECT_EQ(named(ts, b + "mlp.hook_post").shape, (std::vector<std::int64_t>{T, c.d_ff}));
    }
  }
  EXPECT_GE(models, 9);
}

TEST(HookCache, GlobsSelectAndUnknownNamesAreRefusedWithTheNearest) {
  LoadedModel lm = load_model(test::fixture("gpt2-conv1d"));
  ASSERT_TRUE(lm.model) << lm.error;
  const ModelConfig& c = lm.model->config;
  std::vector<std::string> names;
  ASSERT_EQ(select_hooks(c, "blocks.*.attn.hook_pattern", names), "");
  EXPECT_EQ(names.size(), static_cast<std::size_t>(c.layers));
  ASSERT_EQ(select_hooks(c, " ln_final.hook_normalized , hook_embed, blocks.0.hook_resid_pre", names), "");
  EXPECT_EQ(names, (std::vector<std::string>{"hook_embed", "blocks.0.hook_resid_pre", "ln_final.hook_normalized"}));
  ASSERT_EQ(select_hooks(c, "blocks.?.ln?.hook_normalized", names), "");
  EXPECT_EQ(names.size(), 2u * static_cast<std::size_t>(c.layers));
  EXPECT_EQ(select_hooks(c, "blocks.0.attn.hook_patern", names),
            "hook 'blocks.0.attn.hook_patern': this model has no such hook; the nearest: blocks.0.attn.hook_pattern, "
            "blocks.1.attn.hook_pattern, blocks.0.attn.hook_q");
  EXPECT_NE(select_hooks(c, "blocks.9.*", names).find("hook 'blocks.9.*': this model has no such hook"), std::string::npos);
  EXPECT_NE(select_hooks(c, " , ", names).find("expected at least one hook"), std::string::npos);
  LoadedModel llama = load_model(test::fixture("llama-gqa"));
  ASSERT_TRUE(llama.model) << llama.error;
  EXPECT_NE(select_hooks(llama.model->config, "hook_pos_embed", names).find("no such hook"), std::string::npos);
}

TEST(HookCache, SafetensorsAndNpyReadBack) {
  LoadedModel lm = load_model(test::fixture("llama-gqa"));
  ASSERT_TRUE(lm.model) << lm.error;
  std::vector<std::string> names;
  ASSERT_EQ(select_hooks(lm.model->config, "blocks.1.attn.hook_q,hook_embed,blocks.0.hook_mlp_out", names), "");
  const std::vector<NamedTensor> ts = cache_hooks(*lm.model, test::kFixtureIds, names);
  test::TempDir dir;
  {
    std::ofstream f(dir / "c.safetensors", std::ios::binary);
    f << safetensors_bytes(ts, {{"format", "pt"}, {"ids", "[3, 14]"}});
  }
  std::string error;
  const auto file = SafetensorsFile::open(dir / "c.safetensors", error);
  ASSERT_TRUE(file) << error;
  for (const NamedTensor& t : ts) {
    const TensorInfo* info = file->find(t.name);
    ASSERT_TRUE(info) << t.name;
    EXPECT_EQ(info->shape, t.shape) << t.name;
    std::vector<double> values;
    ASSERT_TRUE(file->read_doubles(*info, values, error)) << error;
    ASSERT_EQ(values.size(), t.values.size());
    for (std::size_t i = 0; i < values.size(); ++i) ASSERT_EQ(values[i], static_cast<double>(t.values[i])) << t.name << " " << i;
    const std::string npy = npy_bytes(t);
    const io::NpyArray a = io::parse_npy(npy, t.name + ".npy");
    ASSERT_EQ(a.error, "") << t.name;
    EXPECT_EQ(a.shape, t.shape);
    EXPECT_EQ(std::memcmp(a.data.data(), t.values.data(), t.values.size() * sizeof(float)), 0);
    EXPECT_EQ(npy.size() - a.data.size(), 128u);  // numpy's header: 10 bytes and the dict, padded to 64 bytes
  }
}

}  // namespace
}  // namespace attention_lab
