#pragma once
// Softmax up close: one row of one head as it goes scores → scaled → masked →
// minus the max → exp → ÷ sum → weights, with every intermediate vector, the
// max, the sum and the entropy, plus the same row at any temperature so a
// slider can preview it.

#include "attention_lab/document.h"
#include "attention_lab/matrix.h"
#include "attention_lab/softmax.h"

#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace attention_lab {

struct SoftmaxBreakdown {
  int head = 0;
  int row = 0;
  std::string error;  // set (and nothing else) when the head or row does not exist

  // The engine's own stages for this row (pins included).
  RowVector scores;   // S[row] = Q[row]·Kᵀ
  RowVector scaled;   // scores · 1/(√d_k if scaling is on)/τ
  RowVector mask;     // the mask's row: 1 where this query may attend to the key, 0 where not
  RowVector position_bias;  // ALiBi's m·(j − i) for this row; empty when ALiBi is off
  RowVector masked;   // scaled (+ position_bias), with −∞ where the mask forbids
  RowVector engine_weights;  // the engine's weights row (differs from `weights` only where weights are pinned)

  // The divisor of the scaled stage, split in its two factors.
  double scale_divisor = 1.0;  // √d_k when scaling is on, else 1
  double temperature = 1.0;
  double divisor = 1.0;        // scale_divisor · temperature
  float softcap = 0.0f;        // the scenario's soft-cap of the scaled scores (0: none)

  // The softmax, step by step, in the order softmax_row works (e^x here is
  // std::exp, so a weight may differ from the engine's in the last bit).
  float max = 0.0f;    // the largest masked score, or the sink when larger (−∞ when nothing is allowed)
  RowVector shifted;   // masked − max: every entry ≤ 0
  RowVector exps;      // e^(shifted): in (0, 1], 0 for −∞
  double sum = 0.0;    // Σ exps (+ the sink's term), in double (≥ 1: the max contributes e^0)
  float sink = -std::numeric_limits<float>::infinity();  // the head's sink logit (−∞: no sink)
  float sink_share = 0.0f;  // e^(sink − max)/sum: the part of the row the sink took
  RowVector weights;   // exps / sum
  RowIssue issue = RowIssue::None;

  // −Σ wⱼ·ln wⱼ in nats, over the weights > 0: 0 when one key takes everything,
  // ln(allowed) when the weights are uniform.
  double entropy = 0.0;
  int allowed = 0;           // keys the mask allows (masked > −∞)
  double max_entropy = 0.0;  // ln(allowed), 0 when allowed ≤ 1

  // Pins on this row, so a preview at another temperature keeps them:
  // (column, value) for the scaled, masked and weights stages.
  std::vector<std::pair<int, float>> scaled_pins, masked_pins, weight_pins;
  bool pinned() const { return !scaled_pins.empty() || !masked_pins.empty() || !weight_pins.empty(); }
};

// The breakdown of row `row` of head `head` of the document's engine.
SoftmaxBreakdown softmax_breakdown(const Document& doc, int head, int row);

// The weights of the same row if the temperature were `temperature` (> 0):
// the scores divided again, masked, softmaxed, with this row's pins laid over
// as the engine would. At the document's own temperature it gives the
// engine's weights. An empty vector when `breakdown` has an error or τ ≤ 0.
RowVector weights_at_temperature(const SoftmaxBreakdown& breakdown, double temperature);

// −Σ wⱼ·ln wⱼ (nats) over the entries > 0 of a weights row.
double entropy_of(Eigen::Ref<const RowVector> weights);

}  // namespace attention_lab
