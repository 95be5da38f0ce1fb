#include "logic/derivation.h"
#include "logic/dot_product_text.h"

#include "attention_lab/softcap.h"
#include "attention_lab/stage_info.h"
#include "attention_lab/stage_registry.h"
#include "logic/number_format.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <cstdio>
#include <optional>

namespace attention_lab::gui {

namespace {

// "a₀×b₀ + a₁×b₁ + …", showing at most `limit` terms.
std::string dot_sum(const RowVector& a, const RowVector& b, int limit = kMaxTermsShown) {
  return dot_product_text(a, b, limit, [](float v) { return format_factor(v); });
}

// "a₀×b₀ + a₁×b₁ + … = total".
std::string dot_terms(const RowVector& a, const RowVector& b, float total) {
  return dot_sum(a, b) + " = " + format_number(total, 3);
}

// The value the hint asks for.
constexpr const char* kAsked = " = ?";

std::string pin_note(const Document& doc, StageId id, int r, int c, float computed) {
  const Scenario& s = doc.scenario();
  const auto stored = storage_cell(CellRef{id, r, c}, s.dims());
  if (!stored) return {};
  const auto it = s.pins.find(PinKey{stored->stage, stored->row, stored->col});
  if (it == s.pins.end()) return {};
  std::string note = "Pinned to " + format_number(it->second, 3) + " (computed: " + format_number(computed, 3) +
                     "). Everything downstream uses the pinned value.";
  // A pinned weight may be any number (an experiment), but then it is no
  // longer a share of the row: say so, with what the row now adds up to.
  if (describe_stage(s, id).domain == ValueDomain::Probability && (it->second < 0.0f || it->second > 1.0f)) {
    const MatrixView m = doc.stage(id);
    double sum = 0.0;
    for (int j = 0; j < m.cols(); ++j) sum += static_cast<double>(m(r, j));
    note += " A weight outside [0, 1] is not a probability: row " + s.shown_index(r) + " now sums to " +
            format_number(static_cast<float>(sum), 3) + ", not 1.";
  }
  return note;
}

}  // namespace

namespace {

// The cell a derivation is of, and what every kind of stage reads to explain it.
struct CellAt {
  const Document& doc;
  const Scenario& s;
  Dims d;
  StageId id;
  int r = 0, c = 0;
  float value = 0.0f;
  std::string at;  // "[r,c]"
  int h = 0;       // the head
  std::string hs;  // its subscript

