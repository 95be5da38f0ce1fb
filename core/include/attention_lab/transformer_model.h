#pragma once
// A whole decoder-only Transformer read from a Hugging Face checkpoint
// (config.json + safetensors): the GPT-2 family (HF GPT-2 with Conv1D
// weights, minGPT/nanoGPT with nn.Linear weights) and the Llama family
// (Llama, Mistral, Qwen2, Phi-3, SmolLM: grouped-query heads, RoPE, RMSNorm, SwiGLU).
//
// Weights stay where the file mapping put them, in the file's own type (F32,
// F16 or BF16: stored_floats.h), and are widened to float a panel at a time
// inside the products that read them: an open model takes the memory of its
// file. Small vectors (norms, biases) are copied as floats.

#include "attention_lab/matrix.h"
#include "attention_lab/safetensors.h"
#include "attention_lab/scenario.h"

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <cmath>
#include <string>
#include <vector>

namespace attention_lab {

enum class ModelFamily { Gpt2, Llama };
enum class Activation { GeluTanh, GeluErf, Relu, Silu };

const char* to_string(ModelFamily family);
const char* to_string(Activation activation);

struct ModelConfig {
  ModelFamily family = ModelFamily::Gpt2;
  std::string model_type;  // "gpt2", "llama", "mistral", "qwen2"
  int layers = 0;
  int heads = 0;
  int kv_heads = 0;
  int d_model = 0;
  int d_head = 0;
  int d_ff = 0;
  int vocab = 0;
  int max_positions = 0;
  double norm_eps = 1e-5;
  Activation activation = Activation::GeluTanh;  // GPT-2's MLP, or SwiGLU's gate (Silu)
  // Features, not families: what the layers compute, as config.json and the
  // model_type describe it.
  bool rms_norm = false;   // RMSNorm (Llama); else LayerNorm with a bias (GPT-2, StarCoder2)
  bool gated_mlp = false;  // SwiGLU: act(x·W_gate)·(x·W_up) (Llama); else act(x·W_up + b) (GPT-2, StarCoder2)
  bool mlp_bias = false;   // the MLP's projections have biases
  bool tied_embeddings = true;                   // lm_head = token embeddings (when the file has no lm_head)
  bool qkv_bias = false;
  bool o_bias = false;
  // Scalings some families add (1 where they do not): the embeddings times
  // embedding_scale (Granite's embedding_multiplier; Gemma: √d_model), what
  // each residual sum adds times residual_scale (Granite's
  // residual_multiplier), the scores times score_scale instead of 1/√d_head
  // (Granite's attention_multiplier; Gemma: query_pre_attn_scalar^−½), the
  // logits divided by logits_divisor (Granite's logits_scaling).
  float embedding_scale = 1.0f;
  float residual_scale = 1.0f;
  double score_scale = 0.0;  // 0: 1/√d_head
  double logits_divisor = 1.0;
  // What the scores are multiplied by: score_scale, or 1/√d_head.
  double attention_scale() const { return score_scale > 0.0 ? score_scale : 1.0 / std::sqrt(static_cast<double>(d_head)); }
  // Where the layer's norms sit: before the attention and the MLP (GPT-2,
  // Llama), and/or on their outputs before the residual sums (OLMo-2: only
  // after; Gemma 2: both).
  bool pre_norms = true;
  bool post_norms = false;
  // GPT-NeoX's use_parallel_residual: the MLP reads norm2 of the layer's
  // input, not of the residual sum after the attention: y = x + a + m.
  bool parallel_residual = false;
  // An RMSNorm of q and k before RoPE (Qwen3: per head, q_norm/k_norm of d_head)
  QkNormScope qk_norm = QkNormScope::Off;
  Rope rope;                    // Llama family: on, θ and any scaling (rotate_half pairs)
  std::vector<bool> nope_layers;  // SmolLM3: true for a layer without positions (no RoPE); empty: none
  int sliding_window = 0;       // 0 = none (Mistral: keys i − W < j ≤ i)
  // Layers of two kinds (Gemma 2 and 3's layer_types): true where a layer
  // uses the sliding window; empty: every layer does when sliding_window > 0.
  std::vector<bool> sliding_layers;
  // Gemma 3: a sliding layer's RoPE (its own base); unused when `on` is false.
  Rope rope_sliding;
  // Added to every RMSNorm gain as stored (Gemma keeps w for a gain of 1 + w;
  // the loader adds it, so the norms, the Block view and the scenario's
  // q/k norm show the gains the arithmetic uses).
  float norm_gain_offset = 0.0f;
  // Soft-capping, c·tanh(x/c), of the logits and of the scaled attention
  // scores (Gemma 2's final_logit_softcapping, attn_logit_softcapping); 0 = none.
  double logit_softcap = 0.0;
  double attn_softcap = 0.0;

