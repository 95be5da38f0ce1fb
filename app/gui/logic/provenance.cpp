#include "logic/provenance.h"

namespace attention_lab::gui {

std::vector<Lit> provenance(const Scenario& s, StageId id, int r, int c) {
  const Dims d = s.dims();
  const int h = id.head;
  auto head = [&](StageKind k) { return StageId::of_head(k, h); };
  auto layer = [](StageKind k) { return StageId::input(k); };
  std::vector<Lit> out;
  auto projection = [&](StageKind W, StageKind b, int col) {
    // K and V read X_kv with cross-attention
    const bool keys = W != StageKind::W_q && s.cross();
    out.push_back({layer(keys ? StageKind::X_kv : StageKind::X), r, -1, -1, -1});
    out.push_back({layer(W), -1, col, -1, -1});
    if (s.use_bias) out.push_back({layer(b), -1, -1, 0, col});
  };
  // A rotated cell of Q or K reads two cells of the row before rotation: its
  // own dimension and the one RoPE pairs it with (col: of the whole matrix).
  auto rotated = [&](StageKind unrotated, int col) {
    const int c0 = col / d.d_k * d.d_k;
    for (int dim : {col - c0, rope_partner(s.rope.pairs, d.d_k, col - c0)})
      out.push_back({layer(unrotated), -1, -1, r, c0 + dim});
  };
  // Q, K (rotated or not) or V, column `col` of the whole matrix
  auto projected = [&](StageKind kind, int col) {
    const int which = static_cast<int>(kind) - static_cast<int>(StageKind::Q);
    if (s.rope.on && kind != StageKind::V)
      rotated(kind == StageKind::Q ? StageKind::QUnrotated : StageKind::KUnrotated, col);
    else
      projection(static_cast<StageKind>(static_cast<int>(StageKind::W_q) + which),
                 static_cast<StageKind>(static_cast<int>(StageKind::b_q) + which), col);
  };
  switch (id.kind) {
    case StageKind::Q: case StageKind::K: case StageKind::V: projected(id.kind, c); break;
    case StageKind::QUnrotated: projection(StageKind::W_q, StageKind::b_q, c); break;
    case StageKind::KUnrotated: projection(StageKind::W_k, StageKind::b_k, c); break;
    case StageKind::HeadQ:
      projected(StageKind::Q, h * d.d_k + c);
      out.push_back({layer(StageKind::Q), -1, -1, r, h * d.d_k + c});
      break;
    case StageKind::HeadK:
      projected(StageKind::K, d.kv_head(h) * d.d_k + c);
      out.push_back({layer(StageKind::K), -1, -1, r, d.kv_head(h) * d.d_k + c});
      break;
    case StageKind::HeadV:
      projected(StageKind::V, d.kv_head(h) * d.d_v + c);
      out.push_back({layer(StageKind::V), -1, -1, r, d.kv_head(h) * d.d_v + c});
      break;
    case StageKind::HeadQUnrotated:
      projection(StageKind::W_q, StageKind::b_q, h * d.d_k + c);
      out.push_back({layer(StageKind::QUnrotated), -1, -1, r, h * d.d_k + c});
      break;
    case StageKind::HeadKUnrotated:
      projection(StageKind::W_k, StageKind::b_k, d.kv_head(h) * d.d_k + c);
      out.push_back({layer(StageKind::KUnrotated), -1, -1, r, d.kv_head(h) * d.d_k + c});
      break;
    case StageKind::Scores:
      // q_r · k_c: row r of Q_h and row c of K_h (a column of K_hᵀ).
      out.push_back({head(StageKind::HeadQ), r, -1, -1, -1});
      out.push_back({head(StageKind::HeadK), c, -1, -1, -1});
      break;
    case StageKind::Scaled: out.push_back({head(StageKind::Scores), -1, -1, r, c}); break;
    case StageKind::Masked:
      out.push_back({head(StageKind::Scaled), -1, -1, r, c});
      out.push_back({layer(StageKind::Mask), -1, -1, r, c});
      if (s.alibi) out.push_back({head(StageKind::PositionBias), -1, -1, r, c});
      break;
    case StageKind::Weights:
      out.push_back({head(StageKind::Masked), r, -1, r, c});
      if (s.use_sinks) out.push_back({layer(StageKind::Sinks), -1, -1, 0, h});
      break;
    case StageKind::SinkShare:
      out.push_back({head(StageKind::Masked), r, -1, -1, -1});
      out.push_back({layer(StageKind::Sinks), -1, -1, 0, h});
      break;
    case StageKind::Context:
      out.push_back({head(StageKind::Weights), r, -1, -1, -1});
      out.push_back({head(StageKind::HeadV), -1, c, -1, -1});
      break;
    case StageKind::Concat:
      if (d.d_v > 0) out.push_back({StageId::of_head(StageKind::Context, c / d.d_v), -1, -1, r, c % d.d_v});
      break;
    case StageKind::Output:
      out.push_back({layer(StageKind::Concat), r, -1, -1, -1});
      if (s.use_w_o) out.push_back({layer(StageKind::W_o), -1, c, -1, -1});
      if (s.use_output_bias) out.push_back({layer(StageKind::b_o), -1, -1, 0, c});
      break;
    default: break;  // inputs are made from nothing
  }
  return out;
}

}  // namespace attention_lab::gui
