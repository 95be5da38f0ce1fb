#include "attention_lab/stage_registry.h"

#include "attention_lab/cell_ref.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>

namespace attention_lab {

int extent(Extent e, const Dims& d) {
  switch (e) {
    case Extent::One: return 1;
    case Extent::T: return d.T;
    case Extent::Tk: return d.T_k;
    case Extent::d_kv: return d.d_kv;
    case Extent::d_model: return d.d_model;
    case Extent::QWidth: return d.heads * d.d_k;
    case Extent::KWidth: return d.kv_heads * d.d_k;
    case Extent::VWidth: return d.kv_heads * d.d_v;
    case Extent::ContextWidth: return d.heads * d.d_v;
    case Extent::d_k: return d.d_k;
    case Extent::d_v: return d.d_v;
    case Extent::d_out: return d.d_out;
    case Extent::Heads: return d.heads;
    case Extent::Positions: return std::max(d.T, d.T_k);
    case Extent::Pairs: return d.rotary_dims() / 2;
    case Extent::QNormWidth: return d.qk_norm_whole ? d.heads * d.d_k : d.d_k;
    case Extent::KNormWidth: return d.qk_norm_whole ? d.kv_heads * d.d_k : d.d_k;
  }
  return 0;
}

const char* extent_name(Extent e) {
  switch (e) {
    case Extent::One: return "1";
    case Extent::T: return "T";
    case Extent::Tk: return "T_k";
    case Extent::d_kv: return "d_kv";
    case Extent::d_model: return "d_model";
    case Extent::QWidth: return "heads*d_k";
    case Extent::KWidth: return "kv_heads*d_k";
    case Extent::VWidth: return "kv_heads*d_v";
    case Extent::ContextWidth: return "heads*d_v";
    case Extent::d_k: return "d_k";
    case Extent::d_v: return "d_v";
    case Extent::d_out: return "d_out";
    case Extent::Heads: return "heads";
    case Extent::Positions: return "max(T, T_k)";
    case Extent::Pairs: return "rotary/2";
    case Extent::QNormWidth: return "d_k or heads*d_k";
    case Extent::KNormWidth: return "d_k or kv_heads*d_k";
  }
  return "?";
}

namespace {

using K = StageKind;
using E = Extent;
using L = SideLabels;

StageId layer(K k) { return StageId::input(k); }
StageId head(K k, int h) { return StageId::of_head(k, h); }

std::string fixed(const char* text) { return text; }

// [SECTION] Cell sources (provenance)

using Sources = std::vector<CellSource>;
CellSource row_of(StageId id, int r) { return {id, r, -1, -1, -1}; }
CellSource col_of(StageId id, int c) { return {id, -1, c, -1, -1}; }
CellSource cell_of(StageId id, int r, int c) { return {id, -1, -1, r, c}; }
Sources no_sources(const Scenario&, const Dims&, int, int, int) { return {}; }

// Cell (r, col) of Q, K or V (P = 0, 1, 2) before any rotation: row r of what
// it is projected from, column col of its weights, and its bias.
void add_projection(Sources& out, const Scenario& s, int P, int r, int col) {
  out.push_back(row_of(layer(P > 0 && s.cross() ? K::X_kv : K::X), r));
  out.push_back(col_of(layer(K(int(K::W_q) + P)), col));
  if (s.use_bias) out.push_back(cell_of(layer(K(int(K::b_q) + P)), 0, col));
}

// Cell (r, col) of Q or K after the q/k norm (before RoPE): the row (or the
// head's block of it) of the projection the norm's mean square is taken
// over, and the cell's gain.
void add_normed(Sources& out, const Scenario& s, const Dims& d, int P, int r, int col) {
  const StageId projected = layer(K(int(K::QProjected) + P));
  const bool whole = s.qk_norm.scope == QkNormScope::Whole;
  if (whole) {
    out.push_back(row_of(projected, r));
  } else {
    const int c0 = d.d_k > 0 ? col / d.d_k * d.d_k : 0;
    for (int i = 0; i < d.d_k; ++i) out.push_back(cell_of(projected, r, c0 + i));
  }
  out.push_back(cell_of(layer(K(int(K::QNorm) + P)), 0, whole || d.d_k <= 0 ? col : col % d.d_k));
}

// Cell (r, col) of Q or K before RoPE: the projection, or with a q/k norm its normed value.
void add_unrotated(Sources& out, const Scenario& s, const Dims& d, int P, int r, int col) {
  if (P < 2 && s.qk_norm.on()) return add_normed(out, s, d, P, r, col);
  add_projection(out, s, P, r, col);
}

// Cell (r, col) of Q, K or V as it enters the scores: with RoPE a rotated
// cell of Q or K reads two cells of the row before rotation, its own
// dimension and the one RoPE pairs it with.
void add_projected(Sources& out, const Scenario& s, const Dims& d, int P, int r, int col) {
  if (P == 2 || !s.rope.on || d.d_k <= 0) return add_unrotated(out, s, d, P, r, col);
  const int c0 = col / d.d_k * d.d_k, dim = col - c0;
  if (dim >= d.rotary_dims()) {  // past the turned dimensions (partial rotary): passed on unchanged
    out.push_back(cell_of(layer(K(int(K::QUnrotated) + P)), r, col));
    return;
  }
  for (int at : {dim, rope_partner(s.rope.pairs, d.rotary_dims(), dim)})
    out.push_back(cell_of(layer(K(int(K::QUnrotated) + P)), r, c0 + at));
  out.push_back(cell_of(layer(K::RopeAngle), r, rope_pair_of(s.rope.pairs, d.rotary_dims(), dim)));
}

// With cross-attention, query i and key j index two different sequences:
// position schemes still compare i with j, which models rarely do.
std::string cross_positions_note(const Scenario& s) {
  if (!s.cross()) return "";
  return " With cross-attention the queries (X) and the keys (X_kv) are two sequences: their positions i and j "
         "are compared as if they were one, which encoder-decoder models do not do (T5 and BART add no position "
         "to their cross-attention).";
}

// "W_q" → "query"; the three projections share their words.
struct Projection {
  const char* plural;   // "queries"
  const char* single;   // "query"
  const char* letter;   // "Q"
  const char* lower;    // "q"
};
constexpr Projection kProjection[3] = {
    {"queries", "query", "Q", "q"}, {"keys", "key", "K", "k"}, {"values", "value", "V", "v"}};

// The width of W_q/W_k/W_v (P = 0, 1, 2) and of what they project to.
constexpr Extent projection_width(int P) { return P == 0 ? E::QWidth : P == 1 ? E::KWidth : E::VWidth; }

template <int P>
StageSpec weights_spec() {
  return {K(int(K::W_q) + P), P == 0 ? "W_q" : P == 1 ? "W_k" : "W_v", false, true, P == 0 ? E::d_model : E::d_kv,
          projection_width(P), P == 0 ? L::Feature : L::KeyFeature, L::Index, ValueDomain::Signed, Requires::Nothing,
          ViewKind::Stored, K(int(K::W_q) + P),
          P == 0 ? &Scenario::W_q : P == 1 ? &Scenario::W_k : &Scenario::W_v, Trace::No,
          P == 0 ? "Weights for the queries" : P == 1 ? "Weights for the keys" : "Weights for the values",
          [](int) { return "W_" + std::string(kProjection[P].lower); },
          [](const Scenario&, const Dims&, int) { return "W_" + std::string(kProjection[P].lower); },
          [](const Scenario&, const Dims& d, int) {
            return "Learned during training. Multiplying a token's embedding by it gives that token's " +
                   std::string(kProjection[P].single) + " vector; column block i belongs to head i" +
                   (P > 0 && d.kv_heads != d.heads ? " of the " + std::to_string(d.kv_heads) +
                                                         " K/V heads the query heads share"
                                                   : "") + ".";
          },
          [](const Scenario&, int) { return std::vector<StageId>{}; }, no_sources};
}

template <int P>
StageSpec bias_spec() {
  return {K(int(K::b_q) + P), P == 0 ? "b_q" : P == 1 ? "b_k" : "b_v", false, true, E::One,
          projection_width(P), L::Bias, L::Index, ValueDomain::Signed, Requires::Biases,
          ViewKind::Stored, K(int(K::b_q) + P),
          P == 0 ? &Scenario::b_q : P == 1 ? &Scenario::b_k : &Scenario::b_v, Trace::No,
          P == 0 ? "Bias of the queries" : P == 1 ? "Bias of the keys" : "Bias of the values",
          [](int) { return "b_" + std::string(kProjection[P].lower); },
          [](const Scenario&, const Dims&, int) { return "b_" + std::string(kProjection[P].lower); },
          [](const Scenario&, const Dims&, int) {
            return fixed("Added to every token's projection, so a projection can be non-zero even for a zero input.");
          },
          [](const Scenario&, int) { return std::vector<StageId>{}; }, no_sources};
}

std::string short_number(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", static_cast<double>(v));
  return buf;
}

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

// What Q or K (P = 0, 1) is computed from before RoPE: the projection's
// inputs, or with a q/k norm the projection and the norm's gains.
std::vector<StageId> projection_inputs(const Scenario& s, int P) {
  std::vector<StageId> in{layer(P > 0 && s.cross() ? K::X_kv : K::X), layer(K(int(K::W_q) + P))};
  if (s.use_bias) in.push_back(layer(K(int(K::b_q) + P)));
  return in;
}
std::vector<StageId> unrotated_inputs(const Scenario& s, int P) {
  if (P < 2 && s.qk_norm.on()) return {layer(K(int(K::QProjected) + P)), layer(K(int(K::QNorm) + P))};
  return projection_inputs(s, P);
}

// "X·W_q + b_q": the projection (P = 0, 1, 2) as a formula.
std::string projection_formula(const Scenario& s, int P) {
  const std::string l = kProjection[P].lower;
  return std::string(P > 0 && s.cross() ? "X_kv" : "X") + "·W_" + l + (s.use_bias ? " + b_" + l : "");
}

// "Q_proj / rms(Q_proj) ⊙ g_q": the q/k norm's formula (P = 0, 1).
std::string normed_formula(const Scenario& s, int P) {
  const std::string p = std::string(kProjection[P].letter) + "_proj";
  return p + " / √(mean(" + p + "²) + ε) ⊙ g_" + kProjection[P].lower +
         (s.qk_norm.scope == QkNormScope::PerHead ? " (mean over each head's d_k values)" : " (mean over the whole row)");
}

// What the q/k norm does, in words.
std::string qk_norm_words(const Scenario& s) {
  return std::string("An RMSNorm divides ") +
         (s.qk_norm.scope == QkNormScope::PerHead ? "each head's query and key" : "each token's whole query and key row") +
         " by its root mean square (ε = " + short_number(s.qk_norm.eps) +
         ") and multiplies it by learned gains, so no query or key can grow large enough to make the softmax "
         "saturate (" + (s.qk_norm.scope == QkNormScope::PerHead ? "Qwen3, Gemma 3" : "OLMo-2") + ").";
}

template <int P>
StageSpec projection_spec() {
  return {K(int(K::Q) + P), kProjection[P].letter, false, false, P == 0 ? E::T : E::Tk, projection_width(P),
          P == 0 ? L::Token : L::KeyToken, L::Index, ValueDomain::Signed, Requires::Nothing, ViewKind::Stored, K(int(K::Q) + P), nullptr,
          Trace::Top, P == 0 ? "Queries" : P == 1 ? "Keys" : "Values",
          [](int) { return std::string(kProjection[P].letter); },
          [](const Scenario& s, const Dims&, int) {
            const std::string letter = kProjection[P].letter;
            if (P < 2 && s.rope.on) return letter + " = RoPE(" + letter + "ᵤ)";
            if (P < 2 && s.qk_norm.on()) return letter + " = " + normed_formula(s, P);
            return letter + " = " + projection_formula(s, P);
          },
          [](const Scenario& s, const Dims& d, int) {
            std::string text = P == 0   ? "Each row is what that token is looking for in the other tokens."
                               : P == 1 ? "Each row is what that token offers to be found by: queries are compared with it."
                                        : "Each row is the information that token passes on to whoever attends to it.";
            if (P > 0 && d.kv_heads != d.heads)
              text += " Grouped-query attention: " + std::to_string(d.kv_heads) + " K/V heads, each read by " +
                      std::to_string(d.heads / std::max(d.kv_heads, 1)) + " query heads, so the cache of keys and "
                      "values a model keeps while generating is " + std::to_string(d.heads / std::max(d.kv_heads, 1)) +
                      " times smaller.";
            if (P < 2 && s.rope.on) text += " These are after the rotation: " + rope_words(s);
            else if (P < 2 && s.qk_norm.on()) text += " These are after the q/k norm: " + qk_norm_words(s);
            return text;
          },
          [](const Scenario& s, int) {
            if (P < 2 && s.rope.on) return std::vector<StageId>{layer(K(int(K::QUnrotated) + P)), layer(K::RopeAngle)};
            return unrotated_inputs(s, P);
          },
          [](const Scenario& s, const Dims& d, int, int r, int c) {
            Sources out;
            add_projected(out, s, d, P, r, c);
            return out;
          }};
}

// Q or K before RoPE turns them (P = 0, 1).
template <int P>
StageSpec unrotated_spec() {
  return {K(int(K::QUnrotated) + P), P == 0 ? "Q_unrotated" : "K_unrotated", false, false, P == 0 ? E::T : E::Tk,
          projection_width(P), P == 0 ? L::Token : L::KeyToken, L::Index, ValueDomain::Signed, Requires::Rope, ViewKind::Stored, K(int(K::QUnrotated) + P), nullptr,
          Trace::Top, P == 0 ? "Queries before rotation" : "Keys before rotation",
          [](int) { return std::string(kProjection[P].letter) + "ᵤ"; },
          [](const Scenario& s, const Dims&, int) {
            return std::string(kProjection[P].letter) + "ᵤ = " +
                   (s.qk_norm.on() ? normed_formula(s, P) : projection_formula(s, P));
          },
          [](const Scenario& s, const Dims&, int) {
            return std::string(P == 0 ? "The queries" : "The keys") +
                   (s.qk_norm.on() ? " after the q/k norm, before " : " as the projection gives them, before ") +
                   rope_words(s) + (s.qk_norm.on() ? " " + qk_norm_words(s) : "");
          },
          [](const Scenario& s, int) { return unrotated_inputs(s, P); },
          [](const Scenario& s, const Dims& d, int, int r, int c) {
            Sources out;
            add_unrotated(out, s, d, P, r, c);
            return out;
          },
          nullptr, false, "it is Q or K before RoPE; pin the rotated Q or K that enters the scores instead"};
}

// The three forms of a head's Q or K, and V's one: as they enter the scores,
// before RoPE (ᵤ), before the q/k norm (_proj).
enum class Form { Final, Unrotated, Projected };

constexpr const char* form_suffix(Form f) { return f == Form::Unrotated ? "ᵤ" : f == Form::Projected ? "_proj" : ""; }

// Q[h], K[h], V[h] (P = 0, 1, 2); for P = 3, 4, Q and K of head h before
// RoPE; for P = 5, 6, before the q/k norm.
template <int P>
StageSpec head_projection_spec() {
  constexpr int kWhich = P < 3 ? P : (P - 3) % 2;  // Q, K, V
  constexpr Form kForm = P < 3 ? Form::Final : P < 5 ? Form::Unrotated : Form::Projected;
  constexpr K kKind = kForm == Form::Final       ? K(int(K::HeadQ) + P)
                      : kForm == Form::Unrotated ? K(int(K::HeadQUnrotated) + kWhich)
                                                 : K(int(K::HeadQProjected) + kWhich);
  constexpr K kStorage = kForm == Form::Final       ? K(int(K::Q) + P)
                         : kForm == Form::Unrotated ? K(int(K::QUnrotated) + kWhich)
                                                    : K(int(K::QProjected) + kWhich);
  return {kKind,
          kForm == Form::Final       ? kProjection[kWhich].letter
          : kForm == Form::Unrotated ? (kWhich == 0 ? "Q_unrotated" : "K_unrotated")
                                     : (kWhich == 0 ? "Q_proj" : "K_proj"),
          true, false,
          kWhich == 0 ? E::T : E::Tk, kWhich == 2 ? E::d_v : E::d_k, kWhich == 0 ? L::Token : L::KeyToken, L::HeadIndex, ValueDomain::Signed,
          kForm == Form::Final ? Requires::Nothing : kForm == Form::Unrotated ? Requires::Rope : Requires::QkNorm,
          kWhich == 0 ? ViewKind::HeadSlice : ViewKind::KVSlice,
          kStorage, nullptr, Trace::InHead,
          kForm == Form::Unrotated   ? (kWhich == 0 ? "Queries before rotation" : "Keys before rotation")
          : kForm == Form::Projected ? (kWhich == 0 ? "Queries before the q/k norm" : "Keys before the q/k norm")
          : kWhich == 0              ? "Queries"
          : kWhich == 1              ? "Keys"
                                     : "Values",
          [](int h) { return kProjection[kWhich].letter + subscript(h) + form_suffix(kForm); },
          [](const Scenario& s, const Dims& d, int h) {
            const std::string l = kProjection[kWhich].letter + std::string(form_suffix(kForm));
            const int w = kWhich == 2 ? d.d_v : d.d_k;
            const int block = kWhich == 0 ? h : d.kv_head(h);
            // an inclusive range, read the same whichever number the first column has
            return kProjection[kWhich].letter + s.shown_subscript(h) + form_suffix(kForm) + " = " + l + "[:, " +
                   s.shown_index(block * w) + "…" + s.shown_index((block + 1) * w - 1) + "]";
          },
          [](const Scenario& s, const Dims& d, int h) {
            const int w = kWhich == 2 ? d.d_v : d.d_k;
            const int block = kWhich == 0 ? h : d.kv_head(h);
            std::string text = "This head's slice of " + std::string(kProjection[kWhich].letter) +
                               form_suffix(kForm) + ": the columns " + s.shown_index(block * w) + " to " +
                               s.shown_index((block + 1) * w - 1) + ".";
            if (kWhich > 0 && d.kv_heads != d.heads) {
              const int per = d.heads / std::max(d.kv_heads, 1);
              text += " K/V head " + s.shown_index(block) + " is shared by query heads " +
                      s.shown_index(block * per) + " to " + s.shown_index(block * per + per - 1) +
                      " (grouped-query attention).";
            } else {
              text += " Each head works on its own slice, so heads can learn to look for different things.";
            }
            if (kWhich < 2 && s.rope.on && kForm == Form::Final)
              text += " Rotated by RoPE: row p is turned by p times each pair's angle.";
            if (kWhich < 2 && s.qk_norm.on() && kForm == Form::Projected)
              text += " Before the q/k norm: " + qk_norm_words(s);
            return text;
          },
          [](const Scenario&, int) { return std::vector<StageId>{layer(kStorage)}; },
          // the whole matrix's sources for this column, and the cell of it this view shows
          [](const Scenario& s, const Dims& d, int h, int r, int c) {
            const int col = (kWhich == 0 ? h : d.kv_head(h)) * (kWhich == 2 ? d.d_v : d.d_k) + c;
            Sources out;
            if (kForm == Form::Projected)
              add_projection(out, s, kWhich, r, col);
            else if (kForm == Form::Unrotated)
              add_unrotated(out, s, d, kWhich, r, col);
            else
              add_projected(out, s, d, kWhich, r, col);
            out.push_back(cell_of(layer(kStorage), r, col));
            return out;
          },
          nullptr, false,
          kForm == Form::Unrotated   ? "it is Q or K before RoPE; pin the rotated Q or K that enters the scores instead"
          : kForm == Form::Projected ? "it is the projection before the q/k norm; pin the Q or K that enters the scores instead"
                                     : nullptr};
}

// Q or K before the q/k norm (P = 0, 1): X·W + b.
template <int P>
StageSpec projected_spec() {
  return {K(int(K::QProjected) + P), P == 0 ? "Q_proj" : "K_proj", false, false, P == 0 ? E::T : E::Tk,
          projection_width(P), P == 0 ? L::Token : L::KeyToken, L::Index, ValueDomain::Signed, Requires::QkNorm,
          ViewKind::Stored, K(int(K::QProjected) + P), nullptr, Trace::Top,
          P == 0 ? "Queries before the q/k norm" : "Keys before the q/k norm",
          [](int) { return std::string(kProjection[P].letter) + "_proj"; },
          [](const Scenario& s, const Dims&, int) {
            return std::string(kProjection[P].letter) + "_proj = " + projection_formula(s, P);
          },
          [](const Scenario& s, const Dims&, int) {
            return std::string(P == 0 ? "The queries" : "The keys") + " as the projection gives them. " + qk_norm_words(s);
          },
          [](const Scenario& s, int) { return projection_inputs(s, P); },
          [](const Scenario& s, const Dims&, int, int r, int c) {
            Sources out;
            add_projection(out, s, P, r, c);
            return out;
          },
          nullptr, false, "it is the projection before the q/k norm; pin the Q or K that enters the scores instead"};
}

// The q/k norm's gains (P = 0, 1): an input.
template <int P>
StageSpec norm_gain_spec() {
  return {K(int(K::QNorm) + P), P == 0 ? "q_norm" : "k_norm", false, true, E::One,
          P == 0 ? E::QNormWidth : E::KNormWidth, L::Gain, L::Index, ValueDomain::Signed, Requires::QkNorm,
          ViewKind::Stored, K(int(K::QNorm) + P), P == 0 ? &Scenario::q_norm : &Scenario::k_norm, Trace::No,
          P == 0 ? "Gains of the query norm" : "Gains of the key norm",
          [](int) { return std::string("g_") + kProjection[P].lower; },
          [](const Scenario&, const Dims&, int) { return std::string("g_") + kProjection[P].lower; },
          [](const Scenario& s, const Dims&, int) {
            return std::string("Learned during training: the q/k norm multiplies dimension i of every ") +
                   (s.qk_norm.scope == QkNormScope::PerHead ? "head's normed " : "normed ") + kProjection[P].single +
                   " by gain i. " + qk_norm_words(s);
          },
          [](const Scenario&, int) { return std::vector<StageId>{}; }, no_sources};
}

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

const std::array<StageSpec, kStageKindCount>& table() {
  static const std::array<StageSpec, kStageKindCount> t = {{
      {K::X, "X", false, true, E::T, E::d_model, L::Token, L::Feature, ValueDomain::Signed, Requires::Nothing,
       ViewKind::Stored, K::X, &Scenario::X, Trace::Top, "Input embeddings", [](int) { return fixed("X"); },
       [](const Scenario&, const Dims&, int) { return fixed("X"); },
       [](const Scenario&, const Dims&, int) {
         return fixed("One row per token: the vector the model holds for that token before this layer. "
                      "Everything below is computed from these numbers and the weights.");
       },
       [](const Scenario&, int) { return std::vector<StageId>{}; }, no_sources},
      weights_spec<0>(),
      weights_spec<1>(),
      weights_spec<2>(),
      bias_spec<0>(),
      bias_spec<1>(),
      bias_spec<2>(),
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
      norm_gain_spec<0>(),
      norm_gain_spec<1>(),
      projection_spec<0>(),
      projection_spec<1>(),
      projection_spec<2>(),
      unrotated_spec<0>(),
      unrotated_spec<1>(),
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
       "it is computed from the positions alone; pin the rotated Q or K it turns instead"},
      projected_spec<0>(),
      projected_spec<1>(),
      head_projection_spec<0>(),
      head_projection_spec<1>(),
      head_projection_spec<2>(),
      head_projection_spec<3>(),
      head_projection_spec<4>(),
      head_projection_spec<5>(),
      head_projection_spec<6>(),
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
       }},
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
       }},
  }};
  return t;
}

