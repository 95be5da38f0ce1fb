// File ▸ Import weights… (weight_import.h): a real layer's attention weights
// from every checkpoint layout the fixtures cover (tests/models/fixtures),
// put onto a scenario whose engine then computes the layer's own attention
// output; nn.MultiheadAttention against torch (fixtures/mha, generate.py);
// our own matrix names; and .npy arrays, good and bad.

#include "attention_lab/engine.h"
#include "attention_lab/presets.h"
#include "attention_lab/safetensors.h"
#include "attention_lab/transformer_model.h"
#include "attention_lab/weight_import.h"

#include "temp_dir.h"
#include "test_support.h"
#include "model_fixture_paths.h"
#include "unit_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

namespace attention_lab {
namespace {

using attention_lab::test::near_reference;

namespace fs = std::filesystem;
using test::TempDir;

using attention_lab::test::kFixtures;

Scenario fat_cat() { return *make_preset("fat-cat"); }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

// A [rows, cols] (or [cols]) tensor of a reference file, as float.
Matrix reference_matrix(const fs::path& file, const std::string& name) {
  std::string error;
  const auto f = SafetensorsFile::open(file, error);
  if (!f) throw std::runtime_error(error);
  const TensorInfo* t = f->find(name);
  if (!t) throw std::runtime_error("no reference tensor " + name);
  std::vector<double> v;
  if (!f->read_doubles(*t, v, error)) throw std::runtime_error(error);
  const Eigen::Index cols = t->shape.back(), rows = t->shape.size() == 2 ? t->shape[0] : 1;
  Matrix m(rows, cols);
  for (Eigen::Index r = 0; r < rows; ++r)
    for (Eigen::Index c = 0; c < cols; ++c) m(r, c) = static_cast<float>(v[static_cast<std::size_t>(r * cols + c)]);
  return m;
}

// Equal shapes and values (Eigen's == asserts on different shapes).
::testing::AssertionResult same(const Matrix& a, const Matrix& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols())
    return ::testing::AssertionFailure() << "shape " << a.rows() << "x" << a.cols() << " vs " << b.rows() << "x" << b.cols();
  if (a != b) return ::testing::AssertionFailure() << "values differ:\n" << a << "\nvs\n" << b;
  return ::testing::AssertionSuccess();
}

// The imported scenario's attention on the reference input.
Matrix attention_output(Scenario s, const Matrix& x) {
  s.X = x;
  s.tokens.resize(static_cast<std::size_t>(x.rows()));
  EXPECT_EQ(validate(s), "");
  Engine engine;
  engine.recompute_all(s);
  return Matrix(engine.stage(StageId::input(StageKind::Output)));
}

// [SECTION] Every checkpoint layout of the fixtures, layer 1

struct Fixture {
  const char* name;
  const char* file;  // the weights file inside the fixture folder
  int kv_heads;      // as the scenario holds it (0 = one per query head)
  bool bias;
  bool output_bias;
  bool rope;
  int window;        // the model's sliding window (0: causal)
};

const Fixture kModels[] = {
    {"gpt2-conv1d", "model.safetensors", 0, true, true, false, 0},
    {"gpt2-conv1d-f16", "model.safetensors", 0, true, true, false, 0},
    {"mingpt-linear-bf16", "model.safetensors", 0, true, true, false, 0},
    {"llama-gqa", "model.safetensors", 2, false, false, true, 0},
    {"qwen2-bias-tied-bf16", "model.safetensors", 2, true, false, true, 0},
    {"mistral-window-sharded", "model-00002-of-00002.safetensors", 1, false, false, true, 3},
    {"smollm-tied", "model.safetensors", 0, false, false, true, 0},
};

class ImportLayer : public ::testing::TestWithParam<Fixture> {};

TEST_P(ImportLayer, GivesTheLayersMatricesHeadsAndAttentionOutput) {
  const Fixture& f = GetParam();
  const fs::path dir = kFixtures / f.name;
  LoadedModel model = load_model(dir);
  ASSERT_TRUE(model.model) << model.error;
  const TransformerLayer& L = model.model->layers[1];

  Scenario current = fat_cat();
  current.pins[PinKey{StageId::of_head(StageKind::Scores, 0), 1, 0}] = 3.0f;
  const ImportResult r = import_safetensors(current, dir / f.file, 1);
  ASSERT_TRUE(r.scenario) << r.error;
  EXPECT_EQ(r.error, "");
  const Scenario& s = *r.scenario;
  EXPECT_EQ(validate(s), "");
  EXPECT_TRUE(same(s.W_q, L.q.in_out()));
  EXPECT_TRUE(same(s.W_k, L.k.in_out()));
  EXPECT_TRUE(same(s.W_v, L.v.in_out()));
  EXPECT_TRUE(same(s.W_o, L.o.in_out()));
  EXPECT_EQ(s.heads, 4);
  EXPECT_EQ(s.kv_heads, f.kv_heads);
  EXPECT_TRUE(s.use_w_o);
  EXPECT_EQ(s.use_bias, f.bias);
  EXPECT_EQ(s.use_output_bias, f.output_bias);
  if (f.bias) {
    EXPECT_TRUE(same(s.b_q, Matrix(L.q.bias)));
    EXPECT_TRUE(same(s.b_k, Matrix(L.k.bias)));
    EXPECT_TRUE(same(s.b_v, Matrix(L.v.bias)));
  } else {
    EXPECT_TRUE(same(s.b_q, Matrix::Zero(1, 32)));  // zero biases of the right width, off
    EXPECT_TRUE(same(s.b_k, Matrix::Zero(1, s.W_k.cols())));
  }
  if (f.output_bias) {
    EXPECT_TRUE(same(s.b_o, Matrix(L.o.bias)));
  }
  EXPECT_EQ(s.rope.on, f.rope);
  if (f.rope) {
    EXPECT_EQ(s.rope, model.model->config.rope);
  }
  // fat-cat's 7 tokens stay; its 4 features became 32 columns of seeded values.
  EXPECT_EQ(s.T(), 7);
  EXPECT_EQ(s.d_model(), 32);
  EXPECT_EQ(s.tokens, current.tokens);
  EXPECT_TRUE(s.pins.empty());
  const std::string notes = joined(r.notes);
  EXPECT_TRUE(contains(notes, "X refilled (seeded): its width changed from 4 to 32")) << notes;
  EXPECT_TRUE(contains(notes, "pins cleared")) << notes;
  EXPECT_TRUE(contains(notes, "heads: 1 → 4 (config.json)")) << notes;
  EXPECT_GE(r.imported.size(), 4u);
  EXPECT_TRUE(contains(r.imported.front(), "W_q ← ")) << r.imported.front();

  // The engine on the layer's normed input gives the layer's attention output.
  const fs::path ref = dir / "reference.safetensors";
  Scenario on = s;
  if (f.window > 0) {
    on.mask_kind = MaskKind::Window;
    on.window = f.window;
    EXPECT_TRUE(contains(notes, "sliding window of 3")) << notes;
  }
  EXPECT_TRUE(near_reference(attention_output(on, reference_matrix(ref, "layers.1.norm1")), reference_matrix(ref, "layers.1.attn_out"),
                   "attn_out"));
}

INSTANTIATE_TEST_SUITE_P(EveryLayout, ImportLayer, ::testing::ValuesIn(kModels),
                         [](const ::testing::TestParamInfo<Fixture>& param) {
                           std::string n = param.param.name;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST(ImportSafetensors, DescribesEachMatrixBySourceAndLayout) {
  const ImportResult conv = import_safetensors(fat_cat(), kFixtures / "gpt2-conv1d" / "model.safetensors", 1);
  ASSERT_TRUE(conv.scenario) << conv.error;
  const std::string lines = joined(conv.imported);
  EXPECT_TRUE(contains(lines, "W_q ← h.1.attn.c_attn.weight columns 0–31 (Conv1D [in, out]) (F32): 32 × 32")) << lines;
  EXPECT_TRUE(contains(lines, "W_v ← h.1.attn.c_attn.weight columns 64–95")) << lines;
  EXPECT_TRUE(contains(lines, "b_k ← h.1.attn.c_attn.bias elements 32–63")) << lines;
  EXPECT_TRUE(contains(joined(conv.notes), "HF GPT-2 (Conv1D [in, out]), layer 1")) << joined(conv.notes);

  const ImportResult lin = import_safetensors(fat_cat(), kFixtures / "mingpt-linear-bf16" / "model.safetensors", 0);
  ASSERT_TRUE(lin.scenario) << lin.error;
  EXPECT_TRUE(contains(joined(lin.imported), "W_k ← transformer.h.0.attn.c_attn.weight rows 32–63, transposed (nn.Linear [out, in]) (BF16)"))
      << joined(lin.imported);
}

TEST(ImportSafetensors, SeveralLayersNeedAChoiceAndAnAbsentOneIsNamed) {
  const fs::path file = kFixtures / "llama-gqa" / "model.safetensors";
  const ImportResult any = import_safetensors(fat_cat(), file, -1);
  EXPECT_FALSE(any.scenario);
  EXPECT_TRUE(contains(any.error, file.string() + ": holds the attention weights of 2 layers (0, 1); choose one")) << any.error;
  const ImportResult absent = import_safetensors(fat_cat(), file, 7);
  EXPECT_FALSE(absent.scenario);
  EXPECT_TRUE(contains(absent.error, "no layer 7; layers found: 0, 1")) << absent.error;

  const WeightLayers layers = list_weight_layers(file);
  EXPECT_EQ(layers.error, "");
  EXPECT_EQ(layers.layers, (std::vector<int>{0, 1}));
  EXPECT_EQ(layers.layout, "Llama (nn.Linear [out, in])");
  EXPECT_EQ(list_weight_layers(kFixtures / "gpt2-conv1d" / "model.safetensors").layout, "HF GPT-2 (Conv1D [in, out])");
  EXPECT_EQ(list_weight_layers(kFixtures / "mingpt-linear-bf16" / "model.safetensors").layout, "minGPT (nn.Linear [out, in])");

  // A shard holding one layer needs no choice.
  const ImportResult shard = import_safetensors(fat_cat(), kFixtures / "mistral-window-sharded" / "model-00002-of-00002.safetensors", -1);
  EXPECT_TRUE(shard.scenario) << shard.error;
}

TEST(ImportSafetensors, WithoutAConfigTheScenariosHeadsAreKeptWhenTheWidthsDivide) {
  TempDir dir;
  fs::copy_file(kFixtures / "llama-gqa" / "model.safetensors", dir / "model.safetensors");
  LoadedModel model = load_model(kFixtures / "llama-gqa");
  ASSERT_TRUE(model.model) << model.error;

  // Four heads: Q 32 wide gives d_k 8; K 16 wide, 2 K/V heads.
  Scenario four = random_scenario(7, 16, 4, MaskKind::Causal, 7);
  four.rope.on = true;
  const ImportResult r = import_safetensors(four, dir / "model.safetensors", 1);
  ASSERT_TRUE(r.scenario) << r.error;
  EXPECT_EQ(r.scenario->heads, 4);
  EXPECT_EQ(r.scenario->kv_heads, 2);
  EXPECT_TRUE(r.scenario->rope.on);  // kept: d_k 8 is even
  EXPECT_TRUE(same(r.scenario->W_k, model.model->layers[1].k.in_out()));
  const fs::path ref = kFixtures / "llama-gqa" / "reference.safetensors";
  EXPECT_TRUE(near_reference(attention_output(*r.scenario, reference_matrix(ref, "layers.1.norm1")),
                   reference_matrix(ref, "layers.1.attn_out"), "attn_out"));

  // One head: d_k would be 32 and K's 16 columns do not fit; the error says what would help.
  const ImportResult one = import_safetensors(fat_cat(), dir / "model.safetensors", 1);
  EXPECT_FALSE(one.scenario);
  EXPECT_TRUE(contains(one.error, (dir / "model.safetensors").string() + ": the weights do not split into 1 head")) << one.error;
  EXPECT_TRUE(contains(one.error, "config.json")) << one.error;

  // Three heads do not divide 32: one head is tried, and fails the same way.
  const ImportResult three = import_safetensors(random_scenario(7, 12, 3, MaskKind::Causal, 1), dir / "model.safetensors", 1);
  EXPECT_FALSE(three.scenario);
  EXPECT_TRUE(contains(three.error, "with the scenario's 3, W_q's 32 columns do not divide into 3 heads")) << three.error;
}

TEST(ImportSafetensors, AConfigThatDoesNotParseIsANote) {
  TempDir dir;
  fs::copy_file(kFixtures / "gpt2-conv1d" / "model.safetensors", dir / "model.safetensors");
  test::write_text(dir / "config.json", R"({"model_type": "bert"})");
  const ImportResult r = import_safetensors(random_scenario(7, 32, 2, MaskKind::Causal, 1), dir / "model.safetensors", 0);
  ASSERT_TRUE(r.scenario) << r.error;
  EXPECT_EQ(r.scenario->heads, 2);  // the scenario's: no config to say 4
  EXPECT_TRUE(contains(joined(r.notes), "config.json beside the file not used")) << joined(r.notes);
}

TEST(ImportSafetensors, AConfigTurnsOffWhatTheModelDoesNotUse) {
  Scenario s = fat_cat();
  s.alibi = true;
  s.rope.on = true;
  s.mask_kind = MaskKind::None;
  const ImportResult r = import_safetensors(s, kFixtures / "gpt2-conv1d" / "model.safetensors", 0);
  ASSERT_TRUE(r.scenario) << r.error;
  EXPECT_FALSE(r.scenario->alibi);
  EXPECT_FALSE(r.scenario->rope.on);
  EXPECT_EQ(r.scenario->mask_kind, MaskKind::None);  // kept, with a note
  const std::string notes = joined(r.notes);
  EXPECT_TRUE(contains(notes, "RoPE turned off")) << notes;
  EXPECT_TRUE(contains(notes, "ALiBi turned off")) << notes;
  EXPECT_TRUE(contains(notes, "the model attends causally")) << notes;
}

TEST(ImportSafetensors, CrossAttentionScenariosAreRefused) {
  const auto translate = make_preset("translate");
  ASSERT_TRUE(translate && translate->cross());
  const fs::path file = kFixtures / "gpt2-conv1d" / "model.safetensors";
  const ImportResult r = import_safetensors(*translate, file, 0);
  EXPECT_FALSE(r.scenario);
  EXPECT_TRUE(contains(r.error, file.string() + ": importing weights into a cross-attention scenario (X_kv) is not supported yet"))
      << r.error;
  const ImportResult n = import_npy_bytes(*translate, "", "w.npy", StageKind::W_q, false);
  EXPECT_TRUE(contains(n.error, "w.npy: importing weights into a cross-attention scenario")) << n.error;
}

// [SECTION] nn.MultiheadAttention against torch (fixtures/mha)

TEST(ImportSafetensors, MultiheadAttentionMatchesTorch) {
  const fs::path dir = kFixtures / "mha";
  const ImportResult r = import_safetensors(random_scenario(5, 8, 2, MaskKind::None, 3), dir / "model.safetensors", -1);
  ASSERT_TRUE(r.scenario) << r.error;
  const Scenario& s = *r.scenario;
  EXPECT_EQ(s.heads, 2);
  EXPECT_EQ(s.kv_heads, 0);
  EXPECT_TRUE(s.use_bias && s.use_w_o && s.use_output_bias);
  const Matrix in_proj = reference_matrix(dir / "model.safetensors", "in_proj_weight");
  EXPECT_TRUE(same(s.W_k, Matrix(in_proj.middleRows(8, 8).transpose())));
  EXPECT_TRUE(same(s.b_v, Matrix(reference_matrix(dir / "model.safetensors", "in_proj_bias").rightCols(8))));
  EXPECT_TRUE(same(s.W_o, Matrix(reference_matrix(dir / "model.safetensors", "out_proj.weight").transpose())));
  EXPECT_TRUE(contains(joined(r.notes), "nn.MultiheadAttention")) << joined(r.notes);
  // nn.MultiheadAttention does not store its head count: the report says the scenario's were kept.
  EXPECT_TRUE(contains(joined(r.notes), "heads: kept at 2 (the file does not say how many")) << joined(r.notes);

  const fs::path ref = dir / "reference.safetensors";
  const Matrix x = reference_matrix(ref, "x");
  EXPECT_TRUE(test::matrices_near(attention_output(s, x), reference_matrix(ref, "out"), 0.0, 1e-5, "out"));
  Scenario causal = s;
  causal.mask_kind = MaskKind::Causal;
  EXPECT_TRUE(test::matrices_near(attention_output(causal, x), reference_matrix(ref, "out_causal"), 0.0, 1e-5, "out_causal"));
}

// [SECTION] safetensors written here: our own names, other prefixes, bad values

using attention_lab::test::u64_le;

struct Tensor {
  std::string name;
  std::string dtype;  // F32, F64, F16, I32
  std::vector<std::int64_t> shape;
  std::vector<double> values;
};

// A safetensors file of `tensors`, in order.
void write_safetensors(const fs::path& path, const std::vector<Tensor>& tensors) {
  nlohmann::json header = nlohmann::json::object();
  std::string data;
  for (const Tensor& t : tensors) {
    const std::size_t begin = data.size();
    for (const double v : t.values) {
      if (t.dtype == "F64") data.append(reinterpret_cast<const char*>(&v), 8);
      else if (t.dtype == "I32") { const auto i = static_cast<std::int32_t>(v); data.append(reinterpret_cast<const char*>(&i), 4); }
      else { const auto f = static_cast<float>(v); data.append(reinterpret_cast<const char*>(&f), 4); }
    }
    header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {begin, data.size()}}};
  }
  std::string h = header.dump();
  while (h.size() % 8 != 0) h += ' ';
  test::write_text(path, u64_le(h.size()) + h + data);
}

std::vector<double> iota(std::size_t n, double scale = 0.01, double start = 0.0) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = start + scale * static_cast<double>(i % 17) - 0.05;
  return v;
}

