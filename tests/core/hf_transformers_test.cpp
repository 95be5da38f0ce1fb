// Checkpoints written by Hugging Face transformers' own save_pretrained, with
// its float64 outputs (../shared/fixtures/hf-transformers, see its README):
// each family this app opens tokenizes the fixture's text to transformers'
// ids and gives its hidden states, every head's attention weights and the
// logits to float32 rounding; each family it does not open yet is refused
// with a message, never run.

#include "attention_lab/block_stages.h"
#include "attention_lab/engine.h"
#include "attention_lab/model_session.h"
#include "attention_lab/tokenizer.h"
#include "reference_json.h"
#include "temp_dir.h"
#include "test_support.h"
#include "unit_support.h"
#include "attention_lab/transformer_forward.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

namespace attention_lab {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const fs::path kHfFixtures = ATTENTION_LAB_HF_FIXTURES_DIR;

// The fixtures live beside the project (../shared), as on the machines that
// make and check it; a clone elsewhere says so, loudly, in each test.
#define REQUIRE_HF_FIXTURES()                                                                          \
  if (!fs::exists(kHfFixtures / "README.md"))                                                          \
  GTEST_SKIP() << kHfFixtures.string() << " is missing (the shared fixtures folder is not here): "     \
                  "transformers' own checkpoints are not checked"

using test::matrix_of;
using test::read_gzipped_json;
using test::relative_difference;

class HfTransformersFixture : public ::testing::TestWithParam<const char*> {};

// The whole comparison of `folder` (a fixture, or a copy with its config
// rewritten) with the expected outputs of fixture `name`.
void expect_transformers_outputs(const fs::path& folder, const std::string& name) {
  const json expected = read_gzipped_json(kHfFixtures / (name + ".expected.json.gz"));
  const LoadedModel loaded = load_model(folder);
  ASSERT_TRUE(loaded.model) << loaded.error;
  const TransformerModel& model = *loaded.model;
  std::string error;
  const auto tokenizer = Tokenizer::load(folder, model.config.vocab, error);
  ASSERT_TRUE(tokenizer) << error;

  const Encoded encoded = tokenizer->encode(expected["text"].get<std::string>());
  ASSERT_TRUE(encoded.error.empty()) << encoded.error;
  const std::vector<int> ids = expected["ids"].get<std::vector<int>>();
  ASSERT_EQ(encoded.ids, ids);

  const ModelForward forward = run_model(model, ids, static_cast<int>(ids.size()));
  const json& hidden = expected["hidden_states"];
  const int layers = model.config.layers;
  ASSERT_EQ(hidden.size(), static_cast<std::size_t>(layers + 1));
  // hidden_states[0] is the embedding, [L] layer L−1's output, the last one after the final norm.
  for (int l = 0; l < layers; ++l)
    EXPECT_LT(relative_difference(forward.residual[static_cast<std::size_t>(l)], matrix_of(hidden[static_cast<std::size_t>(l)])), 2e-5)
        << "hidden state " << l;
  EXPECT_LT(relative_difference(normalize(model.final_norm, forward.residual.back()),
                                matrix_of(hidden[static_cast<std::size_t>(layers)])),
            2e-5)
      << "the final norm's output";

  const json& attentions = expected["attentions"];
  ASSERT_EQ(attentions.size(), static_cast<std::size_t>(layers));
  for (int l = 0; l < layers; ++l) {
    AttentionDetail detail;
    detail.weights_only = true;
    attention(model, l, attention_input(model, l, forward.residual[static_cast<std::size_t>(l)]), &detail);
    const json& heads = attentions[static_cast<std::size_t>(l)];
    ASSERT_EQ(heads.size(), detail.weights.size());
    // The same layer as an editable scenario, computed by the engine the app draws.
    const Matrix normed = attention_input(model, l, forward.residual[static_cast<std::size_t>(l)]);
    const LayerScenario extracted = layer_scenario(model, l, normed, std::vector<std::string>(ids.size()));
    ASSERT_EQ(extracted.error, "");
    Engine engine;
    engine.recompute_all(extracted.scenario);
    // The weights' float32 rounding grows with the scores: a model that
    // scales them by more than 1/√d_head (Granite's attention_multiplier 1
    // is √16 = 4 times as much) is allowed that much more.
    const double tolerance =
        1e-5 * std::max(1.0, model.config.attention_scale() * std::sqrt(static_cast<double>(model.config.d_head)));
    for (std::size_t h = 0; h < heads.size(); ++h) {
      EXPECT_LT(relative_difference(detail.weights[h], matrix_of(heads[h])), tolerance) << "layer " << l << " head " << h;
      EXPECT_LT(relative_difference(Matrix(engine.stage(StageId::of_head(StageKind::Weights, static_cast<int>(h)))), matrix_of(heads[h])),
                tolerance)
          << "the engine's layer " << l << " head " << h;
    }
  }
  EXPECT_LT(relative_difference(forward.logits, matrix_of(expected["logits"])), 2e-5) << "logits";
}

TEST_P(HfTransformersFixture, TokenizesAndComputesWhatTransformersComputes) {
  REQUIRE_HF_FIXTURES();
  expect_transformers_outputs(kHfFixtures / GetParam(), GetParam());
}

// The families this app computes, with transformers' own files.
INSTANTIATE_TEST_SUITE_P(Opens, HfTransformersFixture,
                         ::testing::Values("gpt2", "gpt2-bf16", "llama-plain", "llama3-gqa-scaled-rope", "llama2-metaspace",
                                           "mistral-window", "olmo2", "granite", "gemma2", "gemma3-text", "gpt-neox-pythia", "phi3", "qwen2", "qwen3",
                                           "smollm3-nope", "starcoder2"),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

// A copy of a fixture the test may change.
fs::path copy_hf_fixture(const test::TempDir& dir, const std::string& name) {
  const fs::path to = dir / name;
  fs::copy(kHfFixtures / name, to, fs::copy_options::recursive);
  for (const auto& entry : fs::directory_iterator(to))
    fs::permissions(entry.path(), fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::add);
  return to;
}

json read_config(const fs::path& folder) { return json::parse(test::read_text(folder / "config.json")); }
void write_config(const fs::path& folder, const json& config) { test::write_text(folder / "config.json", config.dump(2)); }

// Appends an F32 tensor of zeros to a safetensors file (the header rewritten,
// the data before it unchanged).
void add_f32_tensor(const fs::path& file, const std::string& name, const std::vector<std::int64_t>& shape) {
  const std::string bytes = test::read_text(file);
  std::uint64_t header_length = 0;
  for (int i = 0; i < 8; ++i) header_length |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)])) << (8 * i);
  json header = json::parse(bytes.substr(8, header_length));
  const std::string data = bytes.substr(8 + header_length);
  std::int64_t count = 1;
  for (const auto n : shape) count *= n;
  header[name] = {{"dtype", "F32"}, {"shape", shape}, {"data_offsets", {data.size(), data.size() + 4 * static_cast<std::size_t>(count)}}};
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  test::write_text(file, test::u64_le(text.size()) + text + data + std::string(4 * static_cast<std::size_t>(count), '\0'));
}

