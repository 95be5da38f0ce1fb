#include "logic/signed_bars.h"

#include <algorithm>
#include <cmath>

namespace attention_lab::gui {

float BarScale::zero_at(float height) const { return height * (hi / (hi - lo)); }

BarScale bar_scale(Eigen::Ref<const RowVector> values, bool probability) {
  BarScale s{0.0f, probability ? 1.0f : 0.0f};
  for (Eigen::Index i = 0; i < values.size(); ++i)
    if (std::isfinite(values[i])) s.lo = std::min(s.lo, values[i]), s.hi = std::max(s.hi, values[i]);
  // An all-zero row (or one of only −∞) still needs a height to divide by.
  if (s.hi - s.lo < 1e-12f) s.hi = s.lo + 1.0f;
  return s;
}

Bar bar_for(float value, const BarScale& scale, float height) {
  const float zero = scale.zero_at(height);
  if (std::isinf(value) && value < 0) return {BarKind::MinusInfinity, zero, zero};
  if (!std::isfinite(value)) return {BarKind::NotANumber, zero, zero};
  const float y = height * ((scale.hi - value) / (scale.hi - scale.lo));
  if (value > 0) return {BarKind::Up, y, zero};
  if (value < 0) return {BarKind::Down, zero, y};
  return {BarKind::Flat, zero, zero};
}

Rgb signed_bar_colour(float value) { return diverging(value < 0 ? -0.8f : 0.8f); }

}  // namespace attention_lab::gui
