#include "attention_lab/softmax.h"

#include <cmath>
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

RowIssue softmax_row(Eigen::Ref<const RowVector> x, Eigen::Ref<RowVector> w) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const Eigen::Index n = x.size();

  // pass 1: the row max, and NaN detection
  float max = -kInf;
  for (Eigen::Index j = 0; j < n; ++j) {
    if (std::isnan(x[j])) {
      w.setConstant(std::numeric_limits<float>::quiet_NaN());
      return RowIssue::NotANumber;
    }
    max = std::max(max, x[j]);
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

  // pass 2: e^(x − max) and their sum
  double sum = 0.0;
  for (Eigen::Index j = 0; j < n; ++j) {
    w[j] = std::exp(x[j] - max);  // x = −∞ gives exactly 0
    sum += static_cast<double>(w[j]);
  }
  // pass 3: normalise (sum ≥ 1 because the max entry contributes e^0)
  const auto inv = static_cast<float>(1.0 / sum);
  w *= inv;
  return RowIssue::None;
}

}  // namespace attention_lab
