// ablate, patch and attribute in-process: their JSON is the float64
// reference's (tests/interp/interventions_*.json, written from
// TransformerLens's definitions), their CSV has a line per value, and every
// bad argument is one line with exit 2.

#include "cli_run.h"
#include "core/model_fixture_paths.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <unistd.h>

using namespace attention_lab;
using nlohmann::json;

namespace {

namespace fs = std::filesystem;
using attention_lab::test::fixture;

const fs::path kGpt2 = fs::path(ATTENTION_LAB_HF_FIXTURES_DIR) / "gpt2";
const fs::path kKjv = fs::path(ATTENTION_LAB_SHARED_MODELS_DIR) / "kjv-gpt2";

json reference(const char* name) {
  std::ifstream in(fs::path(ATTENTION_LAB_TEST_DATA_DIR) / "interp" / (std::string("interventions_") + name + ".json"));
  return json::parse(in);
}

std::string ids_text(const json& ids) {
  std::string s;
  for (const json& id : ids) s += (s.empty() ? "" : ",") + std::to_string(id.get<int>());
  return s;
}

void expect_one_line_errors(const std::vector<std::pair<std::vector<std::string>, std::string>>& cases) {
  for (const auto& [args, message] : cases) {
    const test::CliResult bad = test::run_cli(args);
    EXPECT_EQ(bad.code, 2) << message;
    EXPECT_NE(bad.err.find(message), std::string::npos) << bad.err;
    EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
  }
}

TEST(CliInterp, PatchWritesEverySweepAsTheReference) {
  if (!fs::exists(kKjv / "model.safetensors")) GTEST_SKIP() << kKjv << " is missing";
  const json ref = reference("kjv-gpt2");
  const test::CliResult r = test::run_cli({"patch", "--model", kKjv.string(), "--clean-ids", ids_text(ref["clean"]),
                                           "--corrupted-ids", ids_text(ref["corrupted"]), "--answer-id",
                                           std::to_string(ref["metric"]["answer"].get<int>()), "--wrong-id",
                                           std::to_string(ref["metric"]["wrong"].get<int>()), "--kind", "all", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  ASSERT_EQ(j["sweeps"].size(), ref["patching"].size());
  EXPECT_NEAR(j["metric"]["clean"].get<double>(), ref["patching"][0]["clean"].get<double>(), 2e-4);
  for (std::size_t k = 0; k < ref["patching"].size(); ++k) {
    const json& ours = j["sweeps"][k];
    const json& theirs = ref["patching"][k];
    EXPECT_EQ(ours["kind"], theirs["kind"]);
    ASSERT_EQ(ours["normalised"].size(), theirs["normalised"].size());
    for (std::size_t l = 0; l < theirs["normalised"].size(); ++l) {
      ASSERT_EQ(ours["normalised"][l].size(), theirs["normalised"][l].size()) << ours["kind"];
      for (std::size_t i = 0; i < theirs["normalised"][l].size(); ++i)
        EXPECT_NEAR(ours["normalised"][l][i].get<double>(), theirs["normalised"][l][i].get<double>(), 5e-4) << ours["kind"];
    }
  }
  EXPECT_EQ(j["sweeps"][0]["columns"], "position");
  EXPECT_EQ(j["sweeps"][3]["columns"], "head");
  EXPECT_EQ(j["sweeps"][8]["columns"], "position×head");

  // CSV: a header and one line per patched run.
  const test::CliResult c = test::run_cli({"patch", "--model", kKjv.string(), "--clean-ids", ids_text(ref["clean"]),
                                           "--corrupted-ids", ids_text(ref["corrupted"]), "--kind", "resid_pre,z", "--csv"});
  ASSERT_EQ(c.code, 0) << c.err;
  const auto lines = std::count(c.out.begin(), c.out.end(), '\n');
  EXPECT_EQ(lines, 1 + 4 * 12 + 4 * 8);
  EXPECT_EQ(c.out.rfind("kind,layer,position,head,metric,normalised\nresid_pre,0,0,,", 0), 0u) << c.out.substr(0, 120);
}

TEST(CliInterp, PatchChoosesAnswersTellsWhatItMeasuresAndRefusesBadInput) {
  // Unnamed answers: each prompt's predicted next token; the table says which.
  const test::CliResult t = test::run_cli({"patch", "--model", fixture("llama-gqa"), "--clean-ids", "3,14,15,9,2",
                                           "--corrupted-ids", "3,14,40,9,2", "--kind", "attn_out"});
  if (t.code == 0) {
    EXPECT_NE(t.out.find("activation patching, clean → corrupted (5 tokens); metric logit["), std::string::npos) << t.out;
    EXPECT_NE(t.out.find("attn_out (layer × position"), std::string::npos) << t.out;
  } else {  // the two prompts happen to predict the same token: said so
    EXPECT_NE(t.err.find("the answer and the wrong token are both"), std::string::npos) << t.err;
  }
  const std::string gpt2 = kGpt2.string();
  std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"patch", "--model", fixture("llama-gqa"), "--clean-ids", "3,14,15", "--corrupted-ids", "3,14"},
       "patch: the clean prompt has 3 tokens and the corrupted one 2: patching needs the same number of tokens"},
      {{"patch", "--model", fixture("llama-gqa"), "--clean-ids", "3,14", "--corrupted-ids", "3,15", "--kind", "hook_z"},
       "--kind: 'hook_z': expected resid_pre, attn_out, mlp_out, z, q, k, v, pattern, z_by_position or all"},
      {{"patch", "--model", fixture("llama-gqa"), "--clean-ids", "3,14", "--corrupted-ids", "3,15", "--metric", "kl"},
       "--metric: expected logit_diff or prob, found 'kl'"},
      {{"patch", "--model", fixture("llama-gqa"), "--clean-ids", "3,14", "--corrupted-ids", "3,15", "--metric", "prob",
        "--wrong-id", "4"},
       "--wrong goes with --metric logit_diff"},
      {{"patch", "--model", fixture("llama-gqa"), "--clean-ids", "3,14", "--corrupted-ids", "3,15", "--answer-id", "5",
        "--wrong-id", "5"},
       "the answer and the wrong token are both"},
      {{"patch", "--model", fixture("llama-gqa"), "--clean-ids", "3,14", "--corrupted-ids", "3,15", "--answer-id", "61"},
       "--answer-id: expected 0 to 60, found '61'"},
      {{"patch", "--model", fixture("llama-gqa"), "--corrupted-ids", "3,15"}, "expected --clean TEXT or --clean-ids I,J,…"},
      {{"patch", "--model", fixture("llama-gqa"), "--clean-ids", "3,14", "--corrupted-ids", "3,15", "--json", "--csv"},
       "--json and --csv: expected one of them"},
  };
  if (fs::exists(kGpt2 / "model.safetensors"))  // an answer the tokenizer splits: refused with its pieces
    cases.push_back({{"patch", "--model", gpt2, "--clean", "The fat cat", "--corrupted", "The fat dog", "--answer",
                      " attention"},
                     "--answer ' attention' is "});
  expect_one_line_errors(cases);
}

