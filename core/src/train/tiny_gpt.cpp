// The tiny GPT's forward and backward passes over a batch. Rows of every
// activation are the batch's positions (sequence-major), so the projections
// are single products over all of them; attention runs per sequence and head.
#include "attention_lab/tiny_gpt.h"

#include "attention_lab/engine.h"
#include "attention_lab/gemm.h"
#include "base/parallel.h"

#include <algorithm>
#include <malloc.h>
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
constexpr float kGeluA = 0.044715f;

// GPT-2's GELU, 0.5·x·(1 + tanh(√(2/π)(x + 0.044715x³))), with Eigen's
// vectorized tanh; the tanh is kept for the backward pass.
void gelu(const Matrix& x, Matrix& tanh_out, Matrix& out) {
  tanh_out = (kGeluC * (x.array() + kGeluA * x.array().cube())).tanh().matrix();
  out = (0.5f * x.array() * (1.0f + tanh_out.array())).matrix();
}

// grad *= GELU'(x), from the forward pass's tanh.
void gelu_backward(const Matrix& x, const Matrix& t, Matrix& grad) {
  const auto xa = x.array(), ta = t.array();
  grad.array() *= 0.5f * (1.0f + ta) + 0.5f * xa * (1.0f - ta.square()) * kGeluC * (1.0f + 3.0f * kGeluA * xa.square());
}

// Parts a batch is cut into (TinyGpt::run).
constexpr int kParts = 4;

// c = a·b (b transposed: a·bᵀ), or c += with `accumulate`, on the project's
// GEMM (gemm.h): the packed kernel where the CPU has it, on the calling
// thread inside a part.
void product(const Matrix& a, const Matrix& b, bool b_transposed, Matrix& c, bool accumulate = false) {
  const Eigen::Index n = b_transposed ? b.rows() : b.cols();
  if (!accumulate) c.resize(a.rows(), n);
  gemm(static_cast<int>(a.rows()), static_cast<int>(n), static_cast<int>(a.cols()), a.data(), static_cast<int>(a.cols()),
       b.data(), static_cast<int>(b.cols()), b_transposed, c.data(), static_cast<int>(c.cols()), accumulate);
}

// aᵀ, copied in tiles that stay in the cache (a plain copy reads a column at a time).
Matrix transposed(const Matrix& a) {
  constexpr Eigen::Index kTile = 16;
  Matrix t(a.cols(), a.rows());
  for (Eigen::Index i0 = 0; i0 < a.rows(); i0 += kTile)
    for (Eigen::Index j0 = 0; j0 < a.cols(); j0 += kTile) {
      const Eigen::Index rows = std::min(kTile, a.rows() - i0), cols = std::min(kTile, a.cols() - j0);
      t.block(j0, i0, cols, rows) = a.block(i0, j0, rows, cols).transpose();
    }
  return t;
}

// g += aᵀ·b: a weight's gradient from its input and its output's gradient.
void add_weight_gradient(const Matrix& a, const Matrix& b, Matrix& g) { product(transposed(a), b, false, g, true); }

// A head's block of rows of a wider matrix (Q of one head inside Q|K|V).
using Block = Eigen::Map<Matrix, 0, Eigen::OuterStride<>>;
using ConstBlock = Eigen::Map<const Matrix, 0, Eigen::OuterStride<>>;

struct LayerCache {
  Matrix input;  // the residual stream entering the layer
  NormCache ln1;
  Matrix qkv;                  // N × 3d
  std::vector<Matrix> probs;   // per sequence and head (row·heads + head): T × T
  Matrix context;              // N × d, the heads side by side
  Matrix mid;                  // input + attention
  NormCache ln2;
  Matrix fc_pre, fc_tanh, fc_act;  // N × d_ff
};

}  // namespace

