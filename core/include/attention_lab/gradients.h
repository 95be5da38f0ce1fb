#pragma once
// The backward pass of one attention layer: ∂L/∂(every stage) for a loss
// (loss.h), each under its stage's id with Role::Gradient
// ("grad.weights[0]"). The rules, stage by stage (tokens are rows):
//   O = C·W_o + b_o:  ∂C = ∂O·W_oᵀ, ∂W_o = Cᵀ·∂O, ∂b_o = Σ rows of ∂O
//   Cₕ = Aₕ·Vₕ:       ∂Aₕ = ∂Cₕ·Vₕᵀ, ∂Vₕ = Aₕᵀ·∂Cₕ
//   A = softmax(Ŝ):   ∂Ŝᵢⱼ = Aᵢⱼ(∂Aᵢⱼ − Σₖ Aᵢₖ ∂Aᵢₖ)   (0 where the mask forbids)
//   Ŝ = S′ + B + mask: ∂S′ = ∂Ŝ (the bias and the mask are constants)
//   S′ = S / (√d_k·τ): ∂S = ∂S′ / (√d_k·τ)
//   Sₕ = Qₕ·Kₕᵀ:      ∂Qₕ = ∂Sₕ·Kₕ, ∂Kₕ = ∂Sₕᵀ·Qₕ
//   Q = X·W_q + b_q:  ∂W_q = Xᵀ·∂Q, ∂b_q = Σ rows of ∂Q, ∂X += ∂Q·W_qᵀ (and K, V)
// and through every variant: grouped K/V heads (∂K of a K/V head sums over
// the query heads that read it), a sink (one more logit: ∂s = −Σᵢ σᵢ Σₖ Aᵢₖ∂Aᵢₖ),
// the soft-cap (slope 1 − (capped/c)²), RoPE (the rotation's transpose: turned
// back by −φ), the q/k norm (RMSNorm's backward, and its gains), and
// cross-attention (K and V back to X_kv). A head's Q[h], K[h] and V[h] are
// views: their gradient is the block of the whole's (the total derivative).
// Pins and a RoPE scaling are refused by name (gradients_problem), never
// answered with a gradient that leaves them out.

#include "attention_lab/engine.h"
#include "attention_lab/loss.h"
#include "attention_lab/scenario.h"
#include "attention_lab/stage_info.h"

#include <map>
#include <string>

namespace attention_lab {

struct Gradients {
  double loss = 0.0;
  std::map<StageId, Matrix> of;  // ids with Role::Gradient
  // Where ∂L/∂O came from when not from the scenario's loss
  // (backward_from_output): the loss, said for people; "" otherwise.
  std::string outside;

  // ∂L/∂(stage `id`, a value id or a gradient id), or nullptr when it has none.
  const Matrix* find(StageId id) const;
};

// Why the gradients of `s` under `loss` cannot be computed (a setting whose
// backward pass is not written yet, a target of the wrong shape, a key the
// mask forbids), or "" when they can.
std::string gradients_problem(const Scenario& s, const Loss& loss);

// What of `s` itself has no backward pass yet, whatever the loss (a pin, a
// RoPE scaling), or "".
std::string gradients_problem(const Scenario& s);

// The loss and every gradient; `engine` holds `s` computed. Throws
// std::invalid_argument with gradients_problem's message when it is not "".
Gradients backward(const Engine& engine, const Scenario& s, const Loss& loss);

// Every gradient when ∂L/∂O comes from outside the layer: a model's loss
// through the layers above it (model_gradient.h). `dO` is T × d_out and
// `loss` the loss's value; s's own loss, if any, is not read. Throws
// std::invalid_argument when gradients_problem(s) is not "" or dO's shape is wrong.
Gradients backward_from_output(const Engine& engine, const Scenario& s, const Matrix& dO, double loss,
                               std::string outside);

// Whether a stage of this kind has a gradient: the mask, RoPE's angles,
// ALiBi's bias and a sink's share are constants the loss does not reach back to.
bool has_gradient(StageKind kind);

// A gradient stage ("grad.scores[0]") for people: symbol ∂L/∂S₀, its name,
// the backward rule of the whole matrix; signed and read-only.
// describe_stage answers gradient ids with it.
StageInfo describe_gradient(const Scenario& s, StageId id);

// A next_token loss on output `O`: ∂L/∂logits (T × vocabulary, the
// softmax of each row of O·W_U less its target's one-hot, over T), and the
// loss in `value` when given. `loss` has passed gradients_problem.
Matrix next_token_logit_gradient(const MatrixView& O, const Loss& loss, double* value = nullptr);

}  // namespace attention_lab
