// The model commands in-process on the fixture models (tests/models) and the
// real gpt-nano-sort: model-info, tokenize, generate, trace --model, extract;
// every bad argument is one line with exit 2.

#include "cli.h"
#include "cli_run.h"
#include "attention_lab/engine.h"
#include "attention_lab/safetensors.h"
#include "attention_lab/scenario_io.h"
#include "core/temp_dir.h"
#include "core/model_fixture_paths.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <limits>
#include <sstream>

using namespace attention_lab;
using nlohmann::json;

namespace {

using attention_lab::test::kFixtures;
using attention_lab::test::fixture;
const std::filesystem::path kNano = std::filesystem::path(ATTENTION_LAB_SHARED_MODELS_DIR) / "gpt-nano-sort";

using CliRun = test::CliResult;
CliRun cli_run(const std::vector<std::string>& args) { return test::run_cli(args); }

// A reference tensor as nested rows of doubles: [rows][cols] of block `index`.
std::vector<std::vector<double>> reference(const char* model, const std::string& name, int index = 0) {
  std::string error;
  auto f = SafetensorsFile::open(kFixtures / model / "reference.safetensors", error);
  const TensorInfo* t = f ? f->find(name) : nullptr;
  if (!t) throw std::runtime_error("no " + name + ": " + error);
  std::vector<double> v;
  f->read_doubles(*t, v, error);
  const auto rows = static_cast<std::size_t>(t->shape[t->shape.size() - 2]);
  const auto cols = static_cast<std::size_t>(t->shape.back());
  std::vector<std::vector<double>> out(rows, std::vector<double>(cols));
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) out[r][c] = v[static_cast<std::size_t>(index) * rows * cols + r * cols + c];
  return out;
}

::testing::AssertionResult near(const json& got, const std::vector<std::vector<double>>& want, const std::string& what) {
  double scale = 1e-6;
  for (const auto& row : want)
    for (double x : row)
      if (std::isfinite(x)) scale = std::max(scale, std::abs(x));
  if (got.size() != want.size()) return ::testing::AssertionFailure() << what << ": " << got.size() << " rows";
  for (std::size_t r = 0; r < want.size(); ++r) {
    if (got[r].size() != want[r].size()) return ::testing::AssertionFailure() << what << ": row " << r << " size";
    for (std::size_t c = 0; c < want[r].size(); ++c) {
      const double g = got[r][c].is_string() ? -std::numeric_limits<double>::infinity() : got[r][c].get<double>();
      if (std::isinf(want[r][c]) ? g != want[r][c] : std::abs(g - want[r][c]) > 1e-4 * scale)
        return ::testing::AssertionFailure() << what << "[" << r << "][" << c << "]: " << g << " vs " << want[r][c];
    }
  }
  return ::testing::AssertionSuccess();
}

const std::vector<std::string> kIdArgs = {"--ids", "3,14,15,9,2,6,53"};

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

::testing::AssertionResult refused_in_one_line(const CliRun& r, const std::string& needle) {
  if (r.code != cli::kExitBadInput) return ::testing::AssertionFailure() << "exit " << r.code << ": " << r.err;
  if (!r.out.empty()) return ::testing::AssertionFailure() << "printed '" << r.out << "'";
  if (r.err.empty() || r.err.find('\n') != r.err.size() - 1)
    return ::testing::AssertionFailure() << "not one line: '" << r.err << "'";
  if (r.err.find(needle) == std::string::npos)
    return ::testing::AssertionFailure() << "'" << r.err << "' does not mention '" << needle << "'";
  return ::testing::AssertionSuccess();
}

