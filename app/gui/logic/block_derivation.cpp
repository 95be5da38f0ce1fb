#include "logic/block_derivation.h"

#include "logic/number_format.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

namespace attention_lab::gui {

namespace {

using S = BlockStage;

std::string num(float v) { return block_number(v); }
std::string factor(float v) { return v < 0 ? "(" + num(v) + ")" : num(v); }

}  // namespace

std::string block_number(float v) {
  const float a = std::fabs(v);
  std::string t;
  if (a >= 1e-3f && a < 1e5f) {
    const int decimals = std::clamp(3 - static_cast<int>(std::floor(std::log10(a))), 3, 6);
    t = format_number(v, decimals);
  } else {
    t = format_number(v, 3);
  }
  if (const auto e = t.find("e-"); e != std::string::npos) t.replace(e, 2, "e−");
  return t;
}

namespace {

// "a[r,0] + a[r,1] + … (768 terms)": the first few terms of a row sum.
std::string first_terms(const Matrix& m, int r, const std::function<std::string(float)>& term) {
  std::string s;
  const auto n = m.cols();
  for (Eigen::Index c = 0; c < n && c < 3; ++c) s += (c ? " + " : "") + term(m(r, c));
  if (n > 3) s += " + … (" + std::to_string(n) + " terms)";
  return s;
}

// A cell of x·W (+ b): its largest products by magnitude, and what the rest add.
std::string largest_products(const Matrix& x, int r, const Linear& w, int c, float value) {
  const auto n = static_cast<int>(x.cols());
  std::vector<double> products(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) products[static_cast<std::size_t>(k)] = static_cast<double>(x(r, k)) * static_cast<double>(w.at(k, c));
  std::vector<int> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  const int shown = std::min(n, kLargestProductsShown);
  std::partial_sort(order.begin(), order.begin() + shown, order.end(), [&](int a, int b) {
    return std::abs(products[static_cast<std::size_t>(a)]) > std::abs(products[static_cast<std::size_t>(b)]);
  });
  std::string s;
  double listed = 0.0;
  for (int i = 0; i < shown; ++i) {
    const int k = order[static_cast<std::size_t>(i)];
    listed += products[static_cast<std::size_t>(k)];
    s += (i ? " + " : "") + factor(x(r, k)) + "×" + factor(w.at(k, c)) + " (k=" + std::to_string(k) + ")";
  }
  const double total = std::accumulate(products.begin(), products.end(), 0.0);
  if (n > shown) s += " + " + factor(static_cast<float>(total - listed)) + " (the other " + std::to_string(n - shown) + ")";
  if (w.bias.size() > 0) s += " + " + factor(w.bias(c)) + " (bias)";
  return s + " = " + num(value);
}

std::string norm_numbers(const BlockTrace& t, const Norm& norm, S input, S mean, S spread, int r, int c, float value) {
  const float x = t.values(input)(r, c);
  const float s = t.values(spread)(r, 0);
  const std::string eps = num(static_cast<float>(norm.eps));
  if (norm.rms)
    return factor(x) + "/√(" + num(s) + " + " + eps + ")×" + factor(norm.weight(c)) + " = " + num(value);
  return "(" + num(x) + " − " + factor(t.values(mean)(r, 0)) + ")/√(" + num(s) + " + " + eps + ")×" + factor(norm.weight(c)) +
         " + " + factor(norm.bias(c)) + " = " + num(value);
}

std::string activation_numbers(Activation a, float u, float value) {
  switch (a) {
    case Activation::GeluTanh:
      return "0.5×" + factor(u) + "×(1 + tanh(0.798×(" + num(u) + " + 0.0447×" + factor(u) + "³))) = " + num(value);
    case Activation::GeluErf: return "0.5×" + factor(u) + "×(1 + erf(" + num(u) + "/√2)) = " + num(value);
    case Activation::Relu: return "max(0, " + num(u) + ") = " + num(value);
    case Activation::Silu: return factor(u) + "×σ(" + num(u) + ") = " + num(value);
  }
  return num(value);
}

}  // namespace

Derivation derive_block(const BlockTrace& t, BlockStage stage, int r, int c, const std::vector<std::string>& tokens,
                        const Matrix& unedited_attention) {
  Derivation out;
  const BlockStageInfo* info = t.info(stage);
  const Matrix& m = t.values(stage);
  if (!info || r < 0 || c < 0 || r >= m.rows() || c >= m.cols()) return out;
  const TransformerModel& model = t.model();
  const ModelConfig& cfg = model.config;
  const TransformerLayer& L = model.layers[static_cast<std::size_t>(t.layer())];
  const float value = m(r, c);
  const std::string token = static_cast<std::size_t>(r) < tokens.size() ? tokens[static_cast<std::size_t>(r)] : std::to_string(r);
  // "(E + P)[0,3]", not "E + P[0,3]"
  const std::string symbol = info->symbol.find(' ') != std::string::npos ? "(" + info->symbol + ")" : info->symbol;
  out.title = symbol + "[" + std::to_string(r) + "," + std::to_string(c) + "]   (token '" + token + "'" +
              (info->width == BlockWidth::FeedForward ? ", MLP feature " + std::to_string(c) : "") + ")";
  out.formula = info->formula;
  const auto sum2 = [&](S a, S b) {
    return num(t.values(a)(r, c)) + " + " + factor(t.values(b)(r, c)) + " = " + num(value);
  };
  // a residual sum: what it adds is scaled by the model's residual_scale (Granite)
  const auto residual_sum = [&](S a, S b) {
    if (cfg.residual_scale == 1.0f) return sum2(a, b);
    return num(t.values(a)(r, c)) + " + " + factor(t.values(b)(r, c)) + "×" + num(cfg.residual_scale) + " = " + num(value);
  };
  const int id = t.ids()[static_cast<std::size_t>(r)];
  switch (stage) {
    case S::TokenEmbedding:
      out.numbers = "W_te[" + std::to_string(id) + ", " + std::to_string(c) + "] = " + num(value);
      out.note = "Token id " + std::to_string(id) + ": row " + std::to_string(id) + " of the " + std::to_string(cfg.vocab) +
                 " × " + std::to_string(cfg.d_model) + " embedding table.";
      break;
    case S::Position:
      out.numbers = "W_pe[" + std::to_string(r) + ", " + std::to_string(c) + "] = " + num(value);
      out.note = "Position " + std::to_string(r) + "'s row of the " + std::to_string(cfg.max_positions) + " × " +
                 std::to_string(cfg.d_model) + " position table.";
      break;
    case S::Embedded:
      if (!t.info(S::Position)) {  // E times the model's embedding scale
        out.numbers = num(t.values(S::TokenEmbedding)(r, c)) + "×" + num(cfg.embedding_scale) + " = " + num(value);
        break;
      }
      if (cfg.embedding_scale != 1.0f)
        out.numbers = "(" + num(t.values(S::TokenEmbedding)(r, c)) + " + " + factor(t.values(S::Position)(r, c)) + ")×" +
                      num(cfg.embedding_scale) + " = " + num(value);
      else
        out.numbers = sum2(S::TokenEmbedding, S::Position);
      break;
    case S::Input:
      out.formula = t.layer() == 0 ? "the embedded tokens (" + (t.info(S::Embedded) ? t.info(S::Embedded)->symbol : std::string("E")) + ")"
                                   : "y of layer " + std::to_string(t.layer() - 1);
      out.numbers = num(value);
      out.note = "Edits in layer " + std::to_string(t.layer()) + " never change it.";
      break;
    case S::Norm1Mean: case S::Norm2Mean: {
      const S in = stage == S::Norm1Mean ? S::Input : mlp_norm_input_stage(cfg);
      out.numbers = "(" + first_terms(t.values(in), r, [](float v) { return factor(v); }) + ")/" + std::to_string(cfg.d_model) +
                    " = " + num(value);
      break;
    }
    case S::Norm1Spread: case S::Norm2Spread: {
      const bool first = stage == S::Norm1Spread;
      const S in = first ? S::Input : mlp_norm_input_stage(cfg);
      const Norm& norm = first ? L.norm1 : L.norm2;
      if (norm.rms) {
        out.numbers = "(" + first_terms(t.values(in), r, [](float v) { return factor(v) + "²"; }) + ")/" +
                      std::to_string(cfg.d_model) + " = " + num(value);
      } else {
        const float mu = t.values(first ? S::Norm1Mean : S::Norm2Mean)(r, 0);
        out.numbers = "(" + first_terms(t.values(in), r, [mu](float v) { return "(" + num(v) + " − " + factor(mu) + ")²"; }) +
                      ")/" + std::to_string(cfg.d_model) + " = " + num(value);
      }
      break;
    }
    case S::Norm1:
      out.numbers = norm_numbers(t, L.norm1, S::Input, S::Norm1Mean, S::Norm1Spread, r, c, value);
      out.note = "This is X[" + std::to_string(r) + "," + std::to_string(c) + "] of the Pipeline.";
      break;
    case S::Norm2:
      out.numbers = norm_numbers(t, L.norm2, mlp_norm_input_stage(cfg), S::Norm2Mean, S::Norm2Spread, r, c, value);
      break;
    case S::Attention:
      out.numbers = num(value) + " (the Pipeline's output[" + std::to_string(r) + "," + std::to_string(c) + "])";
      if (r < unedited_attention.rows() && c < unedited_attention.cols()) {
        const float before = unedited_attention(r, c);
        if (before != value)
          out.note = "Before the edits: " + num(before) + " (changed by " + (value > before ? "+" : "") +
                     num(value - before) + ").";
      }
      break;
    case S::Residual: out.numbers = residual_sum(S::Input, attention_added_stage(cfg)); break;
    case S::PostAttnSpread: case S::PostMlpSpread:
      out.numbers = "(" + first_terms(t.values(stage == S::PostAttnSpread ? S::Attention : S::Down), r,
                                      [](float v) { return factor(v) + "²"; }) +
                    ")/" + std::to_string(cfg.d_model) + " = " + num(value);
      break;
    case S::PostAttn:
      out.numbers = norm_numbers(t, L.post_attn, S::Attention, S::PostAttnSpread, S::PostAttnSpread, r, c, value);
      break;
    case S::PostMlp:
      out.numbers = norm_numbers(t, L.post_mlp, S::Down, S::PostMlpSpread, S::PostMlpSpread, r, c, value);
      break;
    case S::Up: out.numbers = largest_products(t.values(mlp_input_stage(cfg)), r, L.up, c, value); break;
    case S::Gate: out.numbers = largest_products(t.values(mlp_input_stage(cfg)), r, L.gate, c, value); break;
    case S::Hidden:
      if (t.info(S::Gate)) {
        const float g = t.values(S::Gate)(r, c), u = t.values(S::Up)(r, c);
        out.numbers = factor(g) + "×σ(" + num(g) + ")×" + factor(u) + " = " + factor(g / (1.0f + std::exp(-g))) + "×" +
                      factor(u) + " = " + num(value);
      } else {
        out.numbers = activation_numbers(cfg.activation, t.values(S::Up)(r, c), value);
      }
      break;
    case S::Down: out.numbers = largest_products(t.values(S::Hidden), r, L.down, c, value); break;
    case S::Output:
      if (cfg.parallel_residual)  // GPT-NeoX: the MLP and the attention added to x side by side
        out.numbers = num(t.values(S::Down)(r, c)) + " + " + factor(t.values(S::Attention)(r, c)) + " + " +
                      factor(t.values(S::Input)(r, c)) + " = " + num(value);
      else
        out.numbers = residual_sum(S::Residual, mlp_added_stage(cfg));
      out.note = t.layer() + 1 < cfg.layers ? "The input of layer " + std::to_string(t.layer() + 1) + "."
                                            : "The last layer's output: the final norm and lm_head make the logits from it.";
      break;
  }
  if (stage == S::Up || stage == S::Gate || stage == S::Down)
    out.note = "The " + std::to_string(kLargestProductsShown) + " largest of the " +
               std::to_string(stage == S::Down ? cfg.d_ff : cfg.d_model) + " products, then the rest summed.";
  return out;
}

}  // namespace attention_lab::gui
