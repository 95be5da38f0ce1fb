#include "interp_bench.h"

#include "bench.h"
#include "cli.h"

#include "attention_lab/activation_patching.h"
#include "attention_lab/head_detectors.h"
#include "attention_lab/transformer_forward.h"
#include "attention_lab/transformer_model.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <random>

namespace attention_lab::cli {

// (named, not anonymous: a unity build puts the CLI's files in one translation unit)
namespace interp_bench_parts {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string model;
  int T = 20;
  int detect_T = 256;
  bool json = false;
  bool help = false;
};

int interp_bench_error(std::ostream& err, const std::string& msg) {
  err << "attention-lab-cli: bench --interp: " << msg << " (see bench --model MODEL --interp --help)\n";
  return kExitBadInput;
}

std::string parse_options(const std::vector<std::string>& args, Options& o) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    if (flag == "--interp") continue;
    if (flag == "--json" || flag == "--help" || flag == "-h") {
      (flag == "--json" ? o.json : o.help) = true;
      continue;
    }
    if (flag != "--model" && flag != "--T" && flag != "--detect-T")
      return flag.size() > 1 && flag[0] == '-' ? "unknown option '" + flag + "'" : "expected only options, found '" + flag + "'";
    if (i + 1 >= args.size()) return flag + ": expected a value after it";
    const std::string& value = args[++i];
    if (flag == "--model") o.model = value;
    else if (std::string e = bench::parse_int(flag, value, 2, 100'000, flag == "--T" ? o.T : o.detect_T); !e.empty())
      return e;
  }
  if (o.model.empty() && !o.help) return "--model: expected a model folder or .safetensors file";
  return {};
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// The peer of a residual-stream sweep: every patched run from layer 0 (the
// layers before the patch recomputed each time), spread over the threads as
// the sweep spreads its runs.
double resid_sweep_from_layer_0(const TransformerModel& m, const std::vector<int>& clean, const std::vector<int>& corrupted) {
  const Matrix x_clean = embed(m, clean), x_corrupted = embed(m, corrupted);
  const int layers = static_cast<int>(m.layers.size()), T = static_cast<int>(clean.size()), total = layers * T;
  std::vector<float> sink(static_cast<std::size_t>(total));
  const LayerHooks none;
  const auto start = Clock::now();
#pragma omp parallel for schedule(dynamic)
  for (int task = 0; task < total; ++task) {
    const int patched = task / T, p = task % T;
    Matrix a = x_clean, b = x_corrupted;
    for (int l = 0; l < layers; ++l) {
      if (l == patched) b.row(p) = a.row(p);
      if (l < patched) a = run_layer(m, l, a, none);  // the clean run's input to the patched layer
      b = run_layer(m, l, b, none);
    }
    sink[static_cast<std::size_t>(task)] = b(T - 1, 0);
  }
  return seconds_since(start);
}

}  // namespace interp_bench_parts

bool wants_interp_bench(const std::vector<std::string>& args) {
  using namespace interp_bench_parts;
  return std::find(args.begin(), args.end(), "--interp") != args.end();
}

std::string interp_bench_usage() {
  using namespace interp_bench_parts;
  return R"(usage: attention-lab-cli bench --model MODEL --interp [--T N] [--detect-T N] [--json]

Times the interpretability operations on a checkpoint, with seeded random
token ids (the corrupted prompt differs from the clean one at one position):
  - resid_pre: activation patching of the residual stream, every layer ×
    position at T tokens (default 20), each patched run starting at the
    patched layer from the corrupted run's cache, against the same runs each
    computed from layer 0 (from_layer_0_s, the plain way);
  - z: patching every head's output (layers × heads runs);
  - detect_heads: every head's previous-token, duplicate-token and induction
    scores on --detect-T tokens (default 256: N random, then repeated),
    against the forward pass alone at that length.
)";
}

