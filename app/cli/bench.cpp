#include "bench.h"
#include "interp_bench.h"

#include "model_bench.h"
#include "plain_attention.h"
#include "train_bench.h"

#include "cli.h"

#include "attention_lab/document.h"
#include "attention_lab/edit.h"
#include "attention_lab/engine.h"
#include "attention_lab/gemm.h"
#include "attention_lab/huge_pages.h"
#include "attention_lab/limits.h"
#include "attention_lab/seeded_fill.h"
#include "attention_lab/snapshot.h"
#include "attention_lab/stage_info.h"
#include "attention_lab/version.h"

#include <Eigen/Core>
#include <nlohmann/json.hpp>

#ifdef ATTENTION_LAB_HAVE_OPENMP
#include <omp.h>
#endif

#include <sys/resource.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

namespace attention_lab::cli {

// The bench of one layer (named: its `using` declarations stay in it in a unity build).
namespace layer_bench {

using bench::fixed;
using bench::format_ms;
using bench::hardware_threads;
using bench::involuntary_switches;
using bench::load_average;
using bench::median;
using bench::parse_int;
using bench::repeat;
using bench::sig;
using bench::simd_in_use;
using bench::ThreadSetting;

using Clock = std::chrono::steady_clock;

constexpr int kMaxRuns = 150;  // see kMaxEditRuns
constexpr int kMaxRounds = 20;

std::string bench_usage() {
  return R"(usage: attention-lab-cli bench [--T N] [--d D] [--heads H] [--mask causal|none]
                              [--threads K] [--runs N] [--rounds R] [--gemm-size N] [--json]

Times, on a random scenario of that size (float32, d_k = d_v = D/H, W_o on):
  - the full forward of every stage (Engine::recompute_all),
  - the same forward written plainly (dense projections, per-head dense Q·Kᵀ,
    softmax, A·V, W_o; no blocks skipped): the reference it is compared with,
  - the update after a single-cell edit of X, W_q, W_v and W_o and after toggling
    one mask cell, each applied through a Document and followed by reading every
    stage the window shows for head 0,
  - the full forward again on every other matrix-product backend this process
    has (the packed kernel when the CPU runs it, OpenBLAS when installed, Eigen's
    own; ATTENTION_LAB_GEMM=packed|openblas|eigen picks the one in use),
  - an NxNxN float32 GEMM on each backend: this machine's practical peak is the
    fastest of them.
Each figure is the median of at least --runs runs after warm-up (small sizes get
more runs), taken in --rounds rounds of every measurement in turn, so that a
slow minute of a shared machine slows every figure a little instead of one a lot
(the ratios compare figures measured side by side); the full forward counts 2*T*D*(2D + 2*KVW) + 4*T^2*D FLOPs (KVW = kv_heads*d_k, D without --kv-heads). Progress goes to stderr.

  --T N          tokens (default 1024)
  --d D          d_model (default 768)
  --heads H      heads; D must be a multiple of H (default 12)
  --mask KIND    causal or none (default causal)
  --kv-heads K   grouped-query heads: K K/V heads shared by the H query heads
                 (K divides H; default H, plain multi-head attention)
  --rope         rotate Q and K by position (RoPE, θ 10000; d_k must be even)
  --cross N      cross-attention: keys and values from another sequence of N rows
                 (with N != T the mask must be none)
  --threads K    OpenMP and Eigen threads (default: all )" +
         std::to_string(hardware_threads()) + R"( of this machine)
  --runs N       at least N timed runs per figure, 1 to )" +
         std::to_string(kMaxRuns) + R"( (default 10)
  --rounds R     split the runs over R rounds of every measurement, 1 to )" +
         std::to_string(kMaxRounds) + R"( (default 3)
  --gemm-size N  size of the reference GEMM (default 1024)
  --json         print one JSON object instead of the table
)";
}

struct Options {
  int T = 1024;
  int d = 768;
  int heads = 12;
  int kv_heads = 0;  // 0: as many as heads
  bool rope = false;
  int cross = 0;  // rows of X_kv; 0: self-attention
  MaskKind mask = MaskKind::Causal;
  int threads = 1;
  bool threads_given = false;
  int runs = 10;
  int rounds = 3;
  int gemm = 1024;
  bool json = false;
  bool help = false;
};

int bench_error(std::ostream& err, const std::string& msg) {
  err << "attention-lab-cli: bench: " << msg << " (see bench --help)\n";
  return kExitBadInput;
}

