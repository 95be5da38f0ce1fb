#include "attention_lab/gradients.h"

#include "attention_lab/stage_registry.h"

#include <cmath>
#include <stdexcept>

namespace attention_lab {

const char* to_string(LossKind kind) { return kind == LossKind::Mse ? "mse" : "attend"; }

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

}  // namespace

std::string gradients_problem(const Scenario& s, const Loss& loss) {
  const Dims d = s.dims();
  if (s.rope.on) return not_yet("RoPE");
  if (s.qk_norm.on()) return not_yet("the q/k norm");
  if (s.softcap > 0.0f) return not_yet("soft-capped scores");
  if (s.use_sinks) return not_yet("attention sinks");
  if (d.kv_heads != d.heads) return not_yet("grouped K/V heads");
  if (s.cross()) return not_yet("cross-attention");
  if (!s.pins.empty()) return "pins: a pinned cell is a constant the gradients would have to stop at; not computed yet (clear the pins)";
  if (loss.kind == LossKind::Mse) {
    if (loss.target.rows() != d.T || loss.target.cols() != d.d_out)
      return "loss.target: expected " + std::to_string(d.T) + " x " + std::to_string(d.d_out) + " (T x d_out), found " +
             std::to_string(loss.target.rows()) + " x " + std::to_string(loss.target.cols());
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

Gradients backward(const Engine& engine, const Scenario& s, const Loss& loss) {
  if (const std::string problem = gradients_problem(s, loss); !problem.empty()) throw std::invalid_argument(problem);
  const Dims d = s.dims();
  const Index T = d.T, dk = d.d_k, dv = d.d_v, H = d.heads;
  auto value = [&](StageKind k, int h = 0) { return engine.stage(is_per_head(k) ? StageId::of_head(k, h) : StageId::input(k)); };
  Gradients g;
  auto put = [&](StageId id, Matrix m) { g.of[grad_of(id)] = std::move(m); };

  // ∂L/∂O and ∂L/∂A of the judged head, from the loss
  const MatrixView O = value(StageKind::Output);
  Matrix dO = Matrix::Zero(O.rows(), O.cols());
  Matrix dA_loss;  // Attend: ∂L/∂A of loss.head
  if (loss.kind == LossKind::Mse) {
    const Matrix diff = O - loss.target.get();
    const double n = static_cast<double>(diff.size());
    g.loss = static_cast<double>(diff.cast<double>().squaredNorm()) / n;
    dO = diff * static_cast<float>(2.0 / n);
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
  put(StageId::input(StageKind::Output), dO);

  // O = C·W_o + b_o
  const MatrixView C = value(StageKind::Concat);
  Matrix dC;
  if (s.use_w_o) {
    dC = dO * s.W_o.get().transpose();
    put(StageId::input(StageKind::W_o), C.transpose() * dO);
  } else {
    dC = dO;
  }
  if (s.use_output_bias) put(StageId::input(StageKind::b_o), dO.colwise().sum());
  put(StageId::input(StageKind::Concat), dC);

  const double divisor = score_divisor(s);
  Matrix dQ = Matrix::Zero(T, H * dk), dK = Matrix::Zero(T, H * dk), dV = Matrix::Zero(T, H * dv);
  for (int h = 0; h < H; ++h) {
    const Matrix dCh = dC.middleCols(h * dv, dv);
    put(StageId::of_head(StageKind::Context, h), dCh);
    const MatrixView A = value(StageKind::Weights, h);
    const MatrixView Vh = value(StageKind::HeadV, h);
    Matrix dA = dCh * Vh.transpose();
    if (loss.kind == LossKind::Attend && h == loss.head) dA += dA_loss;
    put(StageId::of_head(StageKind::Weights, h), dA);
    const Matrix dVh = A.transpose() * dCh;
    put(StageId::of_head(StageKind::HeadV, h), dVh);
    dV.middleCols(h * dv, dv) = dVh;
    // softmax backward, row by row (a forbidden key has A = 0, so ∂Ŝ = 0 there)
    const Eigen::VectorXf row_dot = (A.array() * dA.array()).rowwise().sum();
    const Matrix dMasked = (A.array() * (dA.colwise() - row_dot).array()).matrix();
    put(StageId::of_head(StageKind::Masked, h), dMasked);
    put(StageId::of_head(StageKind::Scaled, h), dMasked);
    const Matrix dS = dMasked / static_cast<float>(divisor);
    put(StageId::of_head(StageKind::Scores, h), dS);
    const MatrixView Qh = value(StageKind::HeadQ, h), Kh = value(StageKind::HeadK, h);
    const Matrix dQh = dS * Kh, dKh = dS.transpose() * Qh;
    put(StageId::of_head(StageKind::HeadQ, h), dQh);
    put(StageId::of_head(StageKind::HeadK, h), dKh);
    dQ.middleCols(h * dk, dk) = dQh;
    dK.middleCols(h * dk, dk) = dKh;
  }
  put(StageId::input(StageKind::Q), dQ);
  put(StageId::input(StageKind::K), dK);
  put(StageId::input(StageKind::V), dV);

  // the projections: Q = X·W_q + b_q, and K, V
  const MatrixView X = value(StageKind::X);
  Matrix dX = Matrix::Zero(X.rows(), X.cols());
  const StageKind weights[] = {StageKind::W_q, StageKind::W_k, StageKind::W_v};
  const StageKind biases[] = {StageKind::b_q, StageKind::b_k, StageKind::b_v};
  const Matrix* grads[] = {&dQ, &dK, &dV};
  for (int i = 0; i < 3; ++i) {
    const MatrixView W = value(weights[i]);
    put(StageId::input(weights[i]), X.transpose() * *grads[i]);
    if (s.use_bias) put(StageId::input(biases[i]), grads[i]->colwise().sum());
    dX += *grads[i] * W.transpose();
  }
  put(StageId::input(StageKind::X), dX);
  return g;
}

}  // namespace attention_lab