TEST(ImportSafetensors, OurOwnNamesAreTakenAsAScenarioHoldsThem) {
  TempDir dir;
  const fs::path file = dir / "weights.safetensors";
  // X 5 × 6, W_q/W_k 6 × 4, W_v 6 × 4, W_o 4 × 6, b_q; F64 and F32 mixed.
  write_safetensors(file, {{"X", "F64", {5, 6}, iota(30, 0.1)},
                           {"W_q", "F64", {6, 4}, iota(24)},
                           {"W_k", "F32", {6, 4}, iota(24, 0.02)},
                           {"W_v", "F32", {6, 4}, iota(24, 0.03)},
                           {"W_o", "F32", {4, 6}, iota(24, 0.04)},
                           {"b_q", "F32", {4}, iota(4, 0.5)}});
  Scenario current = fat_cat();  // heads 1
  current.features = {"det", "adj", "noun", "relation"};
  const ImportResult r = import_safetensors(current, file, -1);
  ASSERT_TRUE(r.scenario) << r.error;
  const Scenario& s = *r.scenario;
  EXPECT_EQ(s.T(), 5);
  EXPECT_EQ(s.d_model(), 6);
  EXPECT_EQ(s.X(4, 5), static_cast<float>(iota(30, 0.1)[29]));
  EXPECT_EQ(s.W_q(1, 0), static_cast<float>(iota(24)[4]));
  EXPECT_EQ(s.W_o(3, 5), static_cast<float>(iota(24, 0.04)[23]));
  EXPECT_EQ(s.heads, 1);
  EXPECT_TRUE(s.use_bias);
  EXPECT_EQ(s.b_q(0, 3), static_cast<float>(iota(4, 0.5)[3]));
  EXPECT_TRUE(same(s.b_k, Matrix::Zero(1, 4)));  // not in the file: zeros
  EXPECT_EQ(s.tokens, (std::vector<std::string>{"the", "fat", "cat", "sat", "on"}));
  EXPECT_EQ(s.features, (std::vector<std::string>{"det", "adj", "noun", "relation", "", ""}));
  const std::string notes = joined(r.notes);
  EXPECT_FALSE(contains(notes, "X refilled")) << notes;  // the file has X
  EXPECT_TRUE(contains(notes, "tokens: 5 labels kept, T changed from 7 to 5")) << notes;
  EXPECT_TRUE(contains(notes, "features 4–5 unnamed")) << notes;
  EXPECT_TRUE(contains(joined(r.imported), "X ← X (F64): 5 × 6")) << joined(r.imported);
  EXPECT_EQ(validate(s), "");
}