std::string load_error(const fs::path& folder) {
  const LoadedModel loaded = load_model(folder);
  return loaded.model ? std::string("(opened)") : loaded.error;
}

// Older transformers write RoPE as top-level rope_theta and rope_scaling (with
// "type" or "rope_type"): the same model, the same numbers.
TEST(HfTransformersConfig, OlderRopeKeysGiveTheSameLlama3Model) {
  REQUIRE_HF_FIXTURES();
  const test::TempDir dir;
  const fs::path folder = copy_hf_fixture(dir, "llama3-gqa-scaled-rope");
  json config = read_config(folder);
  json scaling = config["rope_parameters"];
  config.erase("rope_parameters");
  config["rope_theta"] = scaling["rope_theta"];
  scaling.erase("rope_theta");
  scaling["type"] = scaling["rope_type"];  // transformers 4.3x wrote both
  config["rope_scaling"] = scaling;
  write_config(folder, config);
  expect_transformers_outputs(folder, "llama3-gqa-scaled-rope");

  const LoadedModel loaded = load_model(folder);
  ASSERT_TRUE(loaded.model) << loaded.error;
  const Rope& rope = loaded.model->config.rope;
  EXPECT_EQ(rope.scaling, RopeScaling::Llama3);
  EXPECT_EQ(rope.theta, 500000.0f);
  EXPECT_EQ(rope.factor, 32.0f);
  EXPECT_EQ(rope.original_max_positions, 64);
}

