#include "attention_lab/gradients.h"

#include "attention_lab/stage_registry.h"

#include <cmath>
#include <stdexcept>

namespace attention_lab {

const char* to_string(LossKind kind) {
  switch (kind) {
    case LossKind::Mse: return "mse";
    case LossKind::Attend: return "attend";
    case LossKind::NextToken: return "next_token";
  }
  return "?";
}

const Matrix* Gradients::find(StageId id) const {
  id.role = Role::Gradient;
  const auto it = of.find(id);
  return it == of.end() ? nullptr : &it->second;
}

namespace {

using Index = Eigen::Index;

std::string not_yet(const char* what) {
  return std::string(what) + ": its backward pass is not written yet, so no gradient is computed (turn it off)";
}

StageId grad_of(StageId id) {
  id.role = Role::Gradient;
  return id;
}

// RoPE backward: the rotation's transpose turns ∂Q back by −φ, pair by pair,
// in each `block`-wide head of `d` (rows are positions).
Matrix unrotate(const Scenario& s, const Dims& d, const Matrix& grad) {
  Matrix out = grad;
  const int rw = d.rotary_dims();
  for (Index r = 0; r < grad.rows(); ++r)
    for (Index c0 = 0; c0 + d.d_k <= grad.cols(); c0 += d.d_k)
      for (int pair = 0; pair < rw / 2; ++pair) {
        const auto [i, j] = rope_pair(s.rope.pairs, rw, pair);
        const double angle = rope_angle(s.rope, rw, pair, static_cast<int>(r));
        const float cs = static_cast<float>(std::cos(angle)), sn = static_cast<float>(std::sin(angle));
        const float gi = grad(r, c0 + i), gj = grad(r, c0 + j);
        out(r, c0 + i) = gi * cs + gj * sn;
        out(r, c0 + j) = -gi * sn + gj * cs;
      }
  return out;
}

// q/k norm backward: y = x·g/√(mean(x²) + ε) over each span of `n` values of
// a row (a head's d_k, or the whole row); returns ∂x and adds to ∂g.
Matrix unnorm(const MatrixView& x, const Matrix& dy, const Matrix& gain, bool whole, int n, float eps, Matrix& dgain) {
  Matrix dx(x.rows(), x.cols());
  for (Index r = 0; r < x.rows(); ++r)
    for (Index c0 = 0; c0 + n <= x.cols(); c0 += n) {
      double mean_square = 0.0, dot = 0.0;
      for (Index k = 0; k < n; ++k) mean_square += static_cast<double>(x(r, c0 + k)) * static_cast<double>(x(r, c0 + k));
      mean_square /= static_cast<double>(n);
      const double inv = 1.0 / std::sqrt(mean_square + static_cast<double>(eps));
      for (Index k = 0; k < n; ++k) {
        const Index gk = whole ? c0 + k : k;
        dot += static_cast<double>(dy(r, c0 + k)) * static_cast<double>(gain(0, gk)) * static_cast<double>(x(r, c0 + k));
        dgain(0, gk) += static_cast<float>(static_cast<double>(dy(r, c0 + k)) * static_cast<double>(x(r, c0 + k)) * inv);
      }
      for (Index k = 0; k < n; ++k) {
        const Index gk = whole ? c0 + k : k;
        dx(r, c0 + k) = static_cast<float>(inv * static_cast<double>(gain(0, gk)) * static_cast<double>(dy(r, c0 + k)) -
                                           static_cast<double>(x(r, c0 + k)) * inv * inv * inv / static_cast<double>(n) * dot);
      }
    }
  return dx;
}

}  // namespace

Matrix next_token_logit_gradient(const MatrixView& O, const Loss& loss, double* value) {
  const Matrix logits = O * loss.W_U.get();
  const Index T = logits.rows();
  Matrix dLogits(T, logits.cols());
  double sum = 0.0;
  for (Index i = 0; i < T; ++i) {
    // a stable log-softmax, in double: the loss is a difference of large numbers otherwise
    const double top = static_cast<double>(logits.row(i).maxCoeff());
    double z = 0.0;
    for (Index v = 0; v < logits.cols(); ++v) z += std::exp(static_cast<double>(logits(i, v)) - top);
    const Index t = loss.targets[static_cast<std::size_t>(i)];
    sum -= static_cast<double>(logits(i, t)) - top - std::log(z);
    for (Index v = 0; v < logits.cols(); ++v) {
      const double p = std::exp(static_cast<double>(logits(i, v)) - top) / z;
      dLogits(i, v) = static_cast<float>((p - (v == t ? 1.0 : 0.0)) / static_cast<double>(T));
    }
  }
  if (value) *value = sum / static_cast<double>(T);
  return dLogits;
}

std::string gradients_problem(const Scenario& s) {
  if (s.rope.on && s.rope.scaling != RopeScaling::None) return not_yet("RoPE with a scaling");
  if (!s.pins.empty()) return "pins: a pinned cell is a constant the gradients would have to stop at; not computed yet (clear the pins)";
  return {};
}

std::string gradients_problem(const Scenario& s, const Loss& loss) {
  const Dims d = s.dims();
  if (std::string problem = gradients_problem(s); !problem.empty()) return problem;
  if (loss.kind == LossKind::Mse) {
    if (loss.target.rows() != d.T || loss.target.cols() != d.d_out)
      return "loss.target: expected " + std::to_string(d.T) + " x " + std::to_string(d.d_out) + " (T x d_out), found " +
             std::to_string(loss.target.rows()) + " x " + std::to_string(loss.target.cols());
    return {};
  }
  if (loss.kind == LossKind::NextToken) {
    if (loss.W_U.rows() != d.d_out || loss.W_U.cols() < 1)
      return "loss.W_U: expected " + std::to_string(d.d_out) + " rows (d_out, one per output column) and a column per token, found " +
             std::to_string(loss.W_U.rows()) + " x " + std::to_string(loss.W_U.cols());
    if (static_cast<int>(loss.targets.size()) != d.T)
      return "loss.targets: expected " + std::to_string(d.T) + " token ids (one per row, T), found " + std::to_string(loss.targets.size());
    const int vocab = static_cast<int>(loss.W_U.cols());
    for (int i = 0; i < d.T; ++i)
      if (const int t = loss.targets[static_cast<std::size_t>(i)]; t < 0 || t >= vocab)
        return "loss.targets[" + std::to_string(i) + "]: expected a token id from 0 to " + std::to_string(vocab - 1) +
               " (W_U's columns, the vocabulary), found " + std::to_string(t);
    return {};
  }
  if (loss.head < 0 || loss.head >= d.heads)
    return "loss.head: expected a head from 0 to " + std::to_string(d.heads - 1) + ", found " + std::to_string(loss.head);
  if (static_cast<int>(loss.targets.size()) != d.T)
    return "loss.targets: expected " + std::to_string(d.T) + " keys (one per query row, T), found " +
           std::to_string(loss.targets.size());
  for (int i = 0; i < d.T; ++i) {
    const int j = loss.targets[static_cast<std::size_t>(i)];
    if (j < 0 || j >= d.T_k)
      return "loss.targets[" + std::to_string(i) + "]: expected a key from 0 to " + std::to_string(d.T_k - 1) + ", found " +
             std::to_string(j);
    if (!s.mask_allows(i, j))
      return "loss.targets[" + std::to_string(i) + "]: row " + std::to_string(i) + " may not attend to key " +
             std::to_string(j) + " (the mask forbids it), so its loss would be infinite";
  }
  return {};
}

namespace {

// A stage's values in `engine`.
MatrixView value_of(const Engine& engine, StageKind k, int h = 0) {
  return engine.stage(is_per_head(k) ? StageId::of_head(k, h) : StageId::input(k));
}

// Every gradient from ∂L/∂O back to X, into g (whose loss is set); `dA_loss`
// (may be empty) adds to ∂L/∂A of head `attend_head`: the attend loss.
void backward_from(const Engine& engine, const Scenario& s, Matrix dO, const Matrix& dA_loss, int attend_head,
                   Gradients& g) {
  const Dims d = s.dims();
  const Index T = d.T, Tk = d.T_k, dk = d.d_k, dv = d.d_v, H = d.heads, KV = d.kv_heads;
  auto value = [&](StageKind k, int h = 0) { return value_of(engine, k, h); };
  auto put = [&](StageId id, Matrix m) { g.of[grad_of(id)] = std::move(m); };
  auto put_head = [&](StageKind k, int h, Matrix m) { put(StageId::of_head(k, h), std::move(m)); };
  auto put_layer = [&](StageKind k, Matrix m) { put(StageId::input(k), std::move(m)); };
  put_layer(StageKind::Output, dO);

  const MatrixView C = value(StageKind::Concat);
  Matrix dC = dO;
  if (s.use_w_o) {
    dC = dO * s.W_o.get().transpose();
    put_layer(StageKind::W_o, C.transpose() * dO);
  }
  if (s.use_output_bias) put_layer(StageKind::b_o, dO.colwise().sum());
  put_layer(StageKind::Concat, dC);

  // each head, back to the Q, K and V that enter it (K and V summed over the
  // query heads that share a K/V head)
  const double divisor = score_divisor(s);
  Matrix dQ = Matrix::Zero(T, H * dk), dK = Matrix::Zero(Tk, KV * dk), dV = Matrix::Zero(Tk, KV * dv);
  Matrix dSinks = Matrix::Zero(1, H);
  for (int h = 0; h < H; ++h) {
    const int kvh = d.kv_head(h);
    const Matrix dCh = dC.middleCols(h * dv, dv);
    put_head(StageKind::Context, h, dCh);
    const MatrixView A = value(StageKind::Weights, h);
    Matrix dA = dCh * value(StageKind::HeadV, h).transpose();
    if (h == attend_head) dA += dA_loss;
    put_head(StageKind::Weights, h, dA);
    dV.middleCols(kvh * dv, dv) += A.transpose() * dCh;
    // softmax backward, row by row (a forbidden key has A = 0, so ∂Ŝ = 0 there);
    // a sink is one more logit whose share σ nothing downstream reads
    const Eigen::VectorXf row_dot = (A.array() * dA.array()).rowwise().sum();
    const Matrix dMasked = (A.array() * (dA.colwise() - row_dot).array()).matrix();
    put_head(StageKind::Masked, h, dMasked);
    if (s.use_sinks) {
      const MatrixView share = value(StageKind::SinkShare, h);
      dSinks(0, h) = -(share.col(0).array() * row_dot.array()).sum();
    }
    // the bias and the mask are constants; the soft-cap c·tanh(x/c) has slope 1 − (capped/c)²
    Matrix dScaled = dMasked;
    if (s.softcap > 0.0f) {
      put_head(StageKind::Capped, h, dMasked);
      const MatrixView capped = value(StageKind::Capped, h);
      dScaled = (dMasked.array() * (1.0f - (capped.array() / s.softcap).square())).matrix();
    }
    put_head(StageKind::Scaled, h, dScaled);
    const Matrix dS = dScaled / static_cast<float>(divisor);
    put_head(StageKind::Scores, h, dS);
    dQ.middleCols(h * dk, dk) = dS * value(StageKind::HeadK, h);
    dK.middleCols(kvh * dk, dk) += dS.transpose() * value(StageKind::HeadQ, h);
  }
  if (s.use_sinks) put_layer(StageKind::Sinks, dSinks);
  // a head's Q, K and V are views of the whole: their gradients are its blocks (K and V: the K/V head's)
  const auto head_views = [&](StageKind q_kind, StageKind k_kind, const Matrix& q, const Matrix& k) {
    for (int h = 0; h < H; ++h) {
      put_head(q_kind, h, q.middleCols(h * dk, dk));
      put_head(k_kind, h, k.middleCols(d.kv_head(h) * dk, dk));
    }
  };
  for (int h = 0; h < H; ++h) put_head(StageKind::HeadV, h, dV.middleCols(d.kv_head(h) * dv, dv));
  head_views(StageKind::HeadQ, StageKind::HeadK, dQ, dK);
  put_layer(StageKind::Q, dQ);
  put_layer(StageKind::K, dK);
  put_layer(StageKind::V, dV);

  // RoPE, then the q/k norm, back to the projections
  Matrix dQp = dQ, dKp = dK;
  if (s.rope.on) {
    dQp = unrotate(s, d, dQ);
    dKp = unrotate(s, d, dK);
    put_layer(StageKind::QUnrotated, dQp);
    put_layer(StageKind::KUnrotated, dKp);
    head_views(StageKind::HeadQUnrotated, StageKind::HeadKUnrotated, dQp, dKp);
  }
  if (s.qk_norm.on()) {
    const bool whole = s.qk_norm.scope == QkNormScope::Whole;
    Matrix dgq = Matrix::Zero(1, s.q_norm.cols()), dgk = Matrix::Zero(1, s.k_norm.cols());
    const MatrixView Pq = value(StageKind::QProjected), Pk = value(StageKind::KProjected);
    dQp = unnorm(Pq, dQp, s.q_norm.get(), whole, whole ? static_cast<int>(Pq.cols()) : d.d_k, s.qk_norm.eps, dgq);
    dKp = unnorm(Pk, dKp, s.k_norm.get(), whole, whole ? static_cast<int>(Pk.cols()) : d.d_k, s.qk_norm.eps, dgk);
    put_layer(StageKind::QNorm, dgq);
    put_layer(StageKind::KNorm, dgk);
    put_layer(StageKind::QProjected, dQp);
    put_layer(StageKind::KProjected, dKp);
    head_views(StageKind::HeadQProjected, StageKind::HeadKProjected, dQp, dKp);
  }

  // the projections: Q = X·W_q + b_q, K and V from X (X_kv with cross-attention)
  const MatrixView X = value(StageKind::X);
  const MatrixView Xkv = s.cross() ? value(StageKind::X_kv) : X;
  Matrix dX = dQp * s.W_q.get().transpose();
  Matrix dXkv = dKp * s.W_k.get().transpose() + dV * s.W_v.get().transpose();
  put_layer(StageKind::W_q, X.transpose() * dQp);
  put_layer(StageKind::W_k, Xkv.transpose() * dKp);
  put_layer(StageKind::W_v, Xkv.transpose() * dV);
  if (s.use_bias) {
    put_layer(StageKind::b_q, dQp.colwise().sum());
    put_layer(StageKind::b_k, dKp.colwise().sum());
    put_layer(StageKind::b_v, dV.colwise().sum());
  }
  if (s.cross()) {
    put_layer(StageKind::X_kv, std::move(dXkv));
  } else {
    dX += dXkv;
  }
  put_layer(StageKind::X, std::move(dX));
}

}  // namespace

Gradients backward_from_output(const Engine& engine, const Scenario& s, const Matrix& dO, double loss,
                               std::string outside) {
  if (const std::string problem = gradients_problem(s); !problem.empty()) throw std::invalid_argument(problem);
  const Dims d = s.dims();
  if (dO.rows() != d.T || dO.cols() != d.d_out)
    throw std::invalid_argument("dO: expected " + std::to_string(d.T) + " x " + std::to_string(d.d_out) +
                                " (T x d_out), found " + std::to_string(dO.rows()) + " x " + std::to_string(dO.cols()));
  Gradients g;
  g.loss = loss;
  g.outside = std::move(outside);
  backward_from(engine, s, dO, Matrix(), -1, g);
  return g;
}

Gradients backward(const Engine& engine, const Scenario& s, const Loss& loss) {
  if (const std::string problem = gradients_problem(s, loss); !problem.empty()) throw std::invalid_argument(problem);
  const Dims d = s.dims();
  const Index T = d.T;
  auto value = [&](StageKind k, int h = 0) { return value_of(engine, k, h); };
  Gradients g;

  // ∂L/∂O, or ∂L/∂A of the judged head, from the loss
  const MatrixView O = value(StageKind::Output);
  Matrix dO = Matrix::Zero(O.rows(), O.cols());
  Matrix dA_loss;
  if (loss.kind == LossKind::Mse) {
    const Matrix diff = O - loss.target.get();
    const double n = static_cast<double>(diff.size());
    g.loss = static_cast<double>(diff.cast<double>().squaredNorm()) / n;
    dO = diff * static_cast<float>(2.0 / n);
  } else if (loss.kind == LossKind::NextToken) {
    // logits = O·W_U; ∂L/∂logitsᵢ = (softmax(logitsᵢ) − onehot(targetᵢ)) / T; ∂O = ∂logits·W_Uᵀ
    const Matrix dLogits = next_token_logit_gradient(O, loss, &g.loss);
    dO = dLogits * loss.W_U.get().transpose();
  } else {
    const MatrixView A = value(StageKind::Weights, loss.head);
    dA_loss = Matrix::Zero(A.rows(), A.cols());
    double sum = 0.0;
    for (Index i = 0; i < T; ++i) {
      const Index j = loss.targets[static_cast<std::size_t>(i)];
      sum -= std::log(static_cast<double>(A(i, j)));
      dA_loss(i, j) = static_cast<float>(-1.0 / (static_cast<double>(T) * static_cast<double>(A(i, j))));
    }
    g.loss = sum / static_cast<double>(T);
  }
  backward_from(engine, s, std::move(dO), dA_loss, loss.kind == LossKind::Attend ? loss.head : -1, g);
  return g;
}

}  // namespace attention_lab
