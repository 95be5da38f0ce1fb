// Microbenchmarks of the core kernels, with Google Benchmark:
//   attention-lab-bench [--benchmark_filter=REGEX] [--benchmark_format=json] ...
// Threads come from OMP_NUM_THREADS (all hardware threads by default). Every
// benchmark uses wall-clock time, so the FLOP/s counters stay right when Eigen
// runs a product on several threads.
//
// The end-to-end numbers (full forward and edits compared with a GEMM, as
// medians, with a table) come from `attention-lab-cli bench`.

#include "bench.h"

#include "attention_lab/document.h"
#include "attention_lab/edit.h"
#include "attention_lab/engine.h"
#include "attention_lab/seeded_fill.h"
#include "attention_lab/softmax.h"

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>

namespace {

using namespace attention_lab;
using benchmark::Counter;

int arg(const benchmark::State& state, std::size_t i) { return static_cast<int>(state.range(i)); }

// total work / wall-clock time, shown in units of 1000 (k, M, G).
Counter rate(const benchmark::State& state, double per_iteration) {
  return Counter(static_cast<double>(state.iterations()) * per_iteration, Counter::kIsRate, Counter::kIs1000);
}

// The full forward of every stage (a fresh recompute_all, then the stages the
// window shows for head 0), causal. Args: T, d_model, heads.
void BM_FullForward(benchmark::State& state) {
  const int T = arg(state, 0), d = arg(state, 1), h = arg(state, 2);
  const Scenario s = cli::bench::random_scenario(T, d, h, MaskKind::Causal);
  Engine engine;
  engine.recompute_all(s);
  for (auto _ : state) {
    engine.recompute_all(s);
    benchmark::DoNotOptimize(cli::bench::touch_visible_stages(engine, 0));
  }
  state.counters["FLOP/s"] = rate(state, cli::bench::full_forward_flops(T, d));
  state.SetItemsProcessed(state.iterations() * T);  // tokens
}
BENCHMARK(BM_FullForward)
    ->ArgNames({"T", "d", "h"})
    ->Args({16, 64, 4})
    ->Args({128, 256, 8})
    ->Args({512, 512, 8})
    ->Args({1024, 768, 12})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The row softmax of one head's T×T masked scores (causal: −∞ above the
// diagonal). Arg: T.
void BM_SoftmaxRows(benchmark::State& state) {
  const int T = arg(state, 0);
  Matrix masked = seeded_matrix(cli::bench::kSeed, StageKind::X, T, T, 1) * 4.0f;
  masked.triangularView<Eigen::StrictlyUpper>().setConstant(-std::numeric_limits<float>::infinity());
  Matrix weights(T, T);
  for (auto _ : state) {
    for (Eigen::Index r = 0; r < masked.rows(); ++r) softmax_row(masked.row(r), weights.row(r));
    benchmark::DoNotOptimize(weights.data());
    benchmark::ClobberMemory();
  }
  const double cells = static_cast<double>(T) * T;
  state.SetItemsProcessed(state.iterations() * T);                                   // rows
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(8.0 * cells));  // read + write
}
BENCHMARK(BM_SoftmaxRows)->ArgName("T")->Arg(128)->Arg(512)->Arg(1024)->Arg(2048)->UseRealTime();

// scores_0 = Q_0·K_0ᵀ on head 0's column block of Q and K, as the engine
// stores them (all heads side by side). Args: T, d_k, heads.
void BM_ScoresProduct(benchmark::State& state) {
  const int T = arg(state, 0), dk = arg(state, 1), h = arg(state, 2);
  const Matrix Q = seeded_matrix(cli::bench::kSeed, StageKind::Q, T, h * dk, 1);
  const Matrix K = seeded_matrix(cli::bench::kSeed, StageKind::K, T, h * dk, 1);
  Matrix scores(T, T);
  for (auto _ : state) {
    scores.noalias() = Q.middleCols(0, dk) * K.middleCols(0, dk).transpose();
    benchmark::DoNotOptimize(scores.data());
    benchmark::ClobberMemory();
  }
  state.counters["FLOP/s"] = rate(state, 2.0 * T * T * dk);
}
BENCHMARK(BM_ScoresProduct)
    ->ArgNames({"T", "d_k", "h"})
    ->Args({128, 32, 8})
    ->Args({512, 64, 8})
    ->Args({1024, 64, 12})
    ->Args({2048, 64, 12})
    ->UseRealTime();

// One single-cell edit through a Document, then reading what the window shows
// for head 0. Each iteration edits a random cell of `target`. Args: T, d_model, heads.
void edit_benchmark(benchmark::State& state, StageKind target) {
  const int T = arg(state, 0), d = arg(state, 1), h = arg(state, 2);
  const Scenario s = cli::bench::random_scenario(T, d, h, MaskKind::Causal);
  std::optional<Document> doc(std::in_place, s);
  const int rows = target == StageKind::X ? T : d;
  std::mt19937_64 rng(cli::bench::kSeed);
  std::uniform_int_distribution<int> pick_row(0, rows - 1), pick_col(0, d - 1);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  const float scale = fresh_scale(target, d);
  // Every edit adds an undo entry; a fresh document before the history is
  // full keeps its trimming out of the measurement.
  constexpr int kFreshEvery = static_cast<int>(Document::kMaxUndo) - 1;
  int edits = 0;
  for (auto _ : state) {
    if (++edits == kFreshEvery) {
      state.PauseTiming();
      doc.emplace(s);
      edits = 1;
      state.ResumeTiming();
    }
    const SetCell edit{StageId{target, 0}, pick_row(rng), pick_col(rng), scale * value(rng)};
    benchmark::DoNotOptimize(doc->apply(edit));
    benchmark::DoNotOptimize(cli::bench::touch_visible_stages(*doc, 0));
  }
  state.SetItemsProcessed(state.iterations());  // edits
}
void BM_EditX(benchmark::State& state) { edit_benchmark(state, StageKind::X); }
void BM_EditWq(benchmark::State& state) { edit_benchmark(state, StageKind::W_q); }
BENCHMARK(BM_EditX)
    ->ArgNames({"T", "d", "h"})
    ->Args({128, 256, 8})
    ->Args({512, 512, 8})
    ->Args({1024, 768, 12})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_EditWq)
    ->ArgNames({"T", "d", "h"})
    ->Args({128, 256, 8})
    ->Args({512, 512, 8})
    ->Args({1024, 768, 12})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The reference: an n×n×n float32 GEMM of the same Eigen build, row-major.
void BM_Gemm(benchmark::State& state) {
  const int n = arg(state, 0);
  const Matrix a = seeded_matrix(cli::bench::kSeed, StageKind::X, n, n, n);
  const Matrix b = seeded_matrix(cli::bench::kSeed, StageKind::W_q, n, n, n);
  Matrix c(n, n);
  for (auto _ : state) {
    c.noalias() = a * b;
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  state.counters["FLOP/s"] = rate(state, 2.0 * std::pow(static_cast<double>(n), 3.0));
}
BENCHMARK(BM_Gemm)->ArgName("n")->Arg(256)->Arg(512)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
