#include "attention_lab/block_stages.h"
#include "attention_lab/number_text.h"

#include "attention_lab/transformer_forward.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace attention_lab {

namespace {

std::string activation_text(Activation a) {
  switch (a) {
    case Activation::GeluTanh: return "GELU";
    case Activation::GeluErf: return "GELU";
    case Activation::Relu: return "ReLU";
    case Activation::Silu: return "SiLU";
  }
  return "activation";
}

// The three stages of one norm (1: before the attention, 2: before the MLP).
void add_norm(std::vector<BlockStageInfo>& t, const ModelConfig& c, int which, BlockStage mean, BlockStage spread,
              BlockStage normed, BlockStage input) {
  const bool rms = c.rms_norm;
  const std::string n = which == 1 ? "₁" : "₂";
  const std::string in = which == 1 ? "x" : "h";
  const bool follows = which == 2;
  if (!rms)
    t.push_back({mean, "norm" + std::to_string(which) + ".mean", false, "μ" + n, "mean of each row (LayerNorm " + std::to_string(which) + ")",
                 "(1/d)·Σ_c " + in + "[r,c]",
                 "LayerNorm first centres each token's vector: this is what it subtracts.", BlockWidth::One, false, follows,
                 {{input, BlockFeed::Row}}});
  t.push_back({spread, "norm" + std::to_string(which) + (rms ? ".mean_square" : ".variance"), false,
               rms ? "ms" + n : "σ²" + n,
               rms ? "mean square of each row (RMSNorm " + std::to_string(which) + ")"
                   : "variance of each row (LayerNorm " + std::to_string(which) + ")",
               rms ? "(1/d)·Σ_c " + in + "[r,c]²" : "(1/d)·Σ_c (" + in + "[r,c] − μ" + n + "[r])²",
               rms ? "RMSNorm divides each token's vector by its root mean square, so every token reaches the next step at the same scale."
                   : "LayerNorm divides each centred vector by its standard deviation, so every token reaches the next step at the same scale.",
               BlockWidth::One, true, follows,
               rms ? std::vector<BlockInput>{{input, BlockFeed::Row}}
                   : std::vector<BlockInput>{{input, BlockFeed::Row}, {mean, BlockFeed::Cell}}});
  std::vector<BlockInput> inputs{{input, BlockFeed::Cell}};
  if (!rms) inputs.push_back({mean, BlockFeed::Row});
  inputs.push_back({spread, BlockFeed::Row});
  t.push_back({normed, "norm" + std::to_string(which), false, "n" + n,
               std::string(which == 1 ? "the attention's input" : "the MLP's input") + (rms ? " (RMSNorm " : " (LayerNorm ") +
                   std::to_string(which) + ")",
               rms ? in + "[r,c]/√(ms" + n + "[r] + ε)·γ[c]" : "(" + in + "[r,c] − μ" + n + "[r])/√(σ²" + n + "[r] + ε)·γ[c] + β[c]",
               which == 1 ? "The normed residual stream: X of the Pipeline, which the attention turns into Q, K and V."
                          : "The normed residual stream after the attention, which the MLP reads.",
               BlockWidth::Model, false, follows, inputs});
}

// The two stages of a norm on an output (OLMo-2's post_attention_layernorm
// and post_feedforward_layernorm): its mean square, then the normed output.
void add_post_norm(std::vector<BlockStageInfo>& t, bool attention, BlockStage spread, BlockStage normed, BlockStage input) {
  const std::string n = attention ? "ₐ" : "ₘ", in = attention ? "a" : "m";
  const std::string key = attention ? "post_attention_norm" : "post_mlp_norm";
  const std::string what = attention ? "the attention's output" : "the MLP's output";
  t.push_back({spread, key + ".mean_square", false, "ms" + n, "mean square of each row of " + what + " (RMSNorm)",
               "(1/d)·Σ_c " + in + "[r,c]²",
               "This model norms " + what + " before adding it to the residual stream: each row is divided by its root "
               "mean square.",
               BlockWidth::One, true, true, {{input, BlockFeed::Row}}});
  t.push_back({normed, key, false, "n" + n, what + ", normed (RMSNorm)", in + "[r,c]/√(ms" + n + "[r] + ε)·γ[c]",
               std::string(attention ? "What the attention adds to the residual stream" : "What the MLP adds to the residual stream") +
                   ": every token's contribution at the same scale, whatever its size before.",
               BlockWidth::Model, false, true, {{input, BlockFeed::Cell}, {spread, BlockFeed::Row}}});
}

}  // namespace

