#pragma once
// A small GPT-2 that learns: the GPT-2 layout (learned positions, pre-LayerNorm
// blocks, GELU-tanh MLP, tied token embeddings as the output head) held as
// trainable float matrices, with its own forward pass over a batch and the
// backward pass of every weight, written plainly after llm.c's gpt2_backward.
//
// Each parameter keeps the name and layout of a Hugging Face GPT-2 file
// (Conv1D, [in, out]), so saving is a copy (tiny_gpt_io.h) and the saved
// folder is an ordinary model that model mode opens.

#include "attention_lab/matrix.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace attention_lab {

struct TinyGptShape {
  int layers = 2;
  int heads = 4;
  int d_model = 64;
  int d_ff = 256;
  int vocab = 16;
  int context = 32;  // n_positions: the longest sequence
  double norm_eps = 1e-5;

  int d_head() const { return heads > 0 ? d_model / heads : 0; }
};

// Why `shape` cannot be built ("heads: 3 does not divide d_model 64"), or "".
std::string tiny_gpt_shape_problem(const TinyGptShape& shape);

// One trainable tensor: its Hugging Face name, its value and its gradient
// (same shape; vectors are 1 × n).
struct TinyParam {
  std::string name;  // "transformer.h.0.attn.c_attn.weight"
  Matrix value;
  Matrix grad;
  bool decays = false;  // AdamW's weight decay applies (matrices and embeddings; not biases or norm gains)
};

// A batch: `rows` sequences of `length` token ids, and the id each position
// should predict next (−1: no loss at this position).
struct TokenBatch {
  int rows = 0;
  int length = 0;
  std::vector<int> ids;      // rows × length, row major
  std::vector<int> targets;  // rows × length
  // Induction batches: where each row starts repeating itself (token t equals
  // token t − period from there on); empty for other batches.
  std::vector<int> period;
};

// What one forward pass saw, for the metrics a run logs.
struct TinyGptPass {
  double loss = 0.0;            // mean cross-entropy over positions with a target
  std::vector<float> position_loss;  // per position (rows × length); 0 where no target
  // The attention weights of every layer and head: [layer][row·heads + head], length × length.
  std::vector<std::vector<Matrix>> weights;
};

class TinyGpt {
 public:
  // Weights drawn as GPT-2 initialises them (normal, σ 0.02; the residual
  // projections σ 0.02/√(2·layers); biases 0, norm gains 1), reproducibly from `seed`.
  TinyGpt(TinyGptShape shape, std::uint64_t seed);

  // A model from its parameters, named, ordered and shaped as the
  // constructor above makes them (a GPT-2 checkpoint's: model_gradient.h);
  // their grads may be empty. Throws std::invalid_argument naming the first
  // that is not as expected.
  TinyGpt(TinyGptShape shape, std::vector<TinyParam> params);

  const TinyGptShape& shape() const { return shape_; }
  std::vector<TinyParam>& params() { return params_; }
  const std::vector<TinyParam>& params() const { return params_; }
  // The parameter called `name`, or null.
  TinyParam* find(const std::string& name);
  std::uint64_t parameter_count() const;

  // Loss of `batch` (checked by check_batch); with `backward`, every
  // parameter's grad is set to ∂loss/∂parameter. `keep_weights` fills the
  // pass's attention weights.
  TinyGptPass run(const TokenBatch& batch, bool backward, bool keep_weights = false);
  // The same forward pass without gradients; the parameters are untouched.
  TinyGptPass evaluate(const TokenBatch& batch, bool keep_weights = false) const;

  // ∂loss/∂(layer `layer`'s attention output) for the one sequence of
  // `batch` (T × d_model: ∂loss/∂ of the residual stream just after the
  // attention's sum), and the loss in `loss`. No parameter's gradient is made
  // and the layers before `layer` keep nothing for a backward pass. With
  // `attention_out` (T × d_model) the layer outputs it instead of its own,
  // and the layers after it run from it. `keep_going` (may be empty) is
  // asked before each layer's pass, forward and back; when it says false the
  // work stops there and throws Cancelled (engine.h).
  Matrix attention_output_gradient(const TokenBatch& batch, int layer, const Matrix* attention_out, double& loss,
                                   const std::function<bool()>& keep_going = {}) const;

  // Why `batch` does not fit this model (an id outside the vocabulary, a
  // sequence longer than the context), or "".
  std::string check_batch(const TokenBatch& batch) const;

 private:
  TinyGptShape shape_;
  std::vector<TinyParam> params_;
};

// AdamW as torch.optim.AdamW computes it (bias-corrected moments; the decay
// decoupled, applied to parameters whose `decays` is set).
struct AdamWSettings {
  double learning_rate = 1e-3;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double weight_decay = 0.0;
};

class AdamW {
 public:
  explicit AdamW(AdamWSettings settings) : settings_(settings) {}
  // One step over `params` from their grads.
  void step(std::vector<TinyParam>& params);
  int steps() const { return steps_; }

 private:
  AdamWSettings settings_;
  int steps_ = 0;
  std::vector<Eigen::MatrixXd> first_, second_;
};

}  // namespace attention_lab
