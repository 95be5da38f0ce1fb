// `attention-lab-cli bench` in-process: argument errors are one line with exit
// 2, sizes above the core limits say what they need, and a tiny run prints a
// table or one JSON object with every key. No timing is asserted.

#include "bench.h"
#include "cli.h"
#include "cli_run.h"
#include "plain_attention.h"
#include "attention_lab/engine.h"
#include "attention_lab/gemm.h"
#include "attention_lab/limits.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

using namespace attention_lab;
using nlohmann::json;

namespace {

using BenchResult = test::CliResult;
using test::bench_refused;
using test::run_bench;

// A debug build multiplies slowly: there the reference GEMM is kept small.
std::vector<std::string> tiny(std::vector<std::string> args) {
#ifndef NDEBUG
  args.insert(args.end(), {"--gemm-size", "64"});
#endif
  return args;
}

}  // namespace

TEST(CliBench, HelpDescribesEveryOption) {
  const BenchResult r = run_bench({"--help"});
  EXPECT_EQ(r.code, cli::kExitOk);
  EXPECT_EQ(r.err, "");
  for (const char* option :
       {"--T", "--d", "--heads", "--kv-heads", "--rope", "--cross", "--mask", "--threads", "--runs", "--rounds",
        "--gemm-size", "--json"})
    EXPECT_NE(r.out.find(option), std::string::npos) << option;
  const BenchResult top = [] {
    std::ostringstream out, err;
    BenchResult b;
    b.code = cli::run({"--help"}, out, err);
    b.out = out.str();
    return b;
  }();
  EXPECT_NE(top.out.find("attention-lab-cli bench"), std::string::npos);
}

TEST(CliBench, UnknownOptionsAndStrayArgumentsAreBadArguments) {
  EXPECT_TRUE(bench_refused(run_bench({"--bogus"}), "unknown option '--bogus'"));
  EXPECT_TRUE(bench_refused(run_bench({"-o", "x.json"}), "unknown option '-o'"));
  EXPECT_TRUE(bench_refused(run_bench({"scenario.json"}), "expected only options, found 'scenario.json'"));
  EXPECT_TRUE(bench_refused(run_bench({"--json=yes"}), "--json: takes no value"));
}

TEST(CliBench, MissingAndMalformedNumbersAreBadArguments) {
  EXPECT_TRUE(bench_refused(run_bench({"--T"}), "--T: expected a value after it"));
  EXPECT_TRUE(bench_refused(run_bench({"--d", "12", "--heads"}), "--heads: expected a value after it"));
  EXPECT_TRUE(bench_refused(run_bench({"--T", "abc"}), "--T: expected a whole number from 1 to 1000000, found 'abc'"));
  EXPECT_TRUE(bench_refused(run_bench({"--T", "0"}), "found '0'"));
  EXPECT_TRUE(bench_refused(run_bench({"--T", "-5"}), "found '-5'"));
  EXPECT_TRUE(bench_refused(run_bench({"--T", "12.5"}), "found '12.5'"));
  EXPECT_TRUE(bench_refused(run_bench({"--T", "99999999999999999999"}), "--T: expected a whole number"));
  EXPECT_TRUE(bench_refused(run_bench({"--d="}), "--d: expected a whole number from 1 to 1000000, found ''"));
  EXPECT_TRUE(bench_refused(run_bench({"--threads", "0"}), "--threads: expected a whole number from 1 to"));
  EXPECT_TRUE(bench_refused(run_bench({"--runs", "0"}), "--runs: expected a whole number from 1 to"));
  EXPECT_TRUE(bench_refused(run_bench({"--rounds", "0"}), "--rounds: expected a whole number from 1 to 20, found '0'"));
  EXPECT_TRUE(bench_refused(run_bench({"--rounds", "21"}), "--rounds: expected a whole number from 1 to 20, found '21'"));
  EXPECT_TRUE(bench_refused(run_bench({"--gemm-size", "x"}), "--gemm-size: expected a whole number"));
}

TEST(CliBench, MaskMustBeCausalOrNone) {
  EXPECT_TRUE(bench_refused(run_bench({"--mask", "custom"}), "--mask: expected causal or none, found 'custom'"));
  EXPECT_TRUE(bench_refused(run_bench({"--mask"}), "--mask: expected a value after it"));
}