BlockStage mlp_input_stage(const ModelConfig& c) { return c.pre_norms ? BlockStage::Norm2 : BlockStage::Residual; }
BlockStage mlp_norm_input_stage(const ModelConfig& c) { return c.parallel_residual ? BlockStage::Input : BlockStage::Residual; }
BlockStage attention_added_stage(const ModelConfig& c) { return c.post_norms ? BlockStage::PostAttn : BlockStage::Attention; }
BlockStage mlp_added_stage(const ModelConfig& c) { return c.post_norms ? BlockStage::PostMlp : BlockStage::Down; }

std::vector<BlockStageInfo> block_stage_table(const ModelConfig& c) {
  using S = BlockStage;
  const bool gated = c.gated_mlp;
  std::vector<BlockStageInfo> t;
  t.push_back({S::TokenEmbedding, "embed.token", true, "E", "token embeddings", "W_te[id_r, c]",
               "Each token's row of the embedding table: the model's starting vector for that token, the same wherever it appears.",
               BlockWidth::Model, false, false, {}});
  const std::string embedding_scale = c.embedding_scale != 1.0f ? "·" + significant(static_cast<double>(c.embedding_scale), 6) : "";
  if (c.learned_positions()) {
    t.push_back({S::Position, "embed.position", true, "P", "position embeddings", "W_pe[r, c]",
                 "A learned vector per position, added so the model can tell the first 'the' from the second.",
                 BlockWidth::Model, false, false, {}});
    t.push_back({S::Embedded, "embed", true, "E + P", "embedded tokens (the input of layer 0)",
                 embedding_scale.empty() ? "E[r,c] + P[r,c]" : "(E[r,c] + P[r,c])" + embedding_scale,
                 "The residual stream starts here: every layer reads it and adds its own contribution.", BlockWidth::Model,
                 false, false, {{S::TokenEmbedding, BlockFeed::Cell}, {S::Position, BlockFeed::Cell}}});
  } else if (!embedding_scale.empty()) {
    t.push_back({S::Embedded, "embed", true, "E" + embedding_scale, "scaled token embeddings (the input of layer 0)",
                 "E[r,c]" + embedding_scale,
                 "This model multiplies its embeddings by " + significant(static_cast<double>(c.embedding_scale), 6) +
                     " before the first layer (its configuration's embedding scale).",
                 BlockWidth::Model, false, false, {{S::TokenEmbedding, BlockFeed::Cell}}});
  }
  t.push_back({S::Input, "input", false, "x", "the layer's input (the residual stream)", "output of the layer before",
               c.learned_positions()
                   ? "What the layers before this one have written into the residual stream. Edits in this layer never change it."
                   : "What the layers before this one have written into the residual stream (at layer 0: E; positions enter as "
                     "RoPE rotations of Q and K). Edits in this layer never change it.",
               BlockWidth::Model, false, false, {}});
  if (c.pre_norms) add_norm(t, c, 1, S::Norm1Mean, S::Norm1Spread, S::Norm1, S::Input);
  t.push_back({S::Attention, "attention", false, "a", "attention output (the Pipeline's output)",
               "concat(heads)·W_o" + std::string(c.o_bias ? " + b_o" : ""),
               std::string("The Pipeline's result with every edit and pin: what attention ") +
                   (c.post_norms ? "gives, normed next before it is added to the residual stream" : "adds to the residual stream") +
                   ". Row r mixes what every row it may see (0…r, causal) offers, through Q, K and V.",
               BlockWidth::Model, false, true, {{c.pre_norms ? S::Norm1 : S::Input, BlockFeed::VisibleRows}}});
  if (c.post_norms) add_post_norm(t, true, S::PostAttnSpread, S::PostAttn, S::Attention);
  const S added = attention_added_stage(c), mlp_in = mlp_input_stage(c);
  const std::string a = c.post_norms ? "nₐ" : "a", n2 = c.pre_norms ? "n₂" : "h";
  // Granite scales what each residual sum adds
  const std::string residual_scale = c.residual_scale != 1.0f ? "·" + significant(static_cast<double>(c.residual_scale), 6) : "";
  t.push_back({S::Residual, "residual", false, "h", "residual sum after the attention",
               "x[r,c] + " + a + "[r,c]" + residual_scale,
               "Attention does not replace a token's vector: it adds to it (the residual connection).", BlockWidth::Model,
               false, true, {{S::Input, BlockFeed::Cell}, {added, BlockFeed::Cell}}});
  if (c.pre_norms) add_norm(t, c, 2, S::Norm2Mean, S::Norm2Spread, S::Norm2, mlp_norm_input_stage(c));
  t.push_back({S::Up, "mlp.up", false, "u", gated ? "MLP up-projection (up_proj)" : "MLP up-projection (c_fc)",
               "Σ_k " + n2 + "[r,k]·W_up[k,c]" + std::string(c.mlp_bias ? " + b_up[c]" : ""),
               "Each token on its own, widened to " + std::to_string(c.d_ff) + " features: the MLP looks at no other token.",
               BlockWidth::FeedForward, false, true, {{mlp_in, BlockFeed::Row}}});
  if (gated)
    t.push_back({S::Gate, "mlp.gate", false, "g", "MLP gate projection (gate_proj)", "Σ_k " + n2 + "[r,k]·W_gate[k,c]",
                 "SwiGLU's second projection: after SiLU it scales the up-projection feature by feature.",
                 BlockWidth::FeedForward, false, true, {{mlp_in, BlockFeed::Row}}});
  t.push_back({S::Hidden, "mlp.activation", false, "f",
               gated ? "MLP activation (SwiGLU)"
                     : "MLP activation (" + activation_text(c.activation) +
                           (c.activation == Activation::GeluTanh ? ", tanh form)" : ")"),
               gated ? "SiLU(g[r,c])·u[r,c]" : activation_text(c.activation) + "(u[r,c])",
               gated ? "SiLU(g) = g·σ(g) opens or closes each feature; the product keeps what the gate lets through."
                     : "The non-linearity: negative features are (almost) switched off, positive ones pass.",
               BlockWidth::FeedForward, false, true,
               gated ? std::vector<BlockInput>{{S::Gate, BlockFeed::Cell}, {S::Up, BlockFeed::Cell}}
                     : std::vector<BlockInput>{{S::Up, BlockFeed::Cell}}});
  t.push_back({S::Down, "mlp.down", false, "m", gated ? "MLP down-projection (down_proj)" : "MLP down-projection (c_proj)",
               "Σ_k f[r,k]·W_down[k,c]" + std::string(c.mlp_bias ? " + b_down[c]" : ""),
               c.post_norms ? "Back to d_model: the MLP's output, normed next." : "Back to d_model: what the MLP adds to the residual stream.",
               BlockWidth::Model, false, true, {{S::Hidden, BlockFeed::Row}}});
  if (c.post_norms) add_post_norm(t, false, S::PostMlpSpread, S::PostMlp, S::Down);
  if (c.parallel_residual)
    t.push_back({S::Output, "output", false, "y", "the layer's output (the input plus the attention and the MLP side by side)",
                 "m[r,c] + a[r,c] + x[r,c]",
                 "GPT-NeoX's parallel residual: the MLP read the layer's input (n₂ of x), not h, so both add to x at once. "
                 "The residual stream after this layer: the next layer's input.",
                 BlockWidth::Model, false, true,
                 {{S::Input, BlockFeed::Cell}, {S::Attention, BlockFeed::Cell}, {S::Down, BlockFeed::Cell}}});
  else
    t.push_back({S::Output, "output", false, "y", "the layer's output (residual sum after the MLP)",
                 std::string("h[r,c] + ") + (c.post_norms ? "nₘ" : "m") + "[r,c]" + residual_scale,
                 "The residual stream after this layer: the next layer's input (after the last layer: the final norm and the logits).",
                 BlockWidth::Model, false, true, {{S::Residual, BlockFeed::Cell}, {mlp_added_stage(c), BlockFeed::Cell}}});
  return t;
}

