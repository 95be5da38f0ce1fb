#pragma once
// Ablation: a head's output (its z, so its share of the attention's result),
// a whole layer's attention or MLP output, at every position or at one,
// replaced by zero or by its mean — the mean over the positions of the runs
// given (TransformerLens users take it over a batch of prompts; a single
// prompt's positions are the batch here).

#include "attention_lab/run_cache.h"

#include <span>
#include <string>
#include <vector>

namespace attention_lab {

enum class AblationTarget { Head, Attention, Mlp };
enum class AblationMode { Zero, Mean };

// "head", "attention", "mlp"; "zero", "mean".
const char* to_string(AblationTarget target);
const char* to_string(AblationMode mode);

struct Ablation {
  AblationTarget target = AblationTarget::Head;
  AblationMode mode = AblationMode::Zero;
  int layer = 0;
  int head = 0;       // for AblationTarget::Head
  int position = -1;  // −1: every position
  friend bool operator==(const Ablation&, const Ablation&) = default;
};

// The ablation as a spec: L3H1 (head 1 of layer 3), L3.attn (the layer's
// attention output), L3.mlp; then @P for position P only, and :mean for mean
// ablation (:zero, the default, is left out). "L3H1", "L2.mlp@5:mean".
std::string to_spec(const Ablation& a);
// Reads a spec as to_spec writes it; "" or what is wrong with it.
std::string parse_ablation(const std::string& spec, Ablation& out);

// "" when the ablation names a layer, head and position the model and a
// sequence of T tokens have; else which one, expected and found.
std::string check(const Ablation& a, const ModelConfig& config, int T);

// The mean row of every hooked activation over the positions of the runs.
struct ActivationMeans {
  std::vector<RowVector> z, attn_out, mlp_out;  // per layer
};
ActivationMeans activation_means(std::span<const RunCache> runs);

// Per layer, the hooks that apply `ablations` (each checked); `means` is
// read by the Mean ones. Layers without an ablation get no hooks.
std::vector<LayerHooks> ablation_hooks(const ModelConfig& config, std::span<const Ablation> ablations,
                                       const ActivationMeans& means);

}  // namespace attention_lab
