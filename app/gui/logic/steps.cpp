#include "logic/steps.h"

#include <algorithm>

namespace attention_lab::gui {

const std::vector<Step>& steps() {
  using K = StageKind;
  static const std::vector<Step> list = {
      {"1. Inputs",
       {K::X, K::X_kv, K::W_q, K::W_k, K::W_v, K::b_q, K::b_k, K::b_v, K::W_o, K::b_o, K::Mask, K::Sinks, K::QNorm,
        K::KNorm},
       K::X},
      // (a q/k norm and RoPE act on Q and K here too: projected, normed, turned)
      {"2. Project to Q, K, V",
       {K::QProjected, K::KProjected, K::QUnrotated, K::KUnrotated, K::RopeAngle, K::Q, K::K, K::V, K::HeadQProjected,
        K::HeadKProjected, K::HeadQUnrotated, K::HeadKUnrotated, K::HeadQ, K::HeadK, K::HeadV},
       K::Q, StepAnimation::Product},
      {"3. Scores Q·Kᵀ", {K::Scores}, K::Scores, StepAnimation::Product},
      {"4. Scale by 1/√d_k", {K::Scaled, K::Capped}, K::Scaled},  // (and soft-cap, where the model does)
      {"5. Mask", {K::PositionBias, K::Masked}, K::Masked},  // ALiBi adds its bias here too
      {"6. Softmax", {K::Weights, K::SinkShare}, K::Weights, StepAnimation::Softmax},
      {"7. Weighted sum of V", {K::Context}, K::Context, StepAnimation::Product},
      {"8. Concatenate heads", {K::Concat}, K::Concat},
      {"9. Output projection", {K::Output}, K::Output, StepAnimation::Product},
  };
  return list;
}

int step_of(StageKind kind) {
  const auto& list = steps();
  for (std::size_t i = 0; i < list.size(); ++i)
    if (std::find(list[i].kinds.begin(), list[i].kinds.end(), kind) != list[i].kinds.end()) return static_cast<int>(i);
  return 0;
}

}  // namespace attention_lab::gui