std::string parse_options(const std::vector<std::string>& args, Options& o) {
  constexpr int kAny = 1'000'000;  // far above the limits, small enough for the memory estimate
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    std::optional<std::string> value;
    if (const auto eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    }
    if (flag == "--json" || flag == "--help" || flag == "-h" || flag == "--rope") {
      if (value) return flag + ": takes no value, found '" + *value + "'";
      (flag == "--json" ? o.json : flag == "--rope" ? o.rope : o.help) = true;
      continue;
    }
    const bool takes_value = flag == "--T" || flag == "--d" || flag == "--heads" || flag == "--kv-heads" || flag == "--cross" || flag == "--mask" ||
                             flag == "--threads" || flag == "--runs" || flag == "--rounds" || flag == "--gemm-size";
    if (!takes_value) {
      if (flag.size() > 1 && flag[0] == '-') return "unknown option '" + args[i] + "'";
      return "expected only options, found '" + args[i] + "'";
    }
    if (!value) {
      if (i + 1 >= args.size()) return flag + ": expected a value after it";
      value = args[++i];
    }
    std::string e;
    if (flag == "--T") e = parse_int(flag, *value, 1, kAny, o.T);
    else if (flag == "--d") e = parse_int(flag, *value, 1, kAny, o.d);
    else if (flag == "--heads") e = parse_int(flag, *value, 1, kAny, o.heads);
    else if (flag == "--kv-heads") e = parse_int(flag, *value, 1, kAny, o.kv_heads);
    else if (flag == "--cross") e = parse_int(flag, *value, 1, kAny, o.cross);
    else if (flag == "--threads") {
      e = parse_int(flag, *value, 1, 1024, o.threads);
      o.threads_given = true;
    } else if (flag == "--runs") e = parse_int(flag, *value, 1, kMaxRuns, o.runs);
    else if (flag == "--rounds") e = parse_int(flag, *value, 1, kMaxRounds, o.rounds);
    else if (flag == "--gemm-size") e = parse_int(flag, *value, 1, 8192, o.gemm);
    else if (flag == "--mask") {
      if (*value == "causal") o.mask = MaskKind::Causal;
      else if (*value == "none") o.mask = MaskKind::None;
      else e = "--mask: expected causal or none, found '" + *value + "'";
    }
    if (!e.empty()) return e;
  }
  return {};
}

Dims dims_of(const Options& o) {
  Dims d;
  d.T = o.T;
  d.d_model = o.d;
  d.heads = o.heads;
  d.kv_heads = o.kv_heads > 0 ? o.kv_heads : o.heads;
  d.d_k = d.d_v = o.heads > 0 ? o.d / o.heads : 0;
  d.d_out = o.d;
  return d;
}

// Columns of K (and V): kv_heads·d_k, or d_model without grouping.
int kv_width(const Options& o) { return o.kv_heads > 0 ? o.kv_heads * (o.d / o.heads) : o.d; }

double estimated_bytes_of(const Options& o) { return static_cast<double>(limits::estimated_bytes(dims_of(o))); }

// The sizes the core accepts (limits.h); the message says what the size needs.
std::string check_limits(const Options& o) {
  using namespace limits;
  const std::string needs = "T=" + std::to_string(o.T) + ", d_model=" + std::to_string(o.d) + ", " +
                            std::to_string(o.heads) + " heads would need about " +
                            limits::format_bytes(limits::estimated_bytes(dims_of(o)));
  auto above = [&](const std::string& what, int value, const std::string& limit_name, int limit) {
    return what + " " + std::to_string(value) + " is above the size limit (" + limit_name + " <= " +
           std::to_string(limit) + "); " + needs;
  };
  if (o.T > kMaxTokens) return above("--T", o.T, "T", kMaxTokens);
  if (o.d > kMaxModelDim) return above("--d", o.d, "d_model", kMaxModelDim);
  if (o.d > kMaxProjectionWidth) return above("--d", o.d, "heads*d_k", kMaxProjectionWidth);
  if (o.heads > kMaxHeads) return above("--heads", o.heads, "heads", kMaxHeads);
  if (o.d % o.heads != 0)
    return "--d " + std::to_string(o.d) + " is not a multiple of --heads " + std::to_string(o.heads) +
           " (d_k = d_v = d_model / heads)";
  if (o.d / o.heads > kMaxHeadDim) return above("--d/--heads", o.d / o.heads, "d_k", kMaxHeadDim);
  if (o.kv_heads > 0 && o.heads % o.kv_heads != 0)
    return "--kv-heads " + std::to_string(o.kv_heads) + " does not divide --heads " + std::to_string(o.heads) +
           " (each K/V head is shared by heads / kv_heads query heads)";
  if (o.cross > kMaxTokens) return above("--cross", o.cross, "T_k", kMaxTokens);
  if (o.cross > 0 && o.cross != o.T && o.mask == MaskKind::Causal)
    return "--cross " + std::to_string(o.cross) + " with --T " + std::to_string(o.T) +
           ": a causal mask needs as many keys as queries; add --mask none";
  if (o.rope && (o.d / o.heads) % 2 != 0)
    return "--rope needs an even d_k (RoPE turns pairs of dimensions); d_k = d_model / heads = " +
           std::to_string(o.d / o.heads);
  return {};
}