// SmolLM3's layers without positions: a layer whose no_rope_layers entry is 0
// computes its attention with no RoPE, and its scenario says so; the others
// keep it. (transformers' fixture turns every layer; this changes one.)
TEST(HfTransformersConfig, ANoPELayerHasNoRotaryPositions) {
  REQUIRE_HF_FIXTURES();
  const test::TempDir dir;
  const fs::path folder = copy_hf_fixture(dir, "smollm3-nope");
  json config = read_config(folder);
  config["no_rope_layers"] = {1, 0};
  write_config(folder, config);
  const LoadedModel loaded = load_model(folder);
  ASSERT_TRUE(loaded.model) << loaded.error;
  const TransformerModel& model = *loaded.model;
  EXPECT_TRUE(model.config.rope_of(0).on);
  EXPECT_FALSE(model.config.rope_of(1).on);
  const std::vector<int> ids = {5, 9, 14, 2, 7, 30};
  const Matrix x = normalize(model.layers[1].norm1, embed(model, ids));
  AttentionDetail detail;
  attention(model, 1, x, &detail);
  EXPECT_EQ(detail.q_rot, detail.q);  // nothing turned
  const LayerScenario nope = layer_scenario(model, 1, x, std::vector<std::string>(ids.size()));
  ASSERT_EQ(nope.error, "");
  EXPECT_FALSE(nope.scenario.rope.on);
  EXPECT_NE(nope.scenario.title.find("(no positions: NoPE)"), std::string::npos) << nope.scenario.title;
  attention(model, 0, x, &detail);
  EXPECT_NE(detail.q_rot, detail.q);
  // Without the list every fourth layer has none (HF's default interval).
  config.erase("no_rope_layers");
  config["num_hidden_layers"] = 2;
  config["no_rope_layer_interval"] = 2;
  write_config(folder, config);
  const LoadedModel by_interval = load_model(folder);
  ASSERT_TRUE(by_interval.model) << by_interval.error;
  EXPECT_EQ(by_interval.model->config.nope_layers, (std::vector<bool>{false, true}));
  config["no_rope_layers"] = {1, 2};
  write_config(folder, config);
  EXPECT_NE(load_error(folder).find("\"no_rope_layers\"[1]: expected 0 (no RoPE) or 1 (RoPE), found 2"), std::string::npos)
      << load_error(folder);
}