TEST(CliModel, ModelInfoDescribesEveryLayout) {
  const CliRun r = cli_run({"model-info", fixture("mistral-window-sharded"), "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["model_type"], "mistral");
  EXPECT_EQ(j["layers"], 2);
  EXPECT_EQ(j["heads"], 4);
  EXPECT_EQ(j["kv_heads"], 1);
  EXPECT_EQ(j["sliding_window"], 3);
  EXPECT_EQ(j["dtype"], "F16");
  EXPECT_EQ(j["files"], 2);
  EXPECT_EQ(j["positions"], "rope");
  const CliRun gpt2 = cli_run({"model-info", fixture("gpt2-conv1d")});
  ASSERT_EQ(gpt2.code, 0) << gpt2.err;
  EXPECT_NE(gpt2.out.find("HF GPT-2 (Conv1D [in, out])"), std::string::npos) << gpt2.out;
  EXPECT_NE(gpt2.out.find("tied to the token embeddings"), std::string::npos) << gpt2.out;
}

TEST(CliModel, GenerateContinuesAsTheReferenceForEveryLayout) {
  for (const char* m : {"gpt2-conv1d", "gpt2-conv1d-f16", "mingpt-linear-bf16", "llama-gqa", "qwen2-bias-tied-bf16",
                        "mistral-window-sharded", "smollm-tied"}) {
    const CliRun r = cli_run(with({"generate", "--model", fixture(m), "--n", "5", "--json"}, kIdArgs));
    ASSERT_EQ(r.code, 0) << m << ": " << r.err;
    const json j = json::parse(r.out);
    std::string error;
    auto f = SafetensorsFile::open(kFixtures / m / "reference.safetensors", error);
    std::vector<double> want;
    f->read_doubles(*f->find("greedy"), want, error);
    ASSERT_EQ(j["new_ids"].size(), 5u) << m;
    for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(j["new_ids"][i].get<int>(), static_cast<int>(want[i])) << m;
    EXPECT_EQ(j["ids"].size(), 12u);
  }
}

TEST(CliModel, TraceOfAModelLayerHasEveryStageAndTheModelAroundIt) {
  const CliRun r = cli_run(with({"trace", "--model", fixture("llama-gqa"), "--layer", "1"}, kIdArgs));
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["format"], "attention-lab/trace@1");
  EXPECT_EQ(j["dims"]["kv_heads"], 2);
  EXPECT_TRUE(near(j["X"], reference("llama-gqa", "layers.1.norm1"), "X"));
  EXPECT_TRUE(near(j["output"], reference("llama-gqa", "layers.1.attn_out"), "output"));
  for (int h = 0; h < 4; ++h) {
    const json& head = j["heads"][static_cast<std::size_t>(h)];
    EXPECT_TRUE(near(head["weights"], reference("llama-gqa", "layers.1.weights", h), "weights"));
    EXPECT_TRUE(near(head["masked"], reference("llama-gqa", "layers.1.scores", h), "masked"));
  }
  EXPECT_TRUE(j["heads"][0].contains("Q_unrotated"));
  const json& m = j["model"];
  EXPECT_EQ(m["layer"], 1);
  EXPECT_EQ(m["ids"], json::parse("[3,14,15,9,2,6,53]"));
  ASSERT_EQ(m["layers"].size(), 2u);
  for (int l = 0; l < 2; ++l) {
    const json& layer = m["layers"][static_cast<std::size_t>(l)];
    EXPECT_TRUE(near(layer["input"], reference("llama-gqa", "layers." + std::to_string(l) + ".input"), "input"));
    EXPECT_TRUE(near(layer["output"], reference("llama-gqa", "layers." + std::to_string(l) + ".output"), "output"));
  }
  EXPECT_EQ(m["logits_first_row"], 0);  // 61 tokens: every row
  EXPECT_TRUE(near(m["logits"], reference("llama-gqa", "logits"), "logits"));
}

TEST(CliModel, ExtractWritesALayerAsAScenarioTheEngineComputesAgain) {
  test::TempDir dir;
  const auto path = (dir.path() / "layer0.json").string();
  const CliRun r = cli_run(with({"extract", "--model", fixture("gpt2-conv1d"), "--layer", "0", "-o", path}, kIdArgs));
  ASSERT_EQ(r.code, 0) << r.err;
  LoadResult loaded = load_scenario(path);
  ASSERT_TRUE(loaded.scenario) << loaded.error;
  Engine engine;
  engine.recompute_all(*loaded.scenario);
  json out = json::array();
  const MatrixView o = engine.stage(StageId::input(StageKind::Output));
  for (Eigen::Index i = 0; i < o.rows(); ++i) {
    json row = json::array();
    for (Eigen::Index c = 0; c < o.cols(); ++c) row.push_back(o(i, c));
    out.push_back(row);
  }
  EXPECT_TRUE(near(out, reference("gpt2-conv1d", "layers.0.attn_out"), "extracted output"));
}

TEST(CliModel, NanoSortTokenizesItsVocabularyAndSorts) {
  if (!std::filesystem::exists(kNano)) GTEST_SKIP() << kNano.string() << " is missing (shared models folder)";
  const CliRun t = cli_run({"tokenize", kNano.string(), "0 0 2 1 0 1"});
  ASSERT_EQ(t.code, 0) << t.err;
  EXPECT_EQ(json::parse(t.out), json::parse(R"({"ids": [0,0,2,1,0,1], "tokens": ["0","0","2","1","0","1"]})"));
  const CliRun g = cli_run({"generate", "--model", kNano.string(), "--text", "2 1 0 2 1 0", "--n", "6"});
  ASSERT_EQ(g.code, 0) << g.err;
  EXPECT_EQ(g.out, "2 1 0 2 1 0 0 0 1 1 2 2\n");
}

// trace --model --grad: the model's next-token loss and every stage's
// gradient, PyTorch autograd's (tests/models/generate_model_gradients.py).
TEST(CliModel, TraceGradOfAModelLayerIsAutogradsOfItsNextTokenLoss) {
  const CliRun r = cli_run(with({"trace", "--model", fixture("gpt2-conv1d"), "--layer", "1", "--grad"}, kIdArgs));
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  std::ifstream in(std::filesystem::path(fixture("gpt2-conv1d")) / "gradients.json");
  const json want = json::parse(in);
  EXPECT_NEAR(j["loss"].get<double>(), want["loss"].get<double>(), 1e-5);
  const json& layer = want["layers"][1];
  EXPECT_TRUE(near(j["grad"]["W_q"], layer["d_W_q"].get<std::vector<std::vector<double>>>(), "grad.W_q"));
  EXPECT_TRUE(near(j["grad"]["X"], layer["d_X"].get<std::vector<std::vector<double>>>(), "grad.X"));
  EXPECT_TRUE(near(j["grad"]["output"], layer["d_attention_out"].get<std::vector<std::vector<double>>>(), "grad.output"));
  for (std::size_t h = 0; h < 4; ++h)
    EXPECT_TRUE(near(j["grad"]["heads"][h]["weights"], layer["d_weights"][h].get<std::vector<std::vector<double>>>(),
                     "grad.heads[" + std::to_string(h) + "].weights"));
  EXPECT_TRUE(j["model"].contains("logits"));
  // a layout without the backward pass, and a text with no next token: exit 2, named
  EXPECT_TRUE(refused_in_one_line(cli_run(with({"trace", "--model", fixture("mingpt-linear-bf16"), "--grad"}, kIdArgs)),
                                  "an lm_head of its own (untied)"));
  EXPECT_TRUE(refused_in_one_line(cli_run({"trace", "--model", fixture("gpt2-conv1d"), "--ids", "3", "--grad"}),
                                  "expected at least two tokens"));
}

TEST(CliModel, BadArgumentsAreOneLineWithExit2) {
  EXPECT_TRUE(refused_in_one_line(cli_run({"model-info"}), "expected one model folder"));
  EXPECT_TRUE(refused_in_one_line(cli_run({"model-info", "/nonexistent/model"}), "/nonexistent/model"));
  EXPECT_TRUE(refused_in_one_line(cli_run(with({"trace", "--model", fixture("gpt2-conv1d"), "--layer", "2"}, kIdArgs)),
                             "--layer: expected 0 to 1, found '2'"));
  EXPECT_TRUE(refused_in_one_line(cli_run({"trace", "--model", fixture("gpt2-conv1d")}), "expected --text TEXT or --ids"));
  EXPECT_TRUE(refused_in_one_line(
      cli_run({"trace", "--model", fixture("gpt2-conv1d"), "--ids", "1", "--text", "1"}), "one of them"));
  EXPECT_TRUE(refused_in_one_line(cli_run({"generate", "--model", fixture("gpt2-conv1d"), "--ids", "1,61", "--n", "2"}),
                             "'61': expected a token id from 0 to 60"));
  EXPECT_TRUE(refused_in_one_line(cli_run({"generate", "--model", fixture("gpt2-conv1d"), "--ids", "1"}), "--n"));
  EXPECT_TRUE(refused_in_one_line(cli_run({"generate", "--model", fixture("gpt2-conv1d"), "--ids",
                                      "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1", "--n", "1"}),
                             "expected at most 16 tokens"));
  EXPECT_TRUE(refused_in_one_line(cli_run({"tokenize", fixture("gpt2-conv1d"), "hello"}), "word 1 of 1 'hello'"));
  EXPECT_TRUE(refused_in_one_line(cli_run({"extract", "--model", fixture("gpt2-conv1d"), "--ids", "1"}), "-o"));
  EXPECT_TRUE(refused_in_one_line(cli_run({"generate", "--model", fixture("gpt2-conv1d"), "--bogus"}), "unknown option '--bogus'"));
}

}  // namespace

