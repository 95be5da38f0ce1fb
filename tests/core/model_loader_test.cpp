// The model loader (core/src/transformer/model_loader.cpp) on broken
// checkpoints: a fixture folder (tests/models/fixtures) copied and broken one
// way at a time. Each is refused with no model and a message naming the file
// and, where one is at fault, the tensor; nothing crashes. Also what must
// load: GPT-2's buffers are skipped, a .safetensors path works, progress
// reaches 1 and can cancel. And check_ids.

#include "attention_lab/safetensors.h"
#include "attention_lab/transformer_forward.h"
#include "attention_lab/transformer_model.h"

#include "temp_dir.h"
#include "model_fixture_paths.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

using namespace attention_lab;
using attention_lab::test::TempDir;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

using attention_lab::test::kFixtures;

// A fixture folder copied into `dir`/NAME, to be broken.
fs::path copy_fixture(const TempDir& dir, const std::string& name) {
  const fs::path to = dir / name;
  fs::remove_all(to);
  fs::copy(kFixtures / name, to, fs::copy_options::recursive);
  for (const auto& f : fs::directory_iterator(to))
    fs::permissions(f.path(), fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::add);
  return to;
}

json read_json(const fs::path& p) { return json::parse(test::read_text(p)); }
void write_json(const fs::path& p, const json& j) { test::write_text(p, j.dump(2)); }

// A safetensors file taken apart: header and data, to be edited and written back.
struct StFile {
  json header;
  std::string data;

  static StFile read(const fs::path& p) {
    const std::string bytes = test::read_text(p);
    std::uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)]);
    return {json::parse(bytes.substr(8, n)), bytes.substr(8 + n)};
  }
  void write(const fs::path& p) const {
    std::string h = header.dump();
    while (h.size() % 8 != 0) h += ' ';
    std::string out(8, '\0');
    for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<char>((h.size() >> (8 * i)) & 0xffu);
    test::write_text(p, out + h + data);
  }
  std::size_t begin(const std::string& tensor) const { return header.at(tensor).at("data_offsets")[0].get<std::size_t>(); }
  void set_f32(const std::string& tensor, std::size_t index, float value) {
    std::memcpy(&data[begin(tensor) + 4 * index], &value, 4);
  }
  void set_u16(const std::string& tensor, std::size_t index, std::uint16_t bits) {
    std::memcpy(&data[begin(tensor) + 2 * index], &bits, 2);
  }
};

// Refused with no model and a message holding every part given.
::testing::AssertionResult refused(const LoadedModel& m, std::initializer_list<std::string> parts) {
  if (m.model) return ::testing::AssertionFailure() << "loaded";
  if (m.error.empty()) return ::testing::AssertionFailure() << "no message";
  if (m.error.size() > 700) return ::testing::AssertionFailure() << "a message of " << m.error.size() << " bytes";
  for (const char ch : m.error)
    if (static_cast<unsigned char>(ch) < 0x20) return ::testing::AssertionFailure() << "control character: " << m.error;
  for (const auto& part : parts)
    if (m.error.find(part) == std::string::npos)
      return ::testing::AssertionFailure() << "no \"" << part << "\" in: " << m.error;
  return ::testing::AssertionSuccess() << m.error;
}

LoadedModel load_with_config(const TempDir& dir, const std::string& fixture, const std::function<void(json&)>& edit) {
  const fs::path folder = copy_fixture(dir, fixture);
  json config = read_json(folder / "config.json");
  edit(config);
  write_json(folder / "config.json", config);
  return load_model(folder);
}

LoadedModel load_with_weights(const TempDir& dir, const std::string& fixture, const std::function<void(StFile&)>& edit,
                              const std::string& file = "model.safetensors") {
  const fs::path folder = copy_fixture(dir, fixture);
  StFile st = StFile::read(folder / file);
  edit(st);
  st.write(folder / file);
  return load_model(folder);
}

}  // namespace

// [SECTION] What loads

