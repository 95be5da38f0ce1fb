#include "attention_lab/transformer_forward.h"

#include "attention_lab/gemm.h"
#include "attention_lab/model_cache.h"
#include "attention_lab/row_norm.h"
#include "attention_lab/softcap.h"

#include <unsupported/Eigen/SpecialFunctions>  // erf of arrays (GELU's exact form)

#include <cmath>
#include <limits>

namespace attention_lab {

std::string check_ids(const ModelConfig& config, std::span<const int> ids) {
  if (ids.empty()) return "expected at least one token";
  for (std::size_t t = 0; t < ids.size(); ++t) {
    if (ids[t] < 0 || ids[t] >= config.vocab)
      return "token " + std::to_string(t) + ": id " + std::to_string(ids[t]) + ": expected 0 to " +
             std::to_string(config.vocab - 1) + " (the vocabulary)";
  }
  if (config.learned_positions() && static_cast<int>(ids.size()) > config.max_positions)
    return "expected at most " + std::to_string(config.max_positions) + " tokens (the model's learned positions), found " +
           std::to_string(ids.size());
  return {};
}

Matrix Linear::in_out() const {
  Matrix stored(stored_rows, stored_cols);
  for (int r = 0; r < stored_rows; ++r)
    values.widen(static_cast<std::ptrdiff_t>(r) * stride, stored_cols, stored.data() + static_cast<std::ptrdiff_t>(r) * stored_cols);
  if (out_in) return stored.transpose();
  return stored;
}

Matrix Linear::apply(const Matrix& x) const {
  Matrix y;
  gemm(x, values, stored_rows, stored_cols, stride, out_in, y);
  if (bias.size() > 0) y.rowwise() += bias;
  return y;
}

void Linear::add_to(const Matrix& x, Matrix& y) const {
  if (bias.size() > 0) y.rowwise() += bias;
  gemm_accumulate(x, values, stored_rows, stored_cols, stride, out_in, y);
}

RowVector next_token_probabilities(const RowVector& logits) {
  const float m = logits.maxCoeff();
  RowVector p = (logits.array() - m).exp().matrix();
  return p / p.sum();
}

Matrix embed(const TransformerModel& model, std::span<const int> ids) {
  const int d = model.config.d_model;
  Matrix x(static_cast<Eigen::Index>(ids.size()), d);
  RowVector position(d);
  for (Eigen::Index t = 0; t < x.rows(); ++t) {
    model.token_embedding.widen(static_cast<std::ptrdiff_t>(ids[static_cast<std::size_t>(t)]) * d, d, x.row(t).data());
    if (model.position_embedding) {
      model.position_embedding.widen(t * d, d, position.data());
      x.row(t) += position;
    }
  }
  if (model.config.embedding_scale != 1.0f) x *= model.config.embedding_scale;
  return x;
}

RowStatistics row_statistics(const Norm& norm, const float* row, Eigen::Index n) {
  if (norm.rms) return {0.0, row_mean_square(row, n)};
  const double mean = row_mean(row, n);
  return {mean, row_mean_square(row, n, mean)};
}

Matrix normalize(const Norm& norm, const Matrix& x) {
  Matrix y(x.rows(), x.cols());
  // Statistics in double (a long row's float sum drifts); rows in parallel.
#pragma omp parallel for schedule(static) if (x.rows() >= 64)
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    const auto row = x.row(r);
    const RowStatistics s = row_statistics(norm, row.data(), x.cols());
    const float inv = inverse_root(s.spread, norm.eps);
    if (norm.rms) {
      y.row(r) = (row * inv).cwiseProduct(norm.weight);
    } else {
      y.row(r) = ((row.array() - static_cast<float>(s.mean)) * inv).matrix().cwiseProduct(norm.weight) + norm.bias;
    }
  }
  return y;
}