namespace {

// detect-heads: every head of every layer for each kind, as JSON or a table;
// the kjv-gpt2 model's induction head on repeated random tokens; bad input one line, exit 2.
TEST(CliModel, DetectHeadsScoresEveryHeadAndRefusesBadInput) {
  const CliRun r = cli_run({"detect-heads", "--model", fixture("llama-gqa"), "--ids", "3,14,15,3,14,15", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["ids"], json({3, 14, 15, 3, 14, 15}));
  EXPECT_EQ(j["layers"], 2);
  EXPECT_EQ(j["heads"], 4);
  for (const char* kind : {"previous_token", "duplicate_token", "induction"}) {
    ASSERT_EQ(j["scores"][kind].size(), 2u) << kind;
    for (const json& row : j["scores"][kind]) {
      ASSERT_EQ(row.size(), 4u) << kind;
      for (const json& v : row) EXPECT_TRUE(v.get<double>() >= 0.0 && v.get<double>() <= 1.0) << kind;
    }
  }
  const CliRun table = cli_run({"detect-heads", "--model", fixture("llama-gqa"), "--repeat", "6", "--seed", "2"});
  ASSERT_EQ(table.code, 0) << table.err;
  for (const char* text : {"over 12 tokens (random, then repeated)", "previous_token (layer × head):", "induction (layer × head):",
                           "  L1  ", "most: layer "})
    EXPECT_NE(table.out.find(text), std::string::npos) << text << " in\n" << table.out;

  const std::filesystem::path kjv = std::filesystem::path(ATTENTION_LAB_SHARED_MODELS_DIR) / "kjv-gpt2";
  if (std::filesystem::exists(kjv / "model.safetensors")) {
    const CliRun k = cli_run({"detect-heads", "--model", kjv.string(), "--repeat", "60", "--seed", "1"});
    ASSERT_EQ(k.code, 0) << k.err;
    EXPECT_NE(k.out.find("induction (layer × head):"), std::string::npos);
    EXPECT_NE(k.out.find("most: layer 3, head 1"), std::string::npos) << k.out;
  }

  for (const auto& [args, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"detect-heads", "--model", fixture("llama-gqa")}, "expected one of --text TEXT, --ids I,J,…, --prompts FILE or --repeat N"},
           {{"detect-heads", "--model", fixture("llama-gqa"), "--ids", "3,4", "--repeat", "5"}, "expected one of"},
           {{"detect-heads", "--model", fixture("llama-gqa"), "--repeat", "0"}, "--repeat: expected a length from 1 to 4096"},
           {{"detect-heads", "--model", fixture("gpt2-conv1d"), "--repeat", "9"}, "--repeat: expected a length from 1 to 8"},
           {{"detect-heads", "--model", fixture("llama-gqa"), "--ids", "3,4", "--seed", "5"}, "--seed goes with --repeat N"},
           {{"detect-heads", "--model", fixture("llama-gqa"), "--ids", "3"}, "expected at least 2 tokens, found 1"},
           {{"detect-heads", "--model", fixture("llama-gqa"), "--ids", "3,999"}, "--ids: id 2 of 2 '999': expected a token id from 0 to 60"},
           {{"detect-heads", "--ids", "3,4"}, "expected --model MODEL"},
       }) {
    const CliRun bad = cli_run(args);
    EXPECT_EQ(bad.code, 2) << message;
    EXPECT_NE(bad.err.find(message), std::string::npos) << bad.err;
    EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
  }
}

}  // namespace

