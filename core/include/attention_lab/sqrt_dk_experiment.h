#pragma once
// The "why divide by √d_k" experiment. Draw many pairs of random vectors q, k
// of length d with entries from N(0, 1). Each product q·k is a sum of d terms
// of variance 1, so its variance is d: the larger d, the wider the scores, and
// a softmax over such scores puts nearly all its weight on one key. Dividing
// by √d brings the variance back to 1 for every d, and the softmax stays soft.

#include <cstdint>
#include <string>
#include <vector>

namespace attention_lab {

struct SqrtDkOptions {
  int d = 64;             // vector length, 1…1024
  int samples = 20000;    // q·k products, keys_per_row…1 000 000
  std::uint64_t seed = 1;
  int bins = 40;          // histogram bins, 1…1000
  // Half-width of the histograms (they span −range…+range); 0 chooses
  // 4·√d, four standard deviations of the unscaled q·k. Both histograms use
  // the same bins, so the scaled one shows as the narrow peak it is.
  double range = 0.0;
  // n: the keys each query meets. The products come in rows of n that share
  // one q, as one query's row of scores does; each row is softmaxed.
  int keys_per_row = 16;  // 2…4096
};

struct Histogram {
  std::vector<double> edges;  // bins + 1, ascending; bin i is [edges[i], edges[i+1])
  std::vector<int> counts;    // bins
  int below = 0;              // samples left of edges.front()
  int above = 0;              // samples at or right of edges.back()
};

// What a softmax does to rows of these scores, averaged over the rows.
struct SoftmaxRowStats {
  double mean_max_weight = 0.0;  // the largest weight of a row: 1/n (uniform) … 1 (all on one key)
  double mean_entropy = 0.0;     // nats: 0 (all on one key) … ln n (uniform)
};

struct DotProductSamples {
  std::vector<double> values;
  double mean = 0.0;             // measured; the theory says 0
  double variance = 0.0;         // measured (n − 1 in the denominator)
  double theory_variance = 0.0;  // d without scaling, 1 with
  Histogram histogram;
  SoftmaxRowStats softmax;
};

struct SqrtDkResult {
  std::string error;  // options out of range: then nothing else is set
  SqrtDkOptions options;
  int rows = 0;              // full rows of keys_per_row products (the softmax statistics use these)
  double max_entropy = 0.0;  // ln n: the entropy of a uniform row
  double uniform_weight = 0.0;  // 1/n
  DotProductSamples unscaled;  // q·k
  DotProductSamples scaled;    // q·k / √d
};

// Runs the experiment; the same options give the same numbers on the same
// standard library (std::mt19937_64, std::normal_distribution<double> and
// std::chi_squared_distribution<double>). The products are drawn exactly
// without building the key vectors: for a given q, q·k ~ N(0, ‖q‖²), and
// ‖q‖² ~ χ²(d) (see the .cpp), so a run costs the same at every d.
SqrtDkResult run_sqrt_dk_experiment(const SqrtDkOptions& options);

// The problem with `options`, or an empty string.
std::string validate(const SqrtDkOptions& options);

// Counts of `values` in `bins` equal bins over [lo, hi).
Histogram make_histogram(const std::vector<double>& values, double lo, double hi, int bins);

// Average largest weight and entropy of the softmax of each full row of
// `row_length` consecutive values.
SoftmaxRowStats softmax_row_stats(const std::vector<double>& values, int row_length);

}  // namespace attention_lab