TEST(ModelLoader, EveryFixtureLoadsFromItsFolder) {
  for (const char* name : {"gpt2-conv1d", "gpt2-conv1d-f16", "mingpt-linear-bf16", "llama-gqa", "qwen2-bias-tied-bf16",
                           "mistral-window-sharded", "smollm-tied"}) {
    const LoadedModel m = load_model(kFixtures / name);
    ASSERT_TRUE(m.model) << name << ": " << m.error;
    EXPECT_EQ(m.error, "") << name;
    EXPECT_EQ(m.model->config.layers, 2) << name;
    EXPECT_EQ(static_cast<int>(m.model->layers.size()), 2) << name;
    EXPECT_GT(m.model->parameters, 0u) << name;
  }
}

TEST(ModelLoader, GptTwoAttentionBiasBuffersAreIgnored) {
  // gpt2-conv1d carries h.N.attn.bias [1,1,16,16] and h.N.attn.masked_bias []:
  // not weights, never read, not counted.
  const LoadedModel m = load_model(kFixtures / "gpt2-conv1d");
  ASSERT_TRUE(m.model) << m.error;
  const auto& file = *m.model->files.at(0);
  ASSERT_NE(file.find("h.0.attn.bias"), nullptr);
  ASSERT_NE(file.find("h.1.attn.masked_bias"), nullptr);
  std::uint64_t all = 0, buffers = 0;
  for (const auto& t : file.tensors()) {
    all += static_cast<std::uint64_t>(t.numel());
    if (t.name.ends_with(".attn.bias") || t.name.ends_with(".attn.masked_bias"))
      buffers += static_cast<std::uint64_t>(t.numel());
  }
  EXPECT_EQ(m.model->parameters, all - buffers);
  EXPECT_EQ(m.model->layout, "HF GPT-2 (Conv1D [in, out])");

  // Even a buffer holding −∞ (real checkpoints store masked_bias as −1e4 or −∞) does not stop the load.
  TempDir dir;
  const LoadedModel inf = load_with_weights(dir, "gpt2-conv1d", [](StFile& st) {
    st.set_f32("h.0.attn.masked_bias", 0, -std::numeric_limits<float>::infinity());
    st.set_f32("h.1.attn.bias", 5, std::numeric_limits<float>::quiet_NaN());
  });
  EXPECT_TRUE(inf.model) << inf.error;
}

TEST(ModelLoader, ASafetensorsPathWithConfigNextToItLoads) {
  const LoadedModel m = load_model(kFixtures / "llama-gqa" / "model.safetensors");
  ASSERT_TRUE(m.model) << m.error;
  EXPECT_EQ(m.model->config.kv_heads, 2);
  EXPECT_EQ(m.model->source, kFixtures / "llama-gqa" / "model.safetensors");

  // Without a config.json beside it: refused, naming the config it looked for.
  TempDir dir;
  fs::copy_file(kFixtures / "llama-gqa" / "model.safetensors", dir / "model.safetensors");
  EXPECT_TRUE(refused(load_model(dir / "model.safetensors"),
                      {(dir / "config.json").string() + ": cannot read", "(a model needs its config.json)"}));
}

TEST(ModelLoader, ProgressRisesToOneAndCanCancel) {
  for (const char* name : {"gpt2-conv1d", "mistral-window-sharded", "qwen2-bias-tied-bf16"}) {
    std::vector<double> fractions;
    const LoadedModel m = load_model(kFixtures / name, [&](double f, const std::string& what) {
      EXPECT_FALSE(what.empty());
      fractions.push_back(f);
      return true;
    });
    ASSERT_TRUE(m.model) << m.error;
    ASSERT_GE(fractions.size(), 10u) << name;
    for (std::size_t i = 0; i < fractions.size(); ++i) {
      EXPECT_GT(fractions[i], 0.0) << name << " " << i;
      EXPECT_LE(fractions[i], 1.0) << name << " " << i;
      if (i > 0) {
        EXPECT_GE(fractions[i], fractions[i - 1]) << name << " " << i;
      }
    }
    EXPECT_EQ(fractions.back(), 1.0) << name;
    EXPECT_LT(fractions.front(), 0.5) << name;
  }

  for (const int stop_at : {1, 5, -1}) {  // -1: at the very end (fraction 1)
    int calls = 0;
    bool at_one = false;
    const LoadedModel m = load_model(kFixtures / "llama-gqa", [&](double f, const std::string&) {
      ++calls;
      at_one = f == 1.0;
      return stop_at < 0 ? f < 1.0 : calls < stop_at;
    });
    EXPECT_FALSE(m.model) << stop_at;
    EXPECT_EQ(m.error, "cancelled") << stop_at;
    if (stop_at > 0) {
      EXPECT_EQ(calls, stop_at);
    } else {
      EXPECT_TRUE(at_one);
    }
  }
}

