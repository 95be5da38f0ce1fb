#pragma once
// The forward pass of a TransformerModel, float32, piece by piece so the app
// can run the layers before a focused layer once, put the engine's attention
// (with the user's edits and pins) in the focused layer's place, and rerun
// only what comes after it.

#include "attention_lab/scenario.h"
#include "attention_lab/transformer_model.h"

#include <functional>
#include <span>
#include <string>
#include <vector>

namespace attention_lab {

// "" when every id is in the vocabulary and the sequence fits the model
// (learned positions: at most max_positions tokens); else why not.
std::string check_ids(const ModelConfig& config, std::span<const int> ids);

// Token embeddings (+ learned positions for GPT-2): T × d_model.
Matrix embed(const TransformerModel& model, std::span<const int> ids);

// LayerNorm (biased variance) or RMSNorm of every row.
Matrix normalize(const Norm& norm, const Matrix& x);

// One row's statistics as normalize() uses them, in double: the mean
// (LayerNorm; 0 for RMSNorm) and the variance (LayerNorm) or the mean square
// (RMSNorm).
struct RowStatistics {
  double mean = 0.0;
  double spread = 0.0;
};
RowStatistics row_statistics(const Norm& norm, const float* row, Eigen::Index n);

// Every intermediate of one layer's attention, for traces and tests.
struct AttentionDetail {
  Matrix q, k, v;          // after biases and any q/k norm, before RoPE
  Matrix q_rot, k_rot;     // after RoPE (Llama family; = q, k otherwise)
  std::vector<Matrix> scores;   // per head, T × T: QKᵀ/√d_head with −∞ where masked
  std::vector<Matrix> weights;  // per head, softmax
  Matrix context;          // heads concatenated, T × heads·d_head
  bool weights_only = false;  // set before the call: fill only `weights` (the overview)
};

// Interventions inside one layer, for ablation and activation patching, and
// a way to read what they act on (TransformerLens's hook points). Every one is
// optional.
struct LayerHooks {
  // Per query head (q) or per K/V head (k, v): a T × d_head block used in
  // place of the computed one, after the biases and any q/k norm, before RoPE
  // (hook_q, hook_k, hook_v). Empty, or null entries: computed.
  std::vector<const Matrix*> q, k, v;
  // Per query head: a T × T pattern used in place of the softmax (hook_pattern).
  std::vector<const Matrix*> pattern;
  // Called with the heads' contexts side by side (T × heads·d_head, before
  // W_o: hook_z), with what the attention adds to the residual stream
  // (T × d_model, after any post-norm and residual scale: hook_attn_out) and
  // with what the MLP adds (hook_mlp_out). Each may change it in place.
  std::function<void(Matrix&)> z, attn_out, mlp_out;
};

// What layer `layer`'s attention reads from its input x: x normed by the
// layer's first norm, or x itself where the norms come after (OLMo-2).
Matrix attention_input(const TransformerModel& model, int layer, const Matrix& x);

// Layer `layer`'s attention of its normed input: T × d_model (after o_proj).
Matrix attention(const TransformerModel& model, int layer, const Matrix& normed, AttentionDetail* detail = nullptr);

// The MLP's activation of every cell, in place: GELU (tanh form or exact),
// ReLU, or SiLU (SwiGLU's gate).
void activate(Activation activation, Matrix& m);

// The MLP of a normed input; `activation` (if given) receives the hidden
// activation (GPT-2: act(c_fc); Llama: silu(gate)·up).
Matrix mlp(const TransformerModel& model, int layer, const Matrix& normed, Matrix* activation = nullptr);

// The rest of a layer once its attention output is known: (the post-attention
// norm,) the residual sum, then norm2 → MLP (→ post-MLP norm) → residual.
// Returns the layer's output. `hooks` (attn_out, mlp_out) may read or change
// what each sum adds.
Matrix finish_layer(const TransformerModel& model, int layer, const Matrix& input, const Matrix& attention_out,
                    const LayerHooks* hooks = nullptr);

// A whole layer: input → output.
Matrix run_layer(const TransformerModel& model, int layer, const Matrix& input);

// A whole layer with interventions; `detail` (if given) receives the
// attention's intermediates as they were used (after any replacement).
// With no hook set it computes what run_layer computes, up to the order of
// the residual sums' float additions — and always in the same order, hooks
// set or not, so a hook that changes nothing changes no bit.
Matrix run_layer(const TransformerModel& model, int layer, const Matrix& input, const LayerHooks& hooks,
                 AttentionDetail* detail = nullptr);

// final norm → lm_head for the rows [first, first + count) of the last layer's output.
Matrix logits(const TransformerModel& model, const Matrix& last_output, int first, int count);

// Softmax of one row of logits (the next token's probabilities).
RowVector next_token_probabilities(const RowVector& logits);

struct ModelForward {
  std::vector<Matrix> residual;  // residual[L] = input of layer L; residual[layers] = output of the last
  Matrix logits;                 // the rows asked for
  int first_logit_row = 0;
};

// Every layer; logits of the last `logit_rows` rows (all when ≥ T).
ModelForward run_model(const TransformerModel& model, std::span<const int> ids, int logit_rows);

// Greedy decoding: appends the most likely next token `count` times (each
// step a full forward of the sequence so far). Stops early when the
// sequence so far no longer fits the model's learned positions.
std::vector<int> generate_greedy(const TransformerModel& model, std::vector<int> ids, int count);

// Index of the largest value of a row (the first on ties, as torch.argmax).
int argmax(const RowVector& row);

// Layer `layer`'s attention as an ordinary scenario: X = its normed input,
// the layer's W_q, W_k, W_v, W_o (in × out) and biases, heads and K/V heads,
// RoPE, the causal (or sliding-window) mask. The engine computes from it
// exactly what attention() computes. Fails (error set) when the layer is
// beyond what a scenario may hold.
struct LayerScenario {
  Scenario scenario;
  std::string error;
};
LayerScenario layer_scenario(const TransformerModel& model, int layer, const Matrix& normed,
                             const std::vector<std::string>& tokens);

}  // namespace attention_lab