TEST(CliInterp, AblateAndAttributeMatchTheReference) {
  if (!fs::exists(kGpt2 / "model.safetensors")) GTEST_SKIP() << kGpt2 << " is missing";
  const json ref = reference("gpt2");
  const std::string ids = ids_text(ref["clean"]);
  // L0H1 zero-ablated, as the reference's first case: the watched tokens' logits.
  const test::CliResult a = test::run_cli({"ablate", "--model", kGpt2.string(), "--ids", ids, "--ablate", "L0H1", "--k", "600", "--json"});
  ASSERT_EQ(a.code, 0) << a.err;
  const json j = json::parse(a.out);
  EXPECT_EQ(j["ablations"], json({"L0H1"}));
  const json& first = ref["ablations"][0];
  ASSERT_EQ(first["target"], "head");
  for (std::size_t i = 0; i < ref["watched"].size(); ++i) {
    const int id = ref["watched"][i];
    const auto it = std::find_if(j["tokens"].begin(), j["tokens"].end(), [&](const json& t) { return t["id"] == id; });
    ASSERT_NE(it, j["tokens"].end()) << id;
    EXPECT_NEAR((*it)["logit_after"].get<double>(), first["logits"][i].get<double>(), 2e-4) << id;
    EXPECT_NEAR((*it)["logit_before"].get<double>(), ref["unablated"][i].get<double>(), 2e-4) << id;
  }
  const test::CliResult c = test::run_cli({"ablate", "--model", kGpt2.string(), "--ids", ids, "--ablate", "L1.mlp:mean,L0H2@3", "--csv"});
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_EQ(c.out.rfind("id,token,logit_before,logit_after,p_before,p_after\n", 0), 0u);

  const json& dla = ref["attribution"][1];
  const test::CliResult d = test::run_cli({"attribute", "--model", kGpt2.string(), "--ids", ids, "--row",
                                           std::to_string(dla["row"].get<int>()), "--token-id", std::to_string(dla["token"].get<int>()),
                                           "--minus-id", std::to_string(dla["minus"].get<int>()), "--json"});
  ASSERT_EQ(d.code, 0) << d.err;
  const json k = json::parse(d.out);
  EXPECT_NEAR(k["logit"].get<double>(), dla["logit"].get<double>(), 2e-4);
  for (std::size_t l = 0; l < dla["heads"].size(); ++l) {
    EXPECT_NEAR(k["mlp"][0][l].get<double>(), dla["mlp"][l].get<double>(), 2e-4);
    for (std::size_t h = 0; h < dla["heads"][l].size(); ++h)
      EXPECT_NEAR(k["heads"][l][h].get<double>(), dla["heads"][l][h].get<double>(), 2e-4);
  }
  const test::CliResult table = test::run_cli({"attribute", "--model", kGpt2.string(), "--ids", ids});
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("= embeddings "), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("heads (layer × head), then the attention bias and the MLP of each layer:"), std::string::npos);

  expect_one_line_errors({
      {{"ablate", "--model", fixture("llama-gqa"), "--ids", "3,4"}, "expected --ablate SPEC[,SPEC…]"},
      {{"ablate", "--model", fixture("llama-gqa"), "--ids", "3,4", "--ablate", "L9H0"}, "--ablate L9H0: layer 9: expected 0 to 1"},
      {{"ablate", "--model", fixture("llama-gqa"), "--ids", "3,4", "--ablate", "L0H0@2"},
       "--ablate L0H0@2: position 2: expected 0 to 1, or every position"},
      {{"ablate", "--model", fixture("llama-gqa"), "--ids", "3,4", "--ablate", "L0X"}, "--ablate 'L0X': expected L<layer>H<head>"},
      {{"attribute", "--model", fixture("llama-gqa"), "--ids", "3,4", "--row", "2"}, "--row: expected 0 to 1"},
      {{"attribute", "--model", fixture("llama-gqa"), "--ids", "3,4", "--token-id", "99"}, "--token-id: expected 0 to 60"},
      {{"attribute", "--model", fixture("llama-gqa"), "--ids", "3,4", "--token", "x", "--token-id", "3"},
       "--token and --token-id: expected one of them"},
  });
}

}  // namespace

