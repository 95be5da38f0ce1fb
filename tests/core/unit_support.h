#pragma once
// Helpers for the unit and property tests: exact comparisons of scenarios and
// engines, and seeded random scenarios of any size.

#include "attention_lab/engine.h"
#include "attention_lab/scenario.h"
#include "attention_lab/seeded_fill.h"
#include "attention_lab/stage_registry.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace attention_lab::test {

inline constexpr float kInf = std::numeric_limits<float>::infinity();

// Stage ids as the tests write them: in(StageKind::X), head(StageKind::Weights, 2).
inline StageId in(StageKind k) { return StageId::input(k); }
inline StageId head(StageKind k, int h = 0) { return StageId::of_head(k, h); }

// An engine that computed `s` from scratch.
inline Engine computed(const Scenario& s) {
  Engine e;
  e.recompute_all(s);
  return e;
}

// n as 8 little-endian bytes (a safetensors header's length).
inline std::string u64_le(std::uint64_t n) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xffu);
  return out;
}

// Same shape and the same bits in every cell (so −∞ equals −∞, NaN equals NaN
// and −0 differs from +0: "exactly the same float operations").
inline ::testing::AssertionResult matrices_identical(MatrixView a, MatrixView b, const std::string& label) {
  if (a.rows() != b.rows() || a.cols() != b.cols())
    return ::testing::AssertionFailure() << label << ": shape " << a.rows() << "x" << a.cols() << " vs " << b.rows()
                                         << "x" << b.cols();
  for (Eigen::Index r = 0; r < a.rows(); ++r)
    for (Eigen::Index c = 0; c < a.cols(); ++c) {
      const float x = a(r, c), y = b(r, c);
      if (std::memcmp(&x, &y, sizeof x) != 0)
        return ::testing::AssertionFailure() << label << "[" << r << "][" << c << "]: " << x << " vs " << y;
    }
  return ::testing::AssertionSuccess();
}

// Every field of two scenarios, exactly: what undo and a file round trip must preserve.
inline ::testing::AssertionResult scenarios_identical(const Scenario& a, const Scenario& b) {
  auto fail = [] { return ::testing::AssertionFailure(); };
  if (a.title != b.title) return fail() << "title: '" << a.title << "' vs '" << b.title << "'";
  if (a.description != b.description) return fail() << "description differs";
  if (a.tokens != b.tokens) return fail() << "tokens differ (" << a.tokens.size() << " vs " << b.tokens.size() << ")";
  if (a.features != b.features)
    return fail() << "features differ (" << a.features.size() << " vs " << b.features.size() << ")";
  const std::pair<const char*, const SharedMatrix Scenario::*> matrices[] = {
      {"X", &Scenario::X},     {"W_q", &Scenario::W_q}, {"W_k", &Scenario::W_k},
      {"W_v", &Scenario::W_v}, {"W_o", &Scenario::W_o}, {"b_q", &Scenario::b_q},
      {"b_k", &Scenario::b_k}, {"b_v", &Scenario::b_v}, {"b_o", &Scenario::b_o},
      {"custom_mask", &Scenario::custom_mask}, {"X_kv", &Scenario::X_kv}, {"sinks", &Scenario::sinks},
      {"q_norm", &Scenario::q_norm}, {"k_norm", &Scenario::k_norm}};
  for (const auto& [name, member] : matrices)
    if (auto r = matrices_identical((a.*member).get(), (b.*member).get(), name); !r) return r;
  if (a.heads != b.heads) return fail() << "heads: " << a.heads << " vs " << b.heads;
  if (a.mask_kind != b.mask_kind)
    return fail() << "mask kind: " << to_string(a.mask_kind) << " vs " << to_string(b.mask_kind);
  if (a.window != b.window) return fail() << "window: " << a.window << " vs " << b.window;
  if (a.scale != b.scale) return fail() << "scale differs";
  if (a.score_scale != b.score_scale) return fail() << "scale_factor: " << a.score_scale << " vs " << b.score_scale;
  if (a.qk_norm != b.qk_norm) return fail() << "qk_norm differs";
  if (a.alibi != b.alibi) return fail() << "alibi differs";
  if (a.kv_heads != b.kv_heads) return fail() << "kv_heads: " << a.kv_heads << " vs " << b.kv_heads;
  if (a.rope != b.rope) return fail() << "rope differs";
  if (a.temperature != b.temperature) return fail() << "temperature: " << a.temperature << " vs " << b.temperature;
  if (a.use_bias != b.use_bias) return fail() << "use_bias differs";
  if (a.use_w_o != b.use_w_o) return fail() << "use_w_o differs";
  if (a.use_output_bias != b.use_output_bias) return fail() << "use_output_bias differs";
  if (a.seed != b.seed) return fail() << "seed differs";
  if (a.pins != b.pins) return fail() << "pins differ (" << a.pins.size() << " vs " << b.pins.size() << ")";
  if (a.unknown_fields != b.unknown_fields) return fail() << "unknown fields differ";
  return ::testing::AssertionSuccess();
}