  // Rows, columns and heads as the scenario shows them (counting from 0 or 1);
  // positions stay positions (RoPE's φ = p·θ, ALiBi's j − i).
  std::string ix(int n) const { return s.shown_index(n); }
  std::string sub(int n) const { return s.shown_subscript(n); }
  MatrixView stage(StageKind k) const { return doc.stage(StageId::of_head(k, h)); }
  MatrixView layer(StageKind k) const { return doc.stage(StageId::input(k)); }
  std::string note_if_pinned(float computed) const { return pin_note(doc, id, r, c, computed); }
};

// Q, K or V (per head or whole, before or after RoPE and the q/k norm): which
// of the three, and the column in the whole projection.
struct ProjectionCell {
  int which = 0;  // 0 Q, 1 K, 2 V
  int col = 0;
  bool before_norm = false, before_rope = false;
};

ProjectionCell projection_cell(const CellAt& a) {
  using K = StageKind;
  const K k = a.id.kind;
  ProjectionCell p;
  p.before_norm = k == K::QProjected || k == K::KProjected || k == K::HeadQProjected || k == K::HeadKProjected;
  p.before_rope = p.before_norm || k == K::QUnrotated || k == K::KUnrotated || k == K::HeadQUnrotated || k == K::HeadKUnrotated;
  p.which = k == K::Q || k == K::HeadQ || k == K::QUnrotated || k == K::HeadQUnrotated || k == K::QProjected ||
                    k == K::HeadQProjected
                ? 0
            : k == K::V || k == K::HeadV ? 2
                                         : 1;
  const int width = p.which == 2 ? a.d.d_v : a.d.d_k;
  const int block = p.which == 0 ? a.h : a.d.kv_head(a.h);  // K and V: the K/V head this query head reads
  p.col = is_per_head(k) ? block * width + a.c : a.c;
  return p;
}

// Partial rotary (GPT-NeoX): a dimension past the turned ones passes unchanged.
void derive_unturned(const CellAt& a, const ProjectionCell& p, Derivation& out) {
  const float u = a.layer(p.which == 0 ? StageKind::QUnrotated : StageKind::KUnrotated)(a.r, p.col);
  const std::string L = p.which == 0 ? "Qᵤ" : "Kᵤ";
  out.formula = L + "[" + a.ix(a.r) + "," + a.ix(p.col) + "]  (not turned)";
  out.numbers = format_number(u, 3);
  out.hint = L + "[" + a.ix(a.r) + "," + a.ix(p.col) + "]" + kAsked;
  out.note = "RoPE turns only the first " + std::to_string(a.d.rotary_dims()) + " of each head's " + std::to_string(a.d.d_k) +
             " dimensions; this one is passed on as it is." + a.note_if_pinned(u);
}

// x′ = x·cos φ ∓ y·sin φ, y the dimension RoPE pairs it with, φ = position·θ^(−2k/r), r the turned width.
void derive_turned(const CellAt& a, const ProjectionCell& p, Derivation& out) {
  const Scenario& s = a.s;
  const int r = a.r;
  const MatrixView U = a.layer(p.which == 0 ? StageKind::QUnrotated : StageKind::KUnrotated);
  const int c0 = p.col / a.d.d_k * a.d.d_k, dim = p.col - c0, rw = a.d.rotary_dims();
  const int partner = rope_partner(s.rope.pairs, rw, dim), pair = rope_pair_of(s.rope.pairs, rw, dim);
  const bool first = rope_pair(s.rope.pairs, rw, pair).first == dim;
  const double angle = rope_angle(s.rope, rw, pair, r);
  const float cs = static_cast<float>(std::cos(angle)), sn = static_cast<float>(std::sin(angle));
  const float x = U(r, c0 + dim), y = U(r, c0 + partner);
  const float computed = first ? x * cs - y * sn : x * cs + y * sn;
  const std::string L = p.which == 0 ? "Qᵤ" : "Kᵤ";
  out.formula = L + "[" + a.ix(r) + "," + a.ix(c0 + dim) + "]·cos φ " + (first ? "−" : "+") + " " + L + "[" + a.ix(r) + "," +
                a.ix(c0 + partner) + "]·sin φ,  φ = " + std::to_string(r) + "·θ^(−" + std::to_string(2 * pair) + "/" +
                std::to_string(rw) + ") = " + format_number(static_cast<float>(angle), 3) + " rad";
  // the φ heatmap shows angles modulo 2π: say which of its cells this is
  if (const double wrapped = std::remainder(angle, 2.0 * std::numbers::pi); wrapped != angle)
    out.formula += " ≡ " + format_number(static_cast<float>(wrapped), 3) + " (mod 2π, as φ shows it)";
  const std::string product = format_number(x, 3) + " × " + format_number(cs, 3) + (first ? " − " : " + ") + format_factor(y) +
                              " × " + format_number(sn, 3);
  out.numbers = product + " = " + format_number(computed, 3);
  out.hint = product + kAsked;
  out.note = a.note_if_pinned(computed);
}

// x / √(mean(x²) + ε) · g over the head's d_k values of the row (or the whole row).
void derive_qk_normed(const CellAt& a, const ProjectionCell& p, Derivation& out) {
  const Scenario& s = a.s;
  const int r = a.r, col = p.col;
  const MatrixView P = a.layer(p.which == 0 ? StageKind::QProjected : StageKind::KProjected);
  const bool whole = s.qk_norm.scope == QkNormScope::Whole;
  const int first = whole ? 0 : col / a.d.d_k * a.d.d_k, n = whole ? static_cast<int>(P.cols()) : a.d.d_k;
  const RowVector x = P.row(r).segment(first, n);
  double mean_square = 0.0;
  for (Eigen::Index i = 0; i < x.size(); ++i) mean_square += static_cast<double>(x[i]) * static_cast<double>(x[i]);
  mean_square /= static_cast<double>(std::max<Eigen::Index>(x.size(), 1));
  const float g = a.layer(p.which == 0 ? StageKind::QNorm : StageKind::KNorm)(0, whole ? col : col - first);
  const float inv = static_cast<float>(1.0 / std::sqrt(mean_square + static_cast<double>(s.qk_norm.eps)));
  const float computed = P(r, col) * inv * g;
  const std::string L = p.which == 0 ? "Q_proj" : "K_proj";
  const std::string span = "[" + a.ix(r) + "," + a.ix(first) + "…" + a.ix(first + n - 1) + "]";
  out.formula = L + "[" + a.ix(r) + "," + a.ix(col) + "] / √(mean(" + L + span + "²) + ε) × g_" + "qk"[p.which] + "[" +
                a.ix(whole ? col : col - first) + "]";
  out.numbers = format_number(P(r, col), 3) + " / √(" + format_number(static_cast<float>(mean_square), 4) + " + " +
                format_number(s.qk_norm.eps, 2) + ") × " + format_factor(g) + " = " + format_number(computed, 3);
  out.hint = format_number(P(r, col), 3) + " / √(" + format_number(static_cast<float>(mean_square), 4) + ") × " +
             format_factor(g) + kAsked;
  out.note = "The mean square is over " +
             std::string(whole ? "the whole row of " + L : "this head's " + std::to_string(n) + " values of " + L) +
             ", so the other cells of that span change this one too." + a.note_if_pinned(computed);
}

// x·W[:,col] (+ b[col]): a row of the input times a column of the weight.
void derive_projected(const CellAt& a, const ProjectionCell& p, Derivation& out) {
  const Scenario& s = a.s;
  const int which = p.which, col = p.col;
  const auto W = a.layer(static_cast<StageKind>(static_cast<int>(StageKind::W_q) + which));
  const char w = "qkv"[which];
  const RowVector x = a.layer(which > 0 && s.cross() ? StageKind::X_kv : StageKind::X).row(a.r);
  const RowVector wc = W.col(col).transpose();
  float computed = x.dot(wc);
  // (with cross-attention K and V come from the rows of X_kv)
  out.formula = std::string(which > 0 && s.cross() ? "x_kv" : "x") + a.sub(a.r) + "·W_" + w + "[:," + a.ix(col) + "]";
  out.numbers = dot_terms(x, wc, computed);
  out.hint = dot_sum(x, wc, kMaxHintTerms);
  if (s.use_bias) {
    const float b = a.layer(static_cast<StageKind>(static_cast<int>(StageKind::b_q) + which))(0, col);
    out.formula += std::string(" + b_") + w + "[" + a.ix(col) + "]";
    computed += b;
    out.numbers += " ; + " + format_factor(b) + " = " + format_number(computed, 3);
    out.hint = "(" + out.hint + ") + " + format_factor(b);
  }
  out.hint += kAsked;
  out.note = a.note_if_pinned(computed);
}

void derive_projection(const CellAt& a, Derivation& out) {
  const ProjectionCell p = projection_cell(a);
  const bool turned = a.s.rope.on && p.which < 2 && !p.before_rope;
  if (turned && p.col % a.d.d_k >= a.d.rotary_dims()) return derive_unturned(a, p, out);
  if (turned) return derive_turned(a, p, out);
  if (a.s.qk_norm.on() && p.which < 2 && !p.before_norm) return derive_qk_normed(a, p, out);
  derive_projected(a, p, out);
}

void derive_capped(const CellAt& a, Derivation& out) {
  const float scaled = a.stage(StageKind::Scaled)(a.r, a.c);
  const float cap = a.s.softcap;
  const float computed = softcap(scaled, cap);
  char cap_text[32];
  std::snprintf(cap_text, sizeof cap_text, "%g", static_cast<double>(cap));  // the cap as configured: "50", "2.5"
  out.formula = std::string(cap_text) + "·tanh(S′" + a.hs + a.at + " / " + cap_text + ")";
  out.numbers = std::string(cap_text) + " × tanh(" + format_number(scaled, 3) + " / " + cap_text + ") = " + cap_text + " × " +
                format_number(std::tanh(scaled / cap), 4) + " = " + format_number(computed, 3);
  out.hint = std::string(cap_text) + " × tanh(" + format_number(scaled, 3) + " / " + cap_text + ")" + kAsked;
  out.note = std::string("Within a few units of 0 the cap changes little (tanh x ≈ x); near ±") + cap_text +
             " it flattens every score.";
}

void derive_scores(const CellAt& a, Derivation& out) {
  const RowVector q = a.stage(StageKind::HeadQ).row(a.r);
  const RowVector k = a.stage(StageKind::HeadK).row(a.c);
  const float computed = q.dot(k);
  out.formula = "q" + a.sub(a.r) + "·k" + a.sub(a.c) + "  (row " + a.ix(a.r) + " of Q" + a.hs + " · row " + a.ix(a.c) +
                " of K" + a.hs + ")";
  out.numbers = dot_terms(q, k, computed);
  out.hint = dot_sum(q, k, kMaxHintTerms) + kAsked;
  out.note = a.note_if_pinned(computed);
}

void derive_scaled(const CellAt& a, Derivation& out) {
  const Scenario& s = a.s;
  const float raw = a.stage(StageKind::Scores)(a.r, a.c);
  std::string f = "S" + a.hs + a.at, n = format_number(raw, 3);
  if (s.scale && s.score_scale > 0.0f) {
    f += " × " + format_number(s.score_scale, 4);
    n += " × " + format_number(s.score_scale, 4);
  } else if (s.scale) {
    f += " / √" + std::to_string(a.d.d_k);
    n += " / " + format_number(static_cast<float>(score_scale_divisor(s)), 3);
  }
  if (s.temperature != 1.0f) {
    f += " / τ";
    n += " / " + format_number(s.temperature, 2);
  }
  const auto computed = static_cast<float>(static_cast<double>(raw) / score_divisor(s));
  out.formula = f;
  out.numbers = n + " = " + format_number(computed, 3);
  out.hint = n + kAsked;
  out.note = a.note_if_pinned(computed);
}

void derive_masked(const CellAt& a, Derivation& out) {
  const Scenario& s = a.s;
  const int r = a.r, c = a.c;
  const bool allowed = a.layer(StageKind::Mask)(r, c) != 0.0f;
  // what the mask passes on: the scaled score, or its soft-capped value
  const bool capped = s.softcap > 0.0f;
  const float scaled = a.stage(capped ? StageKind::Capped : StageKind::Scaled)(r, c);
  const std::string S = capped ? "S″" : "S′";
  if (allowed && s.alibi) {
    // ALiBi: the position bias is added where the mask allows.
    const float bias = a.stage(StageKind::PositionBias)(r, c);
    const float masked = a.stage(StageKind::Masked)(r, c);
    out.formula = S + a.hs + a.at + " + B" + a.hs + a.at + "  (the mask allows it)";
    out.numbers = format_number(scaled, 3) + " + " + format_number(bias, 3) + " = " + format_number(masked, 3);
    out.hint = format_number(scaled, 3) + " + " + format_number(bias, 3) + kAsked;
    out.note = a.note_if_pinned(masked);
    return;
  }
  out.formula = allowed ? S + a.hs + a.at + "  (the mask allows it)" : "−∞  (the mask forbids it)";
  out.numbers = allowed ? format_number(scaled, 3) : "'" + s.token_label(r) + "' may not look at '" + s.key_label(c) + "' → −∞";
  out.hint = allowed ? std::string(capped ? "the capped score " : "the scaled score ") + S + a.hs + a.at + " (the mask allows it)"
                     : "what the mask does where it forbids";
  out.note = a.note_if_pinned(allowed ? scaled : -INFINITY);
}

void derive_weights(const CellAt& a, Derivation& out) {
  const Scenario& s = a.s;
  const int r = a.r, c = a.c, h = a.h;
  const RowVector row = a.stage(StageKind::Masked).row(r);
  const float mx = row.maxCoeff();
  const float x = row[c];
  // Only a row of −∞ has no allowed key; +∞ and NaN rows are the
  // engine's other softmax cases (softmax_row), told apart here too.
  if (row.hasNaN()) {
    out.formula = "softmax of a row that holds NaN";
    out.numbers = "NaN";
    out.hint = out.formula;
    return;
  }
  if (mx == INFINITY) {
    const auto infinite = (row.array() == INFINITY).count();
    out.formula = "the row has +∞ scores: they share the weight equally, the others get 0";
    out.numbers = x == INFINITY ? "1 / " + std::to_string(infinite) + " = " + format_number(1.0f / static_cast<float>(infinite), 3)
                                : format_number(0.0f, 3);
    out.note = a.note_if_pinned(x == INFINITY ? 1.0f / static_cast<float>(infinite) : 0.0f);
    out.hint = out.formula;
    return;
  }
  // With a sink, its logit is one more term of the sum (and may be the max).
  const bool has_sink = s.use_sinks && h < s.sinks.cols();
  const float sink = has_sink ? a.layer(StageKind::Sinks)(0, h) : -INFINITY;
  const float top = has_sink ? std::max(mx, sink) : mx;
  if (!std::isfinite(top)) {
    out.formula = "softmax of a row with no allowed key";
    out.numbers = "0 (by our convention; PyTorch gives NaN)";
    out.hint = out.formula;
    return;
  }
  double sum = has_sink ? std::exp(static_cast<double>(sink - top)) : 0.0;
  for (Eigen::Index j = 0; j < row.size(); ++j) sum += std::exp(static_cast<double>(row[j] - top));
  const double e = std::exp(static_cast<double>(x - top));
  const std::string sink_term = has_sink ? " + e^(s" + a.hs + " − max)" : "";
  out.formula = "e^(Ŝ" + a.sub(r) + a.sub(c) + " − max) / (Σⱼ e^(Ŝ" + a.sub(r) + "ⱼ − max)" + sink_term + ")";
  if (!has_sink) out.formula = "e^(Ŝ" + a.sub(r) + a.sub(c) + " − max) / Σⱼ e^(Ŝ" + a.sub(r) + "ⱼ − max)";
  // A negative max is parenthesised: "− (−0.03)", never "− −0.03".
  const std::string shape = "e^(" + format_number(x, 3) + " − " + format_factor(top, 3) + ") / " + (has_sink ? "(" : "") +
                            "Σⱼ e^(Ŝ" + a.sub(r) + "ⱼ − " + format_factor(top, 3) + ")" +
                            (has_sink ? " + e^(" + format_number(sink, 3) + " − " + format_factor(top, 3) + "))" : "");
  out.numbers = shape + " = " + format_number(static_cast<float>(e), 3) + " / " + format_number(static_cast<float>(sum), 3) +
                " = " + format_number(static_cast<float>(e / sum), 3);
  out.hint = shape + kAsked;
  out.note = a.note_if_pinned(static_cast<float>(e / sum));
  if (out.note.empty() && !std::isfinite(x)) out.note = "A masked key gets exactly 0.";
}

void derive_context(const CellAt& a, Derivation& out) {
  const RowVector w = a.stage(StageKind::Weights).row(a.r);
  const RowVector v = a.stage(StageKind::HeadV).col(a.c).transpose();
  const float computed = w.dot(v);
  out.formula = "Σⱼ A" + a.hs + "[" + a.ix(a.r) + ",j] × V" + a.hs + "[j," + a.ix(a.c) + "]";
  out.numbers = dot_terms(w, v, computed);
  out.hint = dot_sum(w, v, kMaxHintTerms) + kAsked;
  out.note = a.note_if_pinned(computed);
}

void derive_concat(const CellAt& a, Derivation& out) {
  const int d_v = std::max(a.d.d_v, 1);
  const int head = a.d.d_v ? a.c / a.d.d_v : 0;
  out.formula = "C" + a.sub(head) + "[" + a.ix(a.r) + "," + a.ix(a.c % d_v) + "]";
  out.numbers = "head " + a.ix(head) + "'s context, column " + a.ix(a.c % d_v) + " = " + format_number(a.value, 3);
  out.hint = "a copy of head " + a.ix(head) + "'s context, row " + a.ix(a.r) + ", column " + a.ix(a.c % d_v);
}

void derive_output(const CellAt& a, Derivation& out) {
  const Scenario& s = a.s;
  const int r = a.r, c = a.c;
  const RowVector x = a.layer(StageKind::Concat).row(r);
  float computed = 0;
  if (s.use_w_o) {
    const RowVector w = a.layer(StageKind::W_o).col(c).transpose();
    computed = x.dot(w);
    out.formula = "c" + a.sub(r) + "·W_o[:," + a.ix(c) + "]";
    out.numbers = dot_terms(x, w, computed);
    out.hint = dot_sum(x, w, kMaxHintTerms);
  } else {
    computed = x[c];
    out.formula = "C[" + a.ix(r) + "," + a.ix(c) + "]  (no W_o)";
    out.numbers = format_number(computed, 3);
    out.hint = "C[" + a.ix(r) + "," + a.ix(c) + "]";
  }
  if (s.use_output_bias) {
    const float b = a.layer(StageKind::b_o)(0, c);
    computed += b;
    out.formula += " + b_o[" + a.ix(c) + "]";
    out.numbers += " ; + " + format_factor(b) + " = " + format_number(computed, 3);
    out.hint = (s.use_w_o ? "(" + out.hint + ")" : out.hint) + " + " + format_factor(b);
  }
  out.hint += kAsked;
  out.note = a.note_if_pinned(computed);
}

void derive_sink_share(const CellAt& a, Derivation& out) {
  const float sink = a.layer(StageKind::Sinks)(0, a.h);
  out.formula = "e^(s" + a.hs + " − max) / (Σⱼ e^(Ŝ" + a.sub(a.r) + "ⱼ − max) + e^(s" + a.hs + " − max))";
  out.numbers = "the sink's logit " + format_number(sink, 3) + " as one more key of row " + a.ix(a.r) +
                "'s softmax = " + format_number(a.value, 3);
  out.hint = "the share e^(" + format_number(sink, 3) + " − max) takes of row " + a.ix(a.r) + "'s sum" + kAsked;
  out.note = "Dropped after the softmax: row " + a.ix(a.r) + "'s weights add up to 1 − " + format_number(a.value, 3) + ".";
}

void derive_position_bias(const CellAt& a, Derivation& out) {
  const auto slopes = alibi_slopes(a.d.heads);
  const double slope = a.h < static_cast<int>(slopes.size()) ? slopes[static_cast<std::size_t>(a.h)] : 0.0;
  const std::string product =
      format_number(static_cast<float>(slope), 4) + " × " + format_number(static_cast<float>(a.c - a.r), 0);
  out.formula = "m" + a.hs + "·(j − i) = m" + a.hs + "·(" + a.ix(a.c) + " − " + a.ix(a.r) + ")";
  out.numbers = product + " = " + format_number(a.value, 3);
  out.hint = product + kAsked;
  out.note = "Computed from the positions alone: it cannot be edited or pinned (pin the masked score instead).";
}

// Row r = position, column c = pair.
void derive_rope_angle(const CellAt& a, Derivation& out) {
  const Scenario& s = a.s;
  const int r = a.r, c = a.c;
  const int rw = a.d.rotary_dims();  // the width RoPE turns (d_k without partial rotary)
  const double angle = rope_angle(s.rope, rw, c, r);
  const auto [i, j] = rope_pair(s.rope.pairs, rw, c);
  char theta[32];
  std::snprintf(theta, sizeof theta, "%g", static_cast<double>(s.rope.theta));
  out.formula = "φ = " + std::to_string(r) + "·" + rope_frequency_formula(s.rope, rw, c) + ", θ = " + theta;
  out.numbers = std::to_string(r) + " × " + format_number(static_cast<float>(rope_frequency(s.rope, rw, c)), 4) + " = " +
                format_number(static_cast<float>(angle), 4) + " rad ≡ " + format_number(a.value, 3) + " (mod 2π)";
  if (r == 0) out.numbers = "0 (position 0 is not turned)";
  out.hint = std::to_string(r) + "·" + rope_frequency_formula(s.rope, rw, c) + ", modulo 2π" + kAsked;
  if (const std::string scaled = rope_scaling_note(s.rope, rw, c); !scaled.empty()) out.note = scaled + ". ";
  out.note += "Turns dimensions " + a.ix(i) + " and " + a.ix(j) + " of every head's query and key at position " +
              std::to_string(r) + ": cos φ = " + format_number(static_cast<float>(std::cos(angle)), 3) +
              ", sin φ = " + format_number(static_cast<float>(std::sin(angle)), 3) +
              ". Computed from the position alone: it cannot be edited or pinned.";
}

void derive_input(const CellAt& a, Derivation& out) {
  out.formula = "an input";
  out.numbers = format_number(a.value, 4);
  out.note = a.id.kind == StageKind::Mask ? "Click to toggle: 1 = may attend, 0 = may not."
                                          : "Drag up/down to change it (Shift: finer); double-click to type.";
}

// How each kind of computed stage is explained; every other kind is an input.
using DeriveFn = void (*)(const CellAt&, Derivation&);
DeriveFn derivation_of(StageKind kind) {
  using K = StageKind;
  switch (kind) {
    case K::Q: case K::K: case K::V: case K::HeadQ: case K::HeadK: case K::HeadV:
    case K::QUnrotated: case K::KUnrotated: case K::HeadQUnrotated: case K::HeadKUnrotated:
    case K::QProjected: case K::KProjected: case K::HeadQProjected: case K::HeadKProjected:
      return derive_projection;
    case K::Capped: return derive_capped;
    case K::Scores: return derive_scores;
    case K::Scaled: return derive_scaled;
    case K::Masked: return derive_masked;
    case K::Weights: return derive_weights;
    case K::Context: return derive_context;
    case K::Concat: return derive_concat;
    case K::Output: return derive_output;
    case K::SinkShare: return derive_sink_share;
    case K::PositionBias: return derive_position_bias;
    case K::RopeAngle: return derive_rope_angle;
    default: return derive_input;
  }
}

Derivation derive_in_our_letters(const Document& doc, StageId id, int r, int c) {
  const Scenario& s = doc.scenario();
  Derivation out;
  const MatrixView m = doc.stage(id);
  if (r < 0 || c < 0 || r >= m.rows() || c >= m.cols()) return out;
  const CellAt a{doc, s, s.dims(), id, r, c, m(r, c), "[" + s.shown_index(r) + "," + s.shown_index(c) + "]", id.head,
                 s.shown_subscript(id.head)};
  out.title = describe_stage(s, id).symbol + a.at;
  // Name the tokens by what the registry says the axes are, not by their
  // sizes: X is T × d_model and W_q is d_model × h·d_k, and d_model may well
  // equal T; K's rows are the keys' tokens (X_kv's with cross-attention).
  auto token = [&](SideLabels side, int i) -> std::optional<std::string> {
    if (side == SideLabels::Token) return s.token_label(i);
    if (side == SideLabels::KeyToken) return s.key_label(i);
    return std::nullopt;
  };
  const StageSpec& sp = spec(id.kind);
  const auto row_token = token(sp.row_labels, r), col_token = token(sp.col_labels, c);
  if (row_token && col_token)
    out.title += "   ('" + *row_token + "' → '" + *col_token + "')";
  else if (row_token)
    out.title += "   (token '" + *row_token + "')";
  derivation_of(id.kind)(a, out);
  return out;
}

}  // namespace

Derivation derive(const Document& doc, StageId id, int r, int c) {
  Derivation out = derive_in_our_letters(doc, id, r, c);
  // The scenario's letters (symbol_names.h) in everything that is math; the
  // note is prose ("A large score…" must stay an article).
  const SymbolNames& names = doc.scenario().symbols;
  if (!names.empty())
    for (std::string* text : {&out.title, &out.formula, &out.numbers, &out.hint}) *text = rename_symbols(*text, names);
  return out;
}

}  // namespace attention_lab::gui