// The table is in StageKind order; checked once, so a misplaced entry fails
// the first run of any program rather than answering for the wrong stage.
const std::array<StageSpec, kStageKindCount>& checked_table() {
  static const bool ok = [] {
    for (int k = 0; k < kStageKindCount; ++k)
      if (table()[static_cast<std::size_t>(k)].kind != static_cast<StageKind>(k)) std::abort();
    return true;
  }();
  (void)ok;
  return table();
}

}  // namespace

std::span<const StageSpec> all_stages() { return checked_table(); }

const StageSpec& spec(StageKind kind) { return checked_table()[static_cast<std::size_t>(kind)]; }

std::vector<CellSource> cell_sources(const Scenario& s, StageId id, int row, int col) {
  return spec(id.kind).sources(s, s.dims(), spec(id.kind).per_head ? id.head : 0, row, col);
}

int stage_rows(StageKind kind, const Dims& d) { return extent(spec(kind).rows, d); }
int stage_cols(StageKind kind, const Dims& d) { return extent(spec(kind).cols, d); }

bool setting_on(const Scenario& s, Requires r) {
  switch (r) {
    case Requires::Nothing: return true;
    case Requires::Biases: return s.use_bias;
    case Requires::OutputProjection: return s.use_w_o;
    case Requires::OutputBias: return s.use_output_bias;
    case Requires::Alibi: return s.alibi;
    case Requires::Sinks: return s.use_sinks;
    case Requires::Rope: return s.rope.on;
    case Requires::Cross: return s.cross();
    case Requires::QkNorm: return s.qk_norm.on();
    case Requires::Softcap: return s.softcap > 0.0f;
  }
  return true;
}