// Every stage the engine shows for a scenario of these dimensions (the
// registry's kinds, every head of the per-head ones; inputs left out).
inline std::vector<StageId> all_stages(const Dims& d) {
  std::vector<StageId> out;
  for (const StageSpec& sp : attention_lab::all_stages()) {
    if (sp.member) continue;  // the scenario's own matrices
    if (!sp.per_head) out.push_back(StageId::input(sp.kind));
    for (int h = 0; sp.per_head && h < d.heads; ++h) out.push_back(StageId::of_head(sp.kind, h));
  }
  return out;
}

// Every stage and every warning of two engines, bit for bit.
inline ::testing::AssertionResult engines_identical(const Engine& a, const Engine& b) {
  if (!(a.dims() == b.dims())) return ::testing::AssertionFailure() << "dims differ";
  for (const StageId id : all_stages(a.dims()))
    if (auto r = matrices_identical(a.stage(id), b.stage(id), to_string(id)); !r) return r;
  if (a.warnings().size() != b.warnings().size())
    return ::testing::AssertionFailure() << "warnings: " << a.warnings().size() << " vs " << b.warnings().size();
  for (std::size_t i = 0; i < a.warnings().size(); ++i)
    if (a.warnings()[i].message != b.warnings()[i].message)
      return ::testing::AssertionFailure() << "warning " << i << ": '" << a.warnings()[i].message << "' vs '"
                                           << b.warnings()[i].message << "'";
  return ::testing::AssertionSuccess();
}

// Same shape, and every cell within `rel` of the largest finite magnitude of
// that stage in `b` (non-finite cells must match exactly: −∞ where masked, NaN
// where NaN). The engine updates stages incrementally after single-cell edits
// (see engine.h): those round differently from a full recompute, so an
// incrementally updated engine is compared with a fresh one this way.
inline ::testing::AssertionResult matrices_near_stage(MatrixView a, MatrixView b, double rel,
                                                      const std::string& label, double scale_floor = 0.0) {
  if (a.rows() != b.rows() || a.cols() != b.cols())
    return ::testing::AssertionFailure() << label << ": shape " << a.rows() << "x" << a.cols() << " vs " << b.rows()
                                         << "x" << b.cols();
  double scale = scale_floor;
  for (Eigen::Index r = 0; r < b.rows(); ++r)
    for (Eigen::Index c = 0; c < b.cols(); ++c)
      if (std::isfinite(b(r, c))) scale = std::max(scale, std::abs(static_cast<double>(b(r, c))));
  const double tol = rel * std::max(scale, 1e-30);
  for (Eigen::Index r = 0; r < a.rows(); ++r)
    for (Eigen::Index c = 0; c < a.cols(); ++c) {
      const double x = a(r, c), y = b(r, c);
      const bool same_class = std::isnan(x) == std::isnan(y) && (std::isinf(x) || std::isinf(y) ? x == y : true);
      if (!same_class || (std::isfinite(x) && !(std::abs(x - y) <= tol)))
        return ::testing::AssertionFailure() << label << "[" << r << "][" << c << "]: " << x << " vs " << y
                                             << " (difference " << std::abs(x - y) << ", allowed " << tol << ")";
    }
  return ::testing::AssertionSuccess();
}

// Every stage within `rel` of the stage's largest magnitude (see above), and
// the same warnings word for word.
inline ::testing::AssertionResult engines_near(const Engine& a, const Engine& b, double rel = 1e-5) {
  if (!(a.dims() == b.dims())) return ::testing::AssertionFailure() << "dims differ";
  for (const StageId id : all_stages(a.dims())) {
    // A score is a dot product: two float computations of it differ by about
    // an ulp of its terms q_i·k_i, however much they cancel. So scores (and
    // the scaled and masked ones) are compared relative to max|q|·max|k| when
    // that is larger than the scores themselves.
    double floor = 0.0;
    if (id.kind == StageKind::Scores || id.kind == StageKind::Scaled || id.kind == StageKind::Masked) {
      const MatrixView q = b.stage(StageId::of_head(StageKind::HeadQ, id.head));
      const MatrixView k = b.stage(StageId::of_head(StageKind::HeadK, id.head));
      if (q.size() > 0 && k.size() > 0 && q.allFinite() && k.allFinite())
        floor = static_cast<double>(q.cwiseAbs().maxCoeff()) * static_cast<double>(k.cwiseAbs().maxCoeff());
    }
    if (auto r = matrices_near_stage(a.stage(id), b.stage(id), rel, to_string(id), floor); !r) return r;
  }
  if (a.warnings().size() != b.warnings().size())
    return ::testing::AssertionFailure() << "warnings: " << a.warnings().size() << " vs " << b.warnings().size();
  for (std::size_t i = 0; i < a.warnings().size(); ++i)
    if (a.warnings()[i].message != b.warnings()[i].message)
      return ::testing::AssertionFailure() << "warning " << i << ": '" << a.warnings()[i].message << "' vs '"
                                           << b.warnings()[i].message << "'";
  return ::testing::AssertionSuccess();
}

