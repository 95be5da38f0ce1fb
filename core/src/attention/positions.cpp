// Grouped-query heads (which query heads read a K/V head) and RoPE (Q and K
// turned by position): the tables and the rotation every path shares, so a
// rotated cell is the same float whichever path computed it.

#include "attention/engine_internal.h"

#include <cmath>
#include <numbers>

namespace attention_lab {

using namespace engine_detail;

std::vector<int> Engine::heads_of_block(StageKind kind, int block) const {
  std::vector<int> out;
  if (kind == StageKind::Q) {
    out.push_back(block);
    return out;
  }
  for (int h = 0; h < dims_.heads; ++h)
    if (kv(h) == block) out.push_back(h);
  return out;
}

// A block of Q, K or V changed: the version of every head's view of it.
void Engine::bump_block(StageKind kind, int block, bool full) {
  for (int h : heads_of_block(kind, block)) bump(kind, h, full);
}

// The cos/sin tables for the scenario's RoPE settings, T and d_k: computed in
// double (as the float64 reference does) and rounded once. Unrotated copies
// of Q and K exist only while RoPE is on.
void Engine::refresh_rope() {
  const Scenario& s = *scenario_;
  rope_on_ = s.rope.on && dims_.d_k % 2 == 0;
  if (!rope_on_) {
    Qu_.resize(0, 0);
    Ku_.resize(0, 0);
    rope_angle_.resize(0, 0);
    rope_T_ = -1;
    return;
  }
  const int width = rotary_width(s.rope, dims_.d_k);  // the dimensions it turns
  const Index T = std::max(dims_.T, dims_.T_k), half = width / 2;  // positions of queries and of keys
  if (rope_T_ == T && rope_dk_ == dims_.d_k && rope_ == s.rope) return;
  rope_cos_.resize(T, half);
  rope_sin_.resize(T, half);
  rope_angle_.resize(T, half);
  for (Index p = 0; p < T; ++p)
    for (Index k = 0; k < half; ++k) {
      const double angle = rope_angle(s.rope, width, static_cast<int>(k), static_cast<int>(p));
      rope_cos_(p, k) = static_cast<float>(std::cos(angle));
      rope_sin_(p, k) = static_cast<float>(std::sin(angle));
      rope_angle_(p, k) = static_cast<float>(std::remainder(angle, 2.0 * std::numbers::pi));  // in [−π, π]
    }
  rope_ = s.rope;
  rope_T_ = T;
  rope_dk_ = dims_.d_k;
  bump(StageKind::RopeAngle, 0, true);
}

// out = in turned pair by pair: (a, b) → (a·cos − b·sin, b·cos + a·sin), with
// pair k being dimensions (k, k + rot/2) or (2k, 2k + 1) of the first `rot`;
// the dimensions past them are copied.
void engine_detail::rotate_head(const float* in, float* out, const float* c, const float* s, Index dk, Index rot,
                                RopePairs pairs) {
  const Index half = rot / 2;
  for (Index k = 0; k < half; ++k) {
    const auto [i, j] = rope_pair(pairs, static_cast<int>(rot), static_cast<int>(k));
    const float a = in[i], b = in[j];
    out[i] = a * c[k] - b * s[k];
    out[j] = b * c[k] + a * s[k];
  }
  if (out != in)
    for (Index d = rot; d < dk; ++d) out[d] = in[d];
}

void Engine::rotate_rows(StageKind kind, Index r0, Index rows, Index first, Index width) {
  const Matrix& in = unrotated(kind);
  Matrix& out = projection(kind);
  const Index dk = dims_.d_k;
  for (Index r = r0; r < r0 + rows; ++r)
    for (Index c0 = first; c0 < first + width; c0 += dk)
      rotate_head(in.row(r).data() + c0, out.row(r).data() + c0, rope_cos_.row(r).data(), rope_sin_.row(r).data(), dk,
                  dims_.rotary_dims(), rope_.pairs);
}

Index Engine::rotate_column_pair(StageKind kind, Index c) {
  const Index dk = dims_.d_k, c0 = c / dk * dk;
  for (Index r = 0; r < projection(kind).rows(); ++r) {
    rotate_rows(kind, r, 1, c0, dk);
    apply_projection_pins(kind, r, c0, dk);
  }
  return c0 + rope_partner(rope_.pairs, dims_.rotary_dims(), static_cast<int>(c - c0));
}

}  // namespace attention_lab
