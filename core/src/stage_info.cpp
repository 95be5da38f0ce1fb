#include "attention_lab/stage_info.h"

namespace attention_lab {

std::string subscript(int n) {
  static const char* digits[] = {"₀", "₁", "₂", "₃", "₄", "₅", "₆", "₇", "₈", "₉"};
  if (n < 0) return "₋" + subscript(-n);
  std::string out;
  const std::string s = std::to_string(n);
  for (char ch : s) out += digits[ch - '0'];
  return out;
}

namespace {

// Labels along one side of a stage, with what they name.
struct Labels {
  std::vector<std::string> text;
  LabelKind kind = LabelKind::Index;
};

Labels token_labels(const Scenario& s) {
  Labels out{{}, LabelKind::Token};
  for (int t = 0; t < s.T(); ++t) out.text.push_back(s.token_label(t));
  return out;
}

Labels feature_labels(const Scenario& s) {
  Labels out{{}, LabelKind::Feature};
  for (int i = 0; i < s.d_model(); ++i) out.text.push_back(s.feature_label(i));
  return out;
}

Labels index_labels(int n, int offset = 0) {
  Labels out;
  for (int i = 0; i < n; ++i) out.text.push_back(std::to_string(offset + i));
  return out;
}

}  // namespace

StageInfo describe_stage(const Scenario& s, StageId id) {
  const Dims d = s.dims();
  const int h = id.head;
  const std::string i = subscript(h);
  const std::string head_note = d.heads > 1 ? " (head " + std::to_string(h) + ")" : "";
  StageInfo info;
  info.id = id;
  info.id_text = to_string(id);
  info.editability = is_input(id.kind) ? Editability::EditCells : Editability::PinCells;
  const auto tokens = token_labels(s);
  const StageId X = StageId::input(StageKind::X);

  auto shape = [&](int rows, int cols, Labels rl, Labels cl) {
    info.rows = rows;
    info.cols = cols;
    info.row_labels = std::move(rl.text);
    info.col_labels = std::move(cl.text);
    info.row_label_kind = rl.kind;
    info.col_label_kind = cl.kind;
  };
  const int wk = d.heads * d.d_k;
  const int wv = d.heads * d.d_v;

  switch (id.kind) {
    case StageKind::X:
      info.name = "Input embeddings";
      info.symbol = "X";
      info.formula = "X";
      info.explanation =
          "One row per token: the vector the model holds for that token before this layer. "
          "Everything below is computed from these numbers and the weights.";
      shape(d.T, d.d_model, tokens, feature_labels(s));
      break;
    case StageKind::W_q: case StageKind::W_k: case StageKind::W_v: {
      const bool v = id.kind == StageKind::W_v;
      const char* role = id.kind == StageKind::W_q ? "query" : id.kind == StageKind::W_k ? "key" : "value";
      info.name = std::string("Weights for the ") + (id.kind == StageKind::W_q ? "queries" : id.kind == StageKind::W_k ? "keys" : "values");
      info.symbol = id.kind == StageKind::W_q ? "W_q" : id.kind == StageKind::W_k ? "W_k" : "W_v";
      info.formula = info.symbol;
      info.explanation = std::string("Learned during training. Multiplying a token's embedding by it gives that "
                                     "token's ") + role + " vector; column block i belongs to head i.";
      // Row i of a weight matrix multiplies feature i of every token.
      shape(d.d_model, v ? wv : wk, feature_labels(s), index_labels(v ? wv : wk));
      info.active = true;
      break;
    }
    case StageKind::b_q: case StageKind::b_k: case StageKind::b_v: {
      const bool v = id.kind == StageKind::b_v;
      info.name = std::string("Bias of the ") +
                  (id.kind == StageKind::b_q ? "queries" : id.kind == StageKind::b_k ? "keys" : "values");
      info.symbol = kind_name(id.kind);
      info.formula = info.symbol;
      info.explanation = "Added to every token's projection, so a projection can be non-zero even for a zero input.";
      shape(1, v ? wv : wk, Labels{{"bias"}, LabelKind::Index}, index_labels(v ? wv : wk));
      info.active = s.use_bias;
      break;
    }
    case StageKind::W_o:
      info.name = "Output projection";
      info.symbol = "W_o";
      info.formula = "W_o";
      info.explanation =
          "Learned weights that mix the heads' concatenated contexts back into one vector per token, "
          "so what each head found can be combined.";
      shape(wv, d.d_out, index_labels(wv), index_labels(d.d_out));
      info.active = s.use_w_o;
      break;
    case StageKind::b_o:
      info.name = "Output bias";
      info.symbol = "b_o";
      info.formula = "b_o";
      info.explanation = "Added to every token's output vector.";
      shape(1, d.d_out, Labels{{"bias"}, LabelKind::Index}, index_labels(d.d_out));
      info.active = s.use_output_bias;
      break;
    case StageKind::Mask:
      info.name = std::string("Mask (") + to_string(s.mask_kind) + ")";
      info.symbol = "M";
      info.formula = "M";
      info.explanation =
          s.mask_kind == MaskKind::Causal
              ? "1 where a token may look at another. Causal: each token sees itself and the tokens before it, "
                "never the ones after, because a language model must predict the next token without seeing it."
              : "1 where the query token (row) may attend to the key token (column), 0 where it may not.";
      shape(d.T, d.T, tokens, tokens);
      info.domain = ValueDomain::Binary;
      break;
    case StageKind::Q: case StageKind::K: case StageKind::V: {
      const bool v = id.kind == StageKind::V;
      const std::string sym = kind_name(id.kind);
      const std::string w = "W_" + std::string(1, static_cast<char>(sym[0] + ('a' - 'A')));
      const std::string b = "b_" + std::string(1, static_cast<char>(sym[0] + ('a' - 'A')));
      info.name = id.kind == StageKind::Q ? "Queries" : id.kind == StageKind::K ? "Keys" : "Values";
      info.symbol = sym;
      info.formula = sym + " = X·" + w + (s.use_bias ? " + " + b : "");
      info.explanation =
          id.kind == StageKind::Q ? "Each row is what that token is looking for in the other tokens."
          : id.kind == StageKind::K ? "Each row is what that token offers to be found by: queries are compared with it."
                                    : "Each row is the information that token passes on to whoever attends to it.";
      shape(d.T, v ? wv : wk, tokens, index_labels(v ? wv : wk));
      const int which = static_cast<int>(id.kind) - static_cast<int>(StageKind::Q);  // 0 Q, 1 K, 2 V
      info.inputs = {X, StageId::input(static_cast<StageKind>(static_cast<int>(StageKind::W_q) + which))};
      if (s.use_bias) info.inputs.push_back(StageId::input(static_cast<StageKind>(static_cast<int>(StageKind::b_q) + which)));
      break;
    }
    case StageKind::HeadQ: case StageKind::HeadK: case StageKind::HeadV: {
      const int which = static_cast<int>(id.kind) - static_cast<int>(StageKind::HeadQ);
      const std::string sym = std::string(1, "QKV"[which]);
      const int w = which == 2 ? d.d_v : d.d_k;
      info.name = std::string(which == 0 ? "Queries" : which == 1 ? "Keys" : "Values") + head_note;
      info.symbol = sym + i;
      info.formula = sym + i + " = " + sym + "[:, " + std::to_string(h * w) + ":" + std::to_string((h + 1) * w) + "]";
      info.explanation = "This head's slice of " + sym + ": the columns " + std::to_string(h * w) + " to " +
                         std::to_string((h + 1) * w - 1) +
                         ". Each head works on its own slice, so heads can learn to look for different things.";
      shape(d.T, w, tokens, index_labels(w, h * w));
      info.inputs = {StageId::input(StageKind(static_cast<int>(StageKind::Q) + which))};
      break;
    }
    case StageKind::Scores:
      info.name = "Attention scores" + head_note;
      info.symbol = "S" + i;
      info.formula = "S" + i + " = Q" + i + "·K" + i + "ᵀ";
      info.explanation =
          "Entry (r, c) is the dot product of token r's query with token c's key: large when they point the same "
          "way, i.e. when token c has what token r is looking for.";
      shape(d.T, d.T, tokens, tokens);
      info.inputs = {StageId::of_head(StageKind::HeadQ, h), StageId::of_head(StageKind::HeadK, h)};
      break;
    case StageKind::Scaled: {
      info.name = "Scaled scores" + head_note;
      info.symbol = "S′" + i;
      std::string f = "S" + i;
      if (s.scale) f += " / √" + std::to_string(d.d_k);
      if (s.temperature != 1.0f) f += " / τ";
      info.formula = "S′" + i + " = " + f;
      info.explanation =
          s.scale ? "A dot product of d_k random-ish terms grows like √d_k; dividing by √d_k keeps the scores near "
                    "unit size, so softmax does not collapse onto a single token and gradients stay alive."
                  : "Scaling is off: these are the raw scores (divided by the temperature only). Try larger d_k and "
                    "watch the softmax saturate.";
      if (s.temperature != 1.0f)
        info.explanation += " The temperature τ = " + std::to_string(s.temperature) +
                            " also divides them: below 1 sharpens the weights, above 1 flattens them.";
      shape(d.T, d.T, tokens, tokens);
      info.inputs = {StageId::of_head(StageKind::Scores, h)};
      break;
    }
    case StageKind::Masked:
      info.name = "Masked scores" + head_note;
      info.symbol = "Ŝ" + i;
      info.formula = "Ŝ" + i + " = S′" + i + " + mask (−∞ where M = 0)";
      info.explanation =
          "Cells the mask forbids become −∞, so after softmax they get exactly zero weight: the query token "
          "cannot take anything from that key token.";
      shape(d.T, d.T, tokens, tokens);
      info.inputs = {StageId::of_head(StageKind::Scaled, h), StageId::input(StageKind::Mask)};
      break;
    case StageKind::Weights:
      info.name = "Attention weights" + head_note;
      info.symbol = "A" + i;
      info.formula = "A" + i + " = softmax(Ŝ" + i + ")";
      info.explanation =
          "Softmax along each row turns scores into proportions: every entry is between 0 and 1 and each row "
          "sums to 1. Row r says how much of each token's value goes into token r's new vector.";
      shape(d.T, d.T, tokens, tokens);
      info.inputs = {StageId::of_head(StageKind::Masked, h)};
      info.domain = ValueDomain::Probability;
      break;
    case StageKind::Context:
      info.name = "Context vectors" + head_note;
      info.symbol = "C" + i;
      info.formula = "C" + i + " = A" + i + "·V" + i;
      info.explanation =
          "Each row is a weighted average of the value vectors, using that token's attention weights: the new "
          "representation of the token, informed by the tokens it attended to.";
      shape(d.T, d.d_v, tokens, index_labels(d.d_v, h * d.d_v));
      info.inputs = {StageId::of_head(StageKind::Weights, h), StageId::of_head(StageKind::HeadV, h)};
      break;
    case StageKind::Concat: {
      info.name = "Concatenated heads";
      info.symbol = "C";
      std::string f = "C = [";
      for (int k = 0; k < d.heads; ++k) f += (k ? ", C" : "C") + subscript(k);
      info.formula = f + "]";
      info.explanation = "The heads' context vectors side by side, one block of d_v columns per head.";
      shape(d.T, wv, tokens, index_labels(wv));
      for (int k = 0; k < d.heads; ++k) info.inputs.push_back(StageId::of_head(StageKind::Context, k));
      break;
    }
    case StageKind::Output:
      info.name = "Output";
      info.symbol = "O";
      info.formula = std::string("O = C") + (s.use_w_o ? "·W_o" : "") + (s.use_output_bias ? " + b_o" : "");
      info.explanation = s.use_w_o ? "The concatenated contexts mixed by the output projection: what the layer passes on."
                                   : "Without an output projection the layer's output is the concatenated context.";
      shape(d.T, d.d_out, tokens, index_labels(d.d_out));
      info.inputs = {StageId::input(StageKind::Concat)};
      if (s.use_w_o) info.inputs.push_back(StageId::input(StageKind::W_o));
      if (s.use_output_bias) info.inputs.push_back(StageId::input(StageKind::b_o));
      break;
  }
  return info;
}

std::vector<StageId> pipeline(const Scenario& s) {
  std::vector<StageId> out;
  auto add = [&](StageKind k) { out.push_back(StageId::input(k)); };
  add(StageKind::X);
  add(StageKind::W_q);
  if (s.use_bias) add(StageKind::b_q);
  add(StageKind::Q);
  add(StageKind::W_k);
  if (s.use_bias) add(StageKind::b_k);
  add(StageKind::K);
  add(StageKind::W_v);
  if (s.use_bias) add(StageKind::b_v);
  add(StageKind::V);
  add(StageKind::Mask);
  for (int h = 0; h < s.heads; ++h)
    for (auto k : {StageKind::HeadQ, StageKind::HeadK, StageKind::HeadV, StageKind::Scores, StageKind::Scaled,
                   StageKind::Masked, StageKind::Weights, StageKind::Context})
      out.push_back(StageId::of_head(k, h));
  add(StageKind::Concat);
  if (s.use_w_o) add(StageKind::W_o);
  if (s.use_output_bias) add(StageKind::b_o);
  add(StageKind::Output);
  return out;
}

}  // namespace attention_lab
