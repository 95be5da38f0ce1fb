#include "logic/provenance.h"

namespace attention_lab::gui {

std::vector<Lit> provenance(const Scenario& s, StageId id, int r, int c) {
  const Dims d = s.dims();
  const int h = id.head;
  auto head = [&](StageKind k) { return StageId::of_head(k, h); };
  auto layer = [](StageKind k) { return StageId::input(k); };
  std::vector<Lit> out;
  auto projection = [&](StageKind W, StageKind b, int col) {
    out.push_back({layer(StageKind::X), r, -1, -1, -1});
    out.push_back({layer(W), -1, col, -1, -1});
    if (s.use_bias) out.push_back({layer(b), -1, -1, 0, col});
  };
  switch (id.kind) {
    case StageKind::Q: projection(StageKind::W_q, StageKind::b_q, c); break;
    case StageKind::K: projection(StageKind::W_k, StageKind::b_k, c); break;
    case StageKind::V: projection(StageKind::W_v, StageKind::b_v, c); break;
    case StageKind::HeadQ:
      projection(StageKind::W_q, StageKind::b_q, h * d.d_k + c);
      out.push_back({layer(StageKind::Q), -1, -1, r, h * d.d_k + c});
      break;
    case StageKind::HeadK:
      projection(StageKind::W_k, StageKind::b_k, h * d.d_k + c);
      out.push_back({layer(StageKind::K), -1, -1, r, h * d.d_k + c});
      break;
    case StageKind::HeadV:
      projection(StageKind::W_v, StageKind::b_v, h * d.d_v + c);
      out.push_back({layer(StageKind::V), -1, -1, r, h * d.d_v + c});
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