namespace {

// logit-lens: layers + 1 readings of the chosen row, the last the model's own
// greedy token (the reference's); bad --row and --k refused in one line.
TEST(CliModel, LogitLensReadsEveryLayerEndingAtTheModelsPrediction) {
  const CliRun r = cli_run({"logit-lens", "--model", fixture("llama-gqa"), "--ids", "3,14,15,9,2,6,53", "--k", "3", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["row"], 6);
  ASSERT_EQ(j["layers"].size(), 3u);  // the embeddings, layer 0, layer 1
  for (std::size_t l = 0; l < 3; ++l) {
    EXPECT_EQ(j["layers"][l]["after"], static_cast<int>(l));
    ASSERT_EQ(j["layers"][l]["top"].size(), 3u);
    const json& top = j["layers"][l]["top"];
    EXPECT_GE(top[0]["logit"].get<double>(), top[1]["logit"].get<double>());
    EXPECT_GE(top[1]["p"].get<double>(), top[2]["p"].get<double>());
  }
  std::string error;
  auto f = SafetensorsFile::open(kFixtures / "llama-gqa" / "reference.safetensors", error);
  std::vector<double> greedy;
  f->read_doubles(*f->find("greedy"), greedy, error);
  EXPECT_EQ(j["layers"][2]["top"][0]["id"].get<int>(), static_cast<int>(greedy[0]));

  const CliRun table = cli_run({"logit-lens", "--model", fixture("gpt2-conv1d"), "--ids", "3,14,15", "--row", "1"});
  ASSERT_EQ(table.code, 0) << table.err;
  for (const char* text : {"the next token after '14' (1)", "embeddings:", "layer 0:", "layer 1:"})
    EXPECT_NE(table.out.find(text), std::string::npos) << text << " in\n" << table.out;

  for (const auto& [args, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"logit-lens", "--model", fixture("llama-gqa"), "--ids", "3,14", "--row", "2"}, "--row: expected 0 to 1 (the text's tokens), found '2'"},
           {{"logit-lens", "--model", fixture("llama-gqa"), "--ids", "3,14", "--k", "0"}, "--k: expected 1 to 61, found '0'"},
           {{"logit-lens", "--model", fixture("llama-gqa")}, "expected --text TEXT or --ids"},
       }) {
    const CliRun bad = cli_run(args);
    EXPECT_EQ(bad.code, 2) << message;
    EXPECT_NE(bad.err.find(message), std::string::npos) << bad.err;
    EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
  }
}

}  // namespace
