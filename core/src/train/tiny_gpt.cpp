// The tiny GPT's forward and backward passes over a batch. Rows of every
// activation are the batch's positions (sequence-major), so the projections
// are single products over all of them; attention runs per sequence and head.
#include "attention_lab/tiny_gpt.h"

#include <cmath>
#include <numbers>
#include <stdexcept>

namespace attention_lab {
namespace {

// Where each parameter sits in params_: the embeddings, twelve per layer, the final norm.
enum LayerParam { kLn1W, kLn1B, kAttnW, kAttnB, kProjW, kProjB, kLn2W, kLn2B, kFcW, kFcB, kFcProjW, kFcProjB, kPerLayer };
constexpr int kWte = 0, kWpe = 1, kFirstLayer = 2;
int layer_param(int layer, LayerParam p) { return kFirstLayer + layer * kPerLayer + p; }

// splitmix64, and Box–Muller on its doubles: the same weights from a seed on every compiler.
struct NormalSource {
  std::uint64_t state;
  double spare = 0.0;
  bool has_spare = false;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53; }
  double normal() {
    if (has_spare) {
      has_spare = false;
      return spare;
    }
    const double r = std::sqrt(-2.0 * std::log(uniform())), phi = 2.0 * std::numbers::pi * uniform();
    spare = r * std::sin(phi);
    has_spare = true;
    return r * std::cos(phi);
  }
};

Matrix normal_matrix(NormalSource& rng, int rows, int cols, double sigma) {
  Matrix m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = static_cast<float>(sigma * rng.normal());
  return m;
}

// LayerNorm over rows: out = (x − μ)·rstd·w + b, keeping μ and rstd for the backward pass.
struct NormCache {
  Matrix out;
  Eigen::VectorXf mean, rstd;
};

NormCache layer_norm(const Matrix& x, const Matrix& w, const Matrix& b, double eps) {
  NormCache c;
  c.out.resize(x.rows(), x.cols());
  c.mean.resize(x.rows());
  c.rstd.resize(x.rows());
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    const double mean = x.row(i).cast<double>().mean();
    const double var = (x.row(i).cast<double>().array() - mean).square().mean();
    const double rstd = 1.0 / std::sqrt(var + eps);
    c.mean(i) = static_cast<float>(mean);
    c.rstd(i) = static_cast<float>(rstd);
    c.out.row(i) = (((x.row(i).array() - c.mean(i)) * c.rstd(i)) * w.row(0).array() + b.row(0).array()).matrix();
  }
  return c;
}

// dx += LayerNorm's backward of dout; dw, db accumulate.
void layer_norm_backward(const Matrix& x, const NormCache& c, const Matrix& w, const Matrix& dout, Matrix& dx, Matrix& dw,
                         Matrix& db) {
  const float n = static_cast<float>(x.cols());
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    const Eigen::Array<float, 1, Eigen::Dynamic> xhat = (x.row(i).array() - c.mean(i)) * c.rstd(i);
    const Eigen::Array<float, 1, Eigen::Dynamic> dxhat = dout.row(i).array() * w.row(0).array();
    dw.row(0).array() += dout.row(i).array() * xhat;
    db.row(0).array() += dout.row(i).array();
    const float mean_dxhat = dxhat.sum() / n;
    const float mean_dxhat_xhat = (dxhat * xhat).sum() / n;
    dx.row(i).array() += (dxhat - mean_dxhat - xhat * mean_dxhat_xhat) * c.rstd(i);
  }
}

constexpr float kGeluC = 0.7978845608028654f;  // √(2/π)

float gelu(float x) { return 0.5f * x * (1.0f + std::tanh(kGeluC * (x + 0.044715f * x * x * x))); }
float gelu_grad(float x) {
  const float t = std::tanh(kGeluC * (x + 0.044715f * x * x * x));
  return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * kGeluC * (1.0f + 3.0f * 0.044715f * x * x);
}