TEST(ImportSafetensors, OtherPrefixesAndOutProjAreRecognised) {
  TempDir dir;
  const fs::path file = dir / "clip.safetensors";
  const std::string p = "text_model.encoder.layers.3.self_attn.";
  write_safetensors(file, {{p + "q_proj.weight", "F32", {4, 4}, iota(16)},
                           {p + "k_proj.weight", "F32", {4, 4}, iota(16, 0.02)},
                           {p + "v_proj.weight", "F32", {4, 4}, iota(16, 0.03)},
                           {p + "out_proj.weight", "F32", {4, 4}, iota(16, 0.04)},
                           {p + "out_proj.bias", "F32", {4}, iota(4)},
                           {"text_model.encoder.layers.3.mlp.fc1.weight", "F32", {2, 4}, iota(8)}});
  const ImportResult r = import_safetensors(fat_cat(), file, 3);
  ASSERT_TRUE(r.scenario) << r.error;
  EXPECT_EQ(r.scenario->W_q(0, 1), static_cast<float>(iota(16)[4]));  // transposed
  EXPECT_TRUE(r.scenario->use_output_bias);
  EXPECT_FALSE(r.scenario->use_bias);
  EXPECT_EQ(r.scenario->d_model(), 4);
}

TEST(ImportSafetensors, BadValuesDtypesAndSizesAreRefusedNamingTheTensor) {
  TempDir dir;
  const fs::path file = dir / "bad.safetensors";
  std::vector<double> with_nan = iota(16);
  with_nan[6] = std::numeric_limits<double>::quiet_NaN();
  write_safetensors(file, {{"W_q", "F64", {4, 4}, with_nan}});
  ImportResult r = import_safetensors(fat_cat(), file, -1);
  EXPECT_FALSE(r.scenario);
  EXPECT_EQ(r.error, file.string() + ": tensor 'W_q': value 6 (row 1, column 2) is NaN; expected finite weights");

  std::vector<double> huge = iota(16);
  huge[15] = 1e300;
  write_safetensors(file, {{"W_q", "F64", {4, 4}, huge}});
  r = import_safetensors(fat_cat(), file, -1);
  EXPECT_TRUE(contains(r.error, "value 15 (row 3, column 3) is infinite or beyond float's range")) << r.error;

  write_safetensors(file, {{"W_q", "I32", {4, 4}, iota(16, 1.0)}});
  r = import_safetensors(fat_cat(), file, -1);
  EXPECT_EQ(r.error, file.string() + ": tensor 'W_q': expected F32, F16, BF16 or F64, found I32");

  write_safetensors(file, {{"W_q", "F32", {4096, 1}, std::vector<double>(4096, 0.0)}});
  r = import_safetensors(fat_cat(), file, -1);
  EXPECT_EQ(r.error, file.string() + ": tensor 'W_q': W_q would be 4096 × 1; expected at most 2048 rows (d_model, size limit)");

  write_safetensors(file, {{"h.0.attn.c_attn.weight", "F32", {4, 5}, iota(20)}});
  r = import_safetensors(fat_cat(), file, -1);
  EXPECT_EQ(r.error, file.string() +
                         ": tensor 'h.0.attn.c_attn.weight': expected shape [d, 3d] (Conv1D) or [3d, d] (nn.Linear), found [4, 5]");

  write_safetensors(file, {{"model.layers.0.self_attn.q_proj.weight", "F32", {4, 4}, iota(16)}});
  r = import_safetensors(fat_cat(), file, -1);
  EXPECT_EQ(r.error, file.string() + ": missing tensor 'model.layers.0.self_attn.k_proj.weight' (expected beside "
                                     "'model.layers.0.self_attn.q_proj.weight')");

  write_safetensors(file, {{"W_q", "F32", {4, 4}, iota(16)}, {"W_k", "F32", {5, 4}, iota(20)}});
  r = import_safetensors(fat_cat(), file, -1);
  EXPECT_TRUE(contains(r.error, file.string() + ": W_k takes inputs of width 5 but W_q of width 4")) << r.error;

  write_safetensors(file, {{"mlp.weight", "F32", {4, 4}, iota(16)}});
  r = import_safetensors(fat_cat(), file, -1);
  EXPECT_TRUE(contains(r.error, file.string() + ": no attention weights found")) << r.error;

  r = import_safetensors(fat_cat(), dir / "absent.safetensors", -1);
  EXPECT_TRUE(contains(r.error, (dir / "absent.safetensors").string() + ": cannot open")) << r.error;
}