void norm_statistics(const Norm& norm, const Matrix& x, Matrix& mean, Matrix& spread) {
  mean = Matrix::Zero(x.rows(), 1);
  spread = Matrix::Zero(x.rows(), 1);
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    const RowStatistics s = row_statistics(norm, x.row(r).data(), x.cols());
    mean(r, 0) = static_cast<float>(s.mean);
    spread(r, 0) = static_cast<float>(s.spread);
  }
}

BlockTrace::BlockTrace(std::shared_ptr<const TransformerModel> model, std::vector<int> ids, int layer, Matrix input)
    : model_(std::move(model)), ids_(std::move(ids)), layer_(layer), table_(block_stage_table(model_->config)),
      values_(kBlockStageCount), versions_(kBlockStageCount, 0) {
  using S = BlockStage;
  const TransformerModel& m = *model_;
  const int d = m.config.d_model;
  const auto T = static_cast<Eigen::Index>(ids_.size());
  auto at = [this](S s) -> Matrix& { return values_[static_cast<std::size_t>(s)]; };
  at(S::TokenEmbedding).resize(T, d);
  for (Eigen::Index t = 0; t < T; ++t)
    m.token_embedding.widen(static_cast<std::ptrdiff_t>(ids_[static_cast<std::size_t>(t)]) * d, d,
                            at(S::TokenEmbedding).row(t).data());
  if (m.position_embedding) {
    at(S::Position).resize(T, d);
    m.position_embedding.widen(0, T * d, at(S::Position).data());
  }
  if (info(S::Embedded)) at(S::Embedded) = embed(m, ids_);
  at(S::Input) = std::move(input);
  const Norm& norm1 = m.layers[static_cast<std::size_t>(layer_)].norm1;
  if (m.config.pre_norms) {
    norm_statistics(norm1, at(S::Input), at(S::Norm1Mean), at(S::Norm1Spread));
    at(S::Norm1) = normalize(norm1, at(S::Input));
    if (norm1.rms) values_[static_cast<std::size_t>(S::Norm1Mean)].resize(0, 0);
  }
  for (const BlockStageInfo& i : table_)
    if (!i.follows_attention) versions_[static_cast<std::size_t>(i.stage)] = next_version_++;
}

