// What every bench shares (bench.h): the scenario it times, parsing its
// options, timing, the machine's load and threads, number formatting.
#include "bench.h"

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

namespace bench {

Scenario random_scenario(int T, int d_model, int heads, MaskKind mask, std::uint64_t seed) {
  Scenario s;
  s.title = "bench: T=" + std::to_string(T) + ", d_model=" + std::to_string(d_model) + ", " +
            std::to_string(heads) + " heads";
  s.X = seeded_matrix(seed, StageKind::X, T, d_model, d_model);
  s.W_q = seeded_matrix(seed, StageKind::W_q, d_model, d_model, d_model);
  s.W_k = seeded_matrix(seed, StageKind::W_k, d_model, d_model, d_model);
  s.W_v = seeded_matrix(seed, StageKind::W_v, d_model, d_model, d_model);
  s.W_o = seeded_matrix(seed, StageKind::W_o, d_model, d_model, d_model);
  s.use_w_o = true;
  s.heads = heads;
  s.mask_kind = mask;
  s.scale = true;
  s.seed = seed;
  return s;
}

void add_variants(Scenario& s, int kv_heads, bool rope, int cross_T_k, std::uint64_t seed) {
  const Dims d = s.dims();
  if (cross_T_k > 0) s.X_kv = seeded_matrix(seed + 1, StageKind::X_kv, cross_T_k, d.d_model, d.d_model);
  if (kv_heads > 0 && kv_heads != d.heads) {
    s.kv_heads = kv_heads;
    s.W_k = seeded_matrix(seed, StageKind::W_k, d.d_model, kv_heads * d.d_k, d.d_model);
    s.W_v = seeded_matrix(seed, StageKind::W_v, d.d_model, kv_heads * d.d_v, d.d_model);
  }
  s.rope.on = rope;
}

double full_forward_flops(int T, int d_model, int kv_width, int T_k) {
  const double t = T, tk = T_k < 0 ? T : T_k;
  const double d = d_model;
  const double kv = kv_width < 0 ? d : kv_width;
  return 2.0 * t * d * 2.0 * d + 2.0 * tk * d * 2.0 * kv + 4.0 * t * tk * d;
}


int hardware_threads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(std::min(n, 1024u));
}

bool have_openmp() {
#ifdef ATTENTION_LAB_HAVE_OPENMP
  return true;
#else
  return false;
#endif
}

std::string simd_in_use() {
#if defined(EIGEN_VECTORIZE_AVX512)
  return "AVX-512";
#elif defined(EIGEN_VECTORIZE_AVX2) && defined(EIGEN_VECTORIZE_FMA)
  return "AVX2+FMA";
#elif defined(EIGEN_VECTORIZE_AVX)
  return "AVX";
#elif defined(EIGEN_VECTORIZE_SSE4_2)
  return "SSE4.2";
#elif defined(EIGEN_VECTORIZE_SSE2)
  return "SSE2";
#elif defined(EIGEN_VECTORIZE)
  return "vectorized";
#else
  return "none";
#endif
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double sig(double v, int digits) {
  if (v == 0.0 || !std::isfinite(v)) return v;
  // Through text, so the result is the double nearest the rounded decimal
  // and the JSON prints it short (0.005473, not 0.0054729999999999996).
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", std::clamp(digits, 1, 17), v);
  return std::strtod(buf, nullptr);
}

std::string fixed(double v, int decimals) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(decimals) << v;
  return s.str();
}

std::string format_ms(double ms) {
  return fixed(ms, ms >= 1000.0 ? 1 : ms >= 100.0 ? 2 : ms >= 1.0 ? 3 : ms >= 0.01 ? 4 : 5);
}

double load_average() {
  double avg[1] = {0.0};
  return getloadavg(avg, 1) == 1 ? avg[0] : 0.0;
}

// An idle machine rarely preempts; a busy one does it hundreds of times a
// second, and every OpenMP barrier then waits for a time slice.
long involuntary_switches() {
  rusage usage{};
  return getrusage(RUSAGE_SELF, &usage) == 0 ? usage.ru_nivcsw : 0;
}

std::string parse_int(const std::string& flag, const std::string& text, int lo, int hi, int& value) {
  int v = 0;
  const char* first = text.data();
  const char* last = first + text.size();
  const auto [end, ec] = std::from_chars(first, last, v);
  const bool ok = !text.empty() && ec == std::errc() && end == last && v >= lo && v <= hi;
  if (!ok) {
    const std::string range = "from " + std::to_string(lo) + " to " + std::to_string(hi);
    return flag + ": expected a whole number " + range + ", found '" + text + "'";
  }
  value = v;
  return {};
}

ThreadSetting::ThreadSetting(int threads) : eigen_before_(Eigen::nbThreads()) {
#ifdef ATTENTION_LAB_HAVE_OPENMP
  omp_before_ = omp_get_max_threads();
  omp_set_num_threads(threads);
#endif
  Eigen::setNbThreads(threads);
}

ThreadSetting::~ThreadSetting() {
#ifdef ATTENTION_LAB_HAVE_OPENMP
  omp_set_num_threads(omp_before_);
#endif
  Eigen::setNbThreads(eigen_before_);
}

}  // namespace bench

}  // namespace attention_lab::cli