// [SECTION] Files and folders

TEST(ModelLoader, APathThatDoesNotExistIsRefused) {
  TempDir dir;
  EXPECT_TRUE(refused(load_model(dir / "nope"), {(dir / "nope").string() + ": no such file or folder"}));
}

TEST(ModelLoader, AFileThatIsNotACheckpointIsRefusedSayingWhatItExpected) {
  TempDir dir;
  const fs::path folder = copy_fixture(dir, "gpt2-conv1d");
  test::write_text(folder / "scenario.json", "{\"X\": [[1]]}");
  EXPECT_TRUE(refused(load_model(folder / "scenario.json"),
                      {(folder / "scenario.json").string() +
                       ": expected a model folder (config.json with model.safetensors) or a .safetensors file, found a "
                       ".json file (a scenario or lesson opens with File ▸ Open…)"}));
  test::write_text(folder / "weights", "x");
  EXPECT_TRUE(refused(load_model(folder / "weights"), {"found a file without an extension"}));
}

TEST(ModelLoader, AFolderWithoutWeightsIsRefused) {
  TempDir dir;
  const fs::path folder = copy_fixture(dir, "llama-gqa");
  fs::remove(folder / "model.safetensors");
  EXPECT_TRUE(refused(load_model(folder),
                      {folder.string() + ": expected model.safetensors or model.safetensors.index.json in this folder"}));
}

TEST(ModelLoader, AMissingConfigIsRefused) {
  TempDir dir;
  const fs::path folder = copy_fixture(dir, "gpt2-conv1d");
  fs::remove(folder / "config.json");
  EXPECT_TRUE(refused(load_model(folder), {(folder / "config.json").string() + ": cannot read",
                                           "(a model needs its config.json)"}));
}

TEST(ModelLoader, AConfigThatIsNotJsonIsRefused) {
  TempDir dir;
  const fs::path folder = copy_fixture(dir, "gpt2-conv1d");
  test::write_text(folder / "config.json", "{\"model_type\": \"gpt2\",");
  EXPECT_TRUE(refused(load_model(folder), {(folder / "config.json").string() + ": invalid JSON"}));
  test::write_text(folder / "config.json", "[\"gpt2\"]");
  EXPECT_TRUE(refused(load_model(folder), {(folder / "config.json").string() + ": expected a JSON object"}));
}

TEST(ModelLoader, ATruncatedWeightFileIsRefused) {
  TempDir dir;
  const fs::path folder = copy_fixture(dir, "gpt2-conv1d");
  const std::string whole = test::read_text(folder / "model.safetensors");
  test::write_text(folder / "model.safetensors", whole.substr(0, whole.size() / 2));
  EXPECT_TRUE(refused(load_model(folder), {(folder / "model.safetensors").string() + ": tensor '", "end past the data",
                                           "truncated?"}));
  test::write_text(folder / "model.safetensors", whole.substr(0, 5));
  EXPECT_TRUE(refused(load_model(folder), {(folder / "model.safetensors").string() + ": expected at least 8 bytes"}));
}

// [SECTION] config.json

TEST(ModelLoader, AnUnknownModelTypeIsRefusedListingTheSupportedOnes) {
  TempDir dir;
  EXPECT_TRUE(refused(load_with_config(dir, "gpt2-conv1d", [](json& c) { c["model_type"] = "bert"; }),
                      {"config.json: model_type 'bert' is not supported (supported: gpt2", "llama", "mistral", "qwen2", "phi3", "starcoder2", "smollm3)"}));
}

TEST(ModelLoader, AMissingModelTypeIsRefused) {
  TempDir dir;
  EXPECT_TRUE(refused(load_with_config(dir, "gpt2-conv1d", [](json& c) { c.erase("model_type"); }),
                      {"config.json: expected \"model_type\" (supported: gpt2"}));
}

