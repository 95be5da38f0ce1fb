#include "logic/gradient_derivation.h"
#include "logic/dot_product_text.h"

#include "attention_lab/stage_info.h"
#include "attention_lab/stage_registry.h"
#include "logic/number_format.h"

#include <cmath>

namespace attention_lab::gui {

namespace {

using K = StageKind;

// Gradients are often small (0.0036): their numbers are written to three
// significant digits, never rounded to "0.00".
std::string sig(float v) { return format_significant(v); }
std::string sig_factor(float v) { return v < 0 ? "(" + sig(v) + ")" : sig(v); }

// A gradient's sum runs over the tokens: up to eight of them are written
// whole (a seven-word sentence's ∂W_q), more are cut to their first terms.
constexpr int kTermsShown = 8;

// "a₀×b₀ + a₁×b₁ + …", at most kTermsShown terms.
std::string grad_sum(const RowVector& a, const RowVector& b) { return dot_product_text(a, b, kTermsShown, &sig_factor); }
std::string grad_terms(const RowVector& a, const RowVector& b, float total) { return grad_sum(a, b) + " = " + sig(total); }

// What one gradient cell's rule needs: the scenario, its values and its
// gradients by kind and head, and how to name and light them.
struct GradientCellRule {
  GradientCellRule(const Document& document, const Gradients& gradients, StageId stage, int row, int col)
      : doc(document), g(gradients), id(stage), r(row), c(col) {}
  const Document& doc;
  const Gradients& g;
  StageId id;
  int r, c;
  const Scenario& s = doc.scenario();
  Dims d = s.dims();
  GradientCell out;

  StageId value_id(K k, int h) const {
    StageId v = is_per_head(k) ? StageId::of_head(k, h) : StageId::input(k);
    v.layer = id.layer;
    return v;
  }
  StageId grad_id(K k, int h) const {
    StageId v = value_id(k, h);
    v.role = Role::Gradient;
    return v;
  }
  MatrixView val(K k, int h = 0) const { return doc.stage(value_id(k, h)); }
  // a gradient the backward pass holds (an empty matrix when it does not)
  const Matrix& grad(K k, int h = 0) const {
    static const Matrix none;
    const Matrix* m = g.find(value_id(k, h));
    return m ? *m : none;
  }
  std::string sym(K k, int h = 0) const { return describe_stage(s, value_id(k, h)).symbol; }
  std::string gsym(K k, int h = 0) const { return "∂L/∂" + sym(k, h); }
  std::string ix(int n) const { return s.shown_index(n); }
  std::string at(int row, int col) const { return "[" + ix(row) + "," + ix(col) + "]"; }

  void light_row(StageId stage, int row) { out.sources.push_back(Lit{stage, row, -1, -1, -1}); }
  void light_col(StageId stage, int col) { out.sources.push_back(Lit{stage, -1, col, -1, -1}); }
  void light_cell(StageId stage, int row, int col) { out.sources.push_back(Lit{stage, -1, -1, row, col}); }