const BlockStageInfo* BlockTrace::info(BlockStage stage) const {
  for (const BlockStageInfo& i : table_)
    if (i.stage == stage) return &i;
  return nullptr;
}

int BlockTrace::update(const Matrix& attention_out) {
  using S = BlockStage;
  Matrix& a = values_[static_cast<std::size_t>(S::Attention)];
  std::vector<Eigen::Index> rows;
  const bool first = a.rows() != attention_out.rows() || a.cols() != attention_out.cols();
  for (Eigen::Index r = 0; r < attention_out.rows(); ++r)
    // bit patterns: a NaN that stays NaN is no change
    if (first || std::memcmp(a.row(r).data(), attention_out.row(r).data(),
                             static_cast<std::size_t>(a.cols()) * sizeof(float)) != 0)
      rows.push_back(r);
  if (first) a = attention_out;
  else
    for (Eigen::Index r : rows) a.row(r) = attention_out.row(r);
  if (rows.empty()) return 0;
  compute_rows(rows);
  for (const BlockStageInfo& i : table_)
    if (i.follows_attention) versions_[static_cast<std::size_t>(i.stage)] = next_version_++;
  return static_cast<int>(rows.size());
}

// The stages after the attention, for the given rows only: everything after
// the attention works on each token's row alone.
void BlockTrace::compute_rows(const std::vector<Eigen::Index>& rows) {
  using S = BlockStage;
  const TransformerModel& m = *model_;
  const TransformerLayer& L = m.layers[static_cast<std::size_t>(layer_)];
  const auto T = static_cast<Eigen::Index>(ids_.size());
  const auto n = static_cast<Eigen::Index>(rows.size());
  auto at = [this](S s) -> Matrix& { return values_[static_cast<std::size_t>(s)]; };
  const auto gather = [&](const Matrix& full) {
    Matrix out(n, full.cols());
    for (Eigen::Index i = 0; i < n; ++i) out.row(i) = full.row(rows[static_cast<std::size_t>(i)]);
    return out;
  };
  const auto scatter = [&](S s, const Matrix& part) {
    Matrix& full = at(s);
    if (full.rows() != T || full.cols() != part.cols()) full = Matrix::Zero(T, part.cols());
    for (Eigen::Index i = 0; i < n; ++i) full.row(rows[static_cast<std::size_t>(i)]) = part.row(i);
  };
  const ModelConfig& c = m.config;
  Matrix mean, spread;
  // a norm on an output (post-norms): its mean square, then the normed rows
  const auto post_norm = [&](const Norm& norm, const Matrix& x, S spread_stage, S normed_stage) {
    Matrix unused_mean, ms;
    norm_statistics(norm, x, unused_mean, ms);
    scatter(spread_stage, ms);
    Matrix normed = normalize(norm, x);
    scatter(normed_stage, normed);
    return normed;
  };
  const Matrix a = gather(at(S::Attention));
  // what a residual sum adds, scaled as the forward pass scales it (finish_layer)
  const auto scaled = [&](Matrix term) {
    if (c.residual_scale != 1.0f) term *= c.residual_scale;
    return term;
  };
  const Matrix h = gather(at(S::Input)) + scaled(c.post_norms ? post_norm(L.post_attn, a, S::PostAttnSpread, S::PostAttn) : a);
  // the MLP's input: norm2 of h (of x itself with GPT-NeoX's parallel residual), or h without a norm before it
  const Matrix mlp_source = c.parallel_residual ? gather(at(S::Input)) : h;
  Matrix n2 = mlp_source;
  if (c.pre_norms) {
    norm_statistics(L.norm2, mlp_source, mean, spread);
    n2 = normalize(L.norm2, mlp_source);
  }
  Matrix up = L.up.apply(n2);
  Matrix hidden;
  if (m.config.gated_mlp) {
    Matrix gate = L.gate.apply(n2);
    scatter(S::Gate, gate);
    activate(m.config.activation, gate);
    hidden = up.cwiseProduct(gate);
  } else {
    hidden = up;
    activate(m.config.activation, hidden);
  }
  const Matrix down = L.down.apply(hidden);
  scatter(S::Residual, h);
  if (c.pre_norms) {
    if (!L.norm2.rms) scatter(S::Norm2Mean, mean);
    scatter(S::Norm2Spread, spread);
    scatter(S::Norm2, n2);
  }
  scatter(S::Up, up);
  scatter(S::Hidden, hidden);
  scatter(S::Down, down);
  if (c.parallel_residual)
    scatter(S::Output, (down + a) + gather(at(S::Input)));  // finish_layer's order
  else
    scatter(S::Output, h + scaled(c.post_norms ? post_norm(L.post_mlp, down, S::PostMlpSpread, S::PostMlp) : down));
}

}  // namespace attention_lab