namespace {

// How a parameter starts: GPT-2's initialisation.
enum class Init { Normal, ResidualNormal, Ones, Zeros };

// One parameter's place in params_: its Hugging Face name, shape and start.
struct ParamSlot {
  std::string name;
  int rows, cols;
  bool decays;
  Init init;
};

// Every parameter in params_'s order: the embeddings, twelve per layer (LayerParam's order), the final norm.
std::vector<ParamSlot> param_slots(const TinyGptShape& shape) {
  const int d = shape.d_model, f = shape.d_ff;
  std::vector<ParamSlot> slots{{"transformer.wte.weight", shape.vocab, d, true, Init::Normal},
                               {"transformer.wpe.weight", shape.context, d, true, Init::Normal}};
  for (int l = 0; l < shape.layers; ++l) {
    const std::string h = "transformer.h." + std::to_string(l) + ".";
    const std::vector<ParamSlot> layer{
        {h + "ln_1.weight", 1, d, false, Init::Ones},         {h + "ln_1.bias", 1, d, false, Init::Zeros},
        {h + "attn.c_attn.weight", d, 3 * d, true, Init::Normal}, {h + "attn.c_attn.bias", 1, 3 * d, false, Init::Zeros},
        {h + "attn.c_proj.weight", d, d, true, Init::ResidualNormal}, {h + "attn.c_proj.bias", 1, d, false, Init::Zeros},
        {h + "ln_2.weight", 1, d, false, Init::Ones},         {h + "ln_2.bias", 1, d, false, Init::Zeros},
        {h + "mlp.c_fc.weight", d, f, true, Init::Normal},    {h + "mlp.c_fc.bias", 1, f, false, Init::Zeros},
        {h + "mlp.c_proj.weight", f, d, true, Init::ResidualNormal}, {h + "mlp.c_proj.bias", 1, d, false, Init::Zeros}};
    slots.insert(slots.end(), layer.begin(), layer.end());
  }
  slots.push_back({"transformer.ln_f.weight", 1, d, false, Init::Ones});
  slots.push_back({"transformer.ln_f.bias", 1, d, false, Init::Zeros});
  return slots;
}

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
  // Every step allocates the same activations (megabytes each) and frees
  // them. glibc maps blocks that large afresh and trims the heap's top, so
  // each step paid the kernel to fault zeroed pages back in: 12 % of a step
  // at d_model 128, T 128 (perf). Kept by malloc instead, they are reused.
  // Process-wide and idempotent; it only keeps freed memory for reuse.
  static const bool tuned = [] {
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    return true;
  }();
  (void)tuned;
  NormalSource rng{seed};
  const double sigma = 0.02, residual_sigma = 0.02 / std::sqrt(2.0 * shape.layers);
  for (const ParamSlot& slot : param_slots(shape)) {
    TinyParam p{slot.name, Matrix(), Matrix(), slot.decays};
    switch (slot.init) {
      case Init::Normal: p.value = normal_matrix(rng, slot.rows, slot.cols, sigma); break;
      case Init::ResidualNormal: p.value = normal_matrix(rng, slot.rows, slot.cols, residual_sigma); break;
      case Init::Ones: p.value = Matrix::Ones(slot.rows, slot.cols); break;
      case Init::Zeros: p.value = Matrix::Zero(slot.rows, slot.cols); break;
    }
    p.grad = Matrix::Zero(slot.rows, slot.cols);
    params_.push_back(std::move(p));
  }
}