TEST(CliBench, DModelMustBeAMultipleOfHeads) {
  EXPECT_TRUE(bench_refused(run_bench({"--T", "8", "--d", "100", "--heads", "12"}), "--d 100 is not a multiple of --heads 12"));
  EXPECT_TRUE(bench_refused(run_bench({"--T", "8", "--d", "4", "--heads", "8"}), "not a multiple"));
}

TEST(CliBench, SizesAboveTheCoreLimitsSayWhatTheyNeed) {
  const std::string too_many_tokens = std::to_string(limits::kMaxTokens + 1);
  BenchResult r = run_bench({"--T", too_many_tokens});
  EXPECT_TRUE(bench_refused(r, "--T " + too_many_tokens + " is above the size limit (T <= " +
                                  std::to_string(limits::kMaxTokens) + ")"));
  EXPECT_TRUE(bench_refused(r, "would need about "));
  EXPECT_TRUE(r.err.find("MiB") != std::string::npos || r.err.find("GiB") != std::string::npos) << r.err;

  const std::string too_wide = std::to_string(limits::kMaxModelDim + 16);
  EXPECT_TRUE(bench_refused(run_bench({"--T", "8", "--d", too_wide, "--heads", "16"}), "--d " + too_wide + " is above"));
  const std::string too_many_heads = std::to_string(limits::kMaxHeads + 1);
  EXPECT_TRUE(bench_refused(run_bench({"--T", "8", "--d", "64", "--heads", too_many_heads}),
                           "--heads " + too_many_heads + " is above the size limit"));
}

TEST(CliBench, CountsTheFullForwardAsTheIssueSays) {
  EXPECT_DOUBLE_EQ(cli::bench::full_forward_flops(1024, 768), 8.0 * 1024 * 768 * 768 + 4.0 * 1024 * 1024 * 768);
  EXPECT_DOUBLE_EQ(cli::bench::full_forward_flops(1, 1), 12.0);
  // 12 heads of 64 over 4 K/V heads: K and V are 256 wide
  EXPECT_DOUBLE_EQ(cli::bench::full_forward_flops(1024, 768, 256),
                   2.0 * 1024 * 768 * (2 * 768 + 2 * 256) + 4.0 * 1024 * 1024 * 768);
}

TEST(CliBench, GroupedHeadsAndRopeAreCheckedAndRun) {
  EXPECT_TRUE(bench_refused(run_bench({"--T", "8", "--d", "48", "--heads", "12", "--kv-heads", "5"}),
                           "--kv-heads 5 does not divide --heads 12"));
  EXPECT_TRUE(bench_refused(run_bench({"--T", "8", "--d", "12", "--heads", "4", "--rope"}),
                           "--rope needs an even d_k (RoPE turns pairs of dimensions); d_k = d_model / heads = 3"));
  EXPECT_TRUE(bench_refused(run_bench({"--rope=yes"}), "--rope: takes no value, found 'yes'"));
  EXPECT_TRUE(bench_refused(run_bench({"--T", "8", "--d", "16", "--heads", "2", "--cross", "12"}),
                           "--cross 12 with --T 8: a causal mask needs as many keys as queries; add --mask none"));
  const BenchResult c = run_bench(tiny({"--T", "8", "--d", "16", "--heads", "2", "--cross", "12", "--mask", "none", "--json"}));
  ASSERT_EQ(c.code, cli::kExitOk) << c.err;
  EXPECT_EQ(json::parse(c.out).at("cross_T_k"), 12);
  Scenario s = cli::bench::random_scenario(8, 16, 4, MaskKind::Causal);
  cli::bench::add_variants(s, 2, true);
  EXPECT_EQ(validate(s), "");
  EXPECT_EQ(s.dims().kv_heads, 2);
  EXPECT_EQ(s.W_k.cols(), 8);
  EXPECT_TRUE(s.rope.on);
  const BenchResult r = run_bench(tiny({"--T", "8", "--d", "16", "--heads", "4", "--kv-heads", "2", "--rope", "--json"}));
  ASSERT_EQ(r.code, cli::kExitOk) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j.at("kv_heads"), 2);
  EXPECT_EQ(j.at("rope"), true);
  EXPECT_GT(j.at("edit_ms").at("X").get<double>(), 0.0);
}