namespace {

// HF Llama's rotate_half RoPE on every head's block of columns, in place.
// Only the first rotary_width dimensions of each head turn (GPT-NeoX's partial rotary).
void apply_rope(Eigen::Ref<Matrix, 0, Eigen::OuterStride<>> m, int heads, int d_head, const Rope& rope) {
  const int width = rotary_width(rope, d_head), half = width / 2;
  for (Eigen::Index p = 0; p < m.rows(); ++p) {
    for (int k = 0; k < half; ++k) {
      const double angle = rope_angle(rope, width, k, static_cast<int>(p));
      const float c = static_cast<float>(std::cos(angle));
      const float s = static_cast<float>(std::sin(angle));
      for (int h = 0; h < heads; ++h) {
        float& a = m(p, h * d_head + k);
        float& b = m(p, h * d_head + k + half);
        const float x = a, y = b;
        a = x * c - y * s;
        b = y * c + x * s;
      }
    }
  }
}


// The q/k norm in place: RMSNorm of each head's d_head values (one gain
// vector shared by the heads) or of the whole row, as the engine's
// finish_rows computes it (row_norm.h).
template <typename Block>
void apply_qk_norm(Block&& m, int heads, int d_head, const Norm& norm, QkNormScope scope) {
  const bool whole = scope == QkNormScope::Whole;
  const Eigen::Index width = whole ? static_cast<Eigen::Index>(heads) * d_head : d_head;
  const int blocks = whole ? 1 : heads;
  // ε as a float, as a scenario keeps it (and as torch adds it to a float32 mean)
  const double eps = static_cast<double>(static_cast<float>(norm.eps));
#pragma omp parallel for schedule(static) if (m.rows() >= 64)
  for (Eigen::Index r = 0; r < m.rows(); ++r)
    for (int b = 0; b < blocks; ++b) {
      float* x = &m(r, static_cast<Eigen::Index>(b) * width);
      rms_normalize(x, x, norm.weight.data(), width, eps);
    }
}

}  // namespace

// Eigen's vectorised tanh/erf/logistic: a scalar std::tanh per cell took a
// quarter of GPT-2's forward pass. Rows in parallel (a T × 3072 activation is
// 0.4 ms on one thread).
void activate(Activation a, Matrix& m) {
  const auto apply = [a](auto x) {
    switch (a) {
      case Activation::GeluTanh: {
        constexpr float k = 0.7978845608028654f;  // √(2/π)
        x = 0.5f * x * (1.0f + (k * (x + 0.044715f * x.cube())).tanh());
        break;
      }
      case Activation::GeluErf: x = 0.5f * x * (1.0f + (x * 0.7071067811865476f).erf()); break;
      case Activation::Relu: x = x.max(0.0f); break;
      case Activation::Silu: x = x * x.logistic(); break;
    }
  };
  constexpr Eigen::Index kRows = 16;  // per task: a few hundred KB of cells
  const Eigen::Index tasks = (m.rows() + kRows - 1) / kRows;
#pragma omp parallel for schedule(static) if (tasks > 1 && m.size() >= (1 << 16))
  for (Eigen::Index t = 0; t < tasks; ++t) {
    const Eigen::Index r0 = t * kRows;
    apply(m.middleRows(r0, std::min(kRows, m.rows() - r0)).array());
  }
}