// model-info's way in: every header checked, no value read. The facts are the
// same as a full load's; the weights are not there, and values nobody read are
// not checked (a NaN weight opens).
TEST(HfTransformersConfig, HeadersOnlyGiveTheFactsWithoutReadingAWeight) {
  REQUIRE_HF_FIXTURES();
  for (const char* name : {"gpt2-bf16", "phi3", "llama3-gqa-scaled-rope"}) {
    const LoadedModel full = load_model(kHfFixtures / name);
    const LoadedModel headers = load_model(kHfFixtures / name, {}, ModelParts::Headers);
    ASSERT_TRUE(full.model && headers.model) << full.error << headers.error;
    EXPECT_TRUE(full.model->weights_read);
    EXPECT_FALSE(headers.model->weights_read);
    EXPECT_EQ(headers.model->parameters, full.model->parameters) << name;
    EXPECT_EQ(headers.model->weight_bytes, full.model->weight_bytes) << name;
    EXPECT_EQ(headers.model->dtype, full.model->dtype) << name;
    EXPECT_EQ(headers.model->lm_head_tied, full.model->lm_head_tied) << name;
    EXPECT_EQ(headers.model->layout, full.model->layout) << name;
    EXPECT_FALSE(headers.model->token_embedding);
    for (const auto& layer : headers.model->layers) EXPECT_FALSE(layer.q.values);
  }
  // Such a model is not run: no session, no layer as a scenario.
  const LoadedModel headers = load_model(kHfFixtures / "gpt2", {}, ModelParts::Headers);
  ASSERT_TRUE(headers.model);
  std::string error;
  EXPECT_FALSE(ModelSession::start(headers.model, nullptr, {1, 2, 3}, 0, nullptr, error));
  EXPECT_NE(error.find("only its headers were read"), std::string::npos) << error;
  EXPECT_NE(layer_scenario(*headers.model, 0, Matrix::Zero(3, 64), std::vector<std::string>(3)).error, "");
  // An extra tensor and a missing one are still refused from the headers.
  const test::TempDir dir;
  const fs::path folder = copy_hf_fixture(dir, "gpt2");
  add_f32_tensor(folder / "model.safetensors", "h.0.attn.q_norm.weight", {16});
  const LoadedModel extra = load_model(folder, {}, ModelParts::Headers);
  EXPECT_FALSE(extra.model);
  EXPECT_NE(extra.error.find("'h.0.attn.q_norm.weight' [16] is not part of"), std::string::npos) << extra.error;
  json config = read_config(folder);
  config["n_layer"] = 3;  // a third layer the file does not have
  write_config(folder, config);
  const LoadedModel missing = load_model(folder, {}, ModelParts::Headers);
  EXPECT_FALSE(missing.model);
  EXPECT_NE(missing.error.find("missing tensor 'transformer.h.2."), std::string::npos) << missing.error;
}

// A key the file leaves out takes transformers' default for its model_type.
TEST(HfTransformersConfig, AKeyLeftOutTakesTransformersDefaultForItsType) {
  REQUIRE_HF_FIXTURES();
  const auto without = [](const char* fixture, const std::vector<std::string>& keys) {
    const test::TempDir dir;
    const fs::path folder = copy_hf_fixture(dir, fixture);
    json config = read_config(folder);
    for (const auto& key : keys) config.erase(key);
    write_config(folder, config);
    const LoadedModel loaded = load_model(folder);
    if (!loaded.model) ADD_FAILURE() << loaded.error;
    return loaded.model ? loaded.model->config : ModelConfig{};
  };
  EXPECT_EQ(without("mistral-window", {"sliding_window"}).sliding_window, 4096);  // MistralConfig
  EXPECT_EQ(without("smollm3-nope", {"rope_parameters"}).rope.theta, 2000000.0f);  // SmolLM3Config
  EXPECT_TRUE(without("smollm3-nope", {"tie_word_embeddings"}).tied_embeddings);
  EXPECT_EQ(without("phi3", {"rms_norm_eps"}).norm_eps, 1e-5);  // Phi3Config
  EXPECT_EQ(without("llama-plain", {"rms_norm_eps"}).norm_eps, 1e-6);  // LlamaConfig
}