// [SECTION] .npy

// A .npy file: the magic, the version, the header length, the header padded
// with spaces and a newline to a multiple of 64 bytes, then `data`.
std::string npy(const std::string& dict, const std::string& data, int major = 1) {
  const std::size_t prefix = major == 1 ? 10 : 12;
  std::string header = dict;
  while ((prefix + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  const auto n = static_cast<std::uint32_t>(header.size());
  for (std::size_t i = 0; i < (major == 1 ? 2u : 4u); ++i) out += static_cast<char>((n >> (8 * i)) & 0xffu);
  return out + header + data;
}

std::string dict(const std::string& descr, bool fortran, const std::string& shape) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': " + shape + ", }";
}

// rows × cols values v(r, c) = r + c/10, stored in `order`.
template <typename T>
std::string values(int rows, int cols, bool fortran) {
  std::string out;
  for (int i = 0; i < rows * cols; ++i) {
    const int r = fortran ? i % rows : i / cols, c = fortran ? i / rows : i % cols;
    const T v = static_cast<T>(r + c / 10.0);
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  return out;
}

std::string half_values(int rows, int cols) {  // v(r, c) = r + c (exact in float16)
  std::string out;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      // Small integers as IEEE half: via float bits (exact for 0…2047).
      const float f = static_cast<float>(r + c);
      const std::uint32_t b = std::bit_cast<std::uint32_t>(f);
      std::uint16_t h = 0;
      if (f != 0.0f) h = static_cast<std::uint16_t>(((b >> 23) - 127 + 15) << 10 | ((b >> 13) & 0x3ffu));
      out.append(reinterpret_cast<const char*>(&h), 2);
    }
  return out;
}

Matrix expected(int rows, int cols) {
  Matrix m(rows, cols);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) m(r, c) = static_cast<float>(r + c / 10.0);
  return m;
}