  bool learned_positions() const { return family == ModelFamily::Gpt2; }
  bool sliding(int layer) const {
    if (sliding_window <= 0) return false;
    return sliding_layers.empty() || (layer >= 0 && static_cast<std::size_t>(layer) < sliding_layers.size() &&
                                      sliding_layers[static_cast<std::size_t>(layer)]);
  }
  // Layer `layer`'s window (0: it sees every key before it).
  int window_of(int layer) const { return sliding(layer) ? sliding_window : 0; }
  // Layer `layer`'s RoPE: `rope` (a sliding layer's own where the model has
  // one), turned off in a layer without positions.
  Rope rope_of(int layer) const {
    Rope r = rope_sliding.on && sliding(layer) ? rope_sliding : rope;
    if (layer >= 0 && static_cast<std::size_t>(layer) < nope_layers.size() && nope_layers[static_cast<std::size_t>(layer)])
      r.on = false;
    return r;
  }
};

// Reads a Hugging Face config.json; `where` names it in errors. Unknown
// architectures are refused with the list of supported ones, and so is every
// key the reader neither computes nor knows to leave the arithmetic alone
// (config_inert_keys), named with its value: a model is never run with a
// setting silently ignored.
struct ParsedConfig {
  ModelConfig config;
  std::string error;
};
ParsedConfig parse_model_config(const std::string& json_text, const std::string& where);

// The config.json keys that do not change what the forward pass computes
// (provenance, special token ids, dropout, generation settings …): the one
// list of what the reader may leave unread.
const std::vector<std::string>& config_inert_keys();

// y = x·W + b for an activation x (T × in). The weight is a block of a stored
// tensor, in the file's type: as stored when the file keeps it [in, out]
// (GPT-2's Conv1D), or used transposed when it keeps [out, in] (nn.Linear).
// A block, because GPT-2 keeps Q, K and V in one tensor (c_attn).
struct Linear {
  StoredFloats values;  // the block's first value
  int stored_rows = 0;  // of the block as stored
  int stored_cols = 0;
  int stride = 0;       // values between stored rows
  bool out_in = false;  // stored [out, in] (nn.Linear): used transposed
  RowVector bias;       // empty: none

  int in() const { return out_in ? stored_cols : stored_rows; }
  int out() const { return out_in ? stored_rows : stored_cols; }
  // The weight as an in × out float matrix (a copy), the way a scenario holds W_q.
  Matrix in_out() const;
  // x·W + b.
  Matrix apply(const Matrix& x) const;
  // y += x·W + b, the sum made by the product itself (a residual stream
  // already in y costs no pass of its own). y is x.rows() × out().
  void add_to(const Matrix& x, Matrix& y) const;
  // Element (i, o) of the in × out weight.
  float at(int i, int o) const {
    return values.at(out_in ? static_cast<std::ptrdiff_t>(o) * stride + i : static_cast<std::ptrdiff_t>(i) * stride + o);
  }
};

struct Norm {
  RowVector weight;
  RowVector bias;  // empty for RMSNorm
  bool rms = false;
  double eps = 1e-5;
};

struct TransformerLayer {
  Norm norm1, norm2;
  Norm q_norm, k_norm;  // the q/k norm's gains (ModelConfig::qk_norm), RMSNorm
  Norm post_attn, post_mlp;  // ModelConfig::post_norms: on the attention's and the MLP's outputs
  Linear q, k, v, o;
  Linear qkv;   // GPT-2: c_attn whole (q, k, v are its blocks), so one product makes all three; else unused (null data)
  Linear up;    // GPT-2: c_fc; Llama: up_proj
  Linear gate;  // Llama: gate_proj (SwiGLU); unused for GPT-2
  Linear down;  // GPT-2: mlp.c_proj; Llama: down_proj
};

struct TransformerModel {
  ModelConfig config;
  std::filesystem::path source;  // the folder or file opened
  std::string layout;            // "HF GPT-2 (Conv1D [in, out])", "minGPT (nn.Linear [out, in])", "Llama"
  DType dtype = DType::F32;      // of the weight matrices
  std::uint64_t weight_bytes = 0;  // in the files
  std::uint64_t parameters = 0;
  // False when opened with ModelParts::Headers: the tensors were checked by
  // their headers only, every weight pointer is null and every vector zero.
  bool weights_read = true;

  StoredFloats token_embedding;     // vocab × d_model, row major
  StoredFloats position_embedding;  // max_positions × d_model (GPT-2), else null
  std::vector<TransformerLayer> layers;
  Norm final_norm;
  Linear lm_head;  // d_model → vocab (the token embeddings, transposed, when tied)
  bool lm_head_tied = false;  // lm_head is the token embeddings (the file has no lm_head.weight)

  // What the weights point into: the mapped files, and the few blocks the
  // loader made itself (GPT-NeoX's q, k and v gathered from its fused
  // tensor; a tensor not aligned to its element, or stored as F64, widened
  // to float).
  std::vector<std::shared_ptr<const SafetensorsFile>> files;
  std::vector<std::unique_ptr<std::byte[]>> owned;
  std::uint64_t owned_bytes = 0;
};

struct LoadedModel {
  std::shared_ptr<const TransformerModel> model;
  std::string error;  // names the file and tensor, the expected and the found
};

// Progress in [0, 1] and a reason; return false to cancel.
using LoadProgress = std::function<bool(double fraction, const std::string& what)>;

// Opens a model folder (config.json + model.safetensors, or the shards of
// model.safetensors.index.json) or a .safetensors file with config.json next
// to it. Every tensor is checked: present, shaped as the config says, finite.
//
// ModelParts::Headers reads config.json and the safetensors headers only:
// every tensor is checked present, shaped and typed, none is read (no value
// checked, nothing widened), so facts about a model of any size come in
// milliseconds (model-info). Such a model cannot be run.
enum class ModelParts { Everything, Headers };
LoadedModel load_model(const std::filesystem::path& path, const LoadProgress& progress = {},
                       ModelParts parts = ModelParts::Everything);

}  // namespace attention_lab