struct LayerCache {
  Matrix input;  // the residual stream entering the layer
  NormCache ln1;
  Matrix qkv;                  // N × 3d
  std::vector<Matrix> probs;   // per sequence and head (row·heads + head): T × T
  Matrix context;              // N × d, the heads side by side
  Matrix mid;                  // input + attention
  NormCache ln2;
  Matrix fc_pre, fc_act;       // N × d_ff
};

}  // namespace

std::string tiny_gpt_shape_problem(const TinyGptShape& s) {
  auto positive = [](const char* name, int v) -> std::string {
    return v > 0 ? "" : std::string(name) + ": expected a positive number, found " + std::to_string(v);
  };
  for (const auto& [name, v] : {std::pair{"layers", s.layers}, {"heads", s.heads}, {"d_model", s.d_model},
                                {"d_ff", s.d_ff}, {"vocab", s.vocab}, {"context", s.context}})
    if (auto p = positive(name, v); !p.empty()) return p;
  if (s.d_model % s.heads != 0)
    return "heads: expected a number that divides d_model (" + std::to_string(s.d_model) + "), found " +
           std::to_string(s.heads);
  if (s.layers > 64 || s.d_model > 4096 || s.d_ff > 16384 || s.vocab > 65536 || s.context > 4096)
    return "the model is larger than a tiny GPT trained here allows (layers ≤ 64, d_model ≤ 4096, d_ff ≤ 16384, "
           "vocab ≤ 65536, context ≤ 4096)";
  return "";
}

TinyGpt::TinyGpt(TinyGptShape shape, std::uint64_t seed) : shape_(shape) {
  if (const std::string p = tiny_gpt_shape_problem(shape); !p.empty()) throw std::invalid_argument(p);
  NormalSource rng{seed};
  const int d = shape.d_model, f = shape.d_ff;
  const double sigma = 0.02, residual_sigma = 0.02 / std::sqrt(2.0 * shape.layers);
  auto add = [&](std::string name, Matrix value, bool decays) {
    TinyParam p{std::move(name), std::move(value), Matrix(), decays};
    p.grad = Matrix::Zero(p.value.rows(), p.value.cols());
    params_.push_back(std::move(p));
  };
  add("transformer.wte.weight", normal_matrix(rng, shape.vocab, d, sigma), true);
  add("transformer.wpe.weight", normal_matrix(rng, shape.context, d, sigma), true);
  for (int l = 0; l < shape.layers; ++l) {
    const std::string h = "transformer.h." + std::to_string(l) + ".";
    add(h + "ln_1.weight", Matrix::Ones(1, d), false);
    add(h + "ln_1.bias", Matrix::Zero(1, d), false);
    add(h + "attn.c_attn.weight", normal_matrix(rng, d, 3 * d, sigma), true);
    add(h + "attn.c_attn.bias", Matrix::Zero(1, 3 * d), false);
    add(h + "attn.c_proj.weight", normal_matrix(rng, d, d, residual_sigma), true);
    add(h + "attn.c_proj.bias", Matrix::Zero(1, d), false);
    add(h + "ln_2.weight", Matrix::Ones(1, d), false);
    add(h + "ln_2.bias", Matrix::Zero(1, d), false);
    add(h + "mlp.c_fc.weight", normal_matrix(rng, d, f, sigma), true);
    add(h + "mlp.c_fc.bias", Matrix::Zero(1, f), false);
    add(h + "mlp.c_proj.weight", normal_matrix(rng, f, d, residual_sigma), true);
    add(h + "mlp.c_proj.bias", Matrix::Zero(1, d), false);
  }
  add("transformer.ln_f.weight", Matrix::Ones(1, d), false);
  add("transformer.ln_f.bias", Matrix::Zero(1, d), false);
}

TinyParam* TinyGpt::find(const std::string& name) {
  for (TinyParam& p : params_)
    if (p.name == name) return &p;
  return nullptr;
}