constexpr bool kHaveOpenMP =
#ifdef ATTENTION_LAB_HAVE_OPENMP
    true;
#else
    false;
#endif

// Keeps the compiler from dropping reads whose result nobody uses.
volatile float g_sink = 0.0f;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double peak_rss_mib() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0.0;
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux reports KiB
}

// The engine's own account of the bytes it keeps, when it offers one.
template <class E>
std::optional<double> bytes_kept_of(const E& engine) {
  if constexpr (requires { engine.bytes_kept(); })
    return static_cast<double>(engine.bytes_kept());
  else
    return std::nullopt;
}

std::string bytes_text(double bytes) { return limits::format_bytes(static_cast<std::uint64_t>(bytes)); }

struct EditKind {
  const char* key;    // JSON key
  const char* label;  // table row
  StageKind target;
};

constexpr EditKind kEditKinds[] = {
    {"X", "edit a cell of X", StageKind::X},
    {"W_q", "edit a cell of W_q", StageKind::W_q},
    {"W_v", "edit a cell of W_v", StageKind::W_v},
    {"W_o", "edit a cell of W_o", StageKind::W_o},
    {"mask", "toggle a mask cell", StageKind::Mask},
};

struct Results {
  double first_full_ms = 0.0;  // the first recompute_all of a fresh engine (allocates)
  std::vector<double> full;  // on the GEMM backend in use
  std::map<GemmBackend, std::vector<double>> full_on;  // the full forward on each other backend this process has
  std::map<GemmBackend, std::vector<double>> gemm_on;  // the reference GEMM on every backend it has
  std::vector<double> plain;  // the plain dense reference (plain_attention.h)
  // The GEMM's best rate: the practical peak the full forward is compared with.
  double gemm_ms() const {
    double best = std::numeric_limits<double>::infinity();
    for (const auto& [backend, runs] : gemm_on) best = std::min(best, bench::median(runs));
    return best;
  }
  std::vector<std::vector<double>> edits;  // in kEditKinds order
  std::optional<double> bytes_kept;
  // Compare: the bytes its snapshot keeps once every stage was compared, and
  // the milliseconds taking it took.
  double snapshot_bytes = 0.0, snapshot_ms = 0.0;
  // A resize: what the undo history keeps once it is done that it did not
  // before (the matrices the new scenario does not share), per dimension
  // changed, and the engine's bytes then.
  struct Resize {
    std::string what;  // "T 1024 → 1023"
    double history_bytes = 0.0, bytes_kept = 0.0;
  };
  std::vector<Resize> resizes;
  double peak_rss_mib = 0.0;
  double huge_page_bytes = 0.0;  // the process's memory in 2 MiB pages, after the edits
  double load_average = 0.0;     // 1-minute, before the run
  double preempted_per_s = 0.0;  // involuntary context switches per second of the run
  bool busy() const { return preempted_per_s > kBusyPreemptionsPerSecond; }
  static constexpr double kBusyPreemptionsPerSecond = 100.0;  // an idle 2-vCPU VM shows ~50
};

class Progress {
 public:
  Progress(std::ostream& err, int phases) : err_(err), phases_(phases) {}
  void begin(const std::string& what) {
    err_ << "bench: [" << ++phase_ << "/" << phases_ << "] " << what << " ..." << std::flush;
  }
  void end(const std::vector<double>& ms) {
    if (ms.empty())
      err_ << " nothing to measure at this size" << std::endl;
    else
      err_ << " " << format_ms(median(ms)) << " ms (median of " << ms.size() << ")" << std::endl;
  }

 private:
  std::ostream& err_;
  int phases_;
  int phase_ = 0;
};

