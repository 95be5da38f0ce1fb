#pragma once
// Row-wise softmax, computed stably and with every edge case decided.

#include "attention_lab/matrix.h"

namespace attention_lab {

// What was unusual about a row, if anything.
enum class RowIssue {
  None,
  NoAllowedKey,    // every entry is −∞ (the mask forbids all keys): weights are all 0
  InfiniteScore,   // some entries are +∞: they share the weight equally, the rest get 0
  NotANumber,      // the row holds NaN: the weights are NaN too
};

const char* describe(RowIssue issue);

// weights_j = e^(x_j − max x) / Σ_k e^(x_k − max x). Subtracting the max keeps
// every exponent ≤ 0, so nothing overflows even for scores of ±1e30; −∞ entries
// get exactly 0. The sum is accumulated in double.
RowIssue softmax_row(Eigen::Ref<const RowVector> scores, Eigen::Ref<RowVector> weights);

}  // namespace attention_lab