namespace {

// Puts hooks' replacement blocks (per head, T × d_head) in place of m's.
void replace_heads(Eigen::Map<Matrix, 0, Eigen::OuterStride<>>& m, const std::vector<const Matrix*>& by_head, int d_head) {
  for (std::size_t h = 0; h < by_head.size(); ++h)
    if (by_head[h]) m.middleCols(static_cast<Eigen::Index>(h) * d_head, d_head) = *by_head[h];
}

// The heads' contexts side by side (T × heads·d_head), before W_o; `hooks`
// (if given) replace q, k, v or patterns as they are made.
Matrix attention_context(const TransformerModel& model, int layer, const Matrix& normed, AttentionDetail* detail,
                         const LayerHooks* hooks = nullptr) {
  const ModelConfig& c = model.config;
  const TransformerLayer& L = model.layers[static_cast<std::size_t>(layer)];
  const Eigen::Index T = normed.rows();
  const bool all = detail && !detail->weights_only;
  // GPT-2: one product with c_attn (T × 3d) instead of three with its
  // blocks (a wider product runs faster); Q, K and V are its column blocks
  // where they lie, not copies.
  using Columns = Eigen::Map<Matrix, 0, Eigen::OuterStride<>>;
  const auto columns = [T](Matrix& m, Eigen::Index first, Eigen::Index count) {
    return Columns(m.data() + first, T, count, Eigen::OuterStride<>(m.cols()));
  };
  const bool fused = static_cast<bool>(L.qkv.values);
  Matrix qkv, q_own, k_own, v_own;
  if (fused) {
    qkv = L.qkv.apply(normed);
  } else {
    q_own = L.q.apply(normed);
    k_own = L.k.apply(normed);
    v_own = L.v.apply(normed);
  }
  const Eigen::Index d = c.d_model;
  Columns q = fused ? columns(qkv, 0, d) : columns(q_own, 0, q_own.cols());
  Columns k = fused ? columns(qkv, d, d) : columns(k_own, 0, k_own.cols());
  Columns v = fused ? columns(qkv, 2 * d, d) : columns(v_own, 0, v_own.cols());
  if (c.qk_norm != QkNormScope::Off) {
    apply_qk_norm(q, c.heads, c.d_head, L.q_norm, c.qk_norm);
    apply_qk_norm(k, c.kv_heads, c.d_head, L.k_norm, c.qk_norm);
  }
  if (hooks) {
    replace_heads(q, hooks->q, c.d_head);
    replace_heads(k, hooks->k, c.d_head);
    replace_heads(v, hooks->v, c.d_head);
  }
  if (all) {
    detail->q = q;
    detail->k = k;
    detail->v = v;
  }
  const Rope rope = c.rope_of(layer);
  if (rope.on) {
    apply_rope(q, c.heads, c.d_head, rope);
    apply_rope(k, c.kv_heads, c.d_head, rope);
  }
  const float neg_inf = -std::numeric_limits<float>::infinity();
  if (detail) {
    if (all) {
      detail->q_rot = q;
      detail->k_rot = k;
      detail->scores.assign(static_cast<std::size_t>(c.heads), Matrix::Constant(T, T, neg_inf));
    }
    detail->weights.assign(static_cast<std::size_t>(c.heads), Matrix::Zero(T, T));
  }
  const float scale = static_cast<float>(c.attention_scale());
  const Eigen::Index window = c.window_of(layer);
  const float cap = static_cast<float>(c.attn_softcap);
  // Causal (and windowed) attention by blocks of query rows: a block's keys
  // are [lo, end of the block), so the masked half is never multiplied.
  constexpr Eigen::Index kBlock = 64;
  const Eigen::Index blocks = (T + kBlock - 1) / kBlock;
  Matrix context(T, static_cast<Eigen::Index>(c.heads) * c.d_head);
#pragma omp parallel for collapse(2) schedule(dynamic) if (c.heads * blocks > 1 && T >= 64)
  for (int h = 0; h < c.heads; ++h) {
    for (Eigen::Index b = 0; b < blocks; ++b) {
      const int g = h / (c.heads / c.kv_heads);  // not h·kv_heads/heads: that product can overflow an int
      const Eigen::Index r0 = b * kBlock, rows = std::min(kBlock, T - r0), r1 = r0 + rows;
      const Eigen::Index lo = window > 0 ? std::max<Eigen::Index>(0, r0 - window + 1) : 0;
      const Eigen::Index keys = r1 - lo;
      const auto qh = q.block(r0, static_cast<Eigen::Index>(h) * c.d_head, rows, c.d_head);
      const auto kh = k.block(lo, static_cast<Eigen::Index>(g) * c.d_head, keys, c.d_head);
      const auto vh = v.block(lo, static_cast<Eigen::Index>(g) * c.d_head, keys, c.d_head);
      // The products through gemm(): one thread each here, OpenBLAS's kernel
      // when it nests (1.3× Eigen's at these 64-row blocks).
      Matrix s(rows, keys), w(rows, keys);
      gemm(static_cast<int>(rows), static_cast<int>(keys), c.d_head, qh.data(), static_cast<int>(q.outerStride()),
           kh.data(), static_cast<int>(k.outerStride()), true, s.data(), static_cast<int>(keys));
      // Row i sees keys [a, a + n) of the block: the scaling is folded into
      // the exponent (softmax(scale·s) = e^(scale·(s − max s)) / Σ), and the
      // keys it may not see are only written when the scores are wanted.
      for (Eigen::Index i = 0; i < rows; ++i) {
        const Eigen::Index query = r0 + i;
        const Eigen::Index first = window > 0 ? std::max<Eigen::Index>(0, query - window + 1) : 0;
        const Eigen::Index a = first - lo, n = query - first + 1, after = keys - a - n;
        auto srow = s.row(i);
        auto wrow = w.row(i);
        if (cap > 0.0f) {
          // Gemma 2: the scaled scores soft-capped before the softmax, as the engine caps them
          for (Eigen::Index j = a; j < a + n; ++j) srow(j) = softcap(srow(j) * scale, cap);
          const float m = srow.segment(a, n).maxCoeff();
          wrow.segment(a, n) = (srow.segment(a, n).array() - m).exp().matrix();
        } else {
          const float m = srow.segment(a, n).maxCoeff();
          wrow.segment(a, n) = ((srow.segment(a, n).array() - m) * scale).exp().matrix();
        }
        wrow.segment(a, n) *= 1.0f / wrow.segment(a, n).sum();
        wrow.head(a).setZero();
        wrow.tail(after).setZero();
        if (hooks && static_cast<std::size_t>(h) < hooks->pattern.size() && hooks->pattern[static_cast<std::size_t>(h)])
          wrow = hooks->pattern[static_cast<std::size_t>(h)]->block(query, lo, 1, keys);
        if (all) {
          if (cap <= 0.0f) srow.segment(a, n) *= scale;
          srow.head(a).setConstant(neg_inf);
          srow.tail(after).setConstant(neg_inf);
        }
      }
      const Eigen::Index width = context.cols();
      gemm(static_cast<int>(rows), c.d_head, static_cast<int>(keys), w.data(), static_cast<int>(keys), vh.data(),
           static_cast<int>(v.outerStride()), false, context.data() + r0 * width + static_cast<Eigen::Index>(h) * c.d_head,
           static_cast<int>(width));
      if (detail) {
        const auto hs = static_cast<std::size_t>(h);
        if (all) detail->scores[hs].block(r0, lo, rows, keys) = s;
        detail->weights[hs].block(r0, lo, rows, keys) = w;
      }
    }
  }
  if (all) detail->context = context;
  return context;
}

// The MLP's activation: act(normed·W_up + b) (GPT-2), or
// (normed·W_up)·act(normed·W_gate) (Llama's SwiGLU).
Matrix mlp_hidden(const TransformerModel& model, int layer, const Matrix& normed) {
  const ModelConfig& c = model.config;
  const TransformerLayer& L = model.layers[static_cast<std::size_t>(layer)];
  Matrix hidden = L.up.apply(normed);
  if (c.gated_mlp) {
    Matrix gate = L.gate.apply(normed);
    activate(c.activation, gate);
    hidden.array() *= gate.array();
  } else {
    activate(c.activation, hidden);
  }
  return hidden;
}

// What a residual sum adds: `term`, times the model's residual_scale.
Matrix residual_term(const TransformerModel& model, Matrix term) {
  if (model.config.residual_scale != 1.0f) term *= model.config.residual_scale;
  return term;
}

// x += mlp(norm2(x)): the down projection adds itself to the residual stream.
// With post-norms: x += post_mlp(mlp(x)) (norm2 too where the layer has both).
void add_mlp(const TransformerModel& model, int layer, Matrix& x, const LayerHooks* hooks = nullptr) {
  const TransformerLayer& L = model.layers[static_cast<std::size_t>(layer)];
  const ModelConfig& c = model.config;
  const Matrix hidden = mlp_hidden(model, layer, c.pre_norms ? normalize(L.norm2, x) : x);
  if (hooks) {  // the term on its own, so a hooked run sums the same way with or without a hook set
    Matrix term = residual_term(model, c.post_norms ? normalize(L.post_mlp, L.down.apply(hidden)) : L.down.apply(hidden));
    if (hooks->mlp_out) hooks->mlp_out(term);
    x += term;
    return;
  }
  if (c.post_norms || c.residual_scale != 1.0f) {
    x += residual_term(model, c.post_norms ? normalize(L.post_mlp, L.down.apply(hidden)) : L.down.apply(hidden));
    return;
  }
  L.down.add_to(hidden, x);
}

}  // namespace