constexpr double kMinTotalMs = 200.0;  // small sizes get more runs, for steadier medians
constexpr int kMaxFullRuns = 1000;
// Each edit adds an undo entry; staying well below Document::kMaxUndo keeps
// the history from trimming itself in the middle of a measurement.
constexpr int kMaxEditRuns = kMaxRuns;
constexpr int kEditWarmup = 2;
static_assert(std::size(kEditKinds) * (kMaxEditRuns + kEditWarmup) < Document::kMaxUndo);

constexpr GemmBackend kEveryBackend[] = {GemmBackend::Packed, GemmBackend::OpenBlas, GemmBackend::Eigen};

// Runs of another round added to a figure's.
void append(std::vector<double>& to, const std::vector<double>& runs) { to.insert(to.end(), runs.begin(), runs.end()); }

void measure_full_forward(const Options& o, const Scenario& s, Progress& progress, Results& r) {
  progress.begin(std::string("full forward, every stage (") + to_string(gemm_backend()) + " products)");
  Engine engine;
  auto t0 = Clock::now();
  engine.recompute_all(s);
  g_sink = bench::touch_visible_stages(engine, 0);
  if (r.first_full_ms == 0.0) r.first_full_ms = ms_since(t0);
  const auto timed = [&] {
    return repeat(
        [&] {
          const auto start = Clock::now();
          engine.recompute_all(s);
          g_sink = bench::touch_visible_stages(engine, 0);
          return ms_since(start);
        },
        1, o.runs, kMaxFullRuns, kMinTotalMs);
  };
  const std::vector<double> full = timed();
  append(r.full, full);
  progress.end(full);
  // The same on every other matrix-product backend this process has, in this run.
  const GemmBackend used = gemm_backend();
  for (const GemmBackend other : available_gemm_backends()) {
    if (other == used) continue;
    progress.begin(std::string("full forward on ") + to_string(other) + "'s products");
    set_gemm_backend(other);
    const std::vector<double> runs = timed();
    set_gemm_backend(used);
    append(r.full_on[other], runs);
    progress.end(runs);
  }
}

// The same forward the plain way, for the "x plain" column: what the engine's
// block skipping and layout are worth against the obvious implementation.
void measure_plain_forward(const Options& o, const Scenario& s, Progress& progress, Results& r) {
  progress.begin("plain dense forward (reference)");
  g_sink = plain_attention_forward(s)(0, 0);  // warm-up
  const std::vector<double> plain = repeat(
      [&] {
        const auto start = Clock::now();
        const Matrix out = plain_attention_forward(s);
        g_sink = out(0, 0) + out(out.rows() - 1, out.cols() - 1);
        return ms_since(start);
      },
      1, o.runs, kMaxFullRuns, kMinTotalMs);
  append(r.plain, plain);
  progress.end(plain);
}

// Compare's cost: take a snapshot, edit X, diff every stage of every head
// against it (each head's scores come back in the snapshot for its turn).
void measure_compare(Document& doc, Progress& progress, Results& r) {
  progress.begin("Compare: snapshot, an edit of X, every stage diffed");
  const auto start = Clock::now();
  const Snapshot snap = take_snapshot(doc);
  r.snapshot_ms = ms_since(start);
  const float x = doc.stage(StageId::input(StageKind::X))(0, 0);
  if (const std::string error = doc.apply(SetCell{StageId::input(StageKind::X), 0, 0, x + 0.25f}); !error.empty())
    throw std::runtime_error("the edit of X[0][0] failed: " + error);
  const auto diffs = Clock::now();
  for (const StageId id : pipeline(doc.scenario())) g_sink = g_sink + (diff(snap, doc, id).changed ? 1.0f : 0.0f);
  r.snapshot_bytes = static_cast<double>(snap.bytes());
  progress.end({ms_since(diffs)});
}

// A resize's memory: T one smaller, d_model one per head smaller, one head
// (or one group of grouped-query heads) fewer, each measured once it is
// done, then undone. Each recomputes the
// whole engine, so only the last round does this.
void measure_resizes(Document& doc, Progress& progress, Results& r) {
  progress.begin("resizes: T, d_model, heads one step smaller, each undone");
  const Dims d = doc.scenario().dims();
  // (grouped-query heads stay a multiple of the K/V heads)
  const int fewer_heads = d.kv_heads == d.heads ? d.heads - 1 : d.heads - d.kv_heads;
  const std::pair<Dimension, int> steps[] = {
      {Dimension::T, d.T - 1}, {Dimension::d_model, d.d_model - d.heads}, {Dimension::heads, fewer_heads}};
  std::vector<double> ms;
  for (const auto& [which, value] : steps) {
    if (value < 1) continue;
    const double held_before = static_cast<double>(doc.history_bytes());  // (the edits before: no matrices)
    const auto start = Clock::now();
    if (const std::string error = doc.apply(SetDimension{which, value}); !error.empty())
      throw std::runtime_error(describe(Edit{SetDimension{which, value}}) + " failed: " + error);
    ms.push_back(ms_since(start));
    r.resizes.push_back({describe(Edit{SetDimension{which, value}}), static_cast<double>(doc.history_bytes()) - held_before,
                         static_cast<double>(doc.engine().bytes_kept())});
    if (!doc.undo()) throw std::runtime_error("the resize could not be undone");
  }
  progress.end(ms);
}

