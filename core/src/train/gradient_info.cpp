// How the app and the CLI describe a gradient stage ("grad.scores[0]"): its
// symbol ∂L/∂S₀, its name, and the backward rule of the whole matrix — the
// rules backward.cpp computes, written for people.

#include "attention_lab/gradients.h"
#include "attention_lab/number_text.h"
#include "attention_lab/stage_info.h"
#include "attention_lab/stage_registry.h"

#include <cmath>
#include <cstdio>

namespace attention_lab {

namespace {

// The rule, with the value stages' own symbols ("S₀", "W_q"); ∂ stands for ∂L/∂.
std::string backward_rule(const Scenario& s, StageId id) {
  using K = StageKind;
  const Dims d = s.dims();
  const int h = is_per_head(id.kind) ? id.head : 0;
  const auto sym = [&](K k, int head = -1) {
    StageId v = is_per_head(k) ? StageId::of_head(k, head < 0 ? h : head) : StageId::input(k);
    v.layer = id.layer;
    return describe_stage(s, v).symbol;
  };
  const auto g = [&](K k, int head = -1) { return "∂" + sym(k, head); };
  // the Q and K that the projections make (before RoPE and the q/k norm)
  const K q_made = s.qk_norm.on() ? K::QProjected : s.rope.on ? K::QUnrotated : K::Q;
  const K k_made = s.qk_norm.on() ? K::KProjected : s.rope.on ? K::KUnrotated : K::K;
  const std::string me = g(id.kind);
  switch (id.kind) {
    case K::Output:
      // (no loss of its own: a model's layer, whose ∂O the layers after it send back: model_gradient.h)
      if (!s.loss) return me + ": from the loss beyond the layer (a model's: through the layers after it)";
      if (s.loss->kind == LossKind::Mse) return me + " = 2·(" + sym(K::Output) + " − target) / (T·d_out)";
      if (s.loss->kind == LossKind::NextToken)
        return me + " = (softmax(" + sym(K::Output) + "·W_U) − one-hot(targets))·W_Uᵀ / T";
      return me + " = 0 (the loss judges head " + s.shown_index(s.loss->head) + "'s weights, not the output)";
    case K::W_o: return me + " = " + sym(K::Concat) + "ᵀ·" + g(K::Output);
    case K::b_o: return me + " = Σ rows of " + g(K::Output);
    case K::Concat: return s.use_w_o ? me + " = " + g(K::Output) + "·" + sym(K::W_o) + "ᵀ" : me + " = " + g(K::Output);
    case K::Context: return me + " = head " + s.shown_index(h) + "'s " + std::to_string(d.d_v) + " columns of " + g(K::Concat);
    case K::Weights: {
      std::string rule = me + " = " + g(K::Context) + "·" + sym(K::HeadV) + "ᵀ";
      if (s.loss && s.loss->kind == LossKind::Attend && s.loss->head == h)
        rule += " − 1/(T·" + sym(K::Weights) + "ᵢⱼ) at each row's target key";
      return rule;
    }
    case K::Masked: {
      const std::string A = sym(K::Weights);
      return me + "ᵢⱼ = " + A + "ᵢⱼ·(" + g(K::Weights) + "ᵢⱼ − Σₖ " + A + "ᵢₖ·" + g(K::Weights) + "ᵢₖ)  (softmax's backward)";
    }
    case K::Capped: return me + " = " + g(K::Masked) + " (the bias and the mask are constants)";
    case K::Scaled:
      if (s.softcap > 0.0f)
        return me + " = " + g(K::Capped) + "·(1 − (" + sym(K::Capped) + "/" + significant(s.softcap, 3) + ")²)  (tanh's slope)";
      return me + " = " + g(K::Masked) + " (the bias and the mask are constants)";
    case K::Scores: return me + " = " + g(K::Scaled) + " / " + significant(score_divisor(s), 3);
    case K::HeadQ: return me + " = " + g(K::Scores) + "·" + sym(K::HeadK);
    case K::HeadK:
      return me + " = Σ over the query heads that read it of " + g(K::Scores) + "ᵀ·" + sym(K::HeadQ);
    case K::HeadV: return me + " = Σ over the query heads that read it of " + sym(K::Weights) + "ᵀ·" + g(K::Context);
    case K::Q: case K::K: case K::V:
      return me + " = the heads' " + g(id.kind == K::Q ? K::HeadQ : id.kind == K::K ? K::HeadK : K::HeadV, 0) +
             ", … side by side";
    case K::QUnrotated: case K::KUnrotated: case K::HeadQUnrotated: case K::HeadKUnrotated: {
      const bool q = id.kind == K::QUnrotated || id.kind == K::HeadQUnrotated;
      const K after = id.kind == K::QUnrotated ? K::Q : id.kind == K::KUnrotated ? K::K : q ? K::HeadQ : K::HeadK;
      return me + " = " + g(after) + " turned back by −φ, pair by pair (RoPE's rotation transposed)";
    }
    case K::QProjected: case K::KProjected: case K::HeadQProjected: case K::HeadKProjected: {
      const bool q = id.kind == K::QProjected || id.kind == K::HeadQProjected;
      const bool head = is_per_head(id.kind);
      const K after = s.rope.on ? (q ? (head ? K::HeadQUnrotated : K::QUnrotated) : (head ? K::HeadKUnrotated : K::KUnrotated))
                                : (q ? (head ? K::HeadQ : K::Q) : (head ? K::HeadK : K::K));
      return me + " = (g·" + g(after) + " − x·mean(g·" + g(after) + "·x)/ms) / rms  (RMSNorm's backward, x = " +
             sym(id.kind) + ")";
    }
    case K::QNorm: case K::KNorm:
      return me + " = Σ rows of " + g(id.kind == K::QNorm ? q_made : k_made) + "·x/rms  (the gains' gradient)";
    case K::W_q: return me + " = " + sym(K::X) + "ᵀ·" + g(q_made);
    case K::W_k: return me + " = " + sym(s.cross() ? K::X_kv : K::X) + "ᵀ·" + g(k_made);
    case K::W_v: return me + " = " + sym(s.cross() ? K::X_kv : K::X) + "ᵀ·" + g(K::V);
    case K::b_q: return me + " = Σ rows of " + g(q_made);
    case K::b_k: return me + " = Σ rows of " + g(k_made);
    case K::b_v: return me + " = Σ rows of " + g(K::V);
    case K::X:
      if (s.cross()) return me + " = " + g(q_made) + "·" + sym(K::W_q) + "ᵀ";
      return me + " = " + g(q_made) + "·" + sym(K::W_q) + "ᵀ + " + g(k_made) + "·" + sym(K::W_k) + "ᵀ + " + g(K::V) + "·" +
             sym(K::W_v) + "ᵀ";
    case K::X_kv: return me + " = " + g(k_made) + "·" + sym(K::W_k) + "ᵀ + " + g(K::V) + "·" + sym(K::W_v) + "ᵀ";
    case K::Sinks: return me + "ₕ = −Σᵢ σᵢ·Σₖ Aᵢₖ·∂Aᵢₖ  (a sink is one more logit of each row)";
    case K::Mask: case K::RopeAngle: case K::PositionBias: case K::SinkShare: break;
  }
  return me;
}

}  // namespace

bool has_gradient(StageKind kind) {
  using K = StageKind;
  return kind != K::Mask && kind != K::RopeAngle && kind != K::PositionBias && kind != K::SinkShare;
}

StageInfo describe_gradient(const Scenario& s, StageId id) {
  StageId value = id;
  value.role = Role::Value;
  StageInfo info = describe_stage(s, value);
  info.id = id;
  info.id_text = to_string(id);
  info.name = "Gradient of the loss with respect to " + info.symbol + " (" + info.name + ")";
  info.symbol = "∂L/∂" + info.symbol;
  info.formula = backward_rule(s, id);
  info.explanation =
      "How much the loss changes for each unit a cell of " + describe_stage(s, value).symbol +
      " goes up: red cells raise the loss as they grow, blue ones lower it, so a step of gradient descent moves each "
      "number against its colour. Hover a cell to see which later gradients make it.";
  info.domain = ValueDomain::Signed;
  info.editability = Editability::ReadOnly;
  info.active = info.active && has_gradient(id.kind);
  return info;
}

}  // namespace attention_lab
