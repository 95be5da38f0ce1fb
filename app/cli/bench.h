#pragma once
// attention-lab-cli bench: how fast the engine computes a whole forward pass,
// how fast one edit updates what the window shows, and how both compare with
// a plain float32 GEMM of the same Eigen build (this machine's practical peak).
//
// The helpers below are shared with the Google Benchmark target (bench/).

#include "attention_lab/document.h"
#include "attention_lab/scenario.h"
#include "attention_lab/stage_id.h"

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace attention_lab::cli {

// `args` excludes "bench" itself. Exit codes as for run().
int run_bench(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

namespace bench {

inline constexpr std::uint64_t kSeed = 0xbe9c4ULL;

// A random scenario of that size: X is T × d_model, d_k = d_v = d_model / heads,
// W_q, W_k, W_v and W_o are d_model × d_model (W_o on), no biases, scaling on.
// d_model must be a multiple of heads.
Scenario random_scenario(int T, int d_model, int heads, MaskKind mask, std::uint64_t seed = kSeed);

// The same layer with grouped-query heads (kv_heads K/V heads; W_k and W_v
// become d_model × kv_heads·d_k) and/or RoPE (θ 10000, HF's rotate_half).
// cross_T_k > 0: cross-attention over a second random sequence of that many rows (d_model wide).
void add_variants(Scenario& s, int kv_heads, bool rope, int cross_T_k = 0, std::uint64_t seed = kSeed);

// FLOPs of one full forward as the bench counts them: 2·T·d·(2d + 2·kv_width)
// (the Q, output, K and V projections; kv_width = kv_heads·d_k, d without
// grouping) + 4·T²·d (scores and weights·V over all heads).
// With cross-attention the K and V projections run over T_k rows and the
// scores are T × T_k (T_k < 0: T).
double full_forward_flops(int T, int d_model, int kv_width = -1, int T_k = -1);

// Every stage the window draws for the focused head: the inputs, Q, K and V
// with the head's blocks, the head's scores, scaled, masked, weights and
// context, concat and output. Calling stage() on each and reading two cells
// forces anything an engine materializes lazily. The returned value only
// keeps the compiler from dropping the reads.
// [SECTION] Helpers shared with `bench --model` (model_bench.cpp)

// Threads std::thread reports (at least 1).
int hardware_threads();
// Whether this build runs its products with OpenMP, and the SIMD Eigen uses.
bool have_openmp();
std::string simd_in_use();
// Median of a non-empty list.
double median(std::vector<double> v);
// Rounded to `digits` significant digits, so the JSON stays readable.
double sig(double v, int digits = 4);
std::string fixed(double v, int decimals);
// Enough decimals to show about four significant digits of a time in ms.
std::string format_ms(double ms);
// The 1-minute load average, and how often the kernel took a CPU away from
// this process (involuntary context switches so far).
double load_average();
long involuntary_switches();
// A whole number in [lo, hi] spelled out completely into `value`; else an
// error message naming `flag` (and `value` unchanged).
std::string parse_int(const std::string& flag, const std::string& text, int lo, int hi, int& value);

// Sets the OpenMP and Eigen thread counts for its lifetime and puts them back after.
class ThreadSetting {
 public:
  explicit ThreadSetting(int threads);
  ~ThreadSetting();
  ThreadSetting(const ThreadSetting&) = delete;
  ThreadSetting& operator=(const ThreadSetting&) = delete;

 private:
  int eigen_before_;
  int omp_before_ = 1;
};

// Runs `once` (which times itself and returns milliseconds) `warmup` times
// untimed, then at least `min_runs` times and until `min_total_ms` have
// passed, but never more than `max_runs` times.
template <class Once>
std::vector<double> repeat(Once&& once, int warmup, int min_runs, int max_runs, double min_total_ms) {
  for (int i = 0; i < warmup; ++i) once();
  std::vector<double> ms;
  double total = 0.0;
  while (static_cast<int>(ms.size()) < min_runs ||
         (total < min_total_ms && static_cast<int>(ms.size()) < max_runs)) {
    ms.push_back(once());
    total += ms.back();
  }
  return ms;
}

template <class HasStages>
float touch_visible_stages(const HasStages& source, int head) {
  float sum = 0.0f;
  auto touch = [&](StageId id) {
    const auto view = source.stage(id);
    if (view.rows() > 0 && view.cols() > 0) sum += view(0, 0) + view(view.rows() - 1, view.cols() - 1);
  };
  for (auto k : {StageKind::X, StageKind::W_q, StageKind::W_k, StageKind::W_v, StageKind::Mask, StageKind::Q,
                 StageKind::K, StageKind::V, StageKind::Concat, StageKind::W_o, StageKind::Output})
    touch(StageId{k, 0});
  for (auto k : {StageKind::HeadQ, StageKind::HeadK, StageKind::HeadV, StageKind::Scores, StageKind::Scaled,
                 StageKind::Masked, StageKind::Weights, StageKind::Context})
    touch(StageId::of_head(k, head));
  return sum;
}

}  // namespace bench

}  // namespace attention_lab::cli