// Each edit kind's runs go to r.edits[kind] (in kEditKinds order); Compare
// is measured after the edits when `compare` says so.
void measure_edits(const Options& o, Scenario s, Progress& progress, Results& r, bool compare) {
  r.edits.resize(std::size(kEditKinds));
  Document doc(std::move(s));
  std::mt19937_64 rng(bench::kSeed);
  for (std::size_t k = 0; k < std::size(kEditKinds); ++k) {
    const EditKind& kind = kEditKinds[k];
    progress.begin(std::string(kind.label) + ", then show head 0");
    const auto shape = doc.stage(StageId{kind.target, 0});
    const int rows = static_cast<int>(shape.rows());
    const int cols = static_cast<int>(shape.cols());
    std::set<std::pair<int, int>> used;
    std::uniform_int_distribution<int> pick_row(0, rows - 1), pick_col(0, cols - 1);
    std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
    const float scale = fresh_scale(kind.target, o.d);
    auto once = [&] {
      // A cell not edited before (while there are any), so nothing is cached.
      int row = 0, col = 0;
      for (int attempt = 0; attempt < 64; ++attempt) {
        row = pick_row(rng);
        col = pick_col(rng);
        if (used.insert({row, col}).second) break;
      }
      const float current = doc.stage(StageId{kind.target, 0})(row, col);
      float value = 0.0f;
      if (kind.target == StageKind::Mask) {
        value = current != 0.0f ? 0.0f : 1.0f;
      } else {
        value = scale * unit(rng);
        if (value == current) value = current + 0.5f * scale;
      }
      const SetCell edit{StageId{kind.target, 0}, row, col, value};
      const auto start = Clock::now();
      const std::string error = doc.apply(edit);
      g_sink = bench::touch_visible_stages(doc, 0);
      const double ms = ms_since(start);
      if (!error.empty()) throw std::runtime_error(describe(Edit{edit}) + " failed: " + error);
      return ms;
    };
    const std::vector<double> runs = repeat(once, kEditWarmup, o.runs, kMaxEditRuns, kMinTotalMs);
    append(r.edits[k], runs);
    progress.end(runs);
  }
  r.bytes_kept = bytes_kept_of(doc.engine());
  r.huge_page_bytes = huge_page_bytes();
  if (compare) {
    measure_compare(doc, progress, r);
    measure_resizes(doc, progress, r);
  }
}

void measure_gemm(const Options& o, Progress& progress, Results& r) {
  const int n = o.gemm;
  progress.begin("GEMM " + std::to_string(n) + "x" + std::to_string(n) + "x" + std::to_string(n) +
                 ", float32, row-major");
  const Matrix a = seeded_matrix(bench::kSeed, StageKind::X, n, n, n);
  const Matrix b = seeded_matrix(bench::kSeed, StageKind::W_q, n, n, n);
  Matrix c(n, n);
  // Eigen's own product as Eigen code calls it; the others through gemm().
  const GemmBackend used = gemm_backend();
  for (const GemmBackend backend : available_gemm_backends()) {
    if (backend != GemmBackend::Eigen) progress.begin(std::string("the same GEMM on ") + to_string(backend));
    set_gemm_backend(backend);
    const std::vector<double> runs = repeat(
        [&] {
          const auto start = Clock::now();
          if (backend == GemmBackend::Eigen) c.noalias() = a * b;
          else gemm(n, n, n, a.data(), n, b.data(), n, false, c.data(), n);
          const double ms = ms_since(start);
          g_sink = c(0, 0);
          return ms;
        },
        2, o.runs, kMaxFullRuns, kMinTotalMs);
    set_gemm_backend(used);
    append(r.gemm_on[backend], runs);
    progress.end(runs);
  }
}

