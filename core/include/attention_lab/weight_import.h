#pragma once
// File ▸ Import weights…: a real layer's attention weights put onto the
// current scenario, which is adapted only as far as the new shapes need.
//
// From a safetensors file, the attention weights of one layer in any of these
// layouts (names may carry any prefix: "transformer.", "model.",
// "encoder.layers.0.self_attn."):
//   HF GPT-2 / minGPT   attn.c_attn.weight (+ .bias), fused Q|K|V split in
//                       thirds, Conv1D [in, 3d] or nn.Linear [3d, in] (told
//                       apart by the shape), attn.c_proj.weight (+ .bias)
//   Llama / Mistral / Qwen2 (also BART, OPT, CLIP)
//                       self_attn.{q,k,v,o}_proj.weight (+ .bias), [out, in];
//                       K and V may be narrower (grouped-query heads);
//                       out_proj in place of o_proj
//   nn.MultiheadAttention
//                       in_proj_weight [3d, d] (+ in_proj_bias), or
//                       q_proj_weight/k_proj_weight/v_proj_weight,
//                       out_proj.weight (+ out_proj.bias)
//   ours                X, W_q, W_k, W_v, W_o, b_q, b_k, b_v, b_o as a
//                       scenario file holds them (in × out)
// in F32, F16, BF16 or F64. From a .npy file, one 2-D array onto one matrix.
//
// How the scenario is adapted:
// - heads: a config.json beside the file decides (GPT-2 n_head, Llama
//   num_attention_heads / num_key_value_heads); else the scenario's heads
//   when the widths divide by them, else 1 head. kv_heads = K's width ÷ d_k.
// - RoPE: on (θ from the config) with a Llama-family config, off with a
//   GPT-2 one; without a config the scenario's setting is kept while d_k
//   stays even, else turned off (a note says so). With a config, ALiBi and
//   attention sinks (which neither family uses) are turned off.
// - W_o imported: use_w_o on. q/k/v biases imported: use_bias on; a whole
//   layer imported without them: use_bias off and zero biases of the right
//   width (likewise b_o and use_output_bias).
// - the input width (d_model) changed: X refilled with seeded values of the
//   new width unless the file has X; tokens kept; feature names resized;
//   matrices not imported regrown (their head blocks kept, new cells seeded).
// - any shape changed: pins cleared.
// - a cross-attention scenario (X_kv) is refused for now.
// Every change beyond the imported matrices is listed in `notes`.

#include "attention_lab/scenario.h"
#include "attention_lab/stage_id.h"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attention_lab {

struct ImportResult {
  std::optional<Scenario> scenario;   // the current scenario with the imported matrices (validate() passes)
  std::vector<std::string> imported;  // one line per matrix: "W_q ← h.3.attn.c_attn.weight columns 0–767 (Conv1D [in, out])"
  std::vector<std::string> notes;     // "X refilled (seeded): its width changed from 16 to 768", "pins cleared"
  std::string error;                  // names the file, the tensor, the expected and the found
};

// The attention layers a safetensors file holds, by number (h.N., layers.N.),
// as import_safetensors chooses among them; a layer without a number is -1.
struct WeightLayers {
  std::vector<int> layers;  // ascending
  std::string layout;       // "HF GPT-2 (Conv1D [in, out])", "Llama (nn.Linear [out, in])", …
  std::string error;        // the file cannot be read, or holds no attention weights we know
};
WeightLayers list_weight_layers(const std::filesystem::path& path);

// Which layer's tensors to take from a checkpoint file with several (GPT-2
// h.N., Llama model.layers.N.); -1: the only one (an error listing the layers
// found when there are several).
ImportResult import_safetensors(const Scenario& current, const std::filesystem::path& path, int layer);

// One 2-D .npy array (float32, float64 or float16, C or Fortran order,
// little-endian) onto `target` (StageKind::X, W_q, W_k, W_v or W_o), stored
// as the scenario holds it (X: T × d_model; W_*: in × out); `transpose` true
// takes an [out, in] array (nn.Linear's weight). The rest of the scenario is
// adapted as above.
ImportResult import_npy(const Scenario& current, const std::filesystem::path& path, StageKind target, bool transpose);
// The same from bytes in memory (tests, fuzzing): `name` stands for the path in messages.
ImportResult import_npy_bytes(const Scenario& current, std::string_view bytes, const std::string& name,
                              StageKind target, bool transpose);

// .npy files over this are refused before they are read (a 4096 × 4096
// float64 array and its header).
inline constexpr std::uintmax_t kMaxNpyFileBytes = (128ull << 20) + (64ull << 10) + 16;

}  // namespace attention_lab