TEST(ImportNpy, EveryAcceptedDtypeAndOrderGivesTheSameMatrix) {
  const Scenario cat = fat_cat();
  for (const bool fortran : {false, true}) {
    const ImportResult f4 = import_npy_bytes(cat, npy(dict("<f4", fortran, "(4, 4)"), values<float>(4, 4, fortran)), "a.npy",
                                             StageKind::W_q, false);
    ASSERT_TRUE(f4.scenario) << f4.error;
    EXPECT_TRUE(same(f4.scenario->W_q, expected(4, 4)));
    const ImportResult f8 = import_npy_bytes(cat, npy(dict("<f8", fortran, "(4, 4)"), values<double>(4, 4, fortran), 2),
                                             "a.npy", StageKind::W_k, false);
    ASSERT_TRUE(f8.scenario) << f8.error;
    EXPECT_TRUE(same(f8.scenario->W_k, expected(4, 4)));
    // Nothing else changed: no notes, pins kept.
    EXPECT_TRUE(f8.notes.empty()) << joined(f8.notes);
  }
  const ImportResult f2 = import_npy_bytes(cat, npy(dict("<f2", false, "(4, 4)"), half_values(4, 4), 3), "h.npy", StageKind::W_v, false);
  ASSERT_TRUE(f2.scenario) << f2.error;
  EXPECT_EQ(f2.scenario->W_v(3, 2), 5.0f);
  EXPECT_EQ(f2.scenario->W_v(0, 0), 0.0f);
  EXPECT_EQ(f2.imported, (std::vector<std::string>{"W_v ← h.npy (<f2 (4, 4), C order): 4 × 4"}));
}