struct RandomOptions {
  int T = 4, d_model = 5, heads = 2, d_k = 3, d_v = 2;
  bool bias = false, w_o = false, b_o = false;
  MaskKind mask = MaskKind::None;
  int d_out = 0;  // 0: d_model
  int kv_heads = 0;  // 0: one per query head
  bool rope = false;
  RopePairs pairs = RopePairs::Half;
  int rope_dims = 0;  // partial rotary: the dimensions of a head RoPE turns (0: all)
  QkNormScope qk_norm = QkNormScope::Off;  // gains drawn around 1
  float softcap = 0.0f;                    // Gemma 2's soft-cap of the scaled scores (0: none)
  float score_scale = 0.0f;                // the scores' own factor instead of 1/√d_k (0: none)
};

// A valid scenario with uniform values in [-1, 1) drawn from `seed`.
inline Scenario random_scenario(std::uint32_t seed, const RandomOptions& o) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  auto fill = [&](int r, int c) {
    Matrix m(r, c);
    for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = u(rng);
    return m;
  };
  Scenario s;
  s.title = "random " + std::to_string(seed);
  s.X = fill(o.T, o.d_model);
  s.W_q = fill(o.d_model, o.heads * o.d_k);
  const int kv = o.kv_heads > 0 ? o.kv_heads : o.heads;
  s.W_k = fill(o.d_model, kv * o.d_k);
  s.W_v = fill(o.d_model, kv * o.d_v);
  s.heads = o.heads;
  s.kv_heads = o.kv_heads == o.heads ? 0 : o.kv_heads;
  s.rope.on = o.rope;
  s.rope.pairs = o.pairs;
  s.rope.dims = o.rope_dims;
  if (o.bias) {
    s.use_bias = true;
    s.b_q = fill(1, o.heads * o.d_k);
    s.b_k = fill(1, kv * o.d_k);
    s.b_v = fill(1, kv * o.d_v);
  }
  const int d_out = o.d_out > 0 ? o.d_out : o.d_model;
  if (o.w_o) {
    s.use_w_o = true;
    s.W_o = fill(o.heads * o.d_v, d_out);
  }
  if (o.b_o) {
    s.use_output_bias = true;
    s.b_o = fill(1, o.w_o ? d_out : o.heads * o.d_v);
  }
  if (o.qk_norm != QkNormScope::Off) {
    s.qk_norm.scope = o.qk_norm;
    const bool whole = o.qk_norm == QkNormScope::Whole;
    s.q_norm = (fill(1, whole ? o.heads * o.d_k : o.d_k).array() * 0.5f + 1.0f).matrix();
    s.k_norm = (fill(1, whole ? kv * o.d_k : o.d_k).array() * 0.5f + 1.0f).matrix();
  }
  s.softcap = o.softcap;
  s.score_scale = o.score_scale;
  s.mask_kind = o.mask;
  if (o.mask == MaskKind::Window) s.window = std::max(1, o.T / 2);
  if (o.mask == MaskKind::Custom) {
    s.custom_mask = Matrix::Ones(o.T, o.T);
    std::bernoulli_distribution off(0.3);
    for (Eigen::Index i = 0; i < s.custom_mask.size(); ++i) s.custom_mask.edit().data()[i] = off(rng) ? 0.0f : 1.0f;
  }
  s.seed = seed;
  return s;
}

// A small matrix from rows of values.
inline Matrix rows_of(std::initializer_list<std::initializer_list<float>> values) {
  Matrix m(static_cast<Eigen::Index>(values.size()), static_cast<Eigen::Index>(values.begin()->size()));
  Eigen::Index i = 0;
  for (const auto& row : values) {
    Eigen::Index j = 0;
    for (float v : row) m(i, j++) = v;
    ++i;
  }
  return m;
}

}  // namespace attention_lab::test