std::uint64_t TinyGpt::parameter_count() const {
  std::uint64_t n = 0;
  for (const TinyParam& p : params_) n += static_cast<std::uint64_t>(p.value.size());
  return n;
}

std::string TinyGpt::check_batch(const TokenBatch& b) const {
  if (b.rows <= 0 || b.length <= 0) return "batch: expected at least one sequence of at least one token";
  if (b.length > shape_.context)
    return "batch: sequences of " + std::to_string(b.length) + " tokens; the model's context is " +
           std::to_string(shape_.context);
  const std::size_t n = static_cast<std::size_t>(b.rows) * static_cast<std::size_t>(b.length);
  if (b.ids.size() != n || b.targets.size() != n)
    return "batch: expected " + std::to_string(n) + " ids and targets, found " + std::to_string(b.ids.size()) + " and " +
           std::to_string(b.targets.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (b.ids[i] < 0 || b.ids[i] >= shape_.vocab)
      return "batch: token id " + std::to_string(b.ids[i]) + " is outside the vocabulary (0 to " +
             std::to_string(shape_.vocab - 1) + ")";
    if (b.targets[i] < -1 || b.targets[i] >= shape_.vocab)
      return "batch: target " + std::to_string(b.targets[i]) + " is outside the vocabulary (0 to " +
             std::to_string(shape_.vocab - 1) + ", or −1 for none)";
  }
  return "";
}