std::string busy_warning(const Results& r) {
  return "warning: other work shared the CPUs (this process was preempted " + fixed(r.preempted_per_s, 0) +
         " times a second; the load average was " + fixed(r.load_average, 1) + "), so the times are too high";
}

double gflops(double flops, double ms) { return ms > 0.0 ? flops / (ms * 1e6) : 0.0; }

void print_json(std::ostream& out, const Options& o, int threads, const Results& r) {
  const double full_ms = median(r.full);
  const double gemm_ms = r.gemm_ms();
  const double gemm_flops = 2.0 * std::pow(static_cast<double>(o.gemm), 3.0);
  nlohmann::ordered_json j;
  j["T"] = o.T;
  j["d_model"] = o.d;
  j["heads"] = o.heads;
  j["kv_heads"] = o.kv_heads > 0 ? o.kv_heads : o.heads;
  j["rope"] = o.rope;
  j["cross_T_k"] = o.cross;
  j["mask"] = to_string(o.mask);
  j["threads"] = threads;
  j["rounds"] = o.rounds;
  j["full_ms"] = sig(full_ms);
  j["full_gflops"] = sig(gflops(bench::full_forward_flops(o.T, o.d, kv_width(o), o.cross > 0 ? o.cross : -1), full_ms));
  j["gemm_gflops"] = sig(gflops(gemm_flops, gemm_ms));
  j["plain_ms"] = sig(median(r.plain));
  j["plain_over_full"] = sig(median(r.plain) / full_ms);  // > 1: the engine is faster
  // The matrix-product backends side by side (docs/performance.md, "Matrix products").
  j["gemm_backend"] = to_string(gemm_backend());
  nlohmann::ordered_json full_by, gemm_by;
  for (const GemmBackend backend : kEveryBackend) {  // null: not in this process
    const auto full_it = r.full_on.find(backend);
    full_by[to_string(backend)] = backend == gemm_backend() ? nlohmann::ordered_json(sig(full_ms))
                                  : full_it == r.full_on.end() ? nlohmann::ordered_json()
                                                                : nlohmann::ordered_json(sig(median(full_it->second)));
    const auto gemm_it = r.gemm_on.find(backend);
    gemm_by[to_string(backend)] = gemm_it == r.gemm_on.end() ? nlohmann::ordered_json()
                                                              : nlohmann::ordered_json(sig(gflops(gemm_flops, median(gemm_it->second))));
  }
  j["packed_isa"] = packed_isa_name();
  j["full_ms_by_backend"] = full_by;
  j["gemm_gflops_by_backend"] = gemm_by;
  nlohmann::ordered_json edit_ms, edit_ratio;
  nlohmann::ordered_json runs;
  runs["full"] = r.full.size();
  runs["plain"] = r.plain.size();
  for (std::size_t i = 0; i < std::size(kEditKinds); ++i) {
    const double ms = median(r.edits[i]);
    edit_ms[kEditKinds[i].key] = sig(ms);
    edit_ratio[kEditKinds[i].key] = sig(ms / full_ms);
    runs[kEditKinds[i].key] = r.edits[i].size();
  }
  for (const auto& [backend, samples] : r.full_on) runs[std::string("full_") + to_string(backend)] = samples.size();
  for (const auto& [backend, samples] : r.gemm_on) runs[std::string("gemm_") + to_string(backend)] = samples.size();
  j["edit_ms"] = edit_ms;
  j["edit_ratio"] = edit_ratio;
  j["d_k"] = o.d / o.heads;
  j["d_v"] = o.d / o.heads;
  j["full_gflop"] = sig(bench::full_forward_flops(o.T, o.d, kv_width(o), o.cross > 0 ? o.cross : -1) / 1e9);
  j["full_vs_gemm"] = sig(gflops(bench::full_forward_flops(o.T, o.d, kv_width(o), o.cross > 0 ? o.cross : -1), full_ms) / gflops(gemm_flops, gemm_ms));
  j["first_full_ms"] = sig(r.first_full_ms);
  j["gemm_size"] = o.gemm;
  j["gemm_ms"] = sig(gemm_ms);
  j["runs"] = runs;
  j["estimated_mb"] = sig(estimated_bytes_of(o) / (1024.0 * 1024.0));
  if (r.bytes_kept) j["bytes_kept"] = *r.bytes_kept;
  j["snapshot_bytes"] = r.snapshot_bytes;
  j["snapshot_ms"] = sig(r.snapshot_ms);
  for (const Results::Resize& z : r.resizes)
    j["resizes"].push_back({{"what", z.what}, {"history_bytes", z.history_bytes}, {"bytes_kept", z.bytes_kept}});
  j["peak_rss_mb"] = sig(r.peak_rss_mib);
  j["huge_pages_requested"] = huge_pages_requested();
  j["huge_page_mb"] = sig(r.huge_page_bytes / (1024.0 * 1024.0));
  j["load_average"] = sig(r.load_average, 3);
  j["preempted_per_s"] = sig(r.preempted_per_s, 3);
  j["openmp"] = kHaveOpenMP;
  j["simd"] = simd_in_use();
  j["version"] = version();
  out << j.dump(2) << '\n';
}