Matrix attention(const TransformerModel& model, int layer, const Matrix& normed, AttentionDetail* detail) {
  return model.layers[static_cast<std::size_t>(layer)].o.apply(attention_context(model, layer, normed, detail));
}

Matrix mlp(const TransformerModel& model, int layer, const Matrix& normed, Matrix* activation) {
  Matrix hidden = mlp_hidden(model, layer, normed);
  if (activation) *activation = hidden;
  return model.layers[static_cast<std::size_t>(layer)].down.apply(hidden);
}

Matrix attention_input(const TransformerModel& model, int layer, const Matrix& x) {
  return model.config.pre_norms ? normalize(model.layers[static_cast<std::size_t>(layer)].norm1, x) : x;
}

Matrix finish_layer(const TransformerModel& model, int layer, const Matrix& input, const Matrix& attention_out,
                    const LayerHooks* hooks) {
  const bool hook_attention = hooks && hooks->attn_out;
  if (model.config.parallel_residual) {  // GPT-NeoX: (mlp + attention) + x, in torch's order
    const TransformerLayer& L = model.layers[static_cast<std::size_t>(layer)];
    Matrix m = L.down.apply(mlp_hidden(model, layer, normalize(L.norm2, input)));
    if (hooks && hooks->mlp_out) hooks->mlp_out(m);
    if (hook_attention) {
      Matrix a = attention_out;
      hooks->attn_out(a);
      m += a;
    } else {
      m += attention_out;
    }
    m += input;
    return m;
  }
  Matrix term = residual_term(model, model.config.post_norms
                                         ? normalize(model.layers[static_cast<std::size_t>(layer)].post_attn, attention_out)
                                         : attention_out);
  if (hook_attention) hooks->attn_out(term);
  Matrix x = input + term;
  add_mlp(model, layer, x, hooks);
  return x;
}