  float me() const { return g.find(id)->operator()(r, c); }
  std::string result() const { return sig(me()); }
};

// The Q and K the projections make: before the q/k norm, else before RoPE.
K q_made(const Scenario& s) { return s.qk_norm.on() ? K::QProjected : s.rope.on ? K::QUnrotated : K::Q; }
K k_made(const Scenario& s) { return s.qk_norm.on() ? K::KProjected : s.rope.on ? K::KUnrotated : K::K; }

RowVector column(const MatrixView& m, int c) { return m.col(c).transpose(); }
RowVector column(const Matrix& m, int c) { return m.col(c).transpose(); }

std::string column_sum(const Matrix& m, int c) {
  std::string text;
  const auto n = m.rows();
  for (Eigen::Index i = 0; i < n && i < kTermsShown; ++i) text += (i ? " + " : "") + sig_factor(m(i, c));
  if (n > kTermsShown) text += " + … (" + std::to_string(n) + " terms)";
  return text;
}

// X (or X_kv) times a weight: ∂W[a,b] = Σᵢ X[i,a]·∂P[i,b].
void weight(GradientCellRule& x, K input, K made) {
  const MatrixView X = x.val(input);
  const Matrix& dP = x.grad(made);
  x.out.text.formula = "Σᵢ " + x.sym(input) + "[i," + x.ix(x.r) + "]·" + x.gsym(made) + "[i," + x.ix(x.c) + "]";
  x.out.text.numbers = grad_terms(column(X, x.r), column(dP, x.c), x.me());
  x.light_col(x.value_id(input, 0), x.r);
  x.light_col(x.grad_id(made, 0), x.c);
}

void bias(GradientCellRule& x, K made) {
  const Matrix& dP = x.grad(made);
  x.out.text.formula = "Σᵢ " + x.gsym(made) + "[i," + x.ix(x.c) + "]";
  x.out.text.numbers = column_sum(dP, x.c) + " = " + x.result();
  x.light_col(x.grad_id(made, 0), x.c);
}

// A row of an input back through the projections that read it:
// ∂X[r,a] = Σ_b ∂P[r,b]·W[a,b] summed over (P, W).
void input_row(GradientCellRule& x, const std::vector<std::pair<K, K>>& products) {
  std::string formula, numbers, parts;
  for (const auto& [made, w] : products) {
    const Matrix& dP = x.grad(made);
    const MatrixView W = x.val(w);
    if (!formula.empty()) formula += " + ", numbers += " + ", parts += " + ";
    formula += "Σⱼ " + x.gsym(made) + "[" + x.ix(x.r) + ",j]·" + x.sym(w) + "[" + x.ix(x.c) + ",j]";
    const RowVector a = dP.row(x.r), b = W.row(x.c);
    numbers += "(" + grad_sum(a, b) + ")";
    parts += sig_factor(a.dot(b));
    x.light_row(x.grad_id(made, 0), x.r);
    x.light_row(x.value_id(w, 0), x.c);
  }
  x.out.text.formula = formula;
  x.out.text.numbers = numbers + (products.size() > 1 ? " = " + parts : "") + " = " + x.result();
}

// K or V of a K/V head, back from every query head that reads it.
void shared_head(GradientCellRule& x, K kind, int kv) {
  const bool is_k = kind == K::HeadK;
  RowVector a, b;
  std::string formula;
  for (int h = 0; h < x.d.heads; ++h) {
    if (x.d.kv_head(h) != kv) continue;
    // ∂K[j,c] = Σᵢ ∂S[i,j]·Q[i,c]; ∂V[j,c] = Σᵢ A[i,j]·∂C[i,c]
    const RowVector left = is_k ? column(x.grad(K::Scores, h), x.r) : column(x.val(K::Weights, h), x.r);
    const RowVector right = is_k ? column(x.val(K::HeadQ, h), x.c) : column(x.grad(K::Context, h), x.c);
    a.conservativeResize(a.size() + left.size());
    a.tail(left.size()) = left;
    b.conservativeResize(b.size() + right.size());
    b.tail(right.size()) = right;
    formula += (formula.empty() ? "" : " + ") +
               (is_k ? "Σᵢ " + x.gsym(K::Scores, h) + "[i," + x.ix(x.r) + "]·" + x.sym(K::HeadQ, h) + "[i," + x.ix(x.c) + "]"
                     : "Σᵢ " + x.sym(K::Weights, h) + "[i," + x.ix(x.r) + "]·" + x.gsym(K::Context, h) + "[i," + x.ix(x.c) + "]");
    x.light_col(is_k ? x.grad_id(K::Scores, h) : x.value_id(K::Weights, h), x.r);
    x.light_col(is_k ? x.value_id(K::HeadQ, h) : x.grad_id(K::Context, h), x.c);
  }
  x.out.text.formula = formula;
  x.out.text.numbers = grad_terms(a, b, x.me());
  if (x.d.heads != x.d.kv_heads) x.out.text.note = "Grouped heads: every query head that reads this K/V head adds its part.";
}

// RoPE's transpose: the cell's dimension and its partner, turned back by −φ.
void unrotate(GradientCellRule& x, K after, int col) {
  const int dk = x.d.d_k, rw = x.d.rotary_dims(), dim = col % dk, base = col - dim;
  const Matrix& dQ = x.grad(after);
  const StageId src = x.grad_id(after, 0);
  if (dim >= rw) {
    x.out.text.formula = x.gsym(after) + x.at(x.r, col) + "  (not turned)";
    x.out.text.numbers = x.result();
    x.light_cell(src, x.r, col);
    return;
  }
  const int pair = rope_pair_of(x.s.rope.pairs, rw, dim);
  const auto [i, j] = rope_pair(x.s.rope.pairs, rw, pair);
  const double phi = rope_angle(x.s.rope, rw, pair, x.r);
  const float gi = dQ(x.r, base + i), gj = dQ(x.r, base + j);
  const float cs = static_cast<float>(std::cos(phi)), sn = static_cast<float>(std::sin(phi));
  const std::string gs = x.gsym(after);
  if (dim == i) {
    x.out.text.formula = gs + x.at(x.r, base + i) + "·cos φ + " + gs + x.at(x.r, base + j) + "·sin φ";
    x.out.text.numbers = sig_factor(gi) + "×" + sig_factor(cs) + " + " + sig_factor(gj) + "×" + sig_factor(sn);
  } else {
    x.out.text.formula = "−" + gs + x.at(x.r, base + i) + "·sin φ + " + gs + x.at(x.r, base + j) + "·cos φ";
    x.out.text.numbers = "−" + sig_factor(gi) + "×" + sig_factor(sn) + " + " + sig_factor(gj) + "×" + sig_factor(cs);
  }
  x.out.text.numbers += " = " + x.result();
  x.out.text.note = "φ = " + std::to_string(x.r) + "·θ of pair " + std::to_string(pair) + " = " + sig(static_cast<float>(phi)) +
                    " rad: the forward pass turned this pair by +φ, so its gradient turns back by −φ.";
  x.light_cell(src, x.r, base + i);
  x.light_cell(src, x.r, base + j);
}

// RMSNorm's backward over the span of `n` values holding the cell (a head's
// d_k, or the whole row): ∂x = g·∂y/rms − x·Σₖ(gₖ·∂yₖ·xₖ)/(n·rms³).
void unnorm(GradientCellRule& x, K projected, K after, int col) {
  const bool whole = x.s.qk_norm.scope == QkNormScope::Whole;
  const MatrixView P = x.val(projected);
  const Matrix& dY = x.grad(after);
  const Matrix& gain = (projected == K::QProjected ? x.s.q_norm : x.s.k_norm).get();
  const int n = whole ? static_cast<int>(P.cols()) : x.d.d_k, base = whole ? 0 : col - col % n;
  double ms = 0.0, dot = 0.0;
  for (int k = 0; k < n; ++k) {
    const double v = P(x.r, base + k);
    ms += v * v;
    dot += static_cast<double>(gain(0, whole ? base + k : k)) * static_cast<double>(dY(x.r, base + k)) * v;
  }
  const double rms = std::sqrt(ms / n + static_cast<double>(x.s.qk_norm.eps));
  const float gk = gain(0, whole ? col : col - base), dy = dY(x.r, col), xv = P(x.r, col);
  const std::string gs = x.gsym(after), xs = x.sym(projected);
  x.out.text.formula = "g·" + gs + x.at(x.r, col) + "/rms − " + xs + x.at(x.r, col) + "·Σₖ gₖ·" + gs + "ₖ·" + xs + "ₖ / (" +
                       std::to_string(n) + "·rms³)";
  x.out.text.numbers = sig_factor(gk) + "×" + sig_factor(dy) + "/" + sig(static_cast<float>(rms)) + " − " +
                       sig_factor(xv) + "×" + sig(static_cast<float>(dot)) + "/(" + std::to_string(n) + "×" +
                       sig(static_cast<float>(rms * rms * rms)) + ") = " + x.result();
  x.out.sources.push_back(Lit{x.grad_id(after, 0), x.r, -1, -1, -1});
  x.out.sources.push_back(Lit{x.value_id(projected, 0), x.r, -1, -1, -1});
}

// ∂L/∂O from the loss: mse, next_token (through W_U), or 0 for attend.
void output_rule(GradientCellRule& x) {
  const Scenario& s = x.s;
  const Dims& d = x.d;
  Derivation& t = x.out.text;
  if (!x.g.outside.empty()) {
    t.formula = x.gsym(K::Output) + x.at(x.r, x.c) + ", from the rest of the model";
    t.numbers = x.result();
    t.note = "∂L/∂O comes from " + x.g.outside + ": the model's backward pass through this layer's MLP, the layers "
             "after it, the final norm and the head, run from this output as it is now (edits and all).";
    return;
  }
  if (!s.loss || s.loss->kind == LossKind::Attend) {
    t.formula = "0";
    t.numbers = x.result();
    t.note = "The loss judges a head's weights, not the output: nothing flows back from here.";
    return;
  }
  if (s.loss->kind == LossKind::Mse) {
    const float o = x.val(K::Output)(x.r, x.c), y = s.loss->target.get()(x.r, x.c);
    t.formula = "2·(" + x.sym(K::Output) + x.at(x.r, x.c) + " − target" + x.at(x.r, x.c) + ") / (T·d_out)";
    t.numbers = "2×(" + sig(o) + " − " + sig_factor(y) + ") / " + std::to_string(d.T * d.d_out) +
                " = " + x.result();
    x.light_cell(x.value_id(K::Output, 0), x.r, x.c);
    return;
  }
  const Matrix dLogits = next_token_logit_gradient(x.val(K::Output), *s.loss);
  const Matrix& W_U = s.loss->W_U.get();
  t.formula = "Σᵥ ∂L/∂logits[" + x.ix(x.r) + ",v]·W_U[" + x.ix(x.c) + ",v]";
  t.numbers = grad_terms(dLogits.row(x.r), W_U.row(x.c), x.me());
  t.note = "∂L/∂logits[" + x.ix(x.r) + ",v] = (softmax of the row's logits − 1 at its target " +
           std::to_string(s.loss->targets[static_cast<std::size_t>(x.r)]) + ") / T: the predicted share of each token, less the one it should be.";
  x.light_row(x.value_id(K::Output, 0), x.r);
}

// ∂L/∂A from the context (and the attend loss at a row's target key).
void weights_rule(GradientCellRule& x, int h) {
  const Scenario& s = x.s;
  const Dims& d = x.d;
  Derivation& t = x.out.text;
  const Matrix& dC = x.grad(K::Context, h);
  const MatrixView V = x.val(K::HeadV, h);
  t.formula = "Σ_c " + x.gsym(K::Context, h) + "[" + x.ix(x.r) + ",c]·" + x.sym(K::HeadV, h) + "[" + x.ix(x.c) + ",c]";
  const bool target = s.loss && s.loss->kind == LossKind::Attend && s.loss->head == h &&
                      s.loss->targets[static_cast<std::size_t>(x.r)] == x.c;
  if (target) {
    const float a = x.val(K::Weights, h)(x.r, x.c);
    const float through = RowVector(dC.row(x.r)).dot(RowVector(V.row(x.c)));
    t.formula += " − 1/(T·" + x.sym(K::Weights, h) + x.at(x.r, x.c) + ")";
    t.numbers = "(" + grad_sum(dC.row(x.r), V.row(x.c)) + ") − 1/(" + std::to_string(d.T) + "×" + sig(a) +
                ") = " + sig_factor(through) + " − " + sig(1.0f / (static_cast<float>(d.T) * a)) +
                " = " + x.result();
    t.note = "This is the key the loss wants row " + x.ix(x.r) + " to attend to: raising its weight lowers the loss.";
  } else {
    t.numbers = grad_terms(dC.row(x.r), V.row(x.c), x.me());
  }
  x.light_row(x.grad_id(K::Context, h), x.r);
  x.light_row(x.value_id(K::HeadV, h), x.c);
}

// Softmax's backward.
void masked_rule(GradientCellRule& x, int h) {
  Derivation& t = x.out.text;
  const MatrixView A = x.val(K::Weights, h);
  const Matrix& dA = x.grad(K::Weights, h);
  const RowVector a = A.row(x.r), da = dA.row(x.r);
  const float row_dot = a.dot(da);
  const std::string As = x.sym(K::Weights, h), gA = x.gsym(K::Weights, h);
  t.formula = As + x.at(x.r, x.c) + "·(" + gA + x.at(x.r, x.c) + " − Σₖ " + As + "[" + x.ix(x.r) + ",k]·" + gA + "[" +
              x.ix(x.r) + ",k])";
  t.numbers = sig(a[x.c]) + "×(" + sig_factor(da[x.c]) + " − " + sig_factor(row_dot) + ") = " +
              x.result();
  t.note = "Σₖ " + As + "·" + gA + " over row " + x.ix(x.r) + " = " + grad_terms(a, da, row_dot) +
           ". Softmax's backward: a weight's score moves the loss only by how its gradient differs from the row's average.";
  x.light_row(x.value_id(K::Weights, h), x.r);
  x.light_row(x.grad_id(K::Weights, h), x.r);
}

// Through the soft-cap (tanh's slope), or straight from the masked scores.
void scaled_rule(GradientCellRule& x, int h) {
  const Scenario& s = x.s;
  Derivation& t = x.out.text;
  if (s.softcap > 0.0f) {
    const float capped = x.val(K::Capped, h)(x.r, x.c), dcap = x.grad(K::Capped, h)(x.r, x.c);
    t.formula = x.gsym(K::Capped, h) + x.at(x.r, x.c) + "·(1 − (" + x.sym(K::Capped, h) + x.at(x.r, x.c) + "/" +
                sig(s.softcap) + ")²)";
    t.numbers = sig_factor(dcap) + "×(1 − (" + sig_factor(capped) + "/" + sig(s.softcap) +
                ")²) = " + x.result();
    x.light_cell(x.grad_id(K::Capped, h), x.r, x.c);
    x.light_cell(x.value_id(K::Capped, h), x.r, x.c);
  } else {
    t.formula = x.gsym(K::Masked, h) + x.at(x.r, x.c);
    t.numbers = x.result();
    t.note = "The bias and the mask add constants: the gradient passes through unchanged.";
    x.light_cell(x.grad_id(K::Masked, h), x.r, x.c);
  }
}

// A column of the whole Q, K or V: the block of the head view that holds it.
void head_block_rule(GradientCellRule& x) {
  const Dims& d = x.d;
  Derivation& t = x.out.text;
  const bool v = x.id.kind == K::V;
  const int width = v ? d.d_v : d.d_k, block = x.c / width;
  // the query head whose view holds this column (K, V: the first one reading the K/V head)
  int head = block;
  if (x.id.kind != K::Q)
    for (head = 0; head < d.heads && d.kv_head(head) != block; ++head) {}
  const K view = x.id.kind == K::Q ? K::HeadQ : v ? K::HeadV : K::HeadK;
  t.formula = x.gsym(view, head) + x.at(x.r, x.c % width);
  t.numbers = x.result();
  x.light_cell(x.grad_id(view, head), x.r, x.c % width);
}

// A sink's logit, one per head.
void sinks_rule(GradientCellRule& x) {
  Derivation& t = x.out.text;
  // −Σᵢ σᵢ·(Σₖ Aᵢₖ·∂Aᵢₖ): a sink's logit takes share σᵢ of row i and gives nothing back
  const MatrixView share = x.val(K::SinkShare, x.c), A = x.val(K::Weights, x.c);
  const Matrix& dA = x.grad(K::Weights, x.c);
  RowVector sigma(A.rows()), row_dot(A.rows());
  for (Eigen::Index i = 0; i < A.rows(); ++i) sigma[i] = share(i, 0), row_dot[i] = RowVector(A.row(i)).dot(RowVector(dA.row(i)));
  t.formula = "−Σᵢ σᵢ·(Σₖ " + x.sym(K::Weights, x.c) + "ᵢₖ·" + x.gsym(K::Weights, x.c) + "ᵢₖ)";
  t.numbers = "−(" + grad_sum(sigma, row_dot) + ") = " + x.result();
  x.light_col(x.value_id(K::SinkShare, x.c), 0);
}

void derive_cell(GradientCellRule& x) {
  const Scenario& s = x.s;
  const Dims& d = x.d;
  const int h = is_per_head(x.id.kind) ? x.id.head : 0;
  Derivation& t = x.out.text;
  switch (x.id.kind) {
    case K::Output: output_rule(x); break;
    case K::W_o: weight(x, K::Concat, K::Output); break;
    case K::b_o: bias(x, K::Output); break;
    case K::Concat:
      if (s.use_w_o) {
        input_row(x, {{K::Output, K::W_o}});
      } else {
        t.formula = x.gsym(K::Output) + x.at(x.r, x.c);
        t.numbers = x.result();
        x.light_cell(x.grad_id(K::Output, 0), x.r, x.c);
      }
      break;
    case K::Context:
      t.formula = x.gsym(K::Concat) + x.at(x.r, h * d.d_v + x.c);
      t.numbers = x.result();
      x.light_cell(x.grad_id(K::Concat, 0), x.r, h * d.d_v + x.c);
      break;
    case K::Weights: weights_rule(x, h); break;
    case K::Masked: masked_rule(x, h); break;
    case K::Capped:
      t.formula = x.gsym(K::Masked, h) + x.at(x.r, x.c);
      t.numbers = x.result();
      t.note = "The bias and the mask add constants: the gradient passes through unchanged.";
      x.light_cell(x.grad_id(K::Masked, h), x.r, x.c);
      break;
    case K::Scaled: scaled_rule(x, h); break;
    case K::Scores: {
      const float ds = x.grad(K::Scaled, h)(x.r, x.c);
      t.formula = x.gsym(K::Scaled, h) + x.at(x.r, x.c) + " / " + sig(static_cast<float>(score_divisor(s)));
      t.numbers = sig_factor(ds) + " / " + sig(static_cast<float>(score_divisor(s))) + " = " + x.result();
      x.light_cell(x.grad_id(K::Scaled, h), x.r, x.c);
      break;
    }
    case K::HeadQ: {
      const Matrix& dS = x.grad(K::Scores, h);
      const MatrixView Kh = x.val(K::HeadK, h);
      t.formula = "Σⱼ " + x.gsym(K::Scores, h) + "[" + x.ix(x.r) + ",j]·" + x.sym(K::HeadK, h) + "[j," + x.ix(x.c) + "]";
      t.numbers = grad_terms(dS.row(x.r), column(Kh, x.c), x.me());
      x.light_row(x.grad_id(K::Scores, h), x.r);
      x.light_col(x.value_id(K::HeadK, h), x.c);
      break;
    }
    case K::HeadK: shared_head(x, K::HeadK, d.kv_head(h)); break;
    case K::HeadV: shared_head(x, K::HeadV, d.kv_head(h)); break;
    case K::Q: case K::K: case K::V: head_block_rule(x); break;
    case K::QUnrotated: unrotate(x, K::Q, x.c); break;
    case K::KUnrotated: unrotate(x, K::K, x.c); break;
    case K::HeadQUnrotated: unrotate(x, K::Q, h * d.d_k + x.c); break;
    case K::HeadKUnrotated: unrotate(x, K::K, d.kv_head(h) * d.d_k + x.c); break;
    case K::QProjected: unnorm(x, K::QProjected, s.rope.on ? K::QUnrotated : K::Q, x.c); break;
    case K::KProjected: unnorm(x, K::KProjected, s.rope.on ? K::KUnrotated : K::K, x.c); break;
    case K::HeadQProjected: unnorm(x, K::QProjected, s.rope.on ? K::QUnrotated : K::Q, h * d.d_k + x.c); break;
    case K::HeadKProjected: unnorm(x, K::KProjected, s.rope.on ? K::KUnrotated : K::K, d.kv_head(h) * d.d_k + x.c); break;
    case K::QNorm: case K::KNorm: {
      const bool q = x.id.kind == K::QNorm;
      t.formula = "Σ over rows (and heads) of ∂L/∂y·x/rms at dimension " + x.ix(x.c);
      t.numbers = x.result();
      const K after = s.rope.on ? (q ? K::QUnrotated : K::KUnrotated) : (q ? K::Q : K::K);
      x.light_col(x.grad_id(after, 0), x.c);
      x.light_col(x.value_id(q ? K::QProjected : K::KProjected, 0), x.c);
      break;
    }
    case K::W_q: weight(x, K::X, q_made(s)); break;
    case K::W_k: weight(x, s.cross() ? K::X_kv : K::X, k_made(s)); break;
    case K::W_v: weight(x, s.cross() ? K::X_kv : K::X, K::V); break;
    case K::b_q: bias(x, q_made(s)); break;
    case K::b_k: bias(x, k_made(s)); break;
    case K::b_v: bias(x, K::V); break;
    case K::X:
      if (s.cross()) input_row(x, {{q_made(s), K::W_q}});
      else input_row(x, {{q_made(s), K::W_q}, {k_made(s), K::W_k}, {K::V, K::W_v}});
      break;
    case K::X_kv: input_row(x, {{k_made(s), K::W_k}, {K::V, K::W_v}}); break;
    case K::Sinks: sinks_rule(x); break;
    case K::Mask: case K::RopeAngle: case K::PositionBias: case K::SinkShare: break;
  }
}

}  // namespace

GradientCell derive_gradient(const Document& doc, const Gradients& g, StageId id, int row, int col) {
  const Matrix* m = g.find(id);
  if (!m || row < 0 || col < 0 || row >= m->rows() || col >= m->cols()) return {};
  GradientCellRule x{doc, g, id, row, col};
  const StageInfo info = describe_stage(x.s, id);
  x.out.text.title = info.symbol + x.at(row, col);
  const StageSpec& sp = spec(id.kind);
  if (sp.row_labels == SideLabels::Token && sp.col_labels == SideLabels::KeyToken)
    x.out.text.title += "   ('" + x.s.token_label(row) + "' → '" + x.s.key_label(col) + "')";
  else if (sp.row_labels == SideLabels::Token)
    x.out.text.title += "   (token '" + x.s.token_label(row) + "')";
  else if (sp.row_labels == SideLabels::KeyToken)
    x.out.text.title += "   (key '" + x.s.key_label(row) + "')";
  derive_cell(x);
  return x.out;
}

}  // namespace attention_lab::gui