TEST(CliBench, RandomScenarioIsValidAndHasTheRequestedShape) {
  const Scenario s = cli::bench::random_scenario(8, 16, 2, MaskKind::Causal);
  EXPECT_EQ(validate(s), "");
  const Dims d = s.dims();
  EXPECT_EQ(d.T, 8);
  EXPECT_EQ(d.d_model, 16);
  EXPECT_EQ(d.heads, 2);
  EXPECT_EQ(d.d_k, 8);
  EXPECT_EQ(d.d_v, 8);
  EXPECT_EQ(d.d_out, 16);
  EXPECT_TRUE(s.use_w_o);
  EXPECT_EQ(s.mask_kind, MaskKind::Causal);
}

TEST(CliBench, TinyRunPrintsOneJsonObjectWithEveryKey) {
  const BenchResult r = run_bench(tiny({"--T", "8", "--d", "16", "--heads", "2", "--json"}));
  ASSERT_EQ(r.code, cli::kExitOk) << r.err;
  json j;
  ASSERT_NO_THROW(j = json::parse(r.out)) << r.out;  // exactly one value, nothing after it
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j.at("T"), 8);
  EXPECT_EQ(j.at("d_model"), 16);
  EXPECT_EQ(j.at("heads"), 2);
  EXPECT_EQ(j.at("mask"), "causal");
  ASSERT_TRUE(j.at("threads").is_number_integer());
  EXPECT_GE(j.at("threads").get<int>(), 1);
  for (const char* key : {"full_ms", "full_gflops", "gemm_gflops"}) {
    ASSERT_TRUE(j.contains(key)) << key;
    ASSERT_TRUE(j.at(key).is_number()) << key;
    EXPECT_GT(j.at(key).get<double>(), 0.0) << key;
  }
  ASSERT_TRUE(j.contains("edit_ms"));
  ASSERT_TRUE(j.at("edit_ms").is_object());
  EXPECT_EQ(j.at("edit_ms").size(), 5u);
  for (const char* key : {"X", "W_q", "W_v", "W_o", "mask"}) {
    ASSERT_TRUE(j.at("edit_ms").contains(key)) << key;
    ASSERT_TRUE(j.at("edit_ms").at(key).is_number()) << key;
    EXPECT_GT(j.at("edit_ms").at(key).get<double>(), 0.0) << key;
  }
  // Every matrix-product backend: the forward and the reference GEMM on each
  // this process has, null for the others.
  EXPECT_EQ(j.at("gemm_backend"), to_string(gemm_backend()));
  EXPECT_EQ(j.at("full_ms_by_backend").at(to_string(gemm_backend())), j.at("full_ms"));
  EXPECT_EQ(j.at("packed_isa"), packed_isa_name());
  double best = 0.0;
  for (const GemmBackend backend : {GemmBackend::Packed, GemmBackend::OpenBlas, GemmBackend::Eigen}) {
    const bool here = backend == GemmBackend::Eigen || (backend == GemmBackend::Packed ? packed_available() : openblas_available());
    for (const char* group : {"full_ms_by_backend", "gemm_gflops_by_backend"}) {
      const auto& v = j.at(group).at(to_string(backend));
      if (here) {
        ASSERT_TRUE(v.is_number()) << group << " " << to_string(backend);
        EXPECT_GT(v.get<double>(), 0.0) << group << " " << to_string(backend);
      } else {
        EXPECT_TRUE(v.is_null()) << group << " " << to_string(backend);
      }
    }
    if (here) best = std::max(best, j.at("gemm_gflops_by_backend").at(to_string(backend)).get<double>());
  }
  // The GEMM the forward is compared with is the fastest of them.
  EXPECT_NEAR(j.at("gemm_gflops").get<double>(), best, 1e-3 * best);
  // At least 10 timed runs of everything.
  for (const auto& [name, runs] : j.at("runs").items()) EXPECT_GE(runs.get<int>(), 10) << name;
  // What Compare and each resize keep: the old X at least (an edit of X
  // comes before the snapshot's diff; a resize of T or d_model replaces X).
  const double x_bytes = 8.0 * 16.0 * 4.0;
  EXPECT_GE(j.at("snapshot_bytes").get<double>(), x_bytes);
  ASSERT_EQ(j.at("resizes").size(), 3u) << j.dump();
  for (const char* what : {"T = 7", "d_model = 14", "heads = 1"}) {
    bool found = false;
    for (const auto& z : j.at("resizes"))
      if (z.at("what") == what) {
        found = true;
        // (fewer heads: the old W_q, W_k, W_v and W_o, not X)
        EXPECT_GE(z.at("history_bytes").get<double>(), what[0] == 'h' ? 4.0 * 16.0 * 16.0 * 4.0 : x_bytes) << what;
      }
    EXPECT_TRUE(found) << what << " in " << j.at("resizes").dump();
  }
  // Progress, one line per phase, goes to stderr.
  EXPECT_NE(r.err.find("full forward"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("GEMM"), std::string::npos) << r.err;
}