TinyGpt::TinyGpt(TinyGptShape shape, std::vector<TinyParam> params) : shape_(shape) {
  if (const std::string p = tiny_gpt_shape_problem(shape); !p.empty()) throw std::invalid_argument(p);
  const std::vector<ParamSlot> slots = param_slots(shape);
  if (params.size() != slots.size())
    throw std::invalid_argument("parameters: expected " + std::to_string(slots.size()) + " (a GPT-2 of " +
                                std::to_string(shape.layers) + " layers), found " + std::to_string(params.size()));
  for (std::size_t i = 0; i < params.size(); ++i) {
    const ParamSlot& want = slots[i];
    TinyParam& p = params[i];
    if (p.name != want.name) throw std::invalid_argument("parameter " + std::to_string(i) + ": expected " + want.name + ", found " + p.name);
    if (p.value.rows() != want.rows || p.value.cols() != want.cols)
      throw std::invalid_argument(p.name + ": expected " + std::to_string(want.rows) + " x " + std::to_string(want.cols) +
                                  ", found " + std::to_string(p.value.rows()) + " x " + std::to_string(p.value.cols()));
    p.decays = want.decays;
  }
  params_ = std::move(params);
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

namespace {

// What one part of a batch (a few of its sequences) gives back.
struct PartResult {
  double loss_sum = 0.0;
  std::vector<float> position_loss;
  std::vector<std::vector<Matrix>> weights;  // [layer][sequence·heads + head]
  std::vector<Matrix> grads;                 // per parameter
};

// TinyGpt::attention_output_gradient's request: the layer, the attention
// output it should have instead of its own (null: its own), and the answer.
struct StreamGradient {
  int layer = 0;
  const Matrix* attention_out = nullptr;
  Matrix d_attention_out;
  const std::function<bool()>* keep_going = nullptr;  // asked before each layer, both ways; false: throw Cancelled

  void check() const {
    if (keep_going && *keep_going && !(*keep_going)()) throw Cancelled();
  }
};

// The forward pass of sequences [first, first + rows) of `batch`, and with
// `backward` the gradient of (their losses summed) / `counted` into out.grads.
// With `stream` (and `backward`), no parameter's gradient: the pass goes back
// only as far as stream->layer's attention output and leaves ∂loss/∂ of it there.
void run_part(const TinyGptShape& shape, const std::vector<TinyParam>& params, const TokenBatch& batch, int first,
              int rows, int counted, bool backward, bool keep_weights, PartResult& out, StreamGradient* stream = nullptr) {
  const int B = rows, T = batch.length, N = B * T, d = shape.d_model, H = shape.heads, dh = shape.d_head();
  const int L = shape.layers;
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
  const int* ids = &batch.ids[static_cast<std::size_t>(first * T)];
  const int* targets = &batch.targets[static_cast<std::size_t>(first * T)];
  auto P = [&](int i) -> const Matrix& { return params[static_cast<std::size_t>(i)].value; };
  auto G = [&](int i) -> Matrix& { return out.grads[static_cast<std::size_t>(i)]; };

  Matrix x(N, d);
  for (int r = 0; r < N; ++r) x.row(r) = P(kWte).row(ids[r]) + P(kWpe).row(r % T);

  std::vector<LayerCache> caches(static_cast<std::size_t>(L));
  for (int l = 0; l < L; ++l) {
    if (stream) stream->check();
    LayerCache& c = caches[static_cast<std::size_t>(l)];
    if (stream && l == stream->layer && stream->attention_out) {
      // The layer's attention output as given (an edited layer): the layers after it run from it.
      c.mid = x + *stream->attention_out;
    } else {
      c.input = x;
      c.ln1 = layer_norm(x, P(layer_param(l, kLn1W)), P(layer_param(l, kLn1B)), shape.norm_eps);
      product(c.ln1.out, P(layer_param(l, kAttnW)), false, c.qkv);
      c.qkv.rowwise() += P(layer_param(l, kAttnB)).row(0);
      c.probs.assign(static_cast<std::size_t>(B * H), Matrix());
      c.context.resize(N, d);
      for (int bh = 0; bh < B * H; ++bh) {
        const int b = bh / H, h = bh % H;
        const float* q = c.qkv.data() + static_cast<std::ptrdiff_t>(b * T) * 3 * d + h * dh;  // rows 3·d apart
        const float* k = q + d;
        const float* v = q + 2 * d;
        Matrix a(T, T);
        gemm(T, T, dh, q, 3 * d, k, 3 * d, true, a.data(), T);
        a *= scale;
        for (int i = 0; i < T; ++i) {  // causal: query i sees keys 0…i
          auto seen = a.row(i).head(i + 1);
          seen = (seen.array() - seen.maxCoeff()).exp().matrix();
          seen /= seen.sum();
          a.row(i).tail(T - i - 1).setZero();
        }
        // A is lower triangular (causal): the triangular product skips the zeros.
        Block(c.context.data() + static_cast<std::ptrdiff_t>(b * T) * d + h * dh, T, dh, Eigen::OuterStride<>(d)).noalias() =
            a.triangularView<Eigen::Lower>() * ConstBlock(v, T, dh, Eigen::OuterStride<>(3 * d));
        c.probs[static_cast<std::size_t>(bh)] = std::move(a);
      }
      c.mid = x;
      product(c.context, P(layer_param(l, kProjW)), false, c.mid, true);
      c.mid.rowwise() += P(layer_param(l, kProjB)).row(0);
    }
    c.ln2 = layer_norm(c.mid, P(layer_param(l, kLn2W)), P(layer_param(l, kLn2B)), shape.norm_eps);
    product(c.ln2.out, P(layer_param(l, kFcW)), false, c.fc_pre);
    c.fc_pre.rowwise() += P(layer_param(l, kFcB)).row(0);
    gelu(c.fc_pre, c.fc_tanh, c.fc_act);
    x = c.mid;
    product(c.fc_act, P(layer_param(l, kFcProjW)), false, x, true);
    x.rowwise() += P(layer_param(l, kFcProjB)).row(0);
    if (stream && l < stream->layer) c = LayerCache();  // the backward pass stops before it
  }
  const int lnf = kFirstLayer + L * kPerLayer;
  const NormCache final_norm = layer_norm(x, P(lnf), P(lnf + 1), shape.norm_eps);
  Matrix logits;
  product(final_norm.out, P(kWte), true, logits);

  // Cross-entropy; `logits` becomes ∂loss/∂logits.
  out.position_loss.assign(static_cast<std::size_t>(N), 0.0f);
  for (int r = 0; r < N; ++r) {
    const int target = targets[r];
    auto row = logits.row(r);
    if (target < 0) {
      row.setZero();
      continue;
    }
    const float m = row.maxCoeff();
    row = (row.array() - m).exp().matrix();
    const double sum = row.cast<double>().sum();
    const double nll = std::log(sum) - std::log(static_cast<double>(row(target)));
    out.position_loss[static_cast<std::size_t>(r)] = static_cast<float>(nll);
    out.loss_sum += nll;
    row /= static_cast<float>(sum);
    row(target) -= 1.0f;
    row /= static_cast<float>(counted);
  }
  // The weights go to `out` once the backward pass no longer needs them.
  auto keep = [&] {
    if (!keep_weights) return;
    out.weights.resize(static_cast<std::size_t>(L));
    for (int l = 0; l < L; ++l) out.weights[static_cast<std::size_t>(l)] = std::move(caches[static_cast<std::size_t>(l)].probs);
  };
  if (!backward) return keep();

  // Without parameter gradients (a stream's), each lands in a scratch matrix of its shape.
  const bool param_grads = stream == nullptr;
  out.grads.clear();
  for (const TinyParam& p : params)
    out.grads.push_back(param_grads ? Matrix::Zero(p.value.rows(), p.value.cols()) : Matrix());
  Matrix scratch;
  auto G_or_scratch = [&](int i) -> Matrix& {
    if (param_grads) return G(i);
    const Matrix& v = P(i);
    scratch.setZero(v.rows(), v.cols());
    return scratch;
  };
  auto add_param_gradient = [&](const Matrix& a, const Matrix& b, int i) {
    if (param_grads) add_weight_gradient(a, b, G(i));
  };
  auto add_bias_gradient = [&](const Matrix& dy, int i) {
    if (param_grads) G(i) += dy.colwise().sum();
  };
  const Matrix& dlogits = logits;
  add_param_gradient(dlogits, final_norm.out, kWte);
  Matrix dnorm;
  product(dlogits, P(kWte), false, dnorm);
  Matrix dx = Matrix::Zero(N, d);
  layer_norm_backward(x, final_norm, P(lnf), dnorm, dx, G_or_scratch(lnf), G_or_scratch(lnf + 1));

  for (int l = L - 1; l >= 0; --l) {
    if (stream) stream->check();
    const LayerCache& c = caches[static_cast<std::size_t>(l)];
    // MLP: x = mid + gelu(ln2(mid)·W_fc + b)·W_proj + b.
    add_param_gradient(c.fc_act, dx, layer_param(l, kFcProjW));
    add_bias_gradient(dx, layer_param(l, kFcProjB));
    Matrix dfc;
    product(dx, P(layer_param(l, kFcProjW)), true, dfc);
    gelu_backward(c.fc_pre, c.fc_tanh, dfc);
    add_param_gradient(c.ln2.out, dfc, layer_param(l, kFcW));
    add_bias_gradient(dfc, layer_param(l, kFcB));
    Matrix dln2;
    product(dfc, P(layer_param(l, kFcW)), true, dln2);
    Matrix dmid = dx;  // the residual path
    layer_norm_backward(c.mid, c.ln2, P(layer_param(l, kLn2W)), dln2, dmid, G_or_scratch(layer_param(l, kLn2W)),
                        G_or_scratch(layer_param(l, kLn2B)));
    if (stream && l == stream->layer) {
      // mid = input + attention output: ∂loss/∂(attention output) is ∂loss/∂mid.
      stream->d_attention_out = std::move(dmid);
      return keep();
    }
    // Attention: mid = input + context·W_o + b.
    add_param_gradient(c.context, dmid, layer_param(l, kProjW));
    add_bias_gradient(dmid, layer_param(l, kProjB));
    Matrix dcontext;
    product(dmid, P(layer_param(l, kProjW)), true, dcontext);
    Matrix dqkv(N, 3 * d);
    for (int bh = 0; bh < B * H; ++bh) {
      const int b = bh / H, h = bh % H;
      const Matrix& a = c.probs[static_cast<std::size_t>(bh)];
      const std::ptrdiff_t row0 = static_cast<std::ptrdiff_t>(b * T);
      const float* q = c.qkv.data() + row0 * 3 * d + h * dh;  // rows 3·d apart
      const float* k = q + d;
      const float* v = q + 2 * d;
      float* dq = dqkv.data() + row0 * 3 * d + h * dh;
      float* dk = dq + d;
      float* dv = dq + 2 * d;
      const float* dctx = dcontext.data() + row0 * d + h * dh;  // rows d apart
      Matrix da(T, T);
      gemm(T, T, dh, dctx, d, v, 3 * d, true, da.data(), T);
      Block(dv, T, dh, Eigen::OuterStride<>(3 * d)).noalias() =
          a.transpose().triangularView<Eigen::Upper>() * ConstBlock(dctx, T, dh, Eigen::OuterStride<>(d));
      // softmax backward: ∂L/∂Sᵢⱼ = Aᵢⱼ(∂L/∂Aᵢⱼ − Σₖ Aᵢₖ ∂L/∂Aᵢₖ); masked cells have A = 0.
      const Eigen::VectorXf row_dot = (a.array() * da.array()).rowwise().sum();
      const Matrix ds = (a.array() * (da.array().colwise() - row_dot.array())).matrix() * scale;
      Block(dq, T, dh, Eigen::OuterStride<>(3 * d)).noalias() =
          ds.triangularView<Eigen::Lower>() * ConstBlock(k, T, dh, Eigen::OuterStride<>(3 * d));
      Block(dk, T, dh, Eigen::OuterStride<>(3 * d)).noalias() =
          ds.transpose().triangularView<Eigen::Upper>() * ConstBlock(q, T, dh, Eigen::OuterStride<>(3 * d));
    }
    add_param_gradient(c.ln1.out, dqkv, layer_param(l, kAttnW));
    add_bias_gradient(dqkv, layer_param(l, kAttnB));
    Matrix dln1;
    product(dqkv, P(layer_param(l, kAttnW)), true, dln1);
    dx = dmid;
    layer_norm_backward(c.input, c.ln1, P(layer_param(l, kLn1W)), dln1, dx, G_or_scratch(layer_param(l, kLn1W)),
                        G_or_scratch(layer_param(l, kLn1B)));
  }
  for (int r = 0; r < N; ++r) {
    G(kWte).row(ids[r]) += dx.row(r);
    G(kWpe).row(r % T) += dx.row(r);
  }
  keep();
}

}  // namespace

namespace {

// The loss of `batch` (and with `backward` each part's gradients, left in
// `parts`). The batch is cut into a fixed number of parts, each computed by
// one thread with its own gradients, summed in part order by the caller:
// two cores work on large products instead of waiting on each other between
// small ones, and a run gives the same numbers whatever the number of threads.
TinyGptPass run_parts(const TinyGptShape& shape, const std::vector<TinyParam>& params, double flops,
                      const TokenBatch& batch, bool backward, bool keep_weights, std::vector<PartResult>& parts) {
  int counted = 0;
  for (int t : batch.targets) counted += t >= 0;
  const int n = std::min(batch.rows, kParts);
  parts.assign(static_cast<std::size_t>(n), PartResult());
#pragma omp parallel for schedule(static) if (n > 1 && parallel::worth_threads(flops))
  for (int part = 0; part < n; ++part) {
    const int first = batch.rows * part / n, end = batch.rows * (part + 1) / n;
    run_part(shape, params, batch, first, end - first, counted, backward, keep_weights, parts[static_cast<std::size_t>(part)]);
  }
  TinyGptPass pass;
  for (PartResult& r : parts) {
    pass.loss += r.loss_sum;
    pass.position_loss.insert(pass.position_loss.end(), r.position_loss.begin(), r.position_loss.end());
  }
  pass.loss = counted > 0 ? pass.loss / counted : 0.0;
  if (keep_weights) {
    pass.weights.resize(static_cast<std::size_t>(shape.layers));
    for (PartResult& r : parts)
      for (std::size_t l = 0; l < r.weights.size(); ++l)
        for (Matrix& a : r.weights[l]) pass.weights[l].push_back(std::move(a));
  }
  return pass;
}

}  // namespace

TinyGptPass TinyGpt::run(const TokenBatch& batch, bool backward, bool keep_weights) {
  if (const std::string p = check_batch(batch); !p.empty()) throw std::invalid_argument(p);
  const double flops = 6.0 * static_cast<double>(parameter_count()) * batch.rows * batch.length;
  std::vector<PartResult> parts;
  TinyGptPass pass = run_parts(shape_, params_, flops, batch, backward, keep_weights, parts);
  if (backward) {
    const int n = static_cast<int>(params_.size());
#pragma omp parallel for schedule(dynamic) if (parts.size() > 1 && parallel::worth_threads(flops))
    for (int i = 0; i < n; ++i) {
      Matrix& grad = params_[static_cast<std::size_t>(i)].grad;
      grad = parts[0].grads[static_cast<std::size_t>(i)];
      for (std::size_t part = 1; part < parts.size(); ++part) grad += parts[part].grads[static_cast<std::size_t>(i)];
    }
  }
  return pass;
}

TinyGptPass TinyGpt::evaluate(const TokenBatch& batch, bool keep_weights) const {
  if (const std::string p = check_batch(batch); !p.empty()) throw std::invalid_argument(p);
  std::vector<PartResult> parts;
  return run_parts(shape_, params_, 2.0 * static_cast<double>(parameter_count()) * batch.rows * batch.length, batch,
                   false, keep_weights, parts);
}

Matrix TinyGpt::attention_output_gradient(const TokenBatch& batch, int layer, const Matrix* attention_out,
                                           double& loss, const std::function<bool()>& keep_going) const {
  if (const std::string p = check_batch(batch); !p.empty()) throw std::invalid_argument(p);
  if (batch.rows != 1) throw std::invalid_argument("batch: expected one sequence, found " + std::to_string(batch.rows));
  if (layer < 0 || layer >= shape_.layers)
    throw std::invalid_argument("layer: expected 0 to " + std::to_string(shape_.layers - 1) + ", found " + std::to_string(layer));
  if (attention_out && (attention_out->rows() != batch.length || attention_out->cols() != shape_.d_model))
    throw std::invalid_argument("attention output: expected " + std::to_string(batch.length) + " x " +
                                std::to_string(shape_.d_model) + ", found " + std::to_string(attention_out->rows()) + " x " +
                                std::to_string(attention_out->cols()));
  int counted = 0;
  for (int t : batch.targets) counted += t >= 0;
  StreamGradient stream{layer, attention_out, Matrix(), &keep_going};
  PartResult part;
  run_part(shape_, params_, batch, 0, 1, std::max(counted, 1), true, false, part, &stream);
  loss = counted > 0 ? part.loss_sum / counted : 0.0;
  return std::move(stream.d_attention_out);
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
  const AdamWSettings s = settings_;
  const double correction1 = 1.0 - std::pow(s.beta1, steps_), correction2 = 1.0 - std::pow(s.beta2, steps_);
  const double step_size = s.learning_rate / correction1, root2 = std::sqrt(correction2);
  std::size_t total = 0;
  for (const TinyParam& p : params) total += static_cast<std::size_t>(p.value.size());
  const int n = static_cast<int>(params.size());
  // torch.optim.AdamW's arithmetic, in float64 for the moments; each tensor on its own.
#pragma omp parallel for schedule(dynamic) if (parallel::worth_threads(20.0 * static_cast<double>(total)))
  for (int i = 0; i < n; ++i) {
    TinyParam& p = params[static_cast<std::size_t>(i)];
    double* m = first_[static_cast<std::size_t>(i)].data();
    double* v = second_[static_cast<std::size_t>(i)].data();
    float* w = p.value.data();
    const float* g = p.grad.data();
    const double decay = p.decays ? 1.0 - s.learning_rate * s.weight_decay : 1.0;
    for (Eigen::Index k = 0; k < p.value.size(); ++k) {
      const double gk = static_cast<double>(g[k]);
      m[k] = s.beta1 * m[k] + (1.0 - s.beta1) * gk;
      v[k] = s.beta2 * v[k] + (1.0 - s.beta2) * gk * gk;
      const double denom = std::sqrt(v[k]) / root2 + s.eps;
      w[k] = static_cast<float>(static_cast<double>(w[k]) * decay - step_size * m[k] / denom);
    }
  }
}

}  // namespace attention_lab