const char* setting_name(Requires r) {
  switch (r) {
    case Requires::Nothing: return "nothing";
    case Requires::Biases: return "the biases";
    case Requires::OutputProjection: return "the output projection W_o";
    case Requires::OutputBias: return "the output bias b_o";
    case Requires::Alibi: return "ALiBi";
    case Requires::Sinks: return "attention sinks";
    case Requires::Rope: return "RoPE";
    case Requires::Cross: return "cross-attention (X_kv)";
    case Requires::QkNorm: return "the q/k norm";
    case Requires::Softcap: return "the soft-cap";
  }
  return "?";
}

bool setting_plural(Requires r) { return r == Requires::Biases || r == Requires::Sinks; }

std::optional<CellRef> storage_cell(const CellRef& cell, const Dims& d) {
  const StageSpec& sp = spec(cell.stage.kind);
  switch (sp.view) {
    case ViewKind::Stored: return cell;
    case ViewKind::HeadSlice: case ViewKind::KVSlice: {
      const int w = stage_cols(cell.stage.kind, d);
      StageId whole = StageId::input(sp.storage);
      whole.layer = cell.stage.layer;
      whole.role = cell.stage.role;
      const int block = sp.view == ViewKind::KVSlice ? d.kv_head(cell.stage.head) : cell.stage.head;
      return CellRef{whole, cell.row, block * w + cell.col};
    }
    case ViewKind::HeadsSideBySide: {
      const int w = stage_cols(sp.storage, d);
      if (w <= 0) return std::nullopt;
      StageId part = StageId::of_head(sp.storage, cell.col / w);
      part.layer = cell.stage.layer;
      part.role = cell.stage.role;
      return CellRef{part, cell.row, cell.col % w};
    }
  }
  return cell;
}

