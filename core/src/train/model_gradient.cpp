#include "attention_lab/model_gradient.h"

#include <cmath>
#include <stdexcept>

namespace attention_lab {
namespace {

Matrix row_matrix(const RowVector& v) { return Matrix(v); }

// A stored vocab × d table (the embeddings), widened to floats.
Matrix widened(const StoredFloats& values, int rows, int cols) {
  Matrix m(rows, cols);
  values.widen(0, static_cast<std::ptrdiff_t>(rows) * cols, m.data());
  return m;
}

}  // namespace

std::string model_gradient_problem(const TransformerModel& model) {
  const ModelConfig& c = model.config;
  auto refuse = [&](const std::string& what) {
    return "gradients of a model: " + what + " is not in the backward pass yet (it has the GPT-2 layout: LayerNorm, "
           "learned positions, GELU-tanh MLP, biases, the head tied to the token embeddings)";
  };
  if (!model.weights_read) return "gradients of a model: the weights were not read (opened for its headers only)";
  if (c.family != ModelFamily::Gpt2) return refuse(std::string("the ") + to_string(c.family) + " family");
  if (c.rms_norm) return refuse("RMSNorm");
  if (c.gated_mlp) return refuse("a gated MLP");
  if (c.activation != Activation::GeluTanh) return refuse(std::string("the activation ") + to_string(c.activation));
  if (!c.qkv_bias || !c.o_bias || !c.mlp_bias) return refuse("a layer without biases");
  if (!model.lm_head_tied) return refuse("an lm_head of its own (untied)");
  if (c.embedding_scale != 1.0f || c.residual_scale != 1.0f || c.logits_divisor != 1.0) return refuse("a multiplier");
  if (c.score_scale > 0.0 && std::abs(c.score_scale * std::sqrt(static_cast<double>(c.d_head)) - 1.0) > 1e-12)
    return refuse("a score scale other than 1/√d_head");
  if (!c.pre_norms || c.post_norms) return refuse("norms after the attention or the MLP");
  if (c.parallel_residual) return refuse("a parallel residual");
  if (c.qk_norm != QkNormScope::Off) return refuse("a q/k norm");
  if (c.rope.on) return refuse("RoPE");
  if (c.sliding_window > 0) return refuse("a sliding window");
  if (c.logit_softcap > 0.0 || c.attn_softcap > 0.0) return refuse("soft-capping");
  if (c.kv_heads != c.heads || c.d_head * c.heads != c.d_model) return refuse("heads of another width or grouped K/V heads");
  if (c.norm_gain_offset != 0.0f) return refuse("a norm gain offset");
  for (const TransformerLayer& l : model.layers)
    if (l.norm1.rms || l.norm2.rms || l.norm1.bias.size() == 0 || l.norm2.bias.size() == 0) return refuse("RMSNorm");
  TinyGptShape shape{c.layers, c.heads, c.d_model, c.d_ff, c.vocab, c.max_positions, c.norm_eps};
  if (std::string p = tiny_gpt_shape_problem(shape); !p.empty()) return "gradients of a model: " + p;
  return "";
}

std::unique_ptr<ModelGradient> ModelGradient::make(const TransformerModel& model, std::string& error) {
  error = model_gradient_problem(model);
  if (!error.empty()) return nullptr;
  const ModelConfig& c = model.config;
  const TinyGptShape shape{c.layers, c.heads, c.d_model, c.d_ff, c.vocab, c.max_positions, c.norm_eps};
  std::vector<TinyParam> params;
  auto add = [&](std::string name, Matrix value) { params.push_back(TinyParam{std::move(name), std::move(value), Matrix(), false}); };
  add("transformer.wte.weight", widened(model.token_embedding, c.vocab, c.d_model));
  add("transformer.wpe.weight", widened(model.position_embedding, c.max_positions, c.d_model));
  for (int l = 0; l < c.layers; ++l) {
    const TransformerLayer& layer = model.layers[static_cast<std::size_t>(l)];
    const std::string h = "transformer.h." + std::to_string(l) + ".";
    Matrix qkv(c.d_model, 3 * c.d_model), qkv_bias(1, 3 * c.d_model);
    qkv << layer.q.in_out(), layer.k.in_out(), layer.v.in_out();
    qkv_bias << layer.q.bias, layer.k.bias, layer.v.bias;
    add(h + "ln_1.weight", row_matrix(layer.norm1.weight));
    add(h + "ln_1.bias", row_matrix(layer.norm1.bias));
    add(h + "attn.c_attn.weight", std::move(qkv));
    add(h + "attn.c_attn.bias", std::move(qkv_bias));
    add(h + "attn.c_proj.weight", layer.o.in_out());
    add(h + "attn.c_proj.bias", row_matrix(layer.o.bias));
    add(h + "ln_2.weight", row_matrix(layer.norm2.weight));
    add(h + "ln_2.bias", row_matrix(layer.norm2.bias));
    add(h + "mlp.c_fc.weight", layer.up.in_out());
    add(h + "mlp.c_fc.bias", row_matrix(layer.up.bias));
    add(h + "mlp.c_proj.weight", layer.down.in_out());
    add(h + "mlp.c_proj.bias", row_matrix(layer.down.bias));
  }
  add("transformer.ln_f.weight", row_matrix(model.final_norm.weight));
  add("transformer.ln_f.bias", row_matrix(model.final_norm.bias));
  try {
    return std::unique_ptr<ModelGradient>(new ModelGradient(TinyGpt(shape, std::move(params))));
  } catch (const std::invalid_argument& e) {
    error = std::string("gradients of a model: ") + e.what();
    return nullptr;
  }
}

LayerOutputGradient ModelGradient::at_layer(const std::vector<int>& ids, int layer, const Matrix* attention_out,
                                            const std::function<bool()>& keep_going) const {
  const int T = static_cast<int>(ids.size());
  if (T < 2) throw std::invalid_argument("text: expected at least two tokens (the loss is of each token's next), found " + std::to_string(T));
  TokenBatch batch;
  batch.rows = 1;
  batch.length = T;
  batch.ids = ids;
  batch.targets.assign(ids.begin() + 1, ids.end());
  batch.targets.push_back(-1);  // the last token has no next token in the text
  LayerOutputGradient out;
  out.positions = T - 1;
  out.d_output = gpt_.attention_output_gradient(batch, layer, attention_out, out.loss, keep_going);
  return out;
}

}  // namespace attention_lab