void print_table(std::ostream& out, const Options& o, int threads, const Results& r) {
  const double full_ms = median(r.full);
  const double gemm_ms = r.gemm_ms();
  const double full_flops = bench::full_forward_flops(o.T, o.d, kv_width(o), o.cross > 0 ? o.cross : -1);
  const double gemm_flops = 2.0 * std::pow(static_cast<double>(o.gemm), 3.0);
  const int dk = o.d / o.heads;
  out << "attention-lab bench: T=" << o.T << ", d_model=" << o.d << ", heads=" << o.heads
      << (o.kv_heads > 0 && o.kv_heads != o.heads ? " over " + std::to_string(o.kv_heads) + " K/V heads" : "")
      << (o.cross > 0 ? ", cross-attention over T_k=" + std::to_string(o.cross) : "")
      << " (d_k = d_v = " << dk << "), " << to_string(o.mask) << " mask" << (o.rope ? ", RoPE" : "")
      << ", W_o on, float32\n"
      << "Eigen " << EIGEN_WORLD_VERSION << '.' << EIGEN_MAJOR_VERSION << '.' << EIGEN_MINOR_VERSION << " ("
      << simd_in_use() << "), " << (kHaveOpenMP ? "OpenMP" : "no OpenMP") << ", " << threads
      << (threads == 1 ? " thread" : " threads") << "; medians after warm-up, runs taken in " << o.rounds
      << (o.rounds == 1 ? " round" : " rounds") << "\n\n";

  constexpr int kWhat = 36;
  auto row = [&](const std::string& what, std::size_t runs, double ms, const std::string& rate,
                 const std::string& ratio) {
    out << "  " << std::left << std::setw(kWhat) << what << std::right << std::setw(6) << runs << std::setw(13)
        << format_ms(ms) << std::setw(10) << rate << "   " << ratio << '\n';
  };
  out << "  " << std::left << std::setw(kWhat) << "what" << std::right << std::setw(6) << "runs" << std::setw(13)
      << "median ms" << std::setw(10) << "GFLOP/s" << "   " << "x full forward" << '\n';
  row(std::string("full forward, every stage (") + to_string(gemm_backend()) + ")", r.full.size(), full_ms,
      fixed(gflops(full_flops, full_ms), 2), "1");
  for (const auto& [backend, samples] : r.full_on) {
    const double other = median(samples);
    row(std::string("  the same on ") + to_string(backend) + "'s products", samples.size(), other,
        fixed(gflops(full_flops, other), 2), fixed(other / full_ms, 2));
  }
  const double plain_ms = median(r.plain);
  row("plain dense forward (reference)", r.plain.size(), plain_ms, fixed(gflops(full_flops, plain_ms), 2),
      fixed(plain_ms / full_ms, 2) + "  (the engine is " + fixed(plain_ms / full_ms, 2) + "x as fast)");
  for (std::size_t i = 0; i < std::size(kEditKinds); ++i) {
    const double ms = median(r.edits[i]);
    const double ratio = ms / full_ms;
    row(std::string(kEditKinds[i].label) + ", then show", r.edits[i].size(), ms, "",
        fixed(ratio, ratio >= 0.01 ? 3 : 5) + "  (1/" + fixed(1.0 / ratio, 1) + ")");
  }
  for (const auto& [backend, samples] : r.gemm_on)
    row("GEMM " + std::to_string(o.gemm) + "^3, " + to_string(backend), samples.size(), median(samples),
        fixed(gflops(gemm_flops, median(samples)), 2), "");

  out << "\nfull forward: " << fixed(full_flops / 1e9, 3) << " GFLOP (2*T*d*(2d + 2*kv_width) + 4*T^2*d), "
      << fixed(100.0 * gflops(full_flops, full_ms) / gflops(gemm_flops, gemm_ms), 1)
      << " % of the faster GEMM's GFLOP/s; first run on a fresh engine " << format_ms(r.first_full_ms) << " ms\n";
  out << "memory: peak RSS " << bytes_text(r.peak_rss_mib * 1024.0 * 1024.0);
  if (r.bytes_kept) out << ", the engine keeps " << bytes_text(*r.bytes_kept);
  out << ", the core estimates " << bytes_text(estimated_bytes_of(o)) << " for this size; in 2 MiB pages "
      << bytes_text(r.huge_page_bytes)
      << (huge_pages_requested() ? " (glibc.malloc.hugetlb=1)" : " (glibc.malloc.hugetlb not set; see docs/performance.md, 2 MiB pages)") << '\n';
  out << "Compare: the snapshot keeps " << bytes_text(r.snapshot_bytes);
  if (r.bytes_kept && *r.bytes_kept > 0) out << " (" << fixed(100.0 * r.snapshot_bytes / *r.bytes_kept, 1) << " % of the engine's)";
  out << " after an edit of X and a diff of every stage; taken in " << format_ms(r.snapshot_ms) << " ms\n";
  if (!r.resizes.empty()) {
    out << "a resize: the undo history then keeps";
    for (std::size_t i = 0; i < r.resizes.size(); ++i) {
      const Results::Resize& z = r.resizes[i];
      out << (i ? "; " : " ") << bytes_text(z.history_bytes) << " after " << z.what;
      if (z.bytes_kept > 0) out << " (" << fixed(100.0 * z.history_bytes / z.bytes_kept, 1) << " % of the engine's)";
    }
    out << '\n';
  }
  if (r.busy()) out << busy_warning(r) << '\n';
}

}  // namespace layer_bench