Matrix run_layer(const TransformerModel& model, int layer, const Matrix& input) {
  const TransformerLayer& L = model.layers[static_cast<std::size_t>(layer)];
  const Matrix context = attention_context(model, layer, attention_input(model, layer, input), nullptr);
  if (model.config.post_norms || model.config.residual_scale != 1.0f || model.config.parallel_residual)
    return finish_layer(model, layer, input, L.o.apply(context));
  // input + attention: W_o's product adds itself to a copy of the input.
  Matrix x = input;
  L.o.add_to(context, x);
  add_mlp(model, layer, x);
  return x;
}

Matrix run_layer(const TransformerModel& model, int layer, const Matrix& input, const LayerHooks& hooks,
                 AttentionDetail* detail) {
  Matrix context = attention_context(model, layer, attention_input(model, layer, input), detail, &hooks);
  if (hooks.z) {
    hooks.z(context);
    if (detail && !detail->weights_only) detail->context = context;
  }
  return finish_layer(model, layer, input, model.layers[static_cast<std::size_t>(layer)].o.apply(context), &hooks);
}

Matrix logits(const TransformerModel& model, const Matrix& last_output, int first, int count) {
  const Matrix normed = normalize(model.final_norm, last_output.middleRows(first, count));
  Matrix out = model.lm_head.apply(normed);
  if (model.config.logits_divisor != 1.0) out /= static_cast<float>(model.config.logits_divisor);
  if (const double cap = model.config.logit_softcap; cap > 0.0) {  // c·tanh(x/c), as Gemma 2 computes it in float
    const float c = static_cast<float>(cap);
    out = out.unaryExpr([c](float x) { return softcap(x, c); });
  }
  return out;
}