int run_interp_bench(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  using namespace interp_bench_parts;
  Options o;
  if (std::string e = parse_options(args, o); !e.empty()) return interp_bench_error(err, e);
  if (o.help) {
    out << interp_bench_usage();
    return kExitOk;
  }
  LoadedModel loaded = load_model(o.model);
  if (!loaded.model) return interp_bench_error(err, "--model: " + loaded.error);
  const TransformerModel& m = *loaded.model;
  const ModelConfig& c = m.config;
  if (c.learned_positions() && std::max(o.T, o.detect_T) > c.max_positions)
    return interp_bench_error(err, "--T and --detect-T: expected at most " + std::to_string(c.max_positions) +
                                       " (the model's learned positions)");
  std::mt19937 rng(0x1a7e);
  std::uniform_int_distribution<int> id(0, c.vocab - 1);
  std::vector<int> clean(static_cast<std::size_t>(o.T));
  for (int& t : clean) t = id(rng);
  std::vector<int> corrupted = clean;
  corrupted[static_cast<std::size_t>(o.T / 3)] = (clean[static_cast<std::size_t>(o.T / 3)] + 1) % c.vocab;
  const PatchMetric metric{PatchMetric::LogitDiff, 1 % c.vocab, 2 % c.vocab};

  err << "bench --interp: resid_pre sweep (" << c.layers * o.T << " runs)…\n";
  auto start = Clock::now();
  const PatchSweep resid = patch_sweep(m, clean, corrupted, PatchKind::ResidPre, metric);
  const double resid_s = seconds_since(start);
  err << "bench --interp: the same runs from layer 0…\n";
  const double resid_peer_s = resid_sweep_from_layer_0(m, clean, corrupted);
  err << "bench --interp: z sweep (" << c.layers * c.heads << " runs)…\n";
  start = Clock::now();
  const PatchSweep heads = patch_sweep(m, clean, corrupted, PatchKind::HeadOut, metric);
  const double heads_s = seconds_since(start);

  const int half = o.detect_T / 2;
  const std::vector<int> repeated = repeated_random_tokens(c.vocab, half, 1);
  start = Clock::now();
  const HeadScores scores = detect_heads(m, repeated);
  const double detect_s = seconds_since(start);
  start = Clock::now();
  const ModelForward f = run_model(m, repeated, 1);
  const double forward_s = seconds_since(start);
  if (!std::isfinite(resid.metric.sum() + heads.metric.sum() + static_cast<double>(scores.of(HeadKind::Induction).sum()) +
                     static_cast<double>(f.logits.sum())))
    return interp_bench_error(err, "a result was not finite");

  nlohmann::ordered_json j;
  j["model"] = o.model;
  j["layers"] = c.layers;
  j["heads"] = c.heads;
  j["T"] = o.T;
  j["threads"] = bench::hardware_threads();
  j["resid_pre"] = {{"runs", c.layers * o.T}, {"seconds", bench::sig(resid_s)}, {"from_layer_0_s", bench::sig(resid_peer_s)},
                    {"vs_from_layer_0", bench::sig(resid_s / resid_peer_s)}};
  j["z"] = {{"runs", c.layers * c.heads}, {"seconds", bench::sig(heads_s)}};
  j["detect_heads"] = {{"T", 2 * half}, {"seconds", bench::sig(detect_s)}, {"forward_s", bench::sig(forward_s)},
                       {"vs_forward", bench::sig(detect_s / forward_s)}};
  j["load_average"] = bench::sig(bench::load_average());
  if (o.json) {
    out << j.dump() << '\n';
    return kExitOk;
  }
  out << "interpretability on " << o.model << " (" << c.layers << " layers × " << c.heads << " heads), "
      << bench::hardware_threads() << " threads\n"
      << "  resid_pre sweep, T=" << o.T << ": " << c.layers * o.T << " patched runs in " << bench::fixed(resid_s, 2)
      << " s; the same runs from layer 0: " << bench::fixed(resid_peer_s, 2) << " s (" << bench::fixed(resid_s / resid_peer_s, 2)
      << "×)\n"
      << "  z sweep, T=" << o.T << ": " << c.layers * c.heads << " patched runs in " << bench::fixed(heads_s, 2) << " s\n"
      << "  head detectors, T=" << 2 * half << ": " << bench::fixed(detect_s, 2) << " s; the forward alone "
      << bench::fixed(forward_s, 2) << " s (" << bench::fixed(detect_s / forward_s, 2) << "×)\n"
      << "  load average " << bench::fixed(bench::load_average(), 2) << '\n';
  return kExitOk;
}

}  // namespace attention_lab::cli
