#pragma once
// Seeded random edits of every kind, for the incremental and undo tests. Most
// are valid for the scenario they are drawn for; a few are not (an inactive
// bias, d_out without W_o), which exercises the error path too.

#include "attention_lab/document.h"
#include "attention_lab/edit.h"
#include "attention_lab/scenario.h"
#include "attention_lab/stage_registry.h"

#include "unit_support.h"

#include <gtest/gtest.h>

#include <random>

namespace attention_lab::test {

class RandomEdits {
 public:
  explicit RandomEdits(std::uint32_t seed) : rng_(seed) {}

  // Dimension changes are drawn only when `resize` is set: they replace the
  // whole scenario, so tests about finer invalidation can leave them out.
  Edit next(const Scenario& s, bool resize = true) {
    const Dims d = s.dims();
    const int kind = pick(0, resize ? 11 : 10);
    switch (kind) {
      case 0: case 1: case 2: {  // an input cell (the most common edit)
        static constexpr StageKind inputs[] = {StageKind::X,   StageKind::W_q,   StageKind::W_k,  StageKind::W_v,
                                               StageKind::b_q, StageKind::b_k,   StageKind::b_v,  StageKind::W_o,
                                               StageKind::b_o, StageKind::Mask,  StageKind::Sinks, StageKind::X_kv,
                                               StageKind::QNorm, StageKind::KNorm};
        const StageKind k = inputs[pick(0, 13)];
        const Matrix m = input_of(s, k);
        if (m.size() == 0) return SetTemperature{value(0.5f, 2.0f)};
        const int r = pick(0, static_cast<int>(m.rows()) - 1), c = pick(0, static_cast<int>(m.cols()) - 1);
        return SetCell{StageId::input(k), r, c, k == StageKind::Mask ? static_cast<float>(pick(0, 1)) : value(-2, 2)};
      }
      case 3: case 4: return random_pin(d);
      case 5: return SetToggle{static_cast<Toggle>(pick(0, 5)), pick(0, 1) == 1};
      case 6:
        if (pick(0, 2) == 0) {  // RoPE on or off (refused with an odd d_k), θ, pairing
          Rope r;
          r.on = pick(0, 2) > 0;
          r.theta = pick(0, 1) ? 10000.0f : 100.0f;
          r.pairs = pick(0, 1) ? RopePairs::Half : RopePairs::Interleaved;
          return SetRope{r};
        }
        if (pick(0, 3) == 0) return SetSoftcap{pick(0, 1) ? 0.0f : value(0.5f, 3.0f)};  // Gemma 2's soft-cap, or none
        if (pick(0, 2) == 0) {  // the q/k norm off, per head or over the whole row
          QkNorm n;
          n.scope = static_cast<QkNormScope>(pick(0, 2));
          n.eps = pick(0, 1) ? 1e-6f : 0.25f;
          return SetQkNorm{n};
        }
        return SetTemperature{value(0.25f, 4.0f)};
      case 7: {
        const auto kind_of = static_cast<MaskKind>(pick(0, 3));
        if (kind_of == MaskKind::Window) return SetMask{kind_of, std::nullopt, pick(1, d.T + 1)};
        if (kind_of == MaskKind::Custom && pick(0, 1)) {
          Matrix m(d.T, d.T_k);
          for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = static_cast<float>(pick(0, 1));
          return SetMask{kind_of, m};
        }
        return SetMask{kind_of, std::nullopt};
      }
      case 8: {
        if (pick(0, 3) == 0) return SetPins{};
        std::map<PinKey, float> pins;
        for (int i = pick(1, 3); i > 0; --i)
          if (auto p = std::get<SetPin>(random_pin(d)); p.value && canonical(p.key.stage.kind)) pins[p.key] = *p.value;
        return SetPins{pins};
      }
      case 9:
        if (pick(0, 2) == 0) return SetFeatureLabel{pick(0, d.d_model - 1), pick(0, 1) ? "f" + std::to_string(pick(0, 99)) : ""};
        return SetTokenLabel{pick(0, d.T - 1), pick(0, 1) ? "tok" + std::to_string(pick(0, 99)) : ""};
      case 10: {  // a whole matrix
        const StageKind k = pick(0, 1) ? StageKind::X : StageKind::W_v;
        Matrix m = input_of(s, k);
        for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = value(-1, 1);
        return SetMatrix{StageId::input(k), m, "randomize"};
      }
      default: {
        const auto which = static_cast<Dimension>(pick(0, 6));
        return SetDimension{which, pick(1, which == Dimension::heads || which == Dimension::kv_heads ? 4 : 5)};
      }
    }
  }

  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  float value(float lo, float hi) {
    // quarter steps: exact in float, so nothing depends on rounding of the inputs
    return static_cast<float>(pick(static_cast<int>(lo * 4), static_cast<int>(hi * 4))) / 4.0f;
  }

 private:
  static bool canonical(StageKind k) {
    return k != StageKind::HeadQ && k != StageKind::HeadK && k != StageKind::HeadV && k != StageKind::Concat;
  }

  static Matrix input_of(const Scenario& s, StageKind k) {
    if (k == StageKind::Mask) return s.effective_mask();
    const auto member = spec(k).member;  // the registry knows where each input lives
    return member ? (s.*member).get() : Matrix();
  }

  Edit random_pin(const Dims& d) {
    static constexpr StageKind kinds[] = {StageKind::Q,       StageKind::K,       StageKind::V,      StageKind::HeadQ,
                                          StageKind::HeadK,   StageKind::HeadV,   StageKind::Scores, StageKind::Scaled,
                                          StageKind::Masked,  StageKind::Weights, StageKind::Context, StageKind::Concat,
                                          StageKind::Output};
    const StageKind k = kinds[pick(0, 12)];
    const int h = pick(0, d.heads - 1);
    const StageId id = is_per_head(k) ? StageId::of_head(k, h) : StageId::input(k);
    // the registry's shape (K and V have T_k rows with cross-attention)
    const int r = pick(0, std::max(stage_rows(k, d), 1) - 1), c = pick(0, std::max(stage_cols(k, d), 1) - 1);
    const bool unpin = pick(0, 4) == 0;
    return SetPin{{id, r, c}, unpin ? std::nullopt : std::optional<float>(value(-3, 3))};
  }

  std::mt19937 rng_;
};

// Applies `count` random edits from `seed` to a document of `start` (those
// `keep` refuses are skipped) and compares its engine with a full recompute
// of where it ended: the incremental paths against the plain ones.
template <typename Keep>
::testing::AssertionResult random_edits_match_full_recompute(const Scenario& start, std::uint32_t seed, int count,
                                                             Keep keep) {
  Document doc(start);
  RandomEdits edits(seed);
  for (int i = 0; i < count; ++i)
    if (Edit e = edits.next(doc.scenario()); keep(e)) doc.apply(e);
  Engine fresh;
  fresh.recompute_all(doc.scenario());
  return engines_near(doc.engine(), fresh) << " (seed " << seed << ")";
}
inline ::testing::AssertionResult random_edits_match_full_recompute(const Scenario& start, std::uint32_t seed,
                                                                    int count) {
  return random_edits_match_full_recompute(start, seed, count, [](const Edit&) { return true; });
}

}  // namespace attention_lab::test