// Linear scaling divides every frequency: the same as θ's frequencies over
// factor, checked on the angles themselves.
TEST(HfTransformersConfig, LinearScalingDividesEveryFrequency) {
  REQUIRE_HF_FIXTURES();
  const test::TempDir dir;
  const fs::path folder = copy_hf_fixture(dir, "llama-plain");
  json config = read_config(folder);
  config["rope_parameters"] = {{"rope_theta", 10000.0}, {"rope_type", "linear"}, {"factor", 4.0}};
  write_config(folder, config);
  const LoadedModel loaded = load_model(folder);
  ASSERT_TRUE(loaded.model) << loaded.error;
  const Rope& rope = loaded.model->config.rope;
  ASSERT_EQ(rope.scaling, RopeScaling::Linear);
  Rope plain = rope;
  plain.scaling = RopeScaling::None;
  for (int k = 0; k < 8; ++k) EXPECT_DOUBLE_EQ(rope_angle(rope, 16, k, 12), rope_angle(plain, 16, k, 12) / 4.0) << k;
}

// Every key that would change the arithmetic and is not computed is refused
// by name: one changed key in each fixture that opens.
TEST(HfTransformersConfig, AKeyThatIsNotComputedIsRefusedByName) {
  REQUIRE_HF_FIXTURES();
  struct Change {
    const char* fixture;
    const char* key;
    json value;
    const char* message;  // a part of the expected error
  };
  const std::vector<Change> changes = {
      {"gpt2", "quantization_config", json{{"quant_method", "gptq"}, {"bits", 4}}, "\"quantization_config\""},
      {"gpt2", "scale_attn_weights", false, "\"scale_attn_weights\": false"},
      {"gpt2", "scale_attn_by_inverse_layer_idx", true, "\"scale_attn_by_inverse_layer_idx\": true"},
      {"gpt2", "add_cross_attention", true, "\"add_cross_attention\": true"},
      {"gpt2-bf16", "partial_rotary_factor", 0.5, "\"partial_rotary_factor\""},
      {"llama-plain", "rope_parameters", json{{"rope_theta", 10000.0}, {"rope_type", "yarn"}, {"factor", 4.0}},
       "rope_type 'yarn' is not supported yet"},
      {"llama-plain", "rope_parameters", json{{"rope_theta", 10000.0}, {"rope_type", "dynamic"}, {"factor", 2.0}},
       "rope_type 'dynamic' is not supported yet"},
      {"llama-plain", "rope_parameters", json{{"rope_theta", 10000.0}, {"rope_type", "default"}, {"partial_rotary_factor", 0.25}},
       "\"partial_rotary_factor\" 0.25"},
      {"llama-plain", "rope_parameters", json{{"rope_theta", 10000.0}, {"rope_type", "default"}, {"mrope_section", {1, 2}}},
       "\"mrope_section\""},
      {"llama-plain", "rope_theta", 500000.0, "\"rope_parameters\" and \"rope_theta\" both given"},
      {"llama-plain", "sliding_window", 8, "\"sliding_window\""},
      {"llama-plain", "layer_types", json{"full_attention", "sliding_attention"}, "\"layer_types\"[1]"},
      {"llama-plain", "rope_interleaved", true, "\"rope_interleaved\": true"},
      {"llama3-gqa-scaled-rope", "rope_parameters",
       json{{"rope_theta", 500000.0}, {"rope_type", "llama3"}, {"factor", 32.0}, {"low_freq_factor", 1.0}, {"high_freq_factor", 4.0}},
       "expected \"original_max_position_embeddings\" for rope_type llama3"},
      {"llama3-gqa-scaled-rope", "attn_logit_softcapping", 50.0, "\"attn_logit_softcapping\""},
      {"qwen2", "use_sliding_window", true, "\"use_sliding_window\": true"},
      {"qwen2", "layer_types", json{"full_attention", "sliding_attention"}, "\"layer_types\"[1]"},
      {"qwen2", "use_qk_norm", true, "\"use_qk_norm\""},
      {"qwen3", "use_sliding_window", true, "\"use_sliding_window\": true"},
      {"granite", "mlp_bias", true, "\"mlp_bias\": true"},
      {"granite", "attention_multiplier", -1.0, "\"attention_multiplier\""},
      {"gpt-neox-pythia", "rope_parameters", json{{"rope_theta", 10000.0}, {"rope_type", "default"}, {"partial_rotary_factor", 0.1}},
       "partial rotary factor"},
      {"gpt-neox-pythia", "rotary_pct", 0.5, "\"rotary_pct\" and \"rope_parameters\" both given"},
      {"gemma2", "use_bidirectional_attention", true, "\"use_bidirectional_attention\""},
      {"gemma3-text", "rope_parameters", json{{"full_attention", {{"rope_theta", 1e6}}}, {"other", {{"rope_theta", 1e4}}}},
       "expected full_attention and sliding_attention"},
      {"qwen3", "attention_bias", true, "missing tensor 'model.layers.0.self_attn.q_proj.bias'"},
  };
  for (const Change& change : changes) {
    const test::TempDir dir;
    const fs::path folder = copy_hf_fixture(dir, change.fixture);
    json config = read_config(folder);
    config[change.key] = change.value;
    write_config(folder, config);
    const std::string error = load_error(folder);
    EXPECT_NE(error.find(change.message), std::string::npos) << change.fixture << " with " << change.key << ": " << error;
  }
}

