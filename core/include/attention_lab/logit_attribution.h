#pragma once
// Direct logit attribution: how much each head, each attention's output
// bias, each MLP and the embeddings add to one token's logit (or to the
// difference of two tokens' logits) at one position, directly — through the
// final norm with its scale frozen at the run's value (TransformerLens's
// apply_ln_to_stack) and the unembedding, not through later layers.
//
// The parts sum to the logit exactly (to float rounding): logit = constant
// (the final norm's bias and the unembedding's through the token's column)
// + embeddings + Σ heads + Σ attention biases + Σ MLPs. Where the model
// soft-caps its logits the parts add up to the logit before the cap.

#include "attention_lab/run_cache.h"

#include <Eigen/Core>

#include <span>
#include <string>

namespace attention_lab {

struct LogitAttribution {
  int row = 0;
  int token = 0;
  int minus = -1;          // the second token of a difference, or −1
  double logit = 0.0;      // the model's logit (or difference) before any soft-cap
  double constant = 0.0;   // what no activation adds: the biases after the last layer
  double embeddings = 0.0;
  Eigen::MatrixXd heads;           // layers × heads
  Eigen::VectorXd attention_bias;  // per layer: W_o's bias
  Eigen::VectorXd mlp;             // per layer
  double total() const { return constant + embeddings + heads.sum() + attention_bias.sum() + mlp.sum(); }
};

// "" when the model's residual stream is a sum the attribution can split (no
// norm on a layer's outputs before the residual sums); else why not.
std::string attribution_unsupported(const ModelConfig& config);

// The attribution of `token` (minus `minus` when ≥ 0) at `row` of the run.
// Checked: row within the run, tokens in the vocabulary, a supported model.
LogitAttribution direct_logit_attribution(const TransformerModel& model, const RunCache& run, int row, int token,
                                          int minus = -1);

}  // namespace attention_lab
