// The stages of the projections: W_q, W_k, W_v and their biases, the q/k
// norm's gains, Q, K and V, each head's views of them, and their forms before
// RoPE and before the q/k norm. Templates on P (0, 1, 2: Q, K, V) because a
// spec's words and sources are plain function pointers.
#include "stage_specs.h"

namespace attention_lab::stage_specs {
namespace {

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

}  // namespace

void put_projection_stages(Table& t) {
  const StageSpec specs[] = {weights_spec<0>(), weights_spec<1>(), weights_spec<2>(),
                             bias_spec<0>(), bias_spec<1>(), bias_spec<2>(),
                             norm_gain_spec<0>(), norm_gain_spec<1>(),
                             projection_spec<0>(), projection_spec<1>(), projection_spec<2>(),
                             unrotated_spec<0>(), unrotated_spec<1>(), projected_spec<0>(), projected_spec<1>(),
                             head_projection_spec<0>(), head_projection_spec<1>(), head_projection_spec<2>(), head_projection_spec<3>(),
                             head_projection_spec<4>(), head_projection_spec<5>(), head_projection_spec<6>()};
  put(t, specs);
}

}  // namespace attention_lab::stage_specs
