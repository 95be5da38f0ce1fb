#include "attention_lab/softmax.h"

#include "base/vector_lanes.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace attention_lab {

const char* describe(RowIssue issue) {
  switch (issue) {
    case RowIssue::None: return "ok";
    case RowIssue::NoAllowedKey:
      return "the mask allows no key, so its weights and context are 0 (PyTorch would give NaN)";
    case RowIssue::InfiniteScore:
      return "some scores are +inf; they share the weight equally and the others get 0";
    case RowIssue::NotANumber: return "the scores contain NaN, so the weights are NaN";
  }
  return "";
}

// The reductions below keep one accumulator per vector lane (a fixed order,
// so no -ffast-math is needed for the compiler to vectorize them).

float max_and_nan(const float* x, Eigen::Index n, bool& has_nan) {
  using simd::Floats, simd::Ints, simd::kLanes;
  constexpr float kInf = std::numeric_limits<float>::infinity();
  // GCC's vector types: the compiler does not vectorize a max that must
  // keep NaN's rule (v > acc is false for NaN) by itself; lane k sees
  // x[k], x[k + kLanes], … in order, as a loop over an array of lanes would.
  Floats acc;
  Ints nan = {};
  for (int k = 0; k < kLanes; ++k) acc[k] = -kInf;
  Eigen::Index j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    Floats v;
    std::memcpy(&v, x + j, sizeof v);
    acc = v > acc ? v : acc;
    nan |= v != v;
  }
  float m = -kInf;
  bool any_nan = false;
  for (; j < n; ++j) {
    m = x[j] > m ? x[j] : m;
    any_nan = any_nan || x[j] != x[j];
  }
  for (int k = 0; k < kLanes; ++k) {
    m = acc[k] > m ? acc[k] : m;
    any_nan = any_nan || nan[k] != 0;
  }
  has_nan = any_nan;
  return m;
}

double sum_in_double(const float* x, Eigen::Index n) {
  constexpr int kLanes = 8;
  double acc[kLanes] = {};
  Eigen::Index j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int k = 0; k < kLanes; ++k) acc[k] += static_cast<double>(x[j + k]);
  // the tail goes to the lanes its indices belong to, so trailing zeros
  // (a row summed over more columns) never change the result
  for (; j < n; ++j) acc[j % kLanes] += static_cast<double>(x[j]);
  return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

void exp_shifted(const float* x, float offset, float* e, Eigen::Index n) {
  for (Eigen::Index j = 0; j < n; ++j) e[j] = fast_exp(x[j] - offset);
}

RowIssue softmax_row_with_sink(Eigen::Ref<const RowVector> x, float sink, Eigen::Ref<RowVector> w, float& share) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  bool has_nan = false;
  const float row_max = max_and_nan(x.data(), x.size(), has_nan);
  if (has_nan || row_max == kInf || !(sink > -kInf)) {
    const RowIssue issue = softmax_row(x, w);
    share = has_nan ? std::numeric_limits<float>::quiet_NaN() : 0.0f;  // no sink, or +∞ keys take everything
    return issue;
  }
  const float m = std::max(row_max, sink);
  exp_shifted(x.data(), m, w.data(), x.size());
  const float e_sink = fast_exp(sink - m);  // as exp_shifted computes the keys' terms
  const double sum = sum_in_double(w.data(), x.size()) + static_cast<double>(e_sink);
  const auto inv = static_cast<float>(1.0 / sum);
  w *= inv;
  share = e_sink * inv;
  return RowIssue::None;
}

RowIssue softmax_row(Eigen::Ref<const RowVector> x, Eigen::Ref<RowVector> w) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const Eigen::Index n = x.size();

  // pass 1: the row max, and NaN detection
  bool has_nan = false;
  const float max = max_and_nan(x.data(), n, has_nan);
  if (has_nan) {
    w.setConstant(std::numeric_limits<float>::quiet_NaN());
    return RowIssue::NotANumber;
  }
  if (max == -kInf) {
    w.setZero();
    return RowIssue::NoAllowedKey;
  }
  if (max == kInf) {
    // The limit of softmax as those entries grow: equal shares among the largest.
    const auto count = static_cast<float>((x.array() == kInf).count());
    w = (x.array() == kInf).select(RowVector::Constant(n, 1.0f / count), 0.0f);
    return RowIssue::InfiniteScore;
  }

  // pass 2: e^(x − max) (x = −∞ gives exactly 0) and their sum
  exp_shifted(x.data(), max, w.data(), n);
  const double sum = sum_in_double(w.data(), n);
  // pass 3: normalise (sum ≥ 1 because the max entry contributes e^0)
  const auto inv = static_cast<float>(1.0 / sum);
  w *= inv;
  return RowIssue::None;
}

}  // namespace attention_lab
