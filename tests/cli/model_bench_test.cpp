// `attention-lab-cli bench --model` in-process on the tiny fixture models:
// every key in the JSON with sane values, a table, and bad arguments as one
// line with exit 2. No timing is asserted (the machine is shared).

#include "attention_lab/gemm.h"
#include "cli.h"
#include "cli_run.h"
#include "model_bench.h"
#include "core/model_fixture_paths.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

using namespace attention_lab;
using nlohmann::json;

namespace {

using attention_lab::test::kFixtures;
using attention_lab::test::fixture;

using BenchResult = test::CliResult;
using test::bench_refused;
using test::run_bench;

::testing::AssertionResult positive_number(const json& j, const std::string& key) {
  if (!j.contains(key)) return ::testing::AssertionFailure() << "no key " << key;
  if (!j.at(key).is_number()) return ::testing::AssertionFailure() << key << " is not a number: " << j.at(key);
  const double v = j.at(key).get<double>();
  if (!(v > 0.0) || !std::isfinite(v)) return ::testing::AssertionFailure() << key << " = " << v;
  return ::testing::AssertionSuccess();
}

}  // namespace

TEST(CliModelBench, HelpDescribesEveryOption) {
  for (const auto& args : {std::vector<std::string>{"--help"}, std::vector<std::string>{"--model", "x", "--help"}}) {
    const BenchResult r = run_bench(args);
    EXPECT_EQ(r.code, cli::kExitOk);
    EXPECT_EQ(r.err, "");
    for (const char* text : {"--model", "--T", "--layer", "--threads", "--runs", "--json", "load_ms", "forward_ms",
                             "edit_ms", "pin_last_layer_ms", "peak_rss_mb", "weights_mb", "activations_mb"})
      EXPECT_NE(r.out.find(text), std::string::npos) << text;
  }
  EXPECT_TRUE(cli::wants_model_bench({"--T", "4", "--model=m"}));
  EXPECT_FALSE(cli::wants_model_bench({"--T", "4", "--models"}));
}