TEST(CliBench, RunsAreTakenInRoundsOfEveryMeasurement) {
  const BenchResult r = run_bench(tiny({"--T", "4", "--d", "8", "--heads", "2", "--json", "--runs", "4", "--rounds", "2"}));
  ASSERT_EQ(r.code, cli::kExitOk) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j.at("rounds"), 2);
  for (const auto& [name, runs] : j.at("runs").items()) EXPECT_GE(runs.get<int>(), 4) << name;
  // Progress names each round, and its phase counter ends at the total it announced.
  EXPECT_NE(r.err.find("round 1 of 2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("round 2 of 2"), std::string::npos) << r.err;
  int last = 0, total = 0;
  for (std::size_t at = r.err.find("bench: ["); at != std::string::npos; at = r.err.find("bench: [", at + 1)) {
    ASSERT_EQ(std::sscanf(r.err.c_str() + at, "bench: [%d/%d]", &last, &total), 2) << r.err.substr(at, 40);
    EXPECT_LE(last, total) << r.err;
  }
  EXPECT_EQ(last, total) << r.err;
  EXPECT_EQ(r.err.find("Compare"), r.err.rfind("Compare")) << "Compare is measured once:\n" << r.err;
}

TEST(CliBench, TinyRunPrintsATable) {
  const BenchResult r = run_bench(tiny({"--T", "4", "--d", "8", "--heads", "2", "--mask", "none", "--threads", "1"}));
  ASSERT_EQ(r.code, cli::kExitOk) << r.err;
  for (const char* text : {"T=4, d_model=8, heads=2", "none mask", "1 thread", "full forward, every stage",
                           "edit a cell of X", "edit a cell of W_q", "edit a cell of W_v", "edit a cell of W_o",
                           "toggle a mask cell", "GEMM", "GFLOP/s", "peak RSS", "Compare: the snapshot keeps",
                           "a resize: the undo history then keeps"})
    EXPECT_NE(r.out.find(text), std::string::npos) << text << "\n" << r.out;
}

TEST(CliBench, OneTokenAndOneHeadWork) {
  const BenchResult r = run_bench(tiny({"--T", "1", "--d", "1", "--heads", "1", "--json", "--runs", "3"}));
  ASSERT_EQ(r.code, cli::kExitOk) << r.err;
  json j;
  ASSERT_NO_THROW(j = json::parse(r.out)) << r.out;
  EXPECT_EQ(j.at("T"), 1);
}

TEST(CliBench, ThePlainReferenceComputesTheSameOutputAsTheEngine) {
  // The comparison means something only if both compute the same thing.
  for (const bool rope : {false, true})
    for (const int kv : {0, 2})
      for (const MaskKind mask : {MaskKind::Causal, MaskKind::None}) {
        Scenario s = cli::bench::random_scenario(37, 32, 4, mask);
        cli::bench::add_variants(s, kv, rope, mask == MaskKind::None ? 41 : 0);
        Engine engine;
        engine.recompute_all(s);
        const Matrix plain = cli::plain_attention_forward(s);
        const MatrixView out = engine.stage(StageId::input(StageKind::Output));
        ASSERT_EQ(plain.rows(), out.rows());
        ASSERT_EQ(plain.cols(), out.cols());
        EXPECT_LT((plain - out).cwiseAbs().maxCoeff(), 1e-4f * std::max(1.0f, out.cwiseAbs().maxCoeff()))
            << "rope " << rope << ", kv " << kv << ", " << to_string(mask);
      }
}