TEST(ImportNpy, TransposeTakesAnOutInArray) {
  // A [6, 4] nn.Linear weight: in = 4 (fat-cat's d_model), out = 6.
  const ImportResult r = import_npy_bytes(fat_cat(), npy(dict("<f4", false, "(6, 4)"), values<float>(6, 4, false)), "w.npy",
                                          StageKind::W_q, true);
  ASSERT_TRUE(r.scenario) << r.error;
  EXPECT_TRUE(same(r.scenario->W_q, Matrix(expected(6, 4).transpose())));
  // d_k 4 → 6 with one head: K is regrown to match, V keeps its width.
  EXPECT_EQ(r.scenario->W_k.cols(), 6);
  EXPECT_EQ(r.scenario->W_v.cols(), 4);
  const std::string notes = joined(r.notes);
  EXPECT_TRUE(contains(notes, "W_k regrown to 4 × 6")) << notes;
  EXPECT_TRUE(contains(notes, "d_k: 4 → 6")) << notes;
  EXPECT_TRUE(contains(joined(r.imported), "transposed [out, in]")) << joined(r.imported);
  // Without transpose the same array is 6 inputs wide: d_model 6, X refilled, K and V regrown.
  const ImportResult wide = import_npy_bytes(fat_cat(), npy(dict("<f4", false, "(6, 4)"), values<float>(6, 4, false)), "w.npy",
                                             StageKind::W_q, false);
  ASSERT_TRUE(wide.scenario) << wide.error;
  EXPECT_EQ(wide.scenario->d_model(), 6);
  EXPECT_TRUE(contains(joined(wide.notes), "X refilled (seeded): its width changed from 4 to 6")) << joined(wide.notes);
  EXPECT_EQ(validate(*wide.scenario), "");
}

