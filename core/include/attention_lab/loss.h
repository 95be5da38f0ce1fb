#pragma once
// What a scenario's numbers should have been: a loss, for the gradients of
// every stage (gradients.h). Saved in the scenario file ("loss": formats.md).

#include "attention_lab/shared_matrix.h"

#include <vector>

namespace attention_lab {

enum class LossKind {
  // The output should equal a T × d_out target: L = mean over its cells of (O − Y)².
  Mse,
  // Query row i of one head should attend to key targets[i]: L = −(1/T) Σᵢ log A[i, targets[i]]
  // (cross-entropy of each weights row against its key), "make 'it' look at 'cat'".
  Attend,
  // A one-layer language model: logits = O·W_U (T × vocabulary), and row i
  // should predict token targets[i]: L = −(1/T) Σᵢ log softmax(logitsᵢ)[targets[i]].
  NextToken,
};

// Equal shapes and cells (Eigen's == asserts on matrices of different shapes).
inline bool same_matrix(const SharedMatrix& a, const SharedMatrix& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() && a.get() == b.get();
}

struct Loss {
  LossKind kind = LossKind::Mse;
  SharedMatrix target;       // Mse: T × d_out
  int head = 0;              // Attend: the head whose weights are judged
  std::vector<int> targets;  // Attend: one key per query row; NextToken: one token id per row
  SharedMatrix W_U;          // NextToken: d_out × vocabulary, the unembedding

  friend bool operator==(const Loss& a, const Loss& b) {
    return a.kind == b.kind && same_matrix(a.target, b.target) && a.head == b.head && a.targets == b.targets && same_matrix(a.W_U, b.W_U);
  }
};

const char* to_string(LossKind kind);  // "mse", "attend", "next_token"

}  // namespace attention_lab
