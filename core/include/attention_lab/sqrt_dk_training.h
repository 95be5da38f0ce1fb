#pragma once
// The √d_k experiment as training (seed 004's footnote): one attention head
// taught where to look (each word at the one before it, judged by its
// output: mean squared error against the output such a head gives) by plain
// gradient descent on W_q and W_k, twice from the same initialisation and
// data: with the scores divided by √d_k and without. Without it, at a large d_k, the scores start
// wide, the softmax starts nearly one-hot and passes back almost no
// gradient: the run learns slowly or not at all. At a small d_k the two runs
// hardly differ.

#include <cstdint>
#include <string>
#include <vector>

namespace attention_lab {

struct SqrtDkTrainingOptions {
  int d_k = 64;          // also d_model: X is T × d_k, W_q and W_k d_k × d_k (1…256)
  int T = 8;             // tokens (2…64)
  int steps = 150;       // of gradient descent (1…5000)
  double learning_rate = 0.1;  // SGD's (above 0, below 100)
  std::uint64_t seed = 1;
};

// One run's curves, one value per step (before its update).
struct SqrtDkTrainingRun {
  std::vector<double> loss;              // mean squared error of the output
  std::vector<double> entropy;           // mean entropy of the weights rows, nats (uniform: ln of the keys a row sees)
  std::vector<double> softmax_gradient;  // ‖∂L/∂Ŝ‖: the gradient the softmax passes back to its input
  std::string error;                     // the step and the matrix, when a number stopped being finite
};

struct SqrtDkTrainingResult {
  std::string error;  // options out of range: then nothing else is set
  SqrtDkTrainingOptions options;
  SqrtDkTrainingRun scaled, unscaled;
  // What the runs show, from their numbers ("Without 1/√d_k the loss after
  // 150 steps is 1.93 against 0.41 with it; …").
  std::string summary;
};

// The problem with `options`, or "".
std::string validate(const SqrtDkTrainingOptions& options);

// Both runs; the same options give the same numbers.
SqrtDkTrainingResult run_sqrt_dk_training(const SqrtDkTrainingOptions& options);

}  // namespace attention_lab
