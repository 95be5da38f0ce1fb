#include "train_bench.h"

#include "bench.h"
#include "cli.h"
#include "model_args.h"

#include "attention_lab/gemm.h"
#include "attention_lab/matrix.h"
#include "attention_lab/tiny_gpt.h"

#include <nlohmann/json.hpp>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>
#include <random>

namespace attention_lab::cli {
// (named, not anonymous: a unity build puts the CLI's files in one translation unit)
namespace train_bench_parts {

struct TrainSize {
  const char* name;
  int layers, heads, d_model, context, batch, vocab;
};

// The sizes the training issue names: the induction model, and one with four
// times the context and twice the width.
constexpr TrainSize kSizes[] = {{"d64-T32", 2, 4, 64, 32, 16, 64}, {"d128-T128", 2, 4, 128, 128, 16, 64}};

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// Floating-point operations of one training step: the forward's products
// (projections, MLP, tied head, the attention's two per head) and twice
// that backward.
double step_flops(const TrainSize& s) {
  const double N = static_cast<double>(s.batch) * s.context, d = s.d_model, f = 4.0 * d;
  const double per_layer = 2.0 * N * (d * 3 * d + d * d + 2 * d * f) + 4.0 * s.batch * s.context * s.context * d;
  return 3.0 * (s.layers * per_layer + 2.0 * N * d * s.vocab);
}

// The best GFLOP/s of the GEMM the step uses (gemm.h: the packed kernel where
// the CPU has it) on the step's largest product shape, one product per
// thread at once, as the step computes them (each thread its part of the
// batch, a quarter of its rows).
double gemm_gflops(const TrainSize& s, int threads) {
  const int N = s.batch * s.context / 4, d = s.d_model;
  double best = std::numeric_limits<double>::infinity();
  for (int run = 0; run < 20; ++run) {
    const auto start = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(threads)
    {
      const Matrix a = Matrix::Constant(N, d, 0.5f), b = Matrix::Constant(d, 4 * d, 0.25f);
      Matrix c(N, 4 * d);
      for (int i = 0; i < 10; ++i) gemm(N, 4 * d, d, a.data(), d, b.data(), 4 * d, false, c.data(), 4 * d);
    }
    best = std::min(best, ms_since(start) / 10.0);
  }
  return 2.0 * N * d * 4.0 * d * threads / (best * 1e6);
}

TokenBatch random_batch(const TrainSize& s, std::mt19937& rng) {
  std::uniform_int_distribution<int> token(0, s.vocab - 1);
  TokenBatch b;
  b.rows = s.batch;
  b.length = s.context;
  for (int i = 0; i < s.batch * s.context; ++i) b.ids.push_back(token(rng)), b.targets.push_back(token(rng));
  return b;
}

// The peer's JSON line, or why there is none.
nlohmann::json run_peer(const std::string& script, const TrainSize& s, int steps, int runs, int threads) {
  std::error_code ec;
  if (!std::filesystem::exists(script, ec)) return {{"error", "not run: " + script + " not found (--peer PATH)"}};
  const std::string command = "/usr/bin/python3 '" + script + "' --json --layers " + std::to_string(s.layers) +
                              " --heads " + std::to_string(s.heads) + " --d " + std::to_string(s.d_model) + " --T " +
                              std::to_string(s.context) + " --batch " + std::to_string(s.batch) + " --vocab " +
                              std::to_string(s.vocab) + " --steps " + std::to_string(steps) + " --runs " +
                              std::to_string(runs) + " --threads " + std::to_string(threads) + " 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return {{"error", "not run: cannot start /usr/bin/python3"}};
  std::string text;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, pipe.get())) text += buf;
  const auto line_start = text.rfind("{\"peer\"");
  if (line_start == std::string::npos) return {{"error", "failed: " + text.substr(0, 300)}};
  try {
    return nlohmann::json::parse(text.substr(line_start));
  } catch (const nlohmann::json::exception&) {
    return {{"error", "failed: " + text.substr(0, 300)}};
  }
}

}  // namespace train_bench_parts

bool wants_train_bench(const std::vector<std::string>& args) {
  using namespace train_bench_parts;
  return std::find(args.begin(), args.end(), "--train") != args.end();
}