std::optional<CellRef> view_cell(const CellRef& stored, StageId view, const Dims& d) {
  if (stored.stage == view) return CellRef{view, stored.row, stored.col};
  const StageSpec& sp = spec(view.kind);
  if (sp.view == ViewKind::Stored || stored.stage.kind != sp.storage || stored.stage.layer != view.layer ||
      stored.stage.role != view.role)
    return std::nullopt;
  if (sp.view == ViewKind::HeadSlice || sp.view == ViewKind::KVSlice) {
    const int w = stage_cols(view.kind, d);
    const int block = sp.view == ViewKind::KVSlice ? d.kv_head(view.head) : view.head;
    if (w <= 0 || stored.col / w != block) return std::nullopt;
    return CellRef{view, stored.row, stored.col % w};
  }
  const int w = stage_cols(sp.storage, d);
  return CellRef{view, stored.row, stored.stage.head * w + stored.col};
}

int head_of_column(StageKind kind, int col, const Dims& d) {
  const StageSpec& sp = spec(kind);
  if (sp.per_head) return -1;
  if (sp.cols == Extent::Heads) return col;  // one column per head
  const int w = sp.cols == Extent::QWidth || sp.cols == Extent::KWidth ? d.d_k
                : sp.cols == Extent::VWidth || sp.cols == Extent::ContextWidth ? d.d_v : 0;
  // W_o's rows are the head blocks, not its columns.
  return w > 0 ? col / w : -1;
}

bool columns_are_kv_heads(StageKind kind) {
  const Extent c = spec(kind).cols;
  return !spec(kind).per_head && (c == Extent::KWidth || c == Extent::VWidth);
}

bool pinnable(StageKind kind, std::string* why) {
  const StageSpec& sp = spec(kind);
  const char* reason = sp.input ? "it is an input; edit it instead"
                       : sp.not_pinnable ? sp.not_pinnable
                       : sp.positional   ? "it is computed from the positions alone; pin the masked score it feeds instead"
                                         : nullptr;
  if (reason && why) *why = reason;
  return reason == nullptr;
}

}  // namespace attention_lab
