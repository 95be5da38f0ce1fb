#include "attention_lab/softmax_breakdown.h"

#include "attention_lab/softcap.h"

#include <cmath>
#include <limits>

namespace attention_lab {

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// The engine's scaled stage: the factor is computed in double and rounded
// once; a factor too large for a float (τ near 0) divides instead.
RowVector scale_row(const RowVector& scores, double divisor) {
  const double inverse = 1.0 / divisor;
  if (inverse <= static_cast<double>(std::numeric_limits<float>::max()))
    return scores * static_cast<float>(inverse);
  return scores / static_cast<float>(divisor);
}

RowVector mask_row(const RowVector& scaled, const RowVector& mask) {
  return (mask.array() != 0.0f).select(scaled, -kInf);
}

void lay_pins(RowVector& v, const std::vector<std::pair<int, float>>& pins) {
  for (const auto& [col, value] : pins) v[col] = value;
}

}  // namespace

double entropy_of(Eigen::Ref<const RowVector> weights) {
  double h = 0.0;
  for (Eigen::Index j = 0; j < weights.size(); ++j) {
    const auto w = static_cast<double>(weights[j]);
    if (w > 0.0) h -= w * std::log(w);
  }
  return h;
}

SoftmaxBreakdown softmax_breakdown(const Document& doc, int head, int row) {
  SoftmaxBreakdown b;
  b.head = head;
  b.row = row;
  const Scenario& s = doc.scenario();
  const Dims d = s.dims();
  if (head < 0 || head >= d.heads) {
    b.error = "head: expected 0 to " + std::to_string(d.heads - 1) + ", found " + std::to_string(head);
    return b;
  }
  if (row < 0 || row >= d.T) {
    b.error = "row: expected 0 to " + std::to_string(d.T - 1) + ", found " + std::to_string(row);
    return b;
  }
  // Each stage's row is copied at once, so nothing depends on how long the engine's views live.
  const auto r = to_index(row);
  b.scores = doc.stage(StageId::of_head(StageKind::Scores, head)).row(r);
  b.scaled = doc.stage(StageId::of_head(StageKind::Scaled, head)).row(r);
  b.mask = doc.stage(StageId::input(StageKind::Mask)).row(r);
  if (s.alibi) b.position_bias = doc.stage(StageId::of_head(StageKind::PositionBias, head)).row(r);
  b.masked = doc.stage(StageId::of_head(StageKind::Masked, head)).row(r);
  b.engine_weights = doc.stage(StageId::of_head(StageKind::Weights, head)).row(r);
  if (s.use_sinks && head < s.sinks.cols()) b.sink = s.sinks(0, head);

  b.scale_divisor = score_scale_divisor(s);
  b.temperature = static_cast<double>(s.temperature);
  b.divisor = score_divisor(s);
  b.softcap = s.softcap;

  for (const auto& [key, value] : s.pins) {
    if (key.row != row || key.stage.head != head) continue;
    if (key.stage.kind == StageKind::Scaled) b.scaled_pins.emplace_back(key.col, value);
    if (key.stage.kind == StageKind::Masked) b.masked_pins.emplace_back(key.col, value);
    if (key.stage.kind == StageKind::Weights) b.weight_pins.emplace_back(key.col, value);
  }

  // The softmax of softmax_row, keeping what it computes along the way.
  const Eigen::Index n = b.masked.size();
  b.shifted = RowVector::Zero(n);
  b.exps = RowVector::Zero(n);
  b.weights = RowVector::Zero(n);
  b.max = -kInf;
  bool nan = false;
  for (Eigen::Index j = 0; j < n; ++j) {
    if (std::isnan(b.masked[j])) nan = true;
    else b.max = std::max(b.max, b.masked[j]);
    if (b.masked[j] > -kInf) ++b.allowed;
  }
  if (nan) {
    b.issue = RowIssue::NotANumber;
    b.shifted.setConstant(std::numeric_limits<float>::quiet_NaN());
    b.exps = b.shifted;
    b.weights = b.shifted;
    b.sum = std::numeric_limits<double>::quiet_NaN();
  } else if (b.max == -kInf) {
    b.issue = RowIssue::NoAllowedKey;  // every key forbidden: weights 0 by the engine's convention
    b.shifted.setConstant(-kInf);
  } else if (b.max == kInf) {
    // The limit as those scores grow: equal shares among the +∞ entries.
    b.issue = RowIssue::InfiniteScore;
    const auto count = static_cast<double>((b.masked.array() == kInf).count());
    for (Eigen::Index j = 0; j < n; ++j) {
      const bool top = b.masked[j] == kInf;
      b.shifted[j] = top ? 0.0f : -kInf;
      b.exps[j] = top ? 1.0f : 0.0f;
    }
    b.sum = count;
    b.weights = (b.masked.array() == kInf).select(RowVector::Constant(n, static_cast<float>(1.0 / count)), 0.0f);
  } else {
    for (Eigen::Index j = 0; j < n; ++j) {
      b.shifted[j] = b.masked[j] - b.max;
      b.exps[j] = std::exp(b.shifted[j]);
      b.sum += static_cast<double>(b.exps[j]);
    }
    b.weights = b.exps * static_cast<float>(1.0 / b.sum);
  }
  if (b.sink > -kInf && !nan && b.max != kInf) {
    // The sink is one more key: the offset is the larger of it and the row's
    // max, and its term joins the sum (a row the mask empties gives it all).
    const float m = std::max(b.max, b.sink);
    b.sum = std::exp(static_cast<double>(b.sink - m));
    for (Eigen::Index j = 0; j < n; ++j) {
      b.shifted[j] = b.masked[j] - m;
      b.exps[j] = std::exp(b.shifted[j]);
      b.sum += static_cast<double>(b.exps[j]);
    }
    b.max = m;
    b.weights = b.exps * static_cast<float>(1.0 / b.sum);
    b.sink_share = static_cast<float>(std::exp(static_cast<double>(b.sink - m)) / b.sum);
    if (b.issue == RowIssue::NoAllowedKey) b.issue = RowIssue::None;
  }
  lay_pins(b.weights, b.weight_pins);
  b.entropy = nan ? std::numeric_limits<double>::quiet_NaN() : entropy_of(b.weights);
  b.max_entropy = b.allowed > 1 ? std::log(static_cast<double>(b.allowed)) : 0.0;
  return b;
}

RowVector weights_at_temperature(const SoftmaxBreakdown& b, double temperature) {
  if (!b.error.empty() || !(temperature > 0.0) || !std::isfinite(temperature)) return {};
  RowVector scaled = scale_row(b.scores, b.scale_divisor * temperature);
  lay_pins(scaled, b.scaled_pins);
  if (b.softcap > 0.0f)  // Gemma 2's soft-cap, as the engine computes it
    for (Eigen::Index j = 0; j < scaled.size(); ++j) scaled[j] = softcap(scaled[j], b.softcap);
  if (b.position_bias.size() == scaled.size()) scaled += b.position_bias;  // ALiBi: masked = scaled + bias
  RowVector masked = mask_row(scaled, b.mask);
  lay_pins(masked, b.masked_pins);
  RowVector weights(masked.size());
  float share = 0.0f;
  softmax_row_with_sink(masked, b.sink, weights, share);
  lay_pins(weights, b.weight_pins);
  return weights;
}

}  // namespace attention_lab