TEST(ImportNpy, XAndWoAdaptTheRest) {
  Scenario cat = fat_cat();
  cat.pins[PinKey{StageId::of_head(StageKind::Scores, 0), 1, 0}] = 3.0f;
  const ImportResult x = import_npy_bytes(cat, npy(dict("<f4", false, "(3, 4)"), values<float>(3, 4, false)), "x.npy", StageKind::X, false);
  ASSERT_TRUE(x.scenario) << x.error;
  EXPECT_EQ(x.scenario->T(), 3);
  EXPECT_EQ(x.scenario->tokens.size(), 3u);
  EXPECT_TRUE(x.scenario->pins.empty());
  EXPECT_TRUE(contains(joined(x.notes), "pins cleared")) << joined(x.notes);

  // Same shape: the pins stay.
  const ImportResult same = import_npy_bytes(cat, npy(dict("<f4", false, "(7, 4)"), values<float>(7, 4, false)), "x.npy", StageKind::X, false);
  ASSERT_TRUE(same.scenario) << same.error;
  EXPECT_EQ(same.scenario->pins.size(), 1u);

  const ImportResult o = import_npy_bytes(cat, npy(dict("<f4", false, "(4, 2)"), values<float>(4, 2, false)), "o.npy", StageKind::W_o, false);
  ASSERT_TRUE(o.scenario) << o.error;
  EXPECT_TRUE(o.scenario->use_w_o);
  EXPECT_EQ(o.scenario->dims().d_out, 2);
  EXPECT_TRUE(contains(joined(o.notes), "W_o turned on")) << joined(o.notes);
  Engine engine;
  engine.recompute_all(*o.scenario);
  EXPECT_EQ(engine.stage(StageId::input(StageKind::Output)).cols(), 2);
}

struct BadNpy {
  const char* what;
  std::string bytes;
  const char* message;  // after "bad.npy: "
};