TEST(ModelLoader, AMissingLayerCountIsRefused) {
  TempDir dir;
  EXPECT_TRUE(refused(load_with_config(dir, "gpt2-conv1d", [](json& c) { c.erase("n_layer"); }),
                      {"config.json: expected \"n_layer\""}));
  EXPECT_TRUE(refused(load_with_config(dir, "llama-gqa", [](json& c) { c["num_hidden_layers"] = nullptr; }),
                      {"config.json: expected \"num_hidden_layers\""}));
}

TEST(ModelLoader, BadNumbersInTheConfigAreRefused) {
  TempDir dir;
  EXPECT_TRUE(refused(load_with_config(dir, "gpt2-conv1d", [](json& c) { c["n_layer"] = 0; }),
                      {"config.json: \"n_layer\": expected an integer from 1 to 1024, found 0"}));
  EXPECT_TRUE(refused(load_with_config(dir, "llama-gqa", [](json& c) { c["hidden_size"] = 32.0; }),
                      {"config.json: \"hidden_size\": expected an integer from 1 to 1048576, found 32.0"}));
  EXPECT_TRUE(refused(load_with_config(dir, "smollm-tied", [](json& c) { c["rms_norm_eps"] = -1; }),
                      {"config.json: \"rms_norm_eps\": expected a positive number, found -1"}));
}

TEST(ModelLoader, HeadsNotDividingTheWidthAreRefused) {
  TempDir dir;
  EXPECT_TRUE(refused(load_with_config(dir, "gpt2-conv1d", [](json& c) { c["n_head"] = 5; }),
                      {"config.json: \"n_embd\" 32: expected a multiple of n_head 5"}));
}

TEST(ModelLoader, KeyValueHeadsNotDividingTheHeadsAreRefused) {
  TempDir dir;
  EXPECT_TRUE(refused(load_with_config(dir, "llama-gqa", [](json& c) { c["num_key_value_heads"] = 3; }),
                      {"config.json: \"num_key_value_heads\" 3: expected a divisor of num_attention_heads 4"}));
}

TEST(ModelLoader, RopeScalingIsReadOrRefusedByName) {
  TempDir dir;
  const LoadedModel linear = load_with_config(dir, "llama-gqa",
                                              [](json& c) { c["rope_scaling"] = json{{"type", "linear"}, {"factor", 2.0}}; });
  ASSERT_TRUE(linear.model) << linear.error;
  EXPECT_EQ(linear.model->config.rope.scaling, RopeScaling::Linear);
  EXPECT_EQ(linear.model->config.rope.factor, 2.0f);
  EXPECT_TRUE(refused(load_with_config(dir, "llama-gqa",
                                       [](json& c) { c["rope_scaling"] = json{{"type", "yarn"}, {"factor", 2.0}}; }),
                      {"config.json: \"rope_scaling\"", "rope_type 'yarn' is not supported yet"}));
  // null is "none" (as HF writes it).
  EXPECT_TRUE(load_with_config(dir, "smollm-tied", [](json& c) { c["rope_scaling"] = nullptr; }).model);
}

TEST(ModelLoader, AnExplicitHeadDimensionTooLargeIsRefused) {
  TempDir dir;
  EXPECT_TRUE(refused(load_with_config(dir, "llama-gqa",
                                       [](json& c) {
                                         c["num_attention_heads"] = 1 << 20;
                                         c["num_key_value_heads"] = 1 << 20;
                                         c["head_dim"] = 1 << 20;
                                       }),
                      {"config.json: num_attention_heads × head dimension = 1048576 × 1048576: expected at most 1048576"}));
}