TinyGptPass TinyGpt::run(const TokenBatch& batch, bool backward, bool keep_weights) {
  if (const std::string p = check_batch(batch); !p.empty()) throw std::invalid_argument(p);
  const int B = batch.rows, T = batch.length, N = B * T, d = shape_.d_model, H = shape_.heads, dh = shape_.d_head();
  const int L = shape_.layers;
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
  auto P = [&](int i) -> Matrix& { return params_[static_cast<std::size_t>(i)].value; };
  auto G = [&](int i) -> Matrix& { return params_[static_cast<std::size_t>(i)].grad; };

  // Embeddings.
  Matrix x(N, d);
  for (int r = 0; r < N; ++r) x.row(r) = P(kWte).row(batch.ids[static_cast<std::size_t>(r)]) + P(kWpe).row(r % T);

  std::vector<LayerCache> caches(static_cast<std::size_t>(L));
  for (int l = 0; l < L; ++l) {
    LayerCache& c = caches[static_cast<std::size_t>(l)];
    c.input = x;
    c.ln1 = layer_norm(x, P(layer_param(l, kLn1W)), P(layer_param(l, kLn1B)), shape_.norm_eps);
    c.qkv.noalias() = c.ln1.out * P(layer_param(l, kAttnW));
    c.qkv.rowwise() += P(layer_param(l, kAttnB)).row(0);
    c.probs.assign(static_cast<std::size_t>(B * H), Matrix());
    c.context.resize(N, d);
#pragma omp parallel for schedule(static) if (static_cast<double>(B) * H * T * T * dh * 4 > (1 << 19))
    for (int bh = 0; bh < B * H; ++bh) {
      const int b = bh / H, h = bh % H;
      const auto q = c.qkv.block(b * T, h * dh, T, dh);
      const auto k = c.qkv.block(b * T, d + h * dh, T, dh);
      const auto v = c.qkv.block(b * T, 2 * d + h * dh, T, dh);
      Matrix s = (q * k.transpose()) * scale;
      for (int i = 0; i < T; ++i) {  // causal: query i sees keys 0…i
        const float m = s.row(i).head(i + 1).maxCoeff();
        s.row(i).head(i + 1) = (s.row(i).head(i + 1).array() - m).exp().matrix();
        s.row(i).head(i + 1) /= s.row(i).head(i + 1).sum();
        s.row(i).tail(T - i - 1).setZero();
      }
      c.context.block(b * T, h * dh, T, dh).noalias() = s * v;
      c.probs[static_cast<std::size_t>(bh)] = std::move(s);
    }
    c.mid = x;
    c.mid.noalias() += c.context * P(layer_param(l, kProjW));
    c.mid.rowwise() += P(layer_param(l, kProjB)).row(0);
    c.ln2 = layer_norm(c.mid, P(layer_param(l, kLn2W)), P(layer_param(l, kLn2B)), shape_.norm_eps);
    c.fc_pre.noalias() = c.ln2.out * P(layer_param(l, kFcW));
    c.fc_pre.rowwise() += P(layer_param(l, kFcB)).row(0);
    c.fc_act = c.fc_pre.unaryExpr([](float v) { return gelu(v); });
    x = c.mid;
    x.noalias() += c.fc_act * P(layer_param(l, kFcProjW));
    x.rowwise() += P(layer_param(l, kFcProjB)).row(0);
  }
  const int lnf = kFirstLayer + L * kPerLayer;
  const NormCache final_norm = layer_norm(x, P(lnf), P(lnf + 1), shape_.norm_eps);
  Matrix logits;
  logits.noalias() = final_norm.out * P(kWte).transpose();

  // Cross-entropy; `logits` becomes ∂loss/∂logits.
  TinyGptPass pass;
  pass.position_loss.assign(static_cast<std::size_t>(N), 0.0f);
  int counted = 0;
  for (int r = 0; r < N; ++r) counted += batch.targets[static_cast<std::size_t>(r)] >= 0;
  double total = 0.0;
  for (int r = 0; r < N; ++r) {
    const int target = batch.targets[static_cast<std::size_t>(r)];
    auto row = logits.row(r);
    if (target < 0) {
      row.setZero();
      continue;
    }
    const float m = row.maxCoeff();
    row = (row.array() - m).exp().matrix();
    const double sum = row.cast<double>().sum();
    const double nll = std::log(sum) - std::log(static_cast<double>(row(target)));
    pass.position_loss[static_cast<std::size_t>(r)] = static_cast<float>(nll);
    total += nll;
    row /= static_cast<float>(sum);
    row(target) -= 1.0f;
    row /= static_cast<float>(counted);
  }
  pass.loss = counted > 0 ? total / counted : 0.0;
  if (keep_weights) {
    pass.weights.resize(static_cast<std::size_t>(L));
    for (int l = 0; l < L; ++l) pass.weights[static_cast<std::size_t>(l)] = caches[static_cast<std::size_t>(l)].probs;
  }
  if (!backward) return pass;

  for (TinyParam& p : params_) p.grad.setZero();
  const Matrix& dlogits = logits;
  G(kWte).noalias() += dlogits.transpose() * final_norm.out;
  Matrix dnorm = dlogits * P(kWte);
  Matrix dx = Matrix::Zero(N, d);
  layer_norm_backward(x, final_norm, P(lnf), dnorm, dx, G(lnf), G(lnf + 1));

  for (int l = L - 1; l >= 0; --l) {
    const LayerCache& c = caches[static_cast<std::size_t>(l)];
    // MLP: x = mid + gelu(ln2(mid)·W_fc + b)·W_proj + b.
    G(layer_param(l, kFcProjW)).noalias() += c.fc_act.transpose() * dx;
    G(layer_param(l, kFcProjB)) += dx.colwise().sum();
    Matrix dfc = dx * P(layer_param(l, kFcProjW)).transpose();
    dfc.array() *= c.fc_pre.unaryExpr([](float v) { return gelu_grad(v); }).array();
    G(layer_param(l, kFcW)).noalias() += c.ln2.out.transpose() * dfc;
    G(layer_param(l, kFcB)) += dfc.colwise().sum();
    const Matrix dln2 = dfc * P(layer_param(l, kFcW)).transpose();
    Matrix dmid = dx;  // the residual path
    layer_norm_backward(c.mid, c.ln2, P(layer_param(l, kLn2W)), dln2, dmid, G(layer_param(l, kLn2W)),
                        G(layer_param(l, kLn2B)));
    // Attention: mid = input + context·W_o + b.
    G(layer_param(l, kProjW)).noalias() += c.context.transpose() * dmid;
    G(layer_param(l, kProjB)) += dmid.colwise().sum();
    const Matrix dcontext = dmid * P(layer_param(l, kProjW)).transpose();
    Matrix dqkv(N, 3 * d);
#pragma omp parallel for schedule(static) if (static_cast<double>(B) * H * T * T * dh * 8 > (1 << 19))
    for (int bh = 0; bh < B * H; ++bh) {
      const int b = bh / H, h = bh % H;
      const Matrix& a = c.probs[static_cast<std::size_t>(bh)];
      const auto q = c.qkv.block(b * T, h * dh, T, dh);
      const auto k = c.qkv.block(b * T, d + h * dh, T, dh);
      const auto v = c.qkv.block(b * T, 2 * d + h * dh, T, dh);
      const auto dctx = dcontext.block(b * T, h * dh, T, dh);
      const Matrix da = dctx * v.transpose();
      dqkv.block(b * T, 2 * d + h * dh, T, dh).noalias() = a.transpose() * dctx;
      // softmax backward: ∂L/∂Sᵢⱼ = Aᵢⱼ(∂L/∂Aᵢⱼ − Σₖ Aᵢₖ ∂L/∂Aᵢₖ); masked cells have A = 0.
      const Eigen::VectorXf row_dot = (a.array() * da.array()).rowwise().sum();
      Matrix ds = (a.array() * (da.array().colwise() - row_dot.array())).matrix() * scale;
      dqkv.block(b * T, h * dh, T, dh).noalias() = ds * k;
      dqkv.block(b * T, d + h * dh, T, dh).noalias() = ds.transpose() * q;
    }
    G(layer_param(l, kAttnW)).noalias() += c.ln1.out.transpose() * dqkv;
    G(layer_param(l, kAttnB)) += dqkv.colwise().sum();
    const Matrix dln1 = dqkv * P(layer_param(l, kAttnW)).transpose();
    dx = dmid;
    layer_norm_backward(c.input, c.ln1, P(layer_param(l, kLn1W)), dln1, dx, G(layer_param(l, kLn1W)),
                        G(layer_param(l, kLn1B)));
  }
  for (int r = 0; r < N; ++r) {
    G(kWte).row(batch.ids[static_cast<std::size_t>(r)]) += dx.row(r);
    G(kWpe).row(r % T) += dx.row(r);
  }
  return pass;
}

