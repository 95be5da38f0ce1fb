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

Derivation derive_in_our_letters(const Document& doc, StageId id, int r, int c) {
  const Scenario& s = doc.scenario();
  const Dims d = s.dims();
  // Rows, columns and heads as the scenario shows them (counting from 0 or 1);
  // positions stay positions (RoPE's φ = p·θ, ALiBi's j − i).
  auto ix = [&](int n) { return s.shown_index(n); };
  auto sub = [&](int n) { return s.shown_subscript(n); };
  const StageInfo info = describe_stage(s, id);
  Derivation out;
  const MatrixView m = doc.stage(id);
  if (r < 0 || c < 0 || r >= m.rows() || c >= m.cols()) return out;
  const float value = m(r, c);
  const std::string at = "[" + ix(r) + "," + ix(c) + "]";
  out.title = info.symbol + at;
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
  const int h = id.head;
  const std::string hs = sub(h);
  auto stage = [&](StageKind k) { return doc.stage(StageId::of_head(k, h)); };
  auto layer = [&](StageKind k) { return doc.stage(StageId::input(k)); };

  switch (id.kind) {
    case StageKind::Q: case StageKind::K: case StageKind::V:
    case StageKind::HeadQ: case StageKind::HeadK: case StageKind::HeadV:
    case StageKind::QUnrotated: case StageKind::KUnrotated:
    case StageKind::HeadQUnrotated: case StageKind::HeadKUnrotated:
    case StageKind::QProjected: case StageKind::KProjected:
    case StageKind::HeadQProjected: case StageKind::HeadKProjected: {
      using K = StageKind;
      const bool before_norm = id.kind == K::QProjected || id.kind == K::KProjected || id.kind == K::HeadQProjected ||
                               id.kind == K::HeadKProjected;
      const bool before_rope = before_norm || id.kind == K::QUnrotated || id.kind == K::KUnrotated ||
                               id.kind == K::HeadQUnrotated || id.kind == K::HeadKUnrotated;
      const int which = id.kind == K::Q || id.kind == K::HeadQ || id.kind == K::QUnrotated ||
                                id.kind == K::HeadQUnrotated || id.kind == K::QProjected || id.kind == K::HeadQProjected
                            ? 0
                        : id.kind == K::V || id.kind == K::HeadV ? 2
                                                                 : 1;
      const int width = which == 2 ? d.d_v : d.d_k;
      const int block = which == 0 ? h : d.kv_head(h);  // K and V: the K/V head this query head reads
      const int col = is_per_head(id.kind) ? block * width + c : c;
      if (s.rope.on && which < 2 && !before_rope && col % d.d_k >= d.rotary_dims()) {
        // partial rotary (GPT-NeoX): a dimension past the turned ones passes unchanged
        const float u = layer(which == 0 ? K::QUnrotated : K::KUnrotated)(r, col);
        const std::string L = which == 0 ? "Qᵤ" : "Kᵤ";
        out.formula = L + "[" + ix(r) + "," + ix(col) + "]  (not turned)";
        out.numbers = format_number(u, 3);
        out.hint = L + "[" + ix(r) + "," + ix(col) + "]" + kAsked;
        out.note = "RoPE turns only the first " + std::to_string(d.rotary_dims()) + " of each head's " + std::to_string(d.d_k) +
                   " dimensions; this one is passed on as it is." + pin_note(doc, id, r, c, u);
        break;
      }
      if (s.rope.on && which < 2 && !before_rope) {
        // x′ = x·cos φ ∓ y·sin φ, y the dimension RoPE pairs it with, φ = position·θ^(−2k/r), r the turned width
        const MatrixView U = layer(which == 0 ? K::QUnrotated : K::KUnrotated);
        const int c0 = col / d.d_k * d.d_k, dim = col - c0, rw = d.rotary_dims();
        const int partner = rope_partner(s.rope.pairs, rw, dim), pair = rope_pair_of(s.rope.pairs, rw, dim);
        const bool first = rope_pair(s.rope.pairs, rw, pair).first == dim;
        const double angle = rope_angle(s.rope, rw, pair, r);
        const float cs = static_cast<float>(std::cos(angle)), sn = static_cast<float>(std::sin(angle));
        const float a = U(r, c0 + dim), b = U(r, c0 + partner);
        const float computed = first ? a * cs - b * sn : a * cs + b * sn;
        const std::string L = which == 0 ? "Qᵤ" : "Kᵤ";
        out.formula = L + "[" + ix(r) + "," + ix(c0 + dim) + "]·cos φ " + (first ? "−" : "+") +
                      " " + L + "[" + ix(r) + "," + ix(c0 + partner) + "]·sin φ,  φ = " +
                      std::to_string(r) + "·θ^(−" + std::to_string(2 * pair) + "/" + std::to_string(rw) +
                      ") = " + format_number(static_cast<float>(angle), 3) + " rad";
        // the φ heatmap shows angles modulo 2π: say which of its cells this is
        if (const double wrapped = std::remainder(angle, 2.0 * std::numbers::pi); wrapped != angle)
          out.formula += " ≡ " + format_number(static_cast<float>(wrapped), 3) + " (mod 2π, as φ shows it)";
        out.numbers = format_number(a, 3) + " × " + format_number(cs, 3) + (first ? " − " : " + ") + format_factor(b) +
                      " × " + format_number(sn, 3) + " = " + format_number(computed, 3);
        out.hint = format_number(a, 3) + " × " + format_number(cs, 3) + (first ? " − " : " + ") + format_factor(b) +
                   " × " + format_number(sn, 3) + kAsked;
        out.note = pin_note(doc, id, r, c, computed);
        break;
      }
      if (s.qk_norm.on() && which < 2 && !before_norm) {
        // x / √(mean(x²) + ε) · g over the head's d_k values of the row (or the whole row)
        const MatrixView P = layer(which == 0 ? K::QProjected : K::KProjected);
        const bool whole = s.qk_norm.scope == QkNormScope::Whole;
        const int first = whole ? 0 : col / d.d_k * d.d_k, n = whole ? static_cast<int>(P.cols()) : d.d_k;
        const RowVector x = P.row(r).segment(first, n);
        double mean_square = 0.0;
        for (Eigen::Index i = 0; i < x.size(); ++i) mean_square += static_cast<double>(x[i]) * static_cast<double>(x[i]);
        mean_square /= static_cast<double>(std::max<Eigen::Index>(x.size(), 1));
        const float g = layer(which == 0 ? K::QNorm : K::KNorm)(0, whole ? col : col - first);
        const float inv = static_cast<float>(1.0 / std::sqrt(mean_square + static_cast<double>(s.qk_norm.eps)));
        const float computed = P(r, col) * inv * g;
        const std::string L = which == 0 ? "Q_proj" : "K_proj";
        const std::string span = "[" + ix(r) + "," + ix(first) + "…" + ix(first + n - 1) + "]";
        out.formula = L + "[" + ix(r) + "," + ix(col) + "] / √(mean(" + L + span + "²) + ε) × g_" +
                      "qk"[which] + "[" + ix(whole ? col : col - first) + "]";
        out.numbers = format_number(P(r, col), 3) + " / √(" + format_number(static_cast<float>(mean_square), 4) + " + " +
                      format_number(s.qk_norm.eps, 2) + ") × " + format_factor(g) + " = " + format_number(computed, 3);
        out.hint = format_number(P(r, col), 3) + " / √(" + format_number(static_cast<float>(mean_square), 4) + ") × " +
                   format_factor(g) + kAsked;
        out.note = "The mean square is over " +
                   std::string(whole ? "the whole row of " + L : "this head's " + std::to_string(n) + " values of " + L) +
                   ", so the other cells of that span change this one too." + pin_note(doc, id, r, c, computed);
        break;
      }
      const auto W = layer(static_cast<StageKind>(static_cast<int>(StageKind::W_q) + which));
      const char w = "qkv"[which];
      const RowVector x = layer(which > 0 && s.cross() ? StageKind::X_kv : StageKind::X).row(r);
      const RowVector wc = W.col(col).transpose();
      float computed = x.dot(wc);
      // (with cross-attention K and V come from the rows of X_kv)
      out.formula = std::string(which > 0 && s.cross() ? "x_kv" : "x") + sub(r) + "·W_" + w + "[:," + ix(col) + "]";
      out.numbers = dot_terms(x, wc, computed);
      out.hint = dot_sum(x, wc, kMaxHintTerms);
      if (s.use_bias) {
        const float b = layer(static_cast<StageKind>(static_cast<int>(StageKind::b_q) + which))(0, col);
        out.formula += std::string(" + b_") + w + "[" + ix(col) + "]";
        computed += b;
        out.numbers += " ; + " + format_factor(b) + " = " + format_number(computed, 3);
        out.hint = "(" + out.hint + ") + " + format_factor(b);
      }
      out.hint += kAsked;
      out.note = pin_note(doc, id, r, c, computed);
      break;
    }
    case StageKind::Capped: {
      const float scaled = stage(StageKind::Scaled)(r, c);
      const float cap = s.softcap;
      const float computed = softcap(scaled, cap);
      char cap_text[32];
      std::snprintf(cap_text, sizeof cap_text, "%g", static_cast<double>(cap));  // the cap as configured: "50", "2.5"
      out.formula = std::string(cap_text) + "·tanh(S′" + hs + at + " / " + cap_text + ")";
      out.numbers = std::string(cap_text) + " × tanh(" + format_number(scaled, 3) + " / " + cap_text + ") = " + cap_text + " × " +
                    format_number(std::tanh(scaled / cap), 4) + " = " + format_number(computed, 3);
      out.hint = std::string(cap_text) + " × tanh(" + format_number(scaled, 3) + " / " + cap_text + ")" + kAsked;
      out.note = std::string("Within a few units of 0 the cap changes little (tanh x ≈ x); near ±") + cap_text +
                 " it flattens every score.";
      break;
    }
    case StageKind::Scores: {
      const RowVector q = stage(StageKind::HeadQ).row(r);
      const RowVector k = stage(StageKind::HeadK).row(c);
      const float computed = q.dot(k);
      out.formula = "q" + sub(r) + "·k" + sub(c) + "  (row " + ix(r) + " of Q" + hs + " · row " +
                    ix(c) + " of K" + hs + ")";
      out.numbers = dot_terms(q, k, computed);
      out.hint = dot_sum(q, k, kMaxHintTerms) + kAsked;
      out.note = pin_note(doc, id, r, c, computed);
      break;
    }
    case StageKind::Scaled: {
      const float raw = stage(StageKind::Scores)(r, c);
      std::string f = "S" + hs + at, n = format_number(raw, 3);
      if (s.scale && s.score_scale > 0.0f) {
        f += " × " + format_number(s.score_scale, 4);
        n += " × " + format_number(s.score_scale, 4);
      } else if (s.scale) {
        f += " / √" + std::to_string(d.d_k);
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
      out.note = pin_note(doc, id, r, c, computed);
      break;
    }
    case StageKind::Masked: {
      const bool allowed = layer(StageKind::Mask)(r, c) != 0.0f;
      // what the mask passes on: the scaled score, or its soft-capped value
      const bool capped = s.softcap > 0.0f;
      const float scaled = stage(capped ? StageKind::Capped : StageKind::Scaled)(r, c);
      const std::string S = capped ? "S″" : "S′";
      if (allowed && s.alibi) {
        // ALiBi: the position bias is added where the mask allows.
        const float bias = stage(StageKind::PositionBias)(r, c);
        const float masked = stage(StageKind::Masked)(r, c);
        out.formula = S + hs + at + " + B" + hs + at + "  (the mask allows it)";
        out.numbers = format_number(scaled, 3) + " + " + format_number(bias, 3) + " = " + format_number(masked, 3);
        out.hint = format_number(scaled, 3) + " + " + format_number(bias, 3) + kAsked;
        out.note = pin_note(doc, id, r, c, masked);
        break;
      }
      out.formula = allowed ? S + hs + at + "  (the mask allows it)" : "−∞  (the mask forbids it)";
      out.numbers = allowed ? format_number(scaled, 3)
                            : "'" + s.token_label(r) + "' may not look at '" + s.key_label(c) + "' → −∞";
      out.hint = allowed ? std::string(capped ? "the capped score " : "the scaled score ") + S + hs + at + " (the mask allows it)"
                         : "what the mask does where it forbids";
      out.note = pin_note(doc, id, r, c, allowed ? scaled : -INFINITY);
      break;
    }
    case StageKind::Weights: {
      const RowVector row = stage(StageKind::Masked).row(r);
      const float mx = row.maxCoeff();
      const float x = row[c];
      // Only a row of −∞ has no allowed key; +∞ and NaN rows are the
      // engine's other softmax cases (softmax_row), told apart here too.
      if (row.hasNaN()) {
        out.formula = "softmax of a row that holds NaN";
        out.numbers = "NaN";
        out.hint = out.formula;
        break;
      }
      if (mx == INFINITY) {
        const auto infinite = (row.array() == INFINITY).count();
        out.formula = "the row has +∞ scores: they share the weight equally, the others get 0";
        out.numbers = x == INFINITY ? "1 / " + std::to_string(infinite) + " = " +
                                          format_number(1.0f / static_cast<float>(infinite), 3)
                                    : format_number(0.0f, 3);
        out.note = pin_note(doc, id, r, c, x == INFINITY ? 1.0f / static_cast<float>(infinite) : 0.0f);
        out.hint = out.formula;
        break;
      }
      // With a sink, its logit is one more term of the sum (and may be the max).
      const bool has_sink = s.use_sinks && h < s.sinks.cols();
      const float sink = has_sink ? layer(StageKind::Sinks)(0, h) : -INFINITY;
      const float top = has_sink ? std::max(mx, sink) : mx;
      if (!std::isfinite(top)) {
        out.formula = "softmax of a row with no allowed key";
        out.numbers = "0 (by our convention; PyTorch gives NaN)";
        out.hint = out.formula;
        break;
      }
      double sum = has_sink ? std::exp(static_cast<double>(sink - top)) : 0.0;
      for (Eigen::Index j = 0; j < row.size(); ++j) sum += std::exp(static_cast<double>(row[j] - top));
      const double e = std::exp(static_cast<double>(x - top));
      const std::string sink_term = has_sink ? " + e^(s" + hs + " − max)" : "";
      out.formula = "e^(Ŝ" + sub(r) + sub(c) + " − max) / (Σⱼ e^(Ŝ" + sub(r) + "ⱼ − max)" + sink_term + ")";
      if (!has_sink) out.formula = "e^(Ŝ" + sub(r) + sub(c) + " − max) / Σⱼ e^(Ŝ" + sub(r) + "ⱼ − max)";
      // A negative max is parenthesised: "− (−0.03)", never "− −0.03".
      const std::string shape =
          "e^(" + format_number(x, 3) + " − " + format_factor(top, 3) + ") / " + (has_sink ? "(" : "") + "Σⱼ e^(Ŝ" +
          sub(r) + "ⱼ − " + format_factor(top, 3) + ")" +
          (has_sink ? " + e^(" + format_number(sink, 3) + " − " + format_factor(top, 3) + "))" : "");
      out.numbers = shape + " = " + format_number(static_cast<float>(e), 3) + " / " +
                    format_number(static_cast<float>(sum), 3) + " = " + format_number(static_cast<float>(e / sum), 3);
      out.hint = shape + kAsked;
      out.note = pin_note(doc, id, r, c, static_cast<float>(e / sum));
      if (out.note.empty() && !std::isfinite(x)) out.note = "A masked key gets exactly 0.";
      break;
    }
    case StageKind::Context: {
      const RowVector a = stage(StageKind::Weights).row(r);
      const RowVector v = stage(StageKind::HeadV).col(c).transpose();
      const float computed = a.dot(v);
      out.formula = "Σⱼ A" + hs + "[" + ix(r) + ",j] × V" + hs + "[j," + ix(c) + "]";
      out.numbers = dot_terms(a, v, computed);
      out.hint = dot_sum(a, v, kMaxHintTerms) + kAsked;
      out.note = pin_note(doc, id, r, c, computed);
      break;
    }
    case StageKind::Concat: {
      const int head = d.d_v ? c / d.d_v : 0;
      out.formula = "C" + sub(head) + "[" + ix(r) + "," + ix(c % std::max(d.d_v, 1)) + "]";
      out.numbers = "head " + ix(head) + "'s context, column " + ix(c % std::max(d.d_v, 1)) +
                    " = " + format_number(value, 3);
      out.hint = "a copy of head " + ix(head) + "'s context, row " + ix(r) + ", column " +
                 ix(c % std::max(d.d_v, 1));
      break;
    }
    case StageKind::Output: {
      const RowVector x = layer(StageKind::Concat).row(r);
      float computed = 0;
      if (s.use_w_o) {
        const RowVector w = layer(StageKind::W_o).col(c).transpose();
        computed = x.dot(w);
        out.formula = "c" + sub(r) + "·W_o[:," + ix(c) + "]";
        out.numbers = dot_terms(x, w, computed);
        out.hint = dot_sum(x, w, kMaxHintTerms);
      } else {
        computed = x[c];
        out.formula = "C[" + ix(r) + "," + ix(c) + "]  (no W_o)";
        out.numbers = format_number(computed, 3);
        out.hint = "C[" + ix(r) + "," + ix(c) + "]";
      }
      if (s.use_output_bias) {
        const float b = layer(StageKind::b_o)(0, c);
        computed += b;
        out.formula += " + b_o[" + ix(c) + "]";
        out.numbers += " ; + " + format_factor(b) + " = " + format_number(computed, 3);
        out.hint = (s.use_w_o ? "(" + out.hint + ")" : out.hint) + " + " + format_factor(b);
      }
      out.hint += kAsked;
      out.note = pin_note(doc, id, r, c, computed);
      break;
    }
    case StageKind::SinkShare: {
      const float sink = layer(StageKind::Sinks)(0, h);
      out.formula = "e^(s" + hs + " − max) / (Σⱼ e^(Ŝ" + sub(r) + "ⱼ − max) + e^(s" + hs + " − max))";
      out.numbers = "the sink's logit " + format_number(sink, 3) + " as one more key of row " + ix(r) +
                    "'s softmax = " + format_number(value, 3);
      out.hint = "the share e^(" + format_number(sink, 3) + " − max) takes of row " + ix(r) + "'s sum" + kAsked;
      out.note = "Dropped after the softmax: row " + ix(r) + "'s weights add up to 1 − " +
                 format_number(value, 3) + ".";
      break;
    }
    case StageKind::PositionBias: {
      const auto slopes = alibi_slopes(d.heads);
      const double slope = h < static_cast<int>(slopes.size()) ? slopes[static_cast<std::size_t>(h)] : 0.0;
      out.formula = "m" + hs + "·(j − i) = m" + hs + "·(" + ix(c) + " − " + ix(r) + ")";
      out.numbers = format_number(static_cast<float>(slope), 4) + " × " + format_number(static_cast<float>(c - r), 0) + " = " +
                    format_number(value, 3);
      out.hint = format_number(static_cast<float>(slope), 4) + " × " + format_number(static_cast<float>(c - r), 0) + kAsked;
      out.note = "Computed from the positions alone: it cannot be edited or pinned (pin the masked score instead).";
      break;
    }
    case StageKind::RopeAngle: {
      // row r = position, column c = pair
      const int rw = d.rotary_dims();  // the width RoPE turns (d_k without partial rotary)
      const double angle = rope_angle(s.rope, rw, c, r);
      const auto [i, j] = rope_pair(s.rope.pairs, rw, c);
      char theta[32];
      std::snprintf(theta, sizeof theta, "%g", static_cast<double>(s.rope.theta));
      out.formula = "φ = " + std::to_string(r) + "·" + rope_frequency_formula(s.rope, rw, c) + ", θ = " + theta;
      out.numbers = std::to_string(r) + " × " + format_number(static_cast<float>(rope_frequency(s.rope, rw, c)), 4) +
                    " = " + format_number(static_cast<float>(angle), 4) + " rad ≡ " + format_number(value, 3) + " (mod 2π)";
      if (r == 0) out.numbers = "0 (position 0 is not turned)";
      out.hint = std::to_string(r) + "·" + rope_frequency_formula(s.rope, rw, c) + ", modulo 2π" + kAsked;
      if (const std::string scaled = rope_scaling_note(s.rope, rw, c); !scaled.empty()) out.note = scaled + ". ";
      out.note += "Turns dimensions " + ix(i) + " and " + ix(j) + " of every head's query and key at position " +
                 std::to_string(r) + ": cos φ = " + format_number(static_cast<float>(std::cos(angle)), 3) +
                 ", sin φ = " + format_number(static_cast<float>(std::sin(angle)), 3) +
                 ". Computed from the position alone: it cannot be edited or pinned.";
      break;
    }
    default:
      out.formula = "an input";
      out.numbers = format_number(value, 4);
      out.note = id.kind == StageKind::Mask ? "Click to toggle: 1 = may attend, 0 = may not."
                                            : "Drag up/down to change it (Shift: finer); double-click to type.";
      break;
  }
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