TEST(ModelConfig, RealCheckpointConfigsReadAsTheirModels) {
  // Hand-copied from the Hugging Face hub (fuzz/corpus/model_config, also the fuzzer's seeds).
  const fs::path dir = fs::path(ATTENTION_LAB_FUZZ_DIR) / "corpus" / "model_config";
  const auto config = [&](const char* file) {
    ParsedConfig p = parse_model_config(test::read_text(dir / file), file);
    EXPECT_EQ(p.error, "") << file;
    return p.config;
  };
  const ModelConfig gpt2 = config("gpt2-small.json");
  EXPECT_EQ(gpt2.family, ModelFamily::Gpt2);
  EXPECT_EQ(gpt2.layers, 12);
  EXPECT_EQ(gpt2.d_head, 64);
  EXPECT_EQ(gpt2.d_ff, 3072);
  EXPECT_EQ(gpt2.vocab, 50257);
  EXPECT_EQ(gpt2.max_positions, 1024);
  EXPECT_TRUE(gpt2.tied_embeddings);
  EXPECT_EQ(gpt2.activation, Activation::GeluTanh);

  const ModelConfig smol = config("smollm-135m.json");
  EXPECT_EQ(smol.family, ModelFamily::Llama);
  EXPECT_EQ(smol.heads, 9);
  EXPECT_EQ(smol.kv_heads, 3);
  EXPECT_EQ(smol.d_head, 64);
  EXPECT_TRUE(smol.tied_embeddings);
  EXPECT_FALSE(smol.qkv_bias);

  const ModelConfig qwen = config("qwen2-0.5b.json");
  EXPECT_EQ(qwen.heads, 14);
  EXPECT_EQ(qwen.kv_heads, 2);
  EXPECT_EQ(qwen.d_head, 64);
  EXPECT_EQ(qwen.rope.theta, 1e6f);
  EXPECT_EQ(qwen.sliding_window, 0);  // use_sliding_window: false
  EXPECT_TRUE(qwen.qkv_bias);
  EXPECT_FALSE(qwen.o_bias);

  const ModelConfig mistral = config("mistral-7b-v0.1.json");
  EXPECT_EQ(mistral.layers, 32);
  EXPECT_EQ(mistral.kv_heads, 8);
  EXPECT_EQ(mistral.d_head, 128);
  EXPECT_EQ(mistral.d_ff, 14336);
  EXPECT_EQ(mistral.sliding_window, 4096);
  EXPECT_FALSE(mistral.tied_embeddings);
}

// [SECTION] Tensors

TEST(ModelLoader, AMissingTensorIsRefusedNamingIt) {
  TempDir dir;
  EXPECT_TRUE(refused(load_with_weights(dir, "llama-gqa",
                                        [](StFile& st) {
                                          st.header["model.layers.1.mlp.up_proj.weight_renamed"] =
                                              st.header["model.layers.1.mlp.up_proj.weight"];
                                          st.header.erase("model.layers.1.mlp.up_proj.weight");
                                        }),
                      {"missing tensor 'model.layers.1.mlp.up_proj.weight'", "Llama"}));
}

TEST(ModelLoader, AMissingUntiedHeadIsRefused) {
  TempDir dir;
  EXPECT_TRUE(refused(load_with_weights(dir, "llama-gqa", [](StFile& st) { st.header.erase("lm_head.weight"); }),
                      {"missing tensor 'lm_head.weight' (config.json says tie_word_embeddings: false)"}));
}

TEST(ModelLoader, ATensorOfTheWrongShapeIsRefusedNamingFileTensorAndBothShapes) {
  TempDir dir;
  const LoadedModel m = load_with_weights(dir, "llama-gqa", [](StFile& st) {
    st.header["model.layers.0.self_attn.q_proj.weight"]["shape"] = {64, 16};  // same bytes, wrong shape
  });
  EXPECT_TRUE(refused(m, {(dir / "llama-gqa" / "model.safetensors").string() +
                              ": tensor 'model.layers.0.self_attn.q_proj.weight': expected shape [32, 32] (from "
                              "config.json), found [64, 16]"}));
  // GPT-2's c_attn decides the layout: neither [d, 3d] nor [3d, d].
  TempDir dir2;
  EXPECT_TRUE(refused(load_with_weights(dir2, "gpt2-conv1d",
                                        [](StFile& st) { st.header["h.0.attn.c_attn.weight"]["shape"] = {64, 48}; }),
                      {"tensor 'h.0.attn.c_attn.weight': expected shape [32, 96] (HF GPT-2) or [96, 32] (minGPT), found [64, 48]"}));
}

TEST(ModelLoader, ANaNWeightIsRefusedNamingTheTensor) {
  TempDir dir;
  EXPECT_TRUE(refused(load_with_weights(dir, "llama-gqa",
                                        [](StFile& st) {
                                          st.set_f32("model.layers.1.self_attn.k_proj.weight", 17,
                                                     std::numeric_limits<float>::quiet_NaN());
                                        }),
                      {(dir / "llama-gqa" / "model.safetensors").string() +
                       ": tensor 'model.layers.1.self_attn.k_proj.weight': value 17 is NaN; expected finite weights"}));
}

