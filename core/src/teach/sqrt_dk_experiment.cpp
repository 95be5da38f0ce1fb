#include "attention_lab/sqrt_dk_experiment.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace attention_lab {

namespace {

std::string out_of_range(const char* name, long long lo, long long hi, long long found) {
  return std::string(name) + ": expected " + std::to_string(lo) + " to " + std::to_string(hi) + ", found " +
         std::to_string(found);
}

void measure(DotProductSamples& s) {
  const auto n = static_cast<double>(s.values.size());
  double sum = 0.0;
  for (const double v : s.values) sum += v;
  s.mean = sum / n;
  double squares = 0.0;
  for (const double v : s.values) squares += (v - s.mean) * (v - s.mean);
  s.variance = s.values.size() > 1 ? squares / (n - 1.0) : 0.0;
}

}  // namespace

std::string validate(const SqrtDkOptions& o) {
  if (o.d < 1 || o.d > 1024) return out_of_range("d", 1, 1024, o.d);
  if (o.keys_per_row < 2 || o.keys_per_row > 4096) return out_of_range("keys_per_row", 2, 4096, o.keys_per_row);
  if (o.samples < o.keys_per_row || o.samples > 1000000)
    return out_of_range("samples", o.keys_per_row, 1000000, o.samples) + " (at least one row of keys_per_row)";
  if (o.bins < 1 || o.bins > 1000) return out_of_range("bins", 1, 1000, o.bins);
  if (!(std::isfinite(o.range) && o.range >= 0.0))
    return "range: expected 0 (automatic) or a number greater than 0, found " + std::to_string(o.range);
  return {};
}

Histogram make_histogram(const std::vector<double>& values, double lo, double hi, int bins) {
  Histogram h;
  h.counts.assign(static_cast<std::size_t>(bins), 0);
  h.edges.resize(static_cast<std::size_t>(bins) + 1);
  const double width = (hi - lo) / bins;
  for (int i = 0; i <= bins; ++i) h.edges[static_cast<std::size_t>(i)] = lo + width * i;
  h.edges.back() = hi;
  for (const double v : values) {
    if (v < lo) {
      ++h.below;
    } else if (v >= hi) {
      ++h.above;
    } else {
      // Rounding can put a value just below an edge into the next bin; the clamp keeps it inside.
      const auto bin = std::clamp(static_cast<int>((v - lo) / width), 0, bins - 1);
      ++h.counts[static_cast<std::size_t>(bin)];
    }
  }
  return h;
}

SoftmaxRowStats softmax_row_stats(const std::vector<double>& values, int row_length) {
  SoftmaxRowStats stats;
  const std::size_t n = static_cast<std::size_t>(row_length);
  const std::size_t rows = n > 0 ? values.size() / n : 0;
  if (rows == 0) return stats;
  std::vector<double> e(n);
  for (std::size_t r = 0; r < rows; ++r) {
    const double* x = values.data() + r * n;
    const double max = *std::max_element(x, x + n);
    double sum = 0.0;
    for (std::size_t j = 0; j < n; ++j) sum += e[j] = std::exp(x[j] - max);
    double entropy = 0.0;
    for (std::size_t j = 0; j < n; ++j) {
      const double w = e[j] / sum;
      if (w > 0.0) entropy -= w * std::log(w);
    }
    stats.mean_max_weight += 1.0 / sum;  // the max's weight: e^0 / sum
    stats.mean_entropy += entropy;
  }
  stats.mean_max_weight /= static_cast<double>(rows);
  stats.mean_entropy /= static_cast<double>(rows);
  return stats;
}

SqrtDkResult run_sqrt_dk_experiment(const SqrtDkOptions& options) {
  SqrtDkResult result;
  result.options = options;
  if (result.error = validate(options); !result.error.empty()) return result;
  const int d = options.d;
  const int n = options.keys_per_row;
  const auto count = static_cast<std::size_t>(options.samples);

  // Each row of n products shares one query q. Given q, the product with a
  // key k of d independent N(0, 1) entries is normal with variance ‖q‖²
  // (a sum of normals), and the n keys are independent, so each product is
  // drawn as ‖q‖·z with z ~ N(0, 1), and ‖q‖² as the sum of squares of d
  // standard normals, a chi-squared of d degrees of freedom. Same
  // distribution as building every k and summing d terms, at a cost that
  // does not grow with d: dragging the d slider at 1024 summed 21 million
  // terms a frame (about 4 frames a second).
  std::mt19937_64 rng(options.seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::chi_squared_distribution<double> squared_norm(static_cast<double>(d));
  result.unscaled.values.reserve(count);
  double q_norm = 0.0;
  for (std::size_t i = 0; i < count; ++i) {
    if (i % static_cast<std::size_t>(n) == 0) q_norm = std::sqrt(squared_norm(rng));  // a new query for each row
    result.unscaled.values.push_back(q_norm * normal(rng));
  }
  const double root_d = std::sqrt(static_cast<double>(d));
  result.scaled.values.reserve(count);
  for (const double v : result.unscaled.values) result.scaled.values.push_back(v / root_d);

  result.rows = options.samples / n;
  result.max_entropy = std::log(static_cast<double>(n));
  result.uniform_weight = 1.0 / n;
  const double range = options.range > 0.0 ? options.range : 4.0 * root_d;
  for (DotProductSamples* s : {&result.unscaled, &result.scaled}) {
    measure(*s);
    s->histogram = make_histogram(s->values, -range, range, options.bins);
    s->softmax = softmax_row_stats(s->values, n);
  }
  result.unscaled.theory_variance = d;
  result.scaled.theory_variance = 1.0;
  return result;
}

}  // namespace attention_lab