TEST(ImportNpy, BadFilesAreRefusedNamingTheFile) {
  const std::string ok_data = values<float>(2, 3, false);
  const BadNpy cases[] = {
      {"bad magic", "\x93NUMPX\x01\x00\x10\x00", "expected a .npy file (starting with \\x93NUMPY), found '\\x93NUMPX"},
      {"empty", "", "expected a .npy file (starting with \\x93NUMPY), found '' (0 bytes)"},
      {"truncated header", std::string("\x93NUMPY\x01\x00\x10", 9), "expected a .npy header after the magic"},
      {"header length past end", std::string("\x93NUMPY\x01\x00\x40\x00{'descr'", 17),
       "the header length (64 bytes) goes past the end of the file (7 bytes after it)"},
      {"header over 64 KiB", std::string("\x93NUMPY\x02\x00\x01\x00\x01\x00", 12), "expected a header of at most 65536 bytes, found 65537"},
      {"version 4.0", std::string("\x93NUMPY\x04\x00\x10\x00", 10), "expected .npy format version 1.0, 2.0 or 3.0, found 4.0"},
      {"unknown descr", npy(dict("<i4", false, "(2, 3)"), ok_data),
       "'descr': expected '<f4', '<f8' or '<f2' (little-endian float32, float64 or float16), found '<i4'"},
      {"big-endian", npy(dict(">f4", false, "(2, 3)"), ok_data), "found '>f4' (big-endian: save with .astype('<f4'))"},
      {"3-D shape", npy(dict("<f4", false, "(1, 2, 3)"), ok_data), "expected a 2-D array (a matrix), found shape (1, 2, 3)"},
      {"1-D shape", npy(dict("<f4", false, "(6,)"), ok_data), "expected a 2-D array (a matrix), found shape (6,)"},
      {"data too short", npy(dict("<f4", false, "(2, 3)"), ok_data.substr(0, 20)), "shape (2, 3) of <f4 needs 24 bytes of data, found 20"},
      {"data too long", npy(dict("<f4", false, "(2, 3)"), ok_data + "xx"), "shape (2, 3) of <f4 needs 24 bytes of data, found 26"},
      {"overflowing shape", npy(dict("<f4", false, "(4611686018427387904, 4611686018427387904)"), ok_data),
       "'shape': dimension '4611686018427387904' is too large"},
      {"product past 2^64", npy(dict("<f8", false, "(9007199254740992, 9007199254740992)"), ok_data),
       "shape (9007199254740992, 9007199254740992) of <f8 needs more than 2^64 bytes of data, found 24"},
      {"missing key", npy("{'descr': '<f4', 'shape': (2, 3), }", ok_data), "expected the key 'fortran_order' in the header"},
      {"twice", npy("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}", ok_data), "'descr' given twice"},
      {"unknown key", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}", ok_data), "unknown key 'x'"},
      {"not a dict", npy("['descr']", ok_data), "expected the header to start with '{' (a Python dict), found '['descr']"},
      {"fortran_order", npy("{'descr': '<f4', 'fortran_order': 0, 'shape': (2, 3)}", ok_data), "'fortran_order': expected True or False, found '0"},
      {"negative", npy(dict("<f4", false, "(-2, 3)"), ok_data), "'shape': expected a non-negative whole number, found '-2, 3)"},
      {"structured", npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2, 3)}", ok_data),
       "'descr': expected a dtype string such as '<f4', found '[('a'"},
      {"junk after", npy(dict("<f4", false, "(2, 3)") + " x", ok_data), "expected only spaces and a newline after the header's '}', found 'x"},
      {"escape", npy("{'descr': '<f\\4', 'fortran_order': False, 'shape': (2, 3)}", ok_data), "expected a plain string in the header"},
      {"empty rows", npy(dict("<f4", false, "(0, 4)"), ""), "W_q would be 0 × 4; expected at least 1 × 1"},
      {"over the limits", npy(dict("<f4", false, "(4, 5000)"), std::string(4 * 5000 * 4, '\0')),
       "shape (4, 5000): W_q would be 4 × 5000; expected at most 4096 columns (heads·d_k, size limit)"},
  };
  for (const auto& c : cases) {
    const ImportResult r = import_npy_bytes(fat_cat(), c.bytes, "bad.npy", StageKind::W_q, false);
    EXPECT_FALSE(r.scenario) << c.what;
    EXPECT_EQ(r.error.rfind("bad.npy: ", 0), 0u) << c.what << ": " << r.error;
    EXPECT_TRUE(contains(r.error, c.message)) << c.what << ": " << r.error;
  }
}

TEST(ImportNpy, NonFiniteValuesAndWrongTargetsAreRefused) {
  std::string data = values<float>(4, 4, false);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(data.data() + 4 * 6, &nan, 4);  // row 1, column 2
  ImportResult r = import_npy_bytes(fat_cat(), npy(dict("<f4", false, "(4, 4)"), data), "n.npy", StageKind::W_q, false);
  EXPECT_EQ(r.error, "n.npy: value at row 1, column 2 is NaN; expected finite numbers");
  std::string wide = values<double>(4, 4, false);
  const double big = 1e200;
  std::memcpy(wide.data() + 8 * 15, &big, 8);
  r = import_npy_bytes(fat_cat(), npy(dict("<f8", false, "(4, 4)"), wide), "n.npy", StageKind::W_q, false);
  EXPECT_EQ(r.error, "n.npy: value at row 3, column 3 is beyond float's range; expected finite numbers");
  r = import_npy_bytes(fat_cat(), npy(dict("<f4", false, "(1, 4)"), values<float>(1, 4, false)), "n.npy", StageKind::b_q, false);
  EXPECT_EQ(r.error, "n.npy: target: expected X, W_q, W_k, W_v or W_o, found b_q");
}

TEST(ImportNpy, FromAFile) {
  TempDir dir;
  test::write_text(dir / "w.npy", npy(dict("<f4", true, "(4, 4)"), values<float>(4, 4, true)));
  const ImportResult r = import_npy(fat_cat(), dir / "w.npy", StageKind::W_v, false);
  ASSERT_TRUE(r.scenario) << r.error;
  EXPECT_TRUE(same(r.scenario->W_v, expected(4, 4)));
  const ImportResult absent = import_npy(fat_cat(), dir / "absent.npy", StageKind::W_v, false);
  EXPECT_TRUE(contains(absent.error, (dir / "absent.npy").string() + ": cannot read")) << absent.error;
}

}  // namespace
}  // namespace attention_lab