TEST(ModelLoader, AnInfiniteWeightIsRefusedNamingTheTensor) {
  TempDir dir;
  EXPECT_TRUE(refused(load_with_weights(dir, "llama-gqa",
                                        [](StFile& st) {
                                          st.set_f32("model.norm.weight", 31, -std::numeric_limits<float>::infinity());
                                        }),
                      {"tensor 'model.norm.weight': value 31 is infinite; expected finite weights"}));
}

TEST(ModelLoader, NonFiniteHalfAndBFloatWeightsAreRefusedToo) {
  TempDir dir;
  EXPECT_TRUE(refused(load_with_weights(dir, "gpt2-conv1d-f16",
                                        [](StFile& st) { st.set_u16("transformer.h.1.mlp.c_fc.bias", 3, 0x7c00); }),
                      {"tensor 'transformer.h.1.mlp.c_fc.bias': value 3 is infinite"}));
  TempDir dir2;
  EXPECT_TRUE(refused(load_with_weights(dir2, "mingpt-linear-bf16",
                                        [](StFile& st) { st.set_u16("transformer.wte.weight", 0, 0x7fc0); }),
                      {"tensor 'transformer.wte.weight': value 0 is NaN"}));
}

TEST(ModelLoader, ATensorOfAnIntegerDtypeIsRefused) {
  TempDir dir;
  EXPECT_TRUE(refused(load_with_weights(dir, "llama-gqa",
                                        [](StFile& st) { st.header["model.norm.weight"]["dtype"] = "I32"; }),
                      {"model.safetensors: tensor 'model.norm.weight': expected F32, F16 or BF16, found I32"}));
  TempDir dir2;
  EXPECT_TRUE(refused(load_with_weights(dir2, "llama-gqa",
                                        [](StFile& st) {
                                          st.header["model.norm.weight"]["dtype"] = "BOOL";
                                          st.header["model.norm.weight"]["shape"] = {128};
                                        }),
                      {"tensor 'model.norm.weight': expected shape [32]"}));
}

// [SECTION] Shards

TEST(ModelLoader, AnIndexPointingToAMissingShardIsRefused) {
  TempDir dir;
  const fs::path folder = copy_fixture(dir, "mistral-window-sharded");
  json index = read_json(folder / "model.safetensors.index.json");
  index["weight_map"]["model.norm.weight"] = "model-00003-of-00002.safetensors";
  write_json(folder / "model.safetensors.index.json", index);
  EXPECT_TRUE(refused(load_model(folder), {(folder / "model-00003-of-00002.safetensors").string() + ": cannot open"}));
}

TEST(ModelLoader, AnIndexPointingOutOfItsFolderIsRefused) {
  TempDir dir;
  const fs::path folder = copy_fixture(dir, "mistral-window-sharded");
  json index = read_json(folder / "model.safetensors.index.json");
  for (const char* bad : {"../model-00001-of-00002.safetensors", "/etc/passwd", "..", "sub\\x.safetensors", ""}) {
    json broken = index;
    broken["weight_map"]["model.norm.weight"] = bad;
    write_json(folder / "model.safetensors.index.json", broken);
    EXPECT_TRUE(refused(load_model(folder), {(folder / "model.safetensors.index.json").string() +
                                                 ": weight_map 'model.norm.weight': expected a file name in the same folder, found '"}))
        << bad;
  }
}

