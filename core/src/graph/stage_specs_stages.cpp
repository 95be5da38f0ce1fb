// Every stage but the projections' (stage_specs_projections.cpp): the input
// X and X_kv, W_o and b_o, the mask, sinks, positions, each head's scores,
// scaling, soft-cap, masking, weights and context, the concatenation and
// the output.
#include "stage_specs.h"

#include <cstdio>

namespace attention_lab::stage_specs {

// With cross-attention, query i and key j index two different sequences:
// position schemes still compare i with j, which models rarely do.
std::string cross_positions_note(const Scenario& s) {
  if (!s.cross()) return "";
  return " With cross-attention the queries (X) and the keys (X_kv) are two sequences: their positions i and j "
         "are compared as if they were one, which encoder-decoder models do not do (T5 and BART add no position "
         "to their cross-attention).";
}

std::string short_number(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", static_cast<double>(v));
  return buf;
}

namespace {

// The scaling of a checkpoint trained for a longer context, as a clause.
std::string rope_scaling_words(const Rope& r) {
  switch (r.scaling) {
    case RopeScaling::None: return {};
    case RopeScaling::Linear: return " (every frequency divided by " + short_number(r.factor) + ": linear scaling)";
    case RopeScaling::Llama3:
      return " (Llama 3 scaling: frequencies whose wavelength is over " +
             short_number(static_cast<float>(r.original_max_positions) / r.low_freq_factor) + " positions divided by " +
             short_number(r.factor) + ", under " +
             short_number(static_cast<float>(r.original_max_positions) / r.high_freq_factor) + " kept, blended between)";
  }
  return {};
}

}  // namespace

std::string rope_words(const Scenario& s) {
  const Dims d = s.dims();
  const bool partial = d.rotary_dims() < d.d_k;
  const std::string width = partial ? "r" : "d_k";
  return "RoPE turns each head's " +
         (partial ? "first r = " + std::to_string(d.rotary_dims()) + " of its " + std::to_string(d.d_k) + " dimensions (the rest pass unchanged), " : std::string()) +
         std::string(s.rope.pairs == RopePairs::Half ? "dimensions i and i + " + width + "/2" : "dimensions 2i and 2i + 1") +
         " together by the angle position·θ^(−2i/" + width + "), θ = " + short_number(s.rope.theta) + rope_scaling_words(s.rope) +
         ": a query and a key then match by what they hold and by how far apart they are.";
}

namespace {

std::string scaled_formula(const Scenario& s, const Dims& d, int h) {
  std::string f = "S" + s.shown_subscript(h);
  if (s.scale && s.score_scale > 0.0f) f += " × " + short_number(s.score_scale);
  else if (s.scale) f += " / √" + std::to_string(d.d_k);
  if (s.temperature != 1.0f) f += " / τ";
  return "S′" + s.shown_subscript(h) + " = " + f;
}

std::string scaled_explanation(const Scenario& s, const Dims& d, int) {
  if (s.scale && s.score_scale > 0.0f)
    return "The model multiplies the scores by " + short_number(s.score_scale) + " instead of dividing them by √d_k = √" +
           std::to_string(d.d_k) + " (a factor its configuration sets: Granite's attention_multiplier, Gemma's "
           "query_pre_attn_scalar^−½); the aim is the same, scores of a size softmax does not saturate on." +
           (s.temperature != 1.0f ? " The temperature τ divides them too." : "");
  std::string text =
      s.scale ? "A dot product of d_k random-ish terms grows like √d_k; dividing by √d_k keeps the scores near "
                "unit size, so softmax does not collapse onto a single token and gradients stay alive."
              : "Scaling is off: these are the raw scores (divided by the temperature only). Try larger d_k and "
                "watch the softmax saturate.";
  if (s.temperature != 1.0f)
    text += " The temperature τ = " + std::to_string(s.temperature) +
            " also divides them: below 1 sharpens the weights, above 1 flattens them.";
  return text;
}

std::string output_formula(const Scenario& s, const Dims&, int) {
  return std::string("O = C") + (s.use_w_o ? "·W_o" : "") + (s.use_output_bias ? " + b_o" : "");
}

std::string concat_formula(const Scenario& s, const Dims& d, int) {
  std::string f = "C = [";
  for (int k = 0; k < d.heads; ++k) f += (k ? ", C" : "C") + s.shown_subscript(k);
  return f + "]";
}

}  // namespace

namespace {

// What a user edits (X, X_kv, W_o, b_o, the mask, the sinks) and RoPE's angles.
void put_inputs(Table& t) {
  static const StageSpec specs[] = {
      {K::X, "X", false, true, E::T, E::d_model, L::Token, L::Feature, ValueDomain::Signed, Requires::Nothing,
       ViewKind::Stored, K::X, &Scenario::X, Trace::Top, "Input embeddings", [](int) { return fixed("X"); },
       [](const Scenario&, const Dims&, int) { return fixed("X"); },
       [](const Scenario&, const Dims&, int) {
         return fixed("One row per token: the vector the model holds for that token before this layer. "
                      "Everything below is computed from these numbers and the weights.");
       },
       [](const Scenario&, int) { return std::vector<StageId>{}; }, no_sources},
      {K::W_o, "W_o", false, true, E::ContextWidth, E::d_out, L::Index, L::Index, ValueDomain::Signed,
       Requires::OutputProjection, ViewKind::Stored, K::W_o, &Scenario::W_o, Trace::No, "Output projection",
       [](int) { return fixed("W_o"); }, [](const Scenario&, const Dims&, int) { return fixed("W_o"); },
       [](const Scenario&, const Dims&, int) {
         return fixed("Learned weights that mix the heads' concatenated contexts back into one vector per token, "
                      "so what each head found can be combined.");
       },
       [](const Scenario&, int) { return std::vector<StageId>{}; }, no_sources},
      {K::b_o, "b_o", false, true, E::One, E::d_out, L::Bias, L::Index, ValueDomain::Signed, Requires::OutputBias,
       ViewKind::Stored, K::b_o, &Scenario::b_o, Trace::No, "Output bias", [](int) { return fixed("b_o"); },
       [](const Scenario&, const Dims&, int) { return fixed("b_o"); },
       [](const Scenario&, const Dims&, int) { return fixed("Added to every token's output vector."); },
       [](const Scenario&, int) { return std::vector<StageId>{}; }, no_sources},
      {K::Mask, "mask", false, true, E::T, E::Tk, L::Token, L::KeyToken, ValueDomain::Binary, Requires::Nothing,
       ViewKind::Stored, K::Mask, nullptr, Trace::No, "Mask", [](int) { return fixed("M"); },
       [](const Scenario&, const Dims&, int) { return fixed("M"); },
       [](const Scenario& s, const Dims&, int) {
         if (s.mask_kind == MaskKind::Window)
           return "1 where a token may look at another. Sliding window of " + std::to_string(s.window) +
                  ": each token sees itself and the " + std::to_string(s.window - 1) +
                  " tokens before it, so a long text costs T·W scores instead of T². Information from further back "
                  "still arrives, one window per layer (Mistral, Gemma 2 and Longformer work this way).";
         return fixed(s.mask_kind == MaskKind::Causal
                          ? "1 where a token may look at another. Causal: each token sees itself and the tokens "
                            "before it, never the ones after, because a language model must predict the next token "
                            "without seeing it."
                          : "1 where the query token (row) may attend to the key token (column), 0 where it may not.");
       },
       [](const Scenario&, int) { return std::vector<StageId>{}; }, no_sources,
       [](const Scenario& s) {
         if (s.mask_kind == MaskKind::Window) return " (window of " + std::to_string(s.window) + ")";
         return std::string(" (") + to_string(s.mask_kind) + ")";
       }},
      {K::Sinks, "sinks", false, true, E::One, E::Heads, L::SinkLogit, L::Index, ValueDomain::Signed, Requires::Sinks,
       ViewKind::Stored, K::Sinks, &Scenario::sinks, Trace::No, "Attention sinks", [](int) { return fixed("s"); },
       [](const Scenario&, const Dims&, int) { return fixed("s"); },
       [](const Scenario&, const Dims&, int) {
         return fixed("One learned logit per head that joins every row's softmax as an extra, invisible key. It takes "
                      "a share of the weight that then goes nowhere, so a query that finds nothing worth attending to "
                      "can give little to every token instead of being forced to spread 1 over them (gpt-oss).");
       },
       [](const Scenario&, int) { return std::vector<StageId>{}; }, no_sources},
      {K::X_kv, "X_kv", false, true, E::Tk, E::d_kv, L::KeyToken, L::KeyFeature, ValueDomain::Signed, Requires::Cross,
       ViewKind::Stored, K::X_kv, &Scenario::X_kv, Trace::Top, "Keys' and values' source",
       [](int) { return fixed("X_kv"); }, [](const Scenario&, const Dims&, int) { return fixed("X_kv"); },
       [](const Scenario&, const Dims&, int) {
         return fixed("Cross-attention: the keys and values come from this other sequence (in a translation model "
                      "the encoded source sentence), the queries from X. Each query row asks which of these rows it "
                      "needs, so the scores have a row per query and a column per row of X_kv.");
       },
       [](const Scenario&, int) { return std::vector<StageId>{}; }, no_sources},
      {K::RopeAngle, "rope_angle", false, false, E::Positions, E::Pairs, L::Index, L::Index, ValueDomain::Signed,
       Requires::Rope, ViewKind::Stored, K::RopeAngle, nullptr, Trace::Top, "RoPE rotation angles",
       [](int) { return fixed("φ"); },
       [](const Scenario& s, const Dims& d, int) {
         return "φ[p][k] = p·θ^(−2k/" + std::to_string(d.rotary_dims()) + "), θ = " + short_number(s.rope.theta) +
                rope_scaling_words(s.rope) + " (shown modulo 2π, in (−π, π])";
       },
       [](const Scenario& s, const Dims&, int) {
         return "How far RoPE turns pair k of the query or key at position p (row p, column k): " + rope_words(s) +
                " Pair 0 turns by a radian per position, so it spins round quickly; later pairs turn ever more "
                "slowly and can tell apart positions far apart. Every head uses the same angles. They depend "
                "only on positions, so they cannot be edited or pinned." + cross_positions_note(s);
       },
       [](const Scenario&, int) { return std::vector<StageId>{}; }, no_sources, nullptr, true,
       "it is computed from the positions alone; pin the rotated Q or K it turns instead"}
  };
  put(t, specs);
}

// Each head's scores to its weights.
void put_scores_to_weights(Table& t) {
  static const StageSpec specs[] = {
      {K::Scores, "scores", true, false, E::T, E::Tk, L::Token, L::KeyToken, ValueDomain::Signed, Requires::Nothing,
       ViewKind::Stored, K::Scores, nullptr, Trace::InHead, "Attention scores",
       [](int h) { return "S" + subscript(h); },
       [](const Scenario& s, const Dims&, int h) { return "S" + s.shown_subscript(h) + " = Q" + s.shown_subscript(h) + "·K" + s.shown_subscript(h) + "ᵀ"; },
       [](const Scenario&, const Dims&, int) {
         return fixed("Entry (r, c) is the dot product of token r's query with token c's key: large when they point "
                      "the same way, i.e. when token c has what token r is looking for.");
       },
       [](const Scenario&, int h) { return std::vector<StageId>{head(K::HeadQ, h), head(K::HeadK, h)}; },
       // q_r · k_c: row r of Q_h and row c of K_h (a column of K_hᵀ)
       [](const Scenario&, const Dims&, int h, int r, int c) {
         return Sources{row_of(head(K::HeadQ, h), r), row_of(head(K::HeadK, h), c)};
       }},
      {K::Scaled, "scaled", true, false, E::T, E::Tk, L::Token, L::KeyToken, ValueDomain::Signed, Requires::Nothing,
       ViewKind::Stored, K::Scaled, nullptr, Trace::InHead, "Scaled scores", [](int h) { return "S′" + subscript(h); },
       scaled_formula, scaled_explanation,
       [](const Scenario&, int h) { return std::vector<StageId>{head(K::Scores, h)}; },
       [](const Scenario&, const Dims&, int h, int r, int c) { return Sources{cell_of(head(K::Scores, h), r, c)}; }},
      {K::Capped, "capped", true, false, E::T, E::Tk, L::Token, L::KeyToken, ValueDomain::Signed, Requires::Softcap,
       ViewKind::Stored, K::Capped, nullptr, Trace::InHead, "Soft-capped scores", [](int h) { return "S″" + subscript(h); },
       [](const Scenario& s, const Dims&, int h) {
         const std::string c = short_number(s.softcap);
         return "S″" + s.shown_subscript(h) + " = " + c + "·tanh(S′" + s.shown_subscript(h) + " / " + c + ")";
       },
       [](const Scenario& s, const Dims&, int) {
         return "A soft cap (Gemma 2): tanh squeezes every scaled score into (−" + short_number(s.softcap) + ", " +
                short_number(s.softcap) + "). Small scores pass almost unchanged; a very large one stops near the cap, so "
                "no single key can take all of a row's weight however well it matches.";
       },
       [](const Scenario&, int h) { return std::vector<StageId>{head(K::Scaled, h)}; },
       [](const Scenario&, const Dims&, int h, int r, int c) { return Sources{cell_of(head(K::Scaled, h), r, c)}; },
       nullptr, false, "it is the scaled score capped; pin the scaled or the masked score instead"},
      {K::PositionBias, "position_bias", true, false, E::T, E::Tk, L::Token, L::KeyToken, ValueDomain::Signed,
       Requires::Alibi, ViewKind::Stored, K::PositionBias, nullptr, Trace::InHead, "Position bias (ALiBi)",
       [](int h) { return "B" + subscript(h); },
       [](const Scenario& s, const Dims& d, int h) {
         const auto slopes = alibi_slopes(d.heads);
         char m[32];
         std::snprintf(m, sizeof m, "%.4g", h < static_cast<int>(slopes.size()) ? slopes[static_cast<std::size_t>(h)] : 0.0);
         return "B" + s.shown_subscript(h) + "[i][j] = m" + s.shown_subscript(h) + "·(j − i), m" + s.shown_subscript(h) + " = " + m;
       },
       [](const Scenario& s, const Dims& d, int h) {
         return "ALiBi gives no position to the tokens themselves; instead each head subtracts from a score a "
                "penalty that grows with the distance between query i and key j: m·(i − j). Head " +
                s.shown_index(h) + " of " + std::to_string(d.heads) +
                " has slope m = 2^(−8·" + std::to_string(h + 1) + "/" + std::to_string(d.heads) +
                ") (the paper's rule): steep heads look near, gentle ones far. It depends only on positions, so it "
                "cannot be edited; pin a masked score to change one cell." + cross_positions_note(s);
       },
       [](const Scenario&, int) { return std::vector<StageId>{}; }, no_sources, nullptr, true},
      {K::Masked, "masked", true, false, E::T, E::Tk, L::Token, L::KeyToken, ValueDomain::Signed, Requires::Nothing,
       ViewKind::Stored, K::Masked, nullptr, Trace::InHead, "Masked scores", [](int h) { return "Ŝ" + subscript(h); },
       [](const Scenario& s, const Dims&, int h) {
         return "Ŝ" + s.shown_subscript(h) + " = " + (s.softcap > 0.0f ? "S″" : "S′") + s.shown_subscript(h) +
                (s.alibi ? " + B" + s.shown_subscript(h) : std::string()) +
                " + mask (−∞ where M = 0)";
       },
       [](const Scenario& s, const Dims&, int) {
         return std::string(s.alibi ? "The position bias is added to every score. " : "") +
                "Cells the mask forbids become −∞, so after softmax they get exactly zero weight: the query "
                "token cannot take anything from that key token.";
       },
       [](const Scenario& s, int h) {
         std::vector<StageId> in{head(s.softcap > 0.0f ? K::Capped : K::Scaled, h), layer(K::Mask)};
         if (s.alibi) in.push_back(head(K::PositionBias, h));
         return in;
       },
       [](const Scenario& s, const Dims&, int h, int r, int c) {
         Sources out{cell_of(head(s.softcap > 0.0f ? K::Capped : K::Scaled, h), r, c), cell_of(layer(K::Mask), r, c)};
         if (s.alibi) out.push_back(cell_of(head(K::PositionBias, h), r, c));
         return out;
       }},
      {K::Weights, "weights", true, false, E::T, E::Tk, L::Token, L::KeyToken, ValueDomain::Probability,
       Requires::Nothing, ViewKind::Stored, K::Weights, nullptr, Trace::InHead, "Attention weights",
       [](int h) { return "A" + subscript(h); },
       [](const Scenario& s, const Dims&, int h) {
         return "A" + s.shown_subscript(h) + " = softmax(Ŝ" + s.shown_subscript(h) + (s.use_sinks ? ", sink s" + s.shown_subscript(h) : "") + ")";
       },
       [](const Scenario& s, const Dims&, int) {
         if (s.use_sinks)
           return fixed("Softmax along each row, with the head's sink as one more key: every entry is between 0 and 1 "
                        "and each row sums to 1 minus the sink's share σ. Row r says how much of each token's value "
                        "goes into token r's new vector.");
         return fixed("Softmax along each row turns scores into proportions: every entry is between 0 and 1 and "
                      "each row sums to 1. Row r says how much of each token's value goes into token r's new vector.");
       },
       [](const Scenario& s, int h) {
         std::vector<StageId> in{head(K::Masked, h)};
         if (s.use_sinks) in.push_back(layer(K::Sinks));
         return in;
       },
       // the whole row of masked scores (softmax normalizes over it), its own cell most
       [](const Scenario& s, const Dims&, int h, int r, int c) {
         Sources out{{head(K::Masked, h), r, -1, r, c}};
         if (s.use_sinks) out.push_back(cell_of(layer(K::Sinks), 0, h));
         return out;
       }}
  };
  put(t, specs);
}

// The sinks' share, each head's context, the concatenation and the output.
void put_context_to_output(Table& t) {
  static const StageSpec specs[] = {
      {K::SinkShare, "sink_share", true, false, E::T, E::One, L::Token, L::Index, ValueDomain::Probability,
       Requires::Sinks, ViewKind::Stored, K::SinkShare, nullptr, Trace::InHead, "Share of the attention sink",
       [](int h) { return "σ" + subscript(h); },
       [](const Scenario& s, const Dims&, int h) {
         return "σ" + s.shown_subscript(h) + " = e^(s" + s.shown_subscript(h) + " − m) / (Σⱼ e^(Ŝ" + s.shown_subscript(h) + "ⱼ − m) + e^(s" +
                s.shown_subscript(h) + " − m))";
       },
       [](const Scenario&, const Dims&, int) {
         return fixed("The part of each row's softmax that the sink took. It is dropped, so the row's weights add up "
                      "to 1 − σ: the larger σ, the less the token takes from the others.");
       },
       [](const Scenario&, int h) { return std::vector<StageId>{head(K::Masked, h), layer(K::Sinks)}; },
       [](const Scenario&, const Dims&, int h, int r, int) {
         return Sources{row_of(head(K::Masked, h), r), cell_of(layer(K::Sinks), 0, h)};
       }},
      {K::Context, "context", true, false, E::T, E::d_v, L::Token, L::HeadIndex, ValueDomain::Signed,
       Requires::Nothing, ViewKind::Stored, K::Context, nullptr, Trace::InHead, "Context vectors",
       [](int h) { return "C" + subscript(h); },
       [](const Scenario& s, const Dims&, int h) { return "C" + s.shown_subscript(h) + " = A" + s.shown_subscript(h) + "·V" + s.shown_subscript(h); },
       [](const Scenario&, const Dims&, int) {
         return fixed("Each row is a weighted average of the value vectors, using that token's attention weights: "
                      "the new representation of the token, informed by the tokens it attended to.");
       },
       [](const Scenario&, int h) { return std::vector<StageId>{head(K::Weights, h), head(K::HeadV, h)}; },
       [](const Scenario&, const Dims&, int h, int r, int c) {
         return Sources{row_of(head(K::Weights, h), r), col_of(head(K::HeadV, h), c)};
       }},
      {K::Concat, "concat", false, false, E::T, E::ContextWidth, L::Token, L::Index, ValueDomain::Signed,
       Requires::Nothing, ViewKind::HeadsSideBySide, K::Context, nullptr, Trace::AfterHeads, "Concatenated heads",
       [](int) { return fixed("C"); }, concat_formula,
       [](const Scenario&, const Dims&, int) {
         return fixed("The heads' context vectors side by side, one block of d_v columns per head.");
       },
       [](const Scenario& s, int) {
         std::vector<StageId> in;
         for (int k = 0; k < s.heads; ++k) in.push_back(head(K::Context, k));
         return in;
       },
       [](const Scenario&, const Dims& d, int, int r, int c) {
         return d.d_v > 0 ? Sources{cell_of(head(K::Context, c / d.d_v), r, c % d.d_v)} : Sources{};
       }},
      {K::Output, "output", false, false, E::T, E::d_out, L::Token, L::Index, ValueDomain::Signed,
       Requires::Nothing, ViewKind::Stored, K::Output, nullptr, Trace::AfterHeads, "Output",
       [](int) { return fixed("O"); }, output_formula,
       [](const Scenario& s, const Dims&, int) {
         return fixed(s.use_w_o ? "The concatenated contexts mixed by the output projection: what the layer passes on."
                                : "Without an output projection the layer's output is the concatenated context.");
       },
       [](const Scenario& s, int) {
         std::vector<StageId> in{layer(K::Concat)};
         if (s.use_w_o) in.push_back(layer(K::W_o));
         if (s.use_output_bias) in.push_back(layer(K::b_o));
         return in;
       },
       [](const Scenario& s, const Dims&, int, int r, int c) {
         Sources out{row_of(layer(K::Concat), r)};
         if (s.use_w_o) out.push_back(col_of(layer(K::W_o), c));
         if (s.use_output_bias) out.push_back(cell_of(layer(K::b_o), 0, c));
         return out;
       }}
  };
  put(t, specs);
}

}  // namespace

void put_other_stages(Table& t) {
  put_inputs(t);
  put_scores_to_weights(t);
  put_context_to_output(t);
}

}  // namespace attention_lab::stage_specs
