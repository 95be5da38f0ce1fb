#pragma once
// One run of a model keeping what the interpretability operations read:
// every layer's input (the residual stream), the heads' contexts (z), what
// the attention and the MLP add to the residual stream and, where asked,
// the attention's q, k, v and patterns — TransformerLens's ActivationCache
// for the hook points ablation, patching and attribution use.

#include "attention_lab/transformer_forward.h"

#include <functional>
#include <span>
#include <vector>

namespace attention_lab {

struct RunCache {
  std::vector<int> ids;
  std::vector<Matrix> resid;     // layers + 1: resid[l] = layer l's input; resid[layers] = the last layer's output
  std::vector<Matrix> z;         // per layer, T × heads·d_head (hook_z)
  std::vector<Matrix> attn_out;  // per layer, T × d_model: what the attention adds (hook_attn_out)
  std::vector<Matrix> mlp_out;   // per layer, T × d_model: what the MLP adds (hook_mlp_out)
  std::vector<AttentionDetail> attention;  // per layer when asked (q, k, v before RoPE; weights), else empty
};

// Which attention intermediates a run keeps besides the residual stream, z
// and the outputs: q, k, v and the weights cost T² per head.
enum class CacheAttention { None, Everything };

// Runs `ids` (checked by the caller: check_ids) through every layer; hooks[l]
// (when `hooks` has that layer) intervenes in layer l, and the cache holds
// the values as they were after the interventions.
RunCache run_with_cache(const TransformerModel& model, std::span<const int> ids, CacheAttention attention,
                        std::span<const LayerHooks> hooks = {});

// Layer l's hooks with a layer's own recording added: the values reach the
// cache after `own` has changed them.
LayerHooks recording_hooks(const LayerHooks& own, RunCache& cache, int layer);

// The logits of one row of the last layer's output, as logits() computes
// them (final norm, unembedding, any divisor and soft-cap).
RowVector row_logits(const TransformerModel& model, const Matrix& last_output, int row);

}  // namespace attention_lab
