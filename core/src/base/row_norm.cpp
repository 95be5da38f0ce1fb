#include "attention_lab/row_norm.h"

#include <cmath>

namespace attention_lab {

namespace {

// Σ (x_i − about)² — or Σ x_i with `square` false — in double, over eight
// running sums (lanes a compiler vectorises; a single running double sum
// does not vectorise and made the norms 5× slower).
template <bool square>
double lane_sum(const float* x, Eigen::Index n, double about) {
  constexpr int kLanes = 8;
  double lane[kLanes] = {};
  Eigen::Index i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      const double d = static_cast<double>(x[i + l]) - about;
      lane[l] += square ? d * d : d;
    }
  double sum = ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
  for (; i < n; ++i) {
    const double d = static_cast<double>(x[i]) - about;
    sum += square ? d * d : d;
  }
  return sum;
}

}  // namespace

double row_mean(const float* x, Eigen::Index n) { return lane_sum<false>(x, n, 0.0) / static_cast<double>(n); }

double row_mean_square(const float* x, Eigen::Index n, double about) {
  return lane_sum<true>(x, n, about) / static_cast<double>(n);
}

float inverse_root(double spread, double eps) { return static_cast<float>(1.0 / std::sqrt(spread + eps)); }

void rms_normalize(const float* x, float* out, const float* gain, Eigen::Index n, double eps) {
  const float inv = inverse_root(row_mean_square(x, n), eps);
  for (Eigen::Index i = 0; i < n; ++i) {
    const float scaled = x[i] * inv;  // two roundings, as the model's normalize() does
    out[i] = scaled * gain[i];
  }
}

}  // namespace attention_lab