// A tensor the layout does not read is refused, not left out of the sums;
// GPT-2's causal-mask buffers are named in its table and pass.
TEST(HfTransformersConfig, ATensorTheLayoutDoesNotReadIsRefused) {
  REQUIRE_HF_FIXTURES();
  for (const auto& [fixture, tensor] : std::vector<std::pair<std::string, std::string>>{
           {"gpt2", "h.0.attn.q_norm.weight"},
           {"llama-plain", "model.layers.0.self_attn.q_norm.weight"},
           {"qwen2", "model.layers.1.self_attn.o_proj.bias"},
           {"qwen3", "model.layers.1.self_attn.o_proj.bias"},
           {"gemma2", "model.layers.0.self_attn.q_norm.weight"},
           {"gpt-neox-pythia", "gpt_neox.layers.0.attention.q_norm.weight"}}) {
    const test::TempDir dir;
    const fs::path folder = copy_hf_fixture(dir, fixture);
    add_f32_tensor(folder / "model.safetensors", tensor, {16});
    EXPECT_NE(load_error(folder).find("tensor '" + tensor + "' [16] is not part of"), std::string::npos)
        << fixture << ": " << load_error(folder);
  }
  const test::TempDir dir;
  const fs::path folder = copy_hf_fixture(dir, "gpt2");
  add_f32_tensor(folder / "model.safetensors", "h.0.attn.bias", {1, 1, 4, 4});
  add_f32_tensor(folder / "model.safetensors", "h.1.attn.masked_bias", {1});
  EXPECT_EQ(load_error(folder), "(opened)");
}

// A byte-level BPE vocabulary without its merges would be looked up word by
// word (other ids, without a word): refused.
TEST(HfTransformersConfig, ABpeVocabularyWithoutItsMergesIsRefused) {
  REQUIRE_HF_FIXTURES();
  const test::TempDir dir;
  const fs::path folder = copy_hf_fixture(dir, "gpt2");
  fs::remove(folder / "merges.txt");
  fs::remove(folder / "tokenizer.json");
  std::string error;
  EXPECT_FALSE(Tokenizer::load(folder, 700, error));
  EXPECT_NE(error.find("is a subword piece (byte-level BPE or SentencePiece): expected merges.txt"), std::string::npos) << error;
}