TEST(CliModelBench, FixturePrintsEveryKeyWithSaneValues) {
  const BenchResult r = run_bench({"--model", fixture("llama-gqa"), "--T", "7", "--runs", "2", "--json"});
  ASSERT_EQ(r.code, cli::kExitOk) << r.err;
  json j;
  ASSERT_NO_THROW(j = json::parse(r.out)) << r.out;  // exactly one value, nothing after it
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j.at("T"), 7);
  EXPECT_EQ(j.at("layers"), 2);
  EXPECT_EQ(j.at("heads"), 4);
  EXPECT_EQ(j.at("kv_heads"), 2);
  EXPECT_EQ(j.at("layer"), 1);  // the middle layer: layers / 2
  EXPECT_EQ(j.at("last_layer"), 1);
  ASSERT_TRUE(j.at("threads").is_number_integer());
  EXPECT_GE(j.at("threads").get<int>(), 1);
  for (const char* key : {"load_first_ms", "load_ms", "file_mb", "forward_first_ms", "forward_ms", "session_start_ms",
                          "document_ms", "pin_last_layer_ms", "pin_last_layer_ratio", "pin_last_layer_engine_ms",
                          "pin_last_layer_predictions_ms", "peak_rss_mb", "weights_mb", "activations_mb",
                          "session_mb", "document_mb", "peak_rss_ratio", "products_ms", "products_gflop",
                          "forward_vs_products"})
    EXPECT_TRUE(positive_number(j, key));
  for (const char* group : {"edit_ms", "edit_ratio", "edit_engine_ms", "edit_predictions_ms"}) {
    ASSERT_TRUE(j.contains(group)) << group;
    ASSERT_TRUE(j.at(group).is_object()) << group;
    EXPECT_EQ(j.at(group).size(), 4u) << group;
    for (const char* kind : {"W_q", "X", "weights_pin", "scores_pin"}) EXPECT_TRUE(positive_number(j.at(group), kind));
  }
  // Every matrix-product backend in the same run (null when not in this process).
  EXPECT_EQ(j.at("gemm_backend"), to_string(gemm_backend()));
  const auto& by_backend = j.at("forward_ms_by_backend");
  EXPECT_EQ(by_backend.at(to_string(gemm_backend())), j.at("forward_ms"));
  EXPECT_EQ(j.at("openblas"), openblas_library());
  EXPECT_EQ(j.at("packed_isa"), packed_isa_name());
  EXPECT_TRUE(positive_number(by_backend, "Eigen"));
  if (openblas_available()) EXPECT_TRUE(positive_number(by_backend, "OpenBLAS"));
  else EXPECT_TRUE(by_backend.at("OpenBLAS").is_null());
  if (packed_available()) EXPECT_TRUE(positive_number(by_backend, "packed"));
  else EXPECT_TRUE(by_backend.at("packed").is_null());
  // The ratios are what the figures say, up to the 4 significant digits printed.
  const double forward = j.at("forward_ms").get<double>();
  EXPECT_NEAR(j.at("edit_ratio").at("W_q").get<double>(), j.at("edit_ms").at("W_q").get<double>() / forward,
              2e-3 * j.at("edit_ratio").at("W_q").get<double>());
  EXPECT_NEAR(j.at("activations_mb").get<double>(), j.at("session_mb").get<double>() + j.at("document_mb").get<double>(),
              2e-3 * j.at("activations_mb").get<double>());
  EXPECT_NEAR(j.at("forward_vs_products").get<double>(), forward / j.at("products_ms").get<double>(),
              2e-3 * j.at("forward_vs_products").get<double>());
  // The weights are the files as mapped (this fixture is F32); the peak RSS holds at least them.
  EXPECT_EQ(j.at("weights_mb"), j.at("file_mb"));
  EXPECT_GT(j.at("peak_rss_mb").get<double>(), j.at("weights_mb").get<double>());
  for (const auto& [name, runs] : j.at("runs").items()) EXPECT_GE(runs.get<int>(), 2) << name;
  // Progress, one line per phase, goes to stderr.
  EXPECT_NE(r.err.find("full forward of 7 tokens"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("pin an attention weight"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the forward's weight products alone"), std::string::npos) << r.err;
}

TEST(CliModelBench, ChosenLayerAndATable) {
  const BenchResult r = run_bench({"--model", fixture("gpt2-conv1d"), "--T", "16", "--layer", "0", "--runs", "1", "--threads", "1"});
  ASSERT_EQ(r.code, cli::kExitOk) << r.err;
  for (const char* text : {"2 layers", "T=16", "focused layer 0", "1 thread", "open the model again (warm: load_ms)",
                           "full forward", "layer 0: edit a cell of W_q, predict", "layer 0: edit a cell of X, predict",
                           "layer 0: pin an attention weight, predict", "layer 0: pin a score, predict",
                           "layer 1: pin an attention weight, predict", "peak RSS", "weights", "activations"})
    EXPECT_NE(r.out.find(text), std::string::npos) << text << "\n" << r.out;
}

TEST(CliModelBench, BadArgumentsAreOneLineWithExit2) {
  const std::string gpt2 = fixture("gpt2-conv1d");  // 16 learned positions, 2 layers
  EXPECT_TRUE(bench_refused(run_bench({"--model", gpt2, "--T", "17"}),
                           "--T 17: expected at most 16 tokens (the model's learned positions), found 17"));
  EXPECT_TRUE(bench_refused(run_bench({"--model", gpt2, "--T", "4", "--layer", "2"}),
                           "--layer 2: expected 0 to 1 (the model has 2 layers)"));
  EXPECT_TRUE(bench_refused(run_bench({"--model", gpt2, "--layer", "-1"}), "--layer: expected a whole number"));
  const std::string missing = (kFixtures / "no-such-model").string();
  EXPECT_TRUE(bench_refused(run_bench({"--model", missing, "--T", "4"}), "--model: "));
  EXPECT_TRUE(bench_refused(run_bench({"--model", missing, "--T", "4"}), "no-such-model"));
  EXPECT_TRUE(bench_refused(run_bench({"--model"}), "--model: expected a value after it"));
  EXPECT_TRUE(bench_refused(run_bench({"--model="}), "--model: expected a model folder or .safetensors file, found ''"));
  EXPECT_TRUE(bench_refused(run_bench({"--model", gpt2, "--T", "0"}), "--T: expected a whole number"));
  EXPECT_TRUE(bench_refused(run_bench({"--model", gpt2, "--T", "5000"}), "--T 5000 is above the size limit"));
  EXPECT_TRUE(bench_refused(run_bench({"--model", gpt2, "--heads", "4"}), "--heads: not used with --model"));
  EXPECT_TRUE(bench_refused(run_bench({"--model", gpt2, "--runs", "0"}), "--runs: expected a whole number from 1 to"));
  EXPECT_TRUE(bench_refused(run_bench({"--model", gpt2, "extra"}), "expected only options, found 'extra'"));
  EXPECT_TRUE(bench_refused(run_bench({"--model", gpt2, "--bogus"}), "unknown option '--bogus'"));
}