TEST(ModelLoader, AnIndexThatIsNotAnObjectIsRefused) {
  TempDir dir;
  const fs::path folder = copy_fixture(dir, "mistral-window-sharded");
  const std::string index = (folder / "model.safetensors.index.json").string();
  for (const char* text : {"[]", "{\"metadata\": {}}", "{\"weight_map\": [\"a\"]}", "\"x\""}) {
    test::write_text(index, text);
    EXPECT_TRUE(refused(load_model(folder), {index + ": expected an object with a \"weight_map\""})) << text;
  }
  test::write_text(index, "{\"weight_map\": {}}");
  EXPECT_TRUE(refused(load_model(folder), {index + ": weight_map: expected at least one tensor"}));
  test::write_text(index, "{\"weight_map\": {\"model.norm.weight\": 2}}");
  EXPECT_TRUE(refused(load_model(folder), {index + ": weight_map 'model.norm.weight': expected a file name"}));
  test::write_text(index, "{\"weight_map\": ");
  EXPECT_TRUE(refused(load_model(folder), {index + ": invalid JSON"}));
  test::write_text(index, "{\"weight_map\": " + std::string(300, '[') + std::string(300, ']') + "}");
  const LoadedModel deep = load_model(folder);
  EXPECT_TRUE(refused(deep, {index + ": expected lists and objects nested at most 256 deep"}));
  EXPECT_EQ(deep.error.find(index + ": " + index), std::string::npos) << deep.error;  // the path once
}

TEST(ModelLoader, ATensorInTwoShardsIsRefusedNamingBoth) {
  TempDir dir;
  const fs::path folder = copy_fixture(dir, "mistral-window-sharded");
  const fs::path first = folder / "model-00001-of-00002.safetensors", second = folder / "model-00002-of-00002.safetensors";
  StFile a = StFile::read(first);
  const StFile b = StFile::read(second);
  // model.norm.weight (in the second shard) copied into the first.
  json e = b.header.at("model.norm.weight");
  const std::size_t from = e["data_offsets"][0].get<std::size_t>(), to = e["data_offsets"][1].get<std::size_t>();
  e["data_offsets"] = {a.data.size(), a.data.size() + (to - from)};
  a.data += b.data.substr(from, to - from);
  a.header["model.norm.weight"] = e;
  a.write(first);
  EXPECT_TRUE(refused(load_model(folder), {second.string() + ": tensor 'model.norm.weight' is also in " + first.string(),
                                           "(expected each tensor once)"}));
}

TEST(ModelLoader, AShardMissingATensorTheIndexNamesIsRefusedNamingTheTensor) {
  TempDir dir;
  EXPECT_TRUE(refused(load_with_weights(
                          dir, "mistral-window-sharded", [](StFile& st) { st.header.erase("model.norm.weight"); },
                          "model-00002-of-00002.safetensors"),
                      {"missing tensor 'model.norm.weight'"}));
}

// [SECTION] check_ids

TEST(CheckIds, IdsMustBeInTheVocabularyAndFitTheLearnedPositions) {
  ModelConfig gpt2;
  gpt2.family = ModelFamily::Gpt2;
  gpt2.vocab = 61;
  gpt2.max_positions = 16;
  const std::vector<int> ok{0, 60, 3};
  EXPECT_EQ(check_ids(gpt2, ok), "");
  EXPECT_EQ(check_ids(gpt2, std::vector<int>{}), "expected at least one token");
  EXPECT_EQ(check_ids(gpt2, std::vector<int>{3, 61}), "token 1: id 61: expected 0 to 60 (the vocabulary)");
  EXPECT_EQ(check_ids(gpt2, std::vector<int>{-1}), "token 0: id -1: expected 0 to 60 (the vocabulary)");
  EXPECT_EQ(check_ids(gpt2, std::vector<int>{std::numeric_limits<int>::min()}),
            "token 0: id -2147483648: expected 0 to 60 (the vocabulary)");
  EXPECT_EQ(check_ids(gpt2, std::vector<int>(16, 1)), "");
  EXPECT_EQ(check_ids(gpt2, std::vector<int>(17, 1)),
            "expected at most 16 tokens (the model's learned positions), found 17");

  // RoPE has no learned positions to run out of.
  ModelConfig llama = gpt2;
  llama.family = ModelFamily::Llama;
  EXPECT_EQ(check_ids(llama, std::vector<int>(17, 1)), "");
  EXPECT_EQ(check_ids(llama, std::vector<int>{61}), "token 0: id 61: expected 0 to 60 (the vocabulary)");

  // Against a loaded model's config.
  const LoadedModel m = load_model(kFixtures / "gpt2-conv1d");
  ASSERT_TRUE(m.model) << m.error;
  EXPECT_EQ(check_ids(m.model->config, std::vector<int>{3, 14, 15, 9, 2, 6, 53}), "");
  EXPECT_NE(check_ids(m.model->config, std::vector<int>(17, 0)), "");
}
