#include "plain_attention.h"

#include <cmath>
#include <limits>

namespace attention_lab::cli {

namespace {

// RoPE on one head's T × d_k block, in place (the same rule as the engine).
void rotate(Eigen::Ref<Matrix> x, const Rope& rope) {
  const int dk = rotary_width(rope, static_cast<int>(x.cols()));  // the dimensions it turns
  for (Eigen::Index p = 0; p < x.rows(); ++p)
    for (int k = 0; k < dk / 2; ++k) {
      const double angle = rope_angle(rope, dk, k, static_cast<int>(p));
      const auto c = static_cast<float>(std::cos(angle)), s = static_cast<float>(std::sin(angle));
      const auto [i, j] = rope_pair(rope.pairs, dk, k);
      const float a = x(p, i), b = x(p, j);
      x(p, i) = a * c - b * s;
      x(p, j) = b * c + a * s;
    }
}

}  // namespace

Matrix plain_attention_forward(const Scenario& s) {
  const Dims d = s.dims();
  const Eigen::Index T = d.T, dk = d.d_k, dv = d.d_v;
  Matrix Q = s.X.get() * s.W_q.get(), K = s.kv_source().get() * s.W_k.get();  // (X_kv with cross-attention)
  const Matrix V = s.kv_source().get() * s.W_v.get();
  const Eigen::Index Tk = d.T_k;
  Matrix concat(T, static_cast<Eigen::Index>(d.heads) * dv);
  const float scale = static_cast<float>(1.0 / score_scale_divisor(s));
  const bool causal = s.mask_kind == MaskKind::Causal;
#pragma omp parallel for schedule(static)
  for (int h = 0; h < d.heads; ++h) {
    const Eigen::Index g = d.kv_head(h);
    Matrix q = Q.middleCols(h * dk, dk), k = K.middleCols(g * dk, dk);
    if (s.rope.on) rotate(q, s.rope), rotate(k, s.rope);
    Matrix A(T, Tk);
    A.noalias() = q * k.transpose();
    A *= scale / s.temperature;
    for (Eigen::Index i = 0; i < T; ++i) {
      auto row = A.row(i);
      if (causal) row.tail(Tk - i - 1).setConstant(-std::numeric_limits<float>::infinity());
      row.array() = (row.array() - row.maxCoeff()).exp();
      row *= 1.0f / row.sum();
    }
    concat.middleCols(h * dv, dv).noalias() = A * V.middleCols(g * dv, dv);
  }
  return s.use_w_o ? Matrix(concat * s.W_o.get()) : concat;
}

}  // namespace attention_lab::cli
