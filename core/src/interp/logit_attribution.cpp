#include "attention_lab/logit_attribution.h"

#include "attention_lab/row_norm.h"

#include <stdexcept>

namespace attention_lab {

std::string attribution_unsupported(const ModelConfig& c) {
  if (c.post_norms)
    return "this model norms the attention's and the MLP's outputs before adding them to the residual stream, so the "
           "stream is not a sum of the heads' and MLPs' outputs: direct logit attribution does not apply";
  return {};
}

namespace {

using Vec = Eigen::VectorXd;

// The unembedding's column for `token` (and its bias), minus `minus`'s.
Vec unembedding_direction(const TransformerModel& model, int token, int minus, double& bias) {
  const int d = model.config.d_model;
  Vec u(d);
  for (int i = 0; i < d; ++i)
    u(i) = static_cast<double>(model.lm_head.at(i, token) - (minus >= 0 ? model.lm_head.at(i, minus) : 0.0f));
  const bool has_bias = model.lm_head.bias.size() > 0;
  bias = has_bias ? static_cast<double>(model.lm_head.bias(token)) - (minus >= 0 ? static_cast<double>(model.lm_head.bias(minus)) : 0.0)
                  : 0.0;
  return u;
}

Vec to_double(const Eigen::Ref<const RowVector>& r) { return r.transpose().cast<double>(); }

}  // namespace

LogitAttribution direct_logit_attribution(const TransformerModel& model, const RunCache& run, int row, int token,
                                          int minus) {
  const ModelConfig& c = model.config;
  if (std::string e = attribution_unsupported(c); !e.empty()) throw std::invalid_argument(e);
  const int T = static_cast<int>(run.ids.size());
  if (row < 0 || row >= T) throw std::invalid_argument("row " + std::to_string(row) + ": expected 0 to " + std::to_string(T - 1));
  for (const int t : {token, minus})
    if (t >= c.vocab || (t < 0 && t != minus))
      throw std::invalid_argument("token " + std::to_string(t) + ": expected 0 to " + std::to_string(c.vocab - 1));

  LogitAttribution a;
  a.row = row;
  a.token = token;
  a.minus = minus;
  double bias = 0.0;
  const Vec u = unembedding_direction(model, token, minus, bias);
  // The final norm, linear once its scale is fixed at this run's value:
  // norm(x) = (x − mean x)·s ⊙ w + b, so a part p of x adds (p − mean p)·s ⊙ w.
  // Its dot with u is p · g with g = s·(w ⊙ u − mean(w ⊙ u)) (mean-free
  // for LayerNorm; RMSNorm has no centring).
  const Norm& f = model.final_norm;
  const float* x = run.resid.back().row(row).data();
  const RowStatistics st = row_statistics(f, x, c.d_model);
  const double scale = static_cast<double>(inverse_root(st.spread, f.eps));
  Vec wu = to_double(f.weight).cwiseProduct(u);
  if (!f.rms) wu.array() -= wu.mean();
  const double divisor = c.logits_divisor;
  const Vec g = wu * (scale / divisor);
  a.constant = ((f.rms || f.bias.size() == 0 ? 0.0 : to_double(f.bias).dot(u)) + bias) / divisor;
  a.embeddings = to_double(run.resid.front().row(row)).dot(g);
  a.heads = Eigen::MatrixXd::Zero(c.layers, c.heads);
  a.attention_bias = Vec::Zero(c.layers);
  a.mlp = Vec::Zero(c.layers);
  const double residual = c.parallel_residual ? 1.0 : static_cast<double>(c.residual_scale);
  for (int l = 0; l < c.layers; ++l) {
    const TransformerLayer& L = model.layers[static_cast<std::size_t>(l)];
    // W_o·g: each head's z row dotted with its block gives the head's part.
    Vec og(L.o.in());
    for (int i = 0; i < L.o.in(); ++i) {
      double sum = 0.0;
      for (int o = 0; o < c.d_model; ++o) sum += static_cast<double>(L.o.at(i, o)) * g(o);
      og(i) = sum;
    }
    const Vec z = to_double(run.z[static_cast<std::size_t>(l)].row(row));
    for (int h = 0; h < c.heads; ++h)
      a.heads(l, h) = residual * z.segment(static_cast<Eigen::Index>(h) * c.d_head, c.d_head).dot(og.segment(static_cast<Eigen::Index>(h) * c.d_head, c.d_head));
    if (L.o.bias.size() > 0) a.attention_bias(l) = residual * to_double(L.o.bias).dot(g);
    a.mlp(l) = to_double(run.mlp_out[static_cast<std::size_t>(l)].row(row)).dot(g);  // already scaled by the sum's factor
  }
  // The model's own logit, before any soft-cap.
  Matrix normed = normalize(f, run.resid.back().middleRows(row, 1));
  a.logit = (to_double(normed.row(0)).dot(u) + bias) / divisor;
  return a;
}

}  // namespace attention_lab
