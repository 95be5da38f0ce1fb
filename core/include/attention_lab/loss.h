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
};

struct Loss {
  LossKind kind = LossKind::Mse;
  SharedMatrix target;       // Mse: T × d_out
  int head = 0;              // Attend: the head whose weights are judged
  std::vector<int> targets;  // Attend: one key per query row

  friend bool operator==(const Loss& a, const Loss& b) {
    return a.kind == b.kind && a.target.get() == b.target.get() && a.head == b.head && a.targets == b.targets;
  }
};

const char* to_string(LossKind kind);  // "mse", "attend"

}  // namespace attention_lab