ModelForward run_model(const TransformerModel& model, std::span<const int> ids, int logit_rows) {
  ModelForward f;
  f.residual.reserve(model.layers.size() + 1);
  f.residual.push_back(embed(model, ids));
  for (int l = 0; l < static_cast<int>(model.layers.size()); ++l) f.residual.push_back(run_layer(model, l, f.residual.back()));
  const int T = static_cast<int>(ids.size());
  const int rows = std::clamp(logit_rows, 1, T);
  f.first_logit_row = T - rows;
  f.logits = logits(model, f.residual.back(), f.first_logit_row, rows);
  return f;
}

int argmax(const RowVector& row) {
  Eigen::Index best = 0;
  for (Eigen::Index i = 1; i < row.size(); ++i)
    if (row(i) > row(best)) best = i;
  return static_cast<int>(best);
}

std::vector<int> generate_greedy(const TransformerModel& model, std::vector<int> ids, int count) {
  for (int n = 0; n < count; ++n) {
    if (model.config.learned_positions() && static_cast<int>(ids.size()) > model.config.max_positions) break;
    const ModelForward f = run_model(model, ids, 1);
    ids.push_back(argmax(f.logits.row(0)));
  }
  return ids;
}

LayerScenario layer_scenario(const TransformerModel& model, int layer, const Matrix& normed,
                             const std::vector<std::string>& tokens) {
  LayerScenario out;
  if (!model.weights_read) {
    out.error = "layer " + std::to_string(layer) + ": only the model's headers were read; it has no weights to show";
    return out;
  }
  const ModelConfig& c = model.config;
  const TransformerLayer& L = model.layers[static_cast<std::size_t>(layer)];
  Scenario& s = out.scenario;
  s.title = model_display_name(model.source) + " — layer " + std::to_string(layer) + " attention" +
            (c.rope.on && !c.rope_of(layer).on ? " (no positions: NoPE)" : "") +
            (c.sliding_layers.empty() ? "" : c.sliding(layer) ? " (local: window " + std::to_string(c.sliding_window) + ")" : " (global)");
  s.description = std::string("Layer ") + std::to_string(layer) + " of " + std::to_string(c.layers) + " of " +
                  model.source.string() + " (" + model.layout + "). " +
                  (c.pre_norms ? "X is the layer's normed input."
                               : "X is the layer's input itself: this model norms the attention's output instead.");
  s.tokens = tokens;
  s.X = normed;
  s.W_q = L.q.in_out();
  s.W_k = L.k.in_out();
  s.W_v = L.v.in_out();
  s.W_o = L.o.in_out();
  s.heads = c.heads;
  s.kv_heads = c.kv_heads == c.heads ? 0 : c.kv_heads;
  s.use_w_o = true;
  s.use_bias = c.qkv_bias;
  if (c.qkv_bias) {
    s.b_q = L.q.bias;
    s.b_k = L.k.bias;
    s.b_v = L.v.bias;
  }
  s.use_output_bias = L.o.bias.size() > 0;
  s.b_o = s.use_output_bias ? Matrix(L.o.bias) : Matrix::Zero(1, c.d_model);
  if (!c.qkv_bias) {
    s.b_q = Matrix::Zero(1, s.W_q.cols());
    s.b_k = Matrix::Zero(1, s.W_k.cols());
    s.b_v = Matrix::Zero(1, s.W_v.cols());
  }
  s.rope = c.rope_of(layer);
  if (c.qk_norm != QkNormScope::Off) {
    s.qk_norm.scope = c.qk_norm;
    s.qk_norm.eps = static_cast<float>(L.q_norm.eps);
    s.q_norm = Matrix(L.q_norm.weight);
    s.k_norm = Matrix(L.k_norm.weight);
  }
  s.scale = true;
  if (c.score_scale > 0.0) s.score_scale = static_cast<float>(c.score_scale);
  if (c.attn_softcap > 0.0) s.softcap = static_cast<float>(c.attn_softcap);
  if (c.window_of(layer) > 0) {
    s.mask_kind = MaskKind::Window;
    s.window = c.window_of(layer);
  } else {
    s.mask_kind = MaskKind::Causal;
  }
  if (std::string e = validate(s); !e.empty()) out.error = "layer " + std::to_string(layer) + " as a scenario: " + e;
  return out;
}

}  // namespace attention_lab