// OLMo-2 norms the attention's and the MLP's outputs, not their inputs: the
// Block view shows those norms where they are, and its output is the layer's.
TEST(HfTransformersConfig, APostNormBlockShowsItsNormsAfterTheAttentionAndTheMlp) {
  REQUIRE_HF_FIXTURES();
  const LoadedModel loaded = load_model(kHfFixtures / "olmo2");
  ASSERT_TRUE(loaded.model) << loaded.error;
  const std::shared_ptr<const TransformerModel> model = loaded.model;
  const std::vector<int> ids = {5, 17, 42, 99, 3, 250};
  Matrix x = embed(*model, ids);
  for (int layer = 0; layer < model->config.layers; ++layer) {
    SCOPED_TRACE(layer);
    const Matrix a = attention(*model, layer, attention_input(*model, layer, x));
    EXPECT_EQ(attention_input(*model, layer, x), x) << "no norm before the attention";
    BlockTrace trace(model, ids, layer, x);
    trace.update(a);
    EXPECT_EQ(trace.info(BlockStage::Norm1), nullptr);
    EXPECT_EQ(trace.info(BlockStage::Norm2), nullptr);
    ASSERT_NE(trace.info(BlockStage::PostAttn), nullptr);
    ASSERT_NE(trace.info(BlockStage::PostMlp), nullptr);
    const TransformerLayer& L = model->layers[static_cast<std::size_t>(layer)];
    EXPECT_TRUE(test::matrices_near(trace.values(BlockStage::PostAttn), normalize(L.post_attn, a), 0.0, 0.0, "post-attention norm"));
    EXPECT_TRUE(test::matrices_near(trace.values(BlockStage::Residual), x + normalize(L.post_attn, a), 0.0, 0.0, "h"));
    const Matrix next = finish_layer(*model, layer, x, a);
    EXPECT_TRUE(test::matrices_near(trace.values(BlockStage::Output), next, 0.0, 0.0, "output"));
    EXPECT_TRUE(test::matrices_near(next, run_layer(*model, layer, x), 0.0, 0.0, "run_layer"));
    x = next;
  }
}

// GPT-NeoX's parallel residual: the MLP reads norm2 of the layer's input, and
// the Block view's output is the forward pass's, bit for bit.
TEST(HfTransformersConfig, AParallelResidualBlockFeedsTheMlpTheLayersInput) {
  REQUIRE_HF_FIXTURES();
  const LoadedModel loaded = load_model(kHfFixtures / "gpt-neox-pythia");
  ASSERT_TRUE(loaded.model) << loaded.error;
  const std::shared_ptr<const TransformerModel> model = loaded.model;
  EXPECT_TRUE(model->config.parallel_residual);
  EXPECT_EQ(model->config.rope.dims, 4);  // partial_rotary_factor 0.25 of 16
  const std::vector<int> ids = {5, 17, 42, 99, 3, 250};
  Matrix x = embed(*model, ids);
  for (int layer = 0; layer < model->config.layers; ++layer) {
    SCOPED_TRACE(layer);
    const Matrix a = attention(*model, layer, attention_input(*model, layer, x));
    BlockTrace trace(model, ids, layer, x);
    trace.update(a);
    const TransformerLayer& L = model->layers[static_cast<std::size_t>(layer)];
    EXPECT_TRUE(test::matrices_near(trace.values(BlockStage::Norm2), normalize(L.norm2, x), 0.0, 0.0, "n2 of x"));
    const Matrix next = finish_layer(*model, layer, x, a);
    EXPECT_TRUE(test::matrices_near(trace.values(BlockStage::Output), next, 0.0, 0.0, "output"));
    EXPECT_TRUE(test::matrices_near(next, run_layer(*model, layer, x), 0.0, 0.0, "run_layer"));
    x = next;
  }
}

// A family this app does not compute is refused with the list it does, not run.
TEST(HfTransformersConfig, AnotherModelTypeIsRefusedNotRun) {
  REQUIRE_HF_FIXTURES();
  const test::TempDir dir;
  const fs::path folder = copy_hf_fixture(dir, "qwen2");
  json config = read_config(folder);
  config["model_type"] = "mamba";
  write_config(folder, config);
  const std::string error = load_error(folder);
  EXPECT_NE(error.find("model_type 'mamba' is not supported (supported: "), std::string::npos) << error;
  EXPECT_NE(error.find("gpt_neox"), std::string::npos) << error;
}

}  // namespace
}  // namespace attention_lab