namespace {

// bench --interp on a tiny fixture: every figure present and positive, each
// sweep's runs counted as the model's layers × positions and layers × heads.
TEST(CliInterp, BenchTimesTheSweepsAndTheirPeers) {
  const test::CliResult r = test::run_cli({"bench", "--model", fixture("llama-gqa"), "--interp", "--T", "6", "--detect-T", "16", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["T"], 6);
  EXPECT_EQ(j["resid_pre"]["runs"], 2 * 6);
  EXPECT_EQ(j["z"]["runs"], 2 * 4);
  EXPECT_EQ(j["detect_heads"]["T"], 16);
  for (const char* key : {"seconds", "from_layer_0_s", "vs_from_layer_0"}) EXPECT_GT(j["resid_pre"][key].get<double>(), 0.0) << key;
  EXPECT_GT(j["detect_heads"]["vs_forward"].get<double>(), 0.0);
  const test::CliResult help = test::run_cli({"bench", "--model", fixture("llama-gqa"), "--interp", "--help"});
  EXPECT_NE(help.out.find("usage: attention-lab-cli bench --model MODEL --interp"), std::string::npos);
  expect_one_line_errors({
      {{"bench", "--interp", "--T", "5"}, "bench --interp: --model: expected a model folder"},
      {{"bench", "--model", fixture("llama-gqa"), "--interp", "--T", "1"}, "--T"},
      {{"bench", "--model", fixture("gpt2-conv1d"), "--interp", "--T", "40"}, "expected at most 16 (the model's learned positions)"},
      {{"bench", "--model", fixture("llama-gqa"), "--interp", "--layers", "3"}, "unknown option '--layers'"},
  });
}

}  // namespace

namespace {

// cache: the hooks asked for (globs), as safetensors and .npy; a prompt file
// is a batch (a first dimension); bad files and names are one line, exit 2.
TEST(CliInterp, CacheWritesTheHooksAskedForAndRefusesBadInput) {
  const fs::path dir = fs::temp_directory_path() / ("attention-lab-cache-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string out = (dir / "c.safetensors").string();
  const test::CliResult r = test::run_cli({"cache", "--model", fixture("llama-gqa"), "--ids", "3,14,15,9", "--hooks",
                                           "blocks.*.attn.hook_pattern,hook_embed", "-o", out, "--npy", (dir / "npy").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "cached 3 tensors (0.00 MB, float32) of 1 prompt of 4 tokens\n");
  EXPECT_TRUE(fs::exists(dir / "npy" / "blocks.1.attn.hook_pattern.npy"));
  EXPECT_TRUE(fs::exists(dir / "npy" / "hook_embed.npy"));
  std::ifstream f(out, std::ios::binary);
  std::string blob((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const std::string header = blob.substr(8, 400);
  EXPECT_NE(header.find("\"blocks.0.attn.hook_pattern\": {\"dtype\": \"F32\", \"shape\": [4, 4, 4]"), std::string::npos) << header;
  EXPECT_NE(header.find("\"ids\": \"[3, 14, 15, 9]\""), std::string::npos) << header;

  {
    std::ofstream p(dir / "prompts.txt");
    p << "3 14 15\n9 2 6\n";
  }
  const test::CliResult batch = test::run_cli({"cache", "--model", fixture("llama-gqa"), "--prompts", (dir / "prompts.txt").string(),
                                               "--hooks", "blocks.0.hook_resid_post", "-o", out});
  ASSERT_EQ(batch.code, 0) << batch.err;
  std::ifstream g(out, std::ios::binary);
  std::string blob2((std::istreambuf_iterator<char>(g)), std::istreambuf_iterator<char>());
  EXPECT_NE(blob2.find("\"shape\": [2, 3, 32]"), std::string::npos) << blob2.substr(8, 300);

  const test::CliResult list = test::run_cli({"cache", "--model", fixture("gpt2-conv1d"), "--list"});
  EXPECT_EQ(list.out.rfind("hook_embed\nhook_pos_embed\nblocks.0.hook_resid_pre\nblocks.0.ln1.hook_normalized\n", 0), 0u) << list.out;
  {
    std::ofstream p(dir / "empty-line.txt");
    p << "3 14\n\n9 2\n";
    std::ofstream q(dir / "lengths.txt");
    q << "3 14\n9 2 6\n";
  }
  expect_one_line_errors({
      {{"cache", "--model", fixture("llama-gqa"), "--ids", "3", "--hooks", "blocks.0.attn.hook_patern", "-o", out},
       "--hooks: hook 'blocks.0.attn.hook_patern': this model has no such hook; the nearest: blocks.0.attn.hook_pattern"},
      {{"cache", "--model", fixture("llama-gqa"), "--ids", "3", "--hooks", "hook_embed"}, "expected -o FILE.safetensors or --npy DIR"},
      {{"cache", "--model", fixture("llama-gqa"), "--ids", "3", "-o", out}, "expected --hooks NAME[,NAME…]"},
      {{"cache", "--model", fixture("llama-gqa"), "--prompts", (dir / "empty-line.txt").string(), "--hooks", "hook_embed", "-o", out},
       "line 2 is empty: expected a prompt on every line"},
      {{"cache", "--model", fixture("llama-gqa"), "--prompts", (dir / "lengths.txt").string(), "--hooks", "hook_embed", "-o", out},
       "line 2 has 3 tokens and line 1 has 2: a batch needs prompts of one length"},
      {{"cache", "--model", fixture("llama-gqa"), "--prompts", (dir / "none.txt").string(), "--hooks", "hook_embed", "-o", out},
       "--prompts: cannot read"},
  });
  fs::remove_all(dir);
}

// A file of prompts: detect-heads and attribute give the mean of what each
// line gives alone (and each line's own), patch the mean over pairs
// normalised by the mean clean and corrupted runs; CSV has a line per value
// of the mean and of each prompt; bad files and mixes are one line, exit 2.
TEST(CliInterp, BatchesOfPromptsAverageWhatEachPromptGives) {
  const fs::path dir = fs::temp_directory_path() / ("attention-lab-batch-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string model = fixture("gpt2-conv1d"), prompts = (dir / "prompts.txt").string(), pairs = (dir / "pairs.txt").string();
  {
    std::ofstream p(prompts);
    p << "3 14 15 9 3 14\n2 6 53\n";
    std::ofstream q(pairs);
    q << "3 14 15 9\t3 14 16 9\t7\t9\n2 6 53 5\t2 6 52 5\n";
  }
  const std::vector<std::string> lines = {"3 14 15 9 3 14", "2 6 53"};

  // detect-heads
  const test::CliResult d = test::run_cli({"detect-heads", "--model", model, "--prompts", prompts, "--json"});
  ASSERT_EQ(d.code, 0) << d.err;
  const json dj = json::parse(d.out);
  ASSERT_EQ(dj["prompts"].size(), 2u);
  std::vector<json> alone;
  for (const std::string& line : lines) {
    const test::CliResult one = test::run_cli({"detect-heads", "--model", model, "--text", line, "--json"});
    ASSERT_EQ(one.code, 0) << one.err;
    alone.push_back(json::parse(one.out));
  }
  for (const char* kind : {"previous_token", "duplicate_token", "induction"})
    for (std::size_t l = 0; l < dj["scores"][kind].size(); ++l)
      for (std::size_t h = 0; h < dj["scores"][kind][l].size(); ++h) {
        const double a = alone[0]["scores"][kind][l][h], b = alone[1]["scores"][kind][l][h];
        EXPECT_EQ(dj["prompts"][1]["scores"][kind][l][h].get<double>(), b);
        EXPECT_NEAR(dj["scores"][kind][l][h].get<double>(), (a + b) / 2, 1e-6) << kind;
      }
  const int layers = dj["layers"], heads = dj["heads"];
  const test::CliResult dc = test::run_cli({"detect-heads", "--model", model, "--prompts", prompts, "--csv"});
  ASSERT_EQ(dc.code, 0) << dc.err;
  EXPECT_EQ(dc.out.rfind("prompt,kind,layer,head,score\nmean,previous_token,0,0,", 0), 0u) << dc.out.substr(0, 80);
  EXPECT_EQ(std::count(dc.out.begin(), dc.out.end(), '\n'), 1 + 3 * 3 * layers * heads);
  EXPECT_NE(dc.out.find("\n2,induction,"), std::string::npos);

  // attribute: each prompt at its last row, of its own predicted token
  const test::CliResult a = test::run_cli({"attribute", "--model", model, "--prompts", prompts, "--json"});
  ASSERT_EQ(a.code, 0) << a.err;
  const json aj = json::parse(a.out);
  double logits = 0.0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const test::CliResult one = test::run_cli({"attribute", "--model", model, "--text", lines[i], "--json"});
    ASSERT_EQ(one.code, 0) << one.err;
    const json oj = json::parse(one.out);
    EXPECT_EQ(aj["prompts"][i]["token"], oj["token"]);
    EXPECT_EQ(aj["prompts"][i]["row"], oj["row"]);
    EXPECT_EQ(aj["prompts"][i]["logit"], oj["logit"]);
    logits += oj["logit"].get<double>();
  }
  EXPECT_NEAR(aj["mean"]["logit"].get<double>(), logits / 2, 1e-9);
  const test::CliResult at = test::run_cli({"attribute", "--model", model, "--prompts", prompts});
  EXPECT_NE(at.out.find("the mean over 2 prompts of"), std::string::npos) << at.out;
  EXPECT_NE(at.out.find("  line 2: logit['"), std::string::npos) << at.out;

  // patch: pairs, with answers from the line or each pair's own predictions
  const test::CliResult p = test::run_cli({"patch", "--model", model, "--prompts", pairs, "--kind", "resid_pre,z", "--json"});
  ASSERT_EQ(p.code, 0) << p.err;
  const json pj = json::parse(p.out);
  EXPECT_EQ(pj["pairs"][0]["metric"]["answer"], 7);
  EXPECT_EQ(pj["pairs"][0]["metric"]["wrong"], 9);
  const test::CliResult second = test::run_cli({"patch", "--model", model, "--clean", "2 6 53 5", "--corrupted", "2 6 52 5",
                                                "--kind", "resid_pre,z", "--json"});
  ASSERT_EQ(second.code, 0) << second.err;
  const json sj = json::parse(second.out);
  EXPECT_EQ(pj["pairs"][1]["metric"], sj["metric"]);
  for (std::size_t k = 0; k < 2; ++k) {
    const json& mean = pj["sweeps"][k];
    const double clean = pj["metric"]["clean"], corrupted = pj["metric"]["corrupted"];
    for (std::size_t l = 0; l < mean["metric"].size(); ++l)
      for (std::size_t i = 0; i < mean["metric"][l].size(); ++i) {
        const double x = pj["pairs"][0]["sweeps"][k][l][i], y = sj["sweeps"][k]["metric"][l][i];
        EXPECT_EQ(pj["pairs"][1]["sweeps"][k][l][i].get<double>(), y);
        EXPECT_NEAR(mean["metric"][l][i].get<double>(), (x + y) / 2, 1e-9);
        EXPECT_NEAR(mean["normalised"][l][i].get<double>(), ((x + y) / 2 - corrupted) / (clean - corrupted), 1e-9);
      }
  }
  const test::CliResult pc = test::run_cli({"patch", "--model", model, "--prompts", pairs, "--kind", "z", "--csv"});
  ASSERT_EQ(pc.code, 0) << pc.err;
  EXPECT_EQ(std::count(pc.out.begin(), pc.out.end(), '\n'), 1 + 3 * layers * heads);
  EXPECT_EQ(pc.out.rfind("pair,kind,layer,position,head,metric,normalised\nmean,z,0,,0,", 0), 0u) << pc.out.substr(0, 90);

  // logit-lens --csv: a line per layer (and the embeddings) per rank
  const test::CliResult lens = test::run_cli({"logit-lens", "--model", model, "--ids", "3,14,15", "--k", "3", "--csv"});
  ASSERT_EQ(lens.code, 0) << lens.err;
  EXPECT_EQ(lens.out.rfind("after,rank,id,token,logit,p\n0,0,", 0), 0u) << lens.out;
  EXPECT_EQ(std::count(lens.out.begin(), lens.out.end(), '\n'), 1 + 3 * (layers + 1));
  // --track: the token's place after each layer; the top token's is rank 0.
  const test::CliResult top = test::run_cli({"logit-lens", "--model", model, "--ids", "3,14,15", "--k", "1", "--json"});
  ASSERT_EQ(top.code, 0) << top.err;
  const int best = json::parse(top.out)["layers"].back()["top"][0]["id"];
  const test::CliResult tracked = test::run_cli({"logit-lens", "--model", model, "--ids", "3,14,15", "--k", "1",
                                                 "--track-id", std::to_string(best), "--json"});
  ASSERT_EQ(tracked.code, 0) << tracked.err;
  const json tj = json::parse(tracked.out)["layers"].back();
  EXPECT_EQ(tj["tracked"]["rank"], 0);
  EXPECT_EQ(tj["tracked"]["p"], tj["top"][0]["p"]);

  {
    std::ofstream q(dir / "lengths.txt");
    q << "3 14 15\t3 14 16\n2 6\t2 7\n";
    std::ofstream e(dir / "empty.txt");
    e << "3 14\n\n";
  }
  const std::string lengths = (dir / "lengths.txt").string(), empty = (dir / "empty.txt").string();
  expect_one_line_errors({
      {{"patch", "--model", model, "--prompts", lengths}, "line 2 has 2 tokens and line 1 has 3: --kind resid_pre averages over positions"},
      {{"patch", "--model", model, "--prompts", lengths, "--clean", "3"}, "--prompts goes without --clean"},
      {{"patch", "--model", model, "--prompts", prompts}, "line 1: expected clean<TAB>corrupted"},
      {{"attribute", "--model", model, "--prompts", prompts, "--row", "1"}, "--row goes with --text or --ids"},
      {{"attribute", "--model", model, "--prompts", prompts, "--text", "3"}, "expected one of --text TEXT, --ids I,J,… or --prompts FILE"},
      {{"detect-heads", "--model", model, "--prompts", empty}, "line 2 is empty: expected a prompt on every line"},
      {{"detect-heads", "--model", model, "--prompts", prompts, "--repeat", "4"}, "expected one of --text TEXT, --ids I,J,…, --prompts FILE or --repeat N"},
      {{"detect-heads", "--model", model, "--prompts", prompts, "--json", "--csv"}, "--json and --csv: expected one of them"},
      {{"logit-lens", "--model", model, "--ids", "3", "--json", "--csv"}, "--json and --csv: expected one of them"},
      {{"logit-lens", "--model", model, "--ids", "3", "--track-id", "999999"}, "--track-id: expected 0 to"},
  });
  fs::remove_all(dir);
}

}  // namespace