int run_bench(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  using namespace layer_bench;
  if (wants_train_bench(args)) return run_train_bench(args, out, err);
  if (wants_interp_bench(args)) return run_interp_bench(args, out, err);
  if (wants_model_bench(args)) return run_model_bench(args, out, err);
  Options o;
  o.threads = hardware_threads();
  if (auto e = parse_options(args, o); !e.empty()) return bench_error(err, e);
  if (o.help) {
    out << bench_usage() << '\n' << model_bench_usage();
    return kExitOk;
  }
  if (auto e = check_limits(o); !e.empty()) return bench_error(err, e);

  Scenario s = bench::random_scenario(o.T, o.d, o.heads, o.mask);
  bench::add_variants(s, o.kv_heads, o.rope, o.cross);
  if (auto e = validate(s); !e.empty()) return bench_error(err, e);

  const int threads = kHaveOpenMP ? o.threads : 1;
  if (!kHaveOpenMP && o.threads_given && o.threads > 1)
    err << "bench: built without OpenMP, so everything runs on 1 thread\n";
  ThreadSetting thread_setting(threads);

  err << "bench: T=" << o.T << ", d_model=" << o.d << ", heads=" << o.heads << ", " << to_string(o.mask) << " mask, "
      << threads << (threads == 1 ? " thread" : " threads") << "; the core estimates "
      << bytes_text(estimated_bytes_of(o)) << " for this size" << std::endl;
  // Per round: full, plain, the edits, GEMM (and Compare and the resizes once, in the last).
  const int backends = static_cast<int>(available_gemm_backends().size());
  Progress progress(err, o.rounds * (2 * backends + 1 + static_cast<int>(std::size(kEditKinds))) + 2);
  Results r;
  r.load_average = load_average();
  const long switches_before = involuntary_switches();
  const auto started = Clock::now();
  try {
    Options round = o;
    round.runs = (o.runs + o.rounds - 1) / o.rounds;
    for (int i = 0; i < o.rounds; ++i) {
      if (o.rounds > 1) err << "bench: round " << i + 1 << " of " << o.rounds << std::endl;
      measure_full_forward(round, s, progress, r);  // its engine is gone before the document's exists
      measure_plain_forward(round, s, progress, r);
      measure_edits(round, s, progress, r, i + 1 == o.rounds);
      measure_gemm(round, progress, r);
    }
  } catch (const std::exception& e) {
    err << "\nattention-lab-cli: bench: " << e.what() << '\n';
    return kExitFailure;
  }
  r.peak_rss_mib = peak_rss_mib();
  r.preempted_per_s =
      static_cast<double>(involuntary_switches() - switches_before) / std::max(ms_since(started) / 1000.0, 1e-3);
  if (r.busy()) err << "bench: " << busy_warning(r) << '\n';

  if (o.json)
    print_json(out, o, threads, r);
  else
    print_table(out, o, threads, r);
  return kExitOk;
}

}  // namespace attention_lab::cli