void AdamW::step(std::vector<TinyParam>& params) {
  if (first_.size() != params.size()) {
    first_.clear();
    second_.clear();
    for (const TinyParam& p : params) {
      first_.push_back(Eigen::MatrixXd::Zero(p.value.rows(), p.value.cols()));
      second_.push_back(Eigen::MatrixXd::Zero(p.value.rows(), p.value.cols()));
    }
  }
  ++steps_;
  const AdamWSettings& s = settings_;
  const double correction1 = 1.0 - std::pow(s.beta1, steps_), correction2 = 1.0 - std::pow(s.beta2, steps_);
  for (std::size_t i = 0; i < params.size(); ++i) {
    TinyParam& p = params[i];
    const Eigen::MatrixXd g = p.grad.cast<double>();
    first_[i] = s.beta1 * first_[i] + (1.0 - s.beta1) * g;
    second_[i] = s.beta2 * second_[i] + (1.0 - s.beta2) * g.cwiseProduct(g);
    Eigen::MatrixXd w = p.value.cast<double>();
    if (p.decays && s.weight_decay > 0.0) w *= 1.0 - s.learning_rate * s.weight_decay;
    const Eigen::ArrayXXd denom = (second_[i].array() / correction2).sqrt() + s.eps;
    w.array() -= (s.learning_rate / correction1) * first_[i].array() / denom;
    p.value = w.cast<float>();
  }
}

}  // namespace attention_lab
