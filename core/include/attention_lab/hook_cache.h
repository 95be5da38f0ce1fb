#pragma once
// Every activation of a run by its TransformerLens hook name, to write as
// safetensors (or .npy) that numpy and torch read directly:
//
//   hook_embed, hook_pos_embed                 [pos, d_model] (× the model's embedding scale)
//   blocks.L.hook_resid_pre / _mid / _post     [pos, d_model] (no _mid where the MLP reads the layer's input: parallel residual)
//   blocks.L.ln1.hook_normalized, ln2.…        [pos, d_model] — the norm's whole output, gain and bias included
//                                              (TransformerLens's is before them: from_pretrained folds them away)
//   blocks.L.attn.hook_q                       [pos, heads, d_head] (before RoPE)
//   blocks.L.attn.hook_k, hook_v               [pos, kv_heads, d_head]
//   blocks.L.attn.hook_attn_scores             [heads, query, key] (scaled, −inf where masked)
//   blocks.L.attn.hook_pattern                 [heads, query, key]
//   blocks.L.attn.hook_z                       [pos, heads, d_head]
//   blocks.L.attn.hook_result                  [pos, heads, d_model] (each head's z through its rows of W_o, no bias)
//   blocks.L.hook_attn_out, hook_mlp_out       [pos, d_model] (what each adds to the residual stream)
//   blocks.L.mlp.hook_pre                      [pos, d_mlp] (before the activation; the gate's for a gated MLP)
//   blocks.L.mlp.hook_post                     [pos, d_mlp] (after it; times the up projection for a gated MLP)
//   ln_final.hook_normalized                   [pos, d_model]

#include "attention_lab/transformer_model.h"

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace attention_lab {

struct NamedTensor {
  std::string name;
  std::vector<std::int64_t> shape;
  std::vector<float> values;  // row-major
};

// Every hook name this model has, in the order a forward pass meets them.
std::vector<std::string> hook_names(const ModelConfig& config);

// The names `patterns` selects: comma-separated names or globs (* any run of
// characters, ? one). "" and the names in model order, or an error naming a
// pattern that matches nothing, with the nearest names.
std::string select_hooks(const ModelConfig& config, const std::string& patterns, std::vector<std::string>& names);

// The named activations of the unedited run of `ids` (checked by the caller).
std::vector<NamedTensor> cache_hooks(const TransformerModel& model, std::span<const int> ids,
                                     const std::vector<std::string>& names);

// A safetensors file of F32 tensors (names sorted, as safetensors does),
// with `metadata` as its string-to-string __metadata__.
std::string safetensors_bytes(const std::vector<NamedTensor>& tensors, const std::map<std::string, std::string>& metadata);
// A .npy file (version 1.0, little-endian float32, C order).
std::string npy_bytes(const NamedTensor& tensor);

}  // namespace attention_lab