int run_train_bench(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  using namespace train_bench_parts;
  ModelArgs a;
  if (auto e = parse(args, {"--steps", "--runs", "--peer"}, {"--train", "--json"}, a); !e.empty())
    return fail(err, "bench --train: " + e);
  int steps = 20, runs = 5;
  if (a.values.count("--steps") && !parse_int(a.values["--steps"], 1, 100000, steps))
    return fail(err, "bench --train: --steps: expected a whole number from 1 to 100000, found '" + a.values["--steps"] + "'");
  if (a.values.count("--runs") && !parse_int(a.values["--runs"], 1, 1000, runs))
    return fail(err, "bench --train: --runs: expected a whole number from 1 to 1000, found '" + a.values["--runs"] + "'");
  const std::string peer = a.values.count("--peer") ? a.values["--peer"] : "bench/torch_train_peer.py";
  const int threads = std::max(1, omp_get_max_threads());

  nlohmann::ordered_json report;
  report["threads"] = threads;
  report["simd"] = bench::simd_in_use();
  report["sizes"] = nlohmann::json::array();
  for (const TrainSize& s : kSizes) {
    TinyGptShape shape;
    shape.layers = s.layers;
    shape.heads = s.heads;
    shape.d_model = s.d_model;
    shape.d_ff = 4 * s.d_model;
    shape.vocab = s.vocab;
    shape.context = s.context;
    TinyGpt model(shape, 1);
    AdamW optimizer({1e-3, 0.9, 0.98, 1e-8, 0.01});
    std::mt19937 rng(2);
    std::vector<TokenBatch> batches;
    for (int i = 0; i < 8; ++i) batches.push_back(random_batch(s, rng));
    int next = 0;
    auto step = [&] {
      model.run(batches[static_cast<std::size_t>(next++ % 8)], true);
      optimizer.step(model.params());
    };
    for (int i = 0; i < 3; ++i) step();  // warm-up
    std::vector<double> per_step;
    for (int r = 0; r < runs; ++r) {
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < steps; ++i) step();
      per_step.push_back(ms_since(start) / steps);
    }
    const double ours_ms = bench::median(per_step);
    const double gflops = gemm_gflops(s, threads);
    const double limit_ms = step_flops(s) / (gflops * 1e6);
    nlohmann::ordered_json j;
    j["size"] = s.name;
    j["layers"] = s.layers;
    j["heads"] = s.heads;
    j["d_model"] = s.d_model;
    j["T"] = s.context;
    j["batch"] = s.batch;
    j["vocab"] = s.vocab;
    j["step_ms"] = bench::sig(ours_ms);
    j["steps_per_s"] = bench::sig(1e3 / ours_ms);
    j["step_gflop"] = bench::sig(step_flops(s) / 1e9);
    j["gemm_bound_ms"] = bench::sig(limit_ms);
    j["share_of_gemm_bound"] = bench::sig(limit_ms / ours_ms, 3);
    if (peer != "none") {
      const nlohmann::json p = run_peer(peer, s, steps, runs, threads);
      j["pytorch"] = p;
      if (p.contains("step_ms")) j["speedup_vs_pytorch"] = bench::sig(p["step_ms"].get<double>() / ours_ms, 3);
    }
    report["sizes"].push_back(j);
  }
  if (a.flags.count("--json")) {
    out << report.dump() << '\n';
    return kExitOk;
  }
  out << "training steps (forward, cross-entropy, backward, AdamW), " << threads << " threads, " << report["simd"].get<std::string>()
      << "\n";
  for (const auto& j : report["sizes"]) {
    out << "  " << j["size"].get<std::string>() << " (batch " << j["batch"] << "): " << j["step_ms"] << " ms a step, "
        << j["steps_per_s"] << " steps/s; GEMM-bound " << j["gemm_bound_ms"] << " ms (" << j["share_of_gemm_bound"]
        << " of it)";
    if (j.contains("pytorch")) {
      if (j["pytorch"].contains("step_ms"))
        out << "; PyTorch " << j["pytorch"]["step_ms"] << " ms: " << j["speedup_vs_pytorch"] << "x";
      else
        out << "; PyTorch " << j["pytorch"]["error"].get<std::string>();
    }
    out << '\n';
  }
  return kExitOk;
}

}  // namespace attention_lab::cli
