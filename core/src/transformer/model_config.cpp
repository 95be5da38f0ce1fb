// config.json of a Hugging Face checkpoint → ModelConfig.

#include "attention_lab/excerpt.h"
#include "attention_lab/transformer_model.h"
#include "io/json_document.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace attention_lab {

namespace {

using json = nlohmann::json;

struct ConfigError {
  std::string message;
};

[[noreturn]] void fail_config(std::string message) { throw ConfigError{std::move(message)}; }

constexpr const char* kSupported =
    "gpt2 (HF GPT-2, minGPT, nanoGPT), llama (Llama 2 and 3.x, SmolLM), mistral, qwen2, qwen3, olmo2, granite, gemma2, gemma3_text, gpt_neox (Pythia), phi3, starcoder2, smollm3";

// Sizes beyond these are not models this app can hold (and would overflow an int).
constexpr long long kMaxDimension = 1 << 20;
constexpr long long kMaxLayers = 1024;

// Reads keys of one JSON object and remembers each key it looked at, so that
// finish() can refuse every key nobody read (and that is not known to be inert).
class ConfigReader {
 public:
  ConfigReader(const json& root, std::string where) : root_(root), where_(std::move(where)) {}

  bool has(const char* key) const {
    read_.insert(key);
    const auto it = root_.find(key);
    return it != root_.end() && !it->is_null();
  }
  // Written in the file at all, null included (null is "none", absent is the default).
  bool written(const char* key) const {
    read_.insert(key);
    return root_.find(key) != root_.end();
  }

  int positive_int(const char* key, long long max = kMaxDimension) const {
    const json& v = need(key);
    if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > max)
      fail_config(where_ + ": \"" + key + "\": expected an integer from 1 to " + std::to_string(max) + ", found " +
           excerpt(v.dump(), 40));
    return static_cast<int>(v.get<long long>());
  }
  int positive_int_or(const char* key, int fallback, long long max = kMaxDimension) const {
    return has(key) ? positive_int(key, max) : fallback;
  }
  double positive_number_or(const char* key, double fallback) const {
    if (!has(key)) return fallback;
    const json& v = root_.at(key);
    if (!v.is_number() || !(v.get<double>() > 0.0) || !std::isfinite(v.get<double>()))
      fail_config(where_ + ": \"" + key + "\": expected a positive number, found " + excerpt(v.dump(), 40));
    return v.get<double>();
  }
  bool boolean_or(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    const json& v = root_.at(key);
    if (!v.is_boolean()) fail_config(where_ + ": \"" + key + "\": expected true or false, found " + excerpt(v.dump(), 40));
    return v.get<bool>();
  }
  std::string string_or(const char* key, const std::string& fallback) const {
    if (!has(key)) return fallback;
    const json& v = root_.at(key);
    if (!v.is_string()) fail_config(where_ + ": \"" + key + "\": expected a string, found " + excerpt(v.dump(), 40));
    return v.get<std::string>();
  }
  const json& need(const char* key) const {
    read_.insert(key);
    const auto it = root_.find(key);
    if (it == root_.end() || it->is_null()) fail_config(where_ + ": expected \"" + key + "\"");
    return *it;
  }
  // A switch this reader implements only one way: any other value is refused.
  void expect_bool(const char* key, bool supported, const char* what) const {
    if (boolean_or(key, supported) != supported)
      fail_config(where_ + ": \"" + key + "\": " + (supported ? "false" : "true") + " (" + what + ") is not supported; expected " +
                  (supported ? "true" : "false"));
  }
  // Marks a key as read without reading it: its value does not matter here
  // (a window size with windows turned off).
  void ignore(const char* key) const { read_.insert(key); }
  const std::string& where() const { return where_; }

  // Refuses the first key no read looked at and that is not inert: it may
  // change the arithmetic, and a model is never run with it silently ignored.
  void finish(const std::string& model_type) const {
    const auto& inert = config_inert_keys();
    for (const auto& [key, value] : root_.items()) {
      // null is how HF writes "not set": the default, which is what the readers assume
      if (value.is_null() || read_.count(key) || std::find(inert.begin(), inert.end(), key) != inert.end()) continue;
      fail_config(where_ + ": \"" + excerpt(key, 60) + "\": " + excerpt(value.dump(), 60) + ": a key " + model_type +
                  " models are not read with here; it may change what the model computes, so the model is not opened");
    }
  }

 private:
  const json& root_;
  std::string where_;
  mutable std::set<std::string, std::less<>> read_;
};

Activation read_activation(const ConfigReader& r, const char* key, const std::string& fallback) {
  const std::string name = r.string_or(key, fallback);
  if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast") return Activation::GeluTanh;
  if (name == "gelu") return Activation::GeluErf;
  if (name == "relu") return Activation::Relu;
  if (name == "silu" || name == "swish") return Activation::Silu;
  fail_config(r.where() + ": \"" + key + "\": expected gelu_new, gelu_pytorch_tanh, gelu, relu or silu, found '" +
       excerpt(name, 40) + "'");
}

ModelConfig read_gpt2(const ConfigReader& r) {
  ModelConfig c;
  c.family = ModelFamily::Gpt2;
  c.layers = r.positive_int("n_layer", kMaxLayers);
  c.heads = r.positive_int("n_head");
  c.kv_heads = c.heads;
  c.d_model = r.positive_int("n_embd");
  if (c.d_model % c.heads != 0)
    fail_config(r.where() + ": \"n_embd\" " + std::to_string(c.d_model) + ": expected a multiple of n_head " +
         std::to_string(c.heads));
  c.d_head = c.d_model / c.heads;
  c.d_ff = r.positive_int_or("n_inner", 4 * c.d_model);
  c.vocab = r.positive_int("vocab_size");
  c.max_positions = r.positive_int("n_positions");
  c.norm_eps = r.positive_number_or("layer_norm_epsilon", 1e-5);
  c.activation = read_activation(r, "activation_function", "gelu_new");
  if (c.activation == Activation::Silu)
    fail_config(r.where() + ": \"activation_function\": GPT-2's MLP takes gelu_new, gelu or relu, found silu");
  c.tied_embeddings = r.boolean_or("tie_word_embeddings", true);
  c.qkv_bias = true;
  c.o_bias = true;
  c.mlp_bias = true;
  r.expect_bool("scale_attn_weights", true, "scores not divided by √d_k");
  r.expect_bool("scale_attn_by_inverse_layer_idx", false, "scores also divided by the layer number + 1");
  r.expect_bool("add_cross_attention", false, "a cross-attention sublayer in every block");
  return c;
}

// The keys of rope_parameters (or of the older rope_scaling) each rope_type reads.
const std::vector<std::string>& rope_keys(RopeScaling scaling) {
  static const std::vector<std::string> none = {"rope_theta", "rope_type", "type", "partial_rotary_factor"};
  static const std::vector<std::string> linear = {"rope_theta", "rope_type", "type", "factor", "partial_rotary_factor"};
  static const std::vector<std::string> llama3 = {"rope_theta",      "rope_type",        "type",
                                                   "factor",          "low_freq_factor",  "high_freq_factor",
                                                   "original_max_position_embeddings", "partial_rotary_factor"};
  return scaling == RopeScaling::Llama3 ? llama3 : scaling == RopeScaling::Linear ? linear : none;
}

// RoPE as transformers 5 writes it ("rope_parameters": {"rope_theta", "rope_type",
// and the type's numbers}) or as older files do (top-level "rope_theta" and
// "rope_scaling": {"type" or "rope_type", …}). Every rope_type this app does
// not compute (yarn, longrope, dynamic …) and every key it does not read is
// refused by name.
Rope read_rope(const ConfigReader& top, double default_theta, double* partial = nullptr) {
  Rope rope;
  rope.on = true;
  rope.pairs = RopePairs::Half;
  const bool v5 = top.has("rope_parameters");
  if (v5 && (top.has("rope_theta") || top.has("rope_scaling")))
    fail_config(top.where() + ": \"rope_parameters\" and \"" + (top.has("rope_theta") ? "rope_theta" : "rope_scaling") +
                "\" both given: expected one way of saying how RoPE turns (transformers 5 writes rope_parameters)");
  const json empty = json::object();
  const json* params = &empty;
  std::string where = top.where();
  if (v5) {
    params = &top.need("rope_parameters");
    where += ": \"rope_parameters\"";
  } else if (top.has("rope_scaling")) {
    params = &top.need("rope_scaling");
    where += ": \"rope_scaling\"";
  }
  if (!params->is_object()) fail_config(where + ": expected an object, found " + excerpt(params->dump(), 60));
  const ConfigReader p(*params, where);
  const std::string type = p.has("rope_type") ? p.string_or("rope_type", "") : p.string_or("type", "default");
  if (p.has("rope_type") && p.has("type") && p.string_or("type", "") != type)
    fail_config(where + ": \"type\" and \"rope_type\" differ");
  if (type == "default") {
    rope.scaling = RopeScaling::None;
  } else if (type == "linear") {
    rope.scaling = RopeScaling::Linear;
  } else if (type == "llama3") {
    rope.scaling = RopeScaling::Llama3;
  } else {
    fail_config(where + ": rope_type '" + excerpt(type, 40) +
                "' is not supported yet (supported: default, linear, llama3); its frequencies would be wrong without it");
  }
  // The theta lives inside rope_parameters (transformers 5) or at the top (older files).
  const double theta = v5 ? p.positive_number_or("rope_theta", default_theta) : top.positive_number_or("rope_theta", default_theta);
  if (!v5 && p.has("rope_theta")) fail_config(where + ": \"rope_theta\": expected it at the top of config.json");
  rope.theta = static_cast<float>(theta);
  if (!(rope.theta > 1.0f) || !std::isfinite(rope.theta))
    fail_config(top.where() + ": \"rope_theta\": expected a number above 1 (and within float), found " + std::to_string(theta));
  if (partial != nullptr) {  // a family that turns part of each head (GPT-NeoX): the caller computes it
    *partial = p.positive_number_or("partial_rotary_factor", *partial);
  } else if (p.has("partial_rotary_factor") && p.positive_number_or("partial_rotary_factor", 1.0) != 1.0) {
    fail_config(where + ": \"partial_rotary_factor\" " + excerpt(p.need("partial_rotary_factor").dump(), 20) +
                ": RoPE on part of each head is computed for gpt_neox only (expected 1)");
  }
  if (rope.scaling != RopeScaling::None) {
    rope.factor = static_cast<float>(p.positive_number_or("factor", 0.0));
    if (!p.has("factor")) fail_config(where + ": expected \"factor\" for rope_type " + type);
  }
  if (rope.scaling == RopeScaling::Llama3) {
    for (const char* key : {"low_freq_factor", "high_freq_factor", "original_max_position_embeddings"})
      if (!p.has(key)) fail_config(where + ": expected \"" + key + "\" for rope_type llama3");
    rope.low_freq_factor = static_cast<float>(p.positive_number_or("low_freq_factor", 1.0));
    rope.high_freq_factor = static_cast<float>(p.positive_number_or("high_freq_factor", 4.0));
    rope.original_max_positions = p.positive_int("original_max_position_embeddings", 1LL << 30);
  }
  for (const auto& [key, value] : params->items()) {
    const auto& known = rope_keys(rope.scaling);
    if (std::find(known.begin(), known.end(), key) == known.end())
      fail_config(where + ": \"" + excerpt(key, 40) + "\": " + excerpt(value.dump(), 40) + ": not a key of rope_type " + type +
                  " that this app computes; refused rather than ignored");
  }
  if (std::string problem = check_rope(rope, "rope"); !problem.empty()) fail_config(where + ": " + problem);
  return rope;
}

// SmolLM3's layers without positions: no_rope_layers[i] is 1 where layer i
// turns Q and K (RoPE) and 0 where it does not; without the list, every
// no_rope_layer_interval-th layer has none (HF's SmolLM3Config).
std::vector<bool> read_nope_layers(const ConfigReader& r, int layers) {
  std::vector<bool> nope(static_cast<std::size_t>(layers), false);
  const int interval = r.positive_int_or("no_rope_layer_interval", 4);
  if (!r.has("no_rope_layers")) {
    for (int i = 0; i < layers; ++i) nope[static_cast<std::size_t>(i)] = (i + 1) % interval == 0;
    return nope;
  }
  const json& list = r.need("no_rope_layers");
  if (!list.is_array() || list.size() != static_cast<std::size_t>(layers))
    fail_config(r.where() + ": \"no_rope_layers\": expected a list of " + std::to_string(layers) +
                " (num_hidden_layers) 0s and 1s, found " + excerpt(list.dump(), 60));
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_number_integer() || (list[i].get<long long>() != 0 && list[i].get<long long>() != 1))
      fail_config(r.where() + ": \"no_rope_layers\"[" + std::to_string(i) + "]: expected 0 (no RoPE) or 1 (RoPE), found " +
                  excerpt(list[i].dump(), 20));
    nope[i] = list[i].get<long long>() == 0;
  }
  return nope;
}

// transformers 5 lists each layer's attention ("full_attention" or
// "sliding_attention"): every layer must be what the model computes.
void check_layer_types(const ConfigReader& r, const ModelConfig& c) {
  if (!r.has("layer_types")) return;
  const json& types = r.need("layer_types");
  if (!types.is_array() || types.size() != static_cast<std::size_t>(c.layers))
    fail_config(r.where() + ": \"layer_types\": expected a list of " + std::to_string(c.layers) + " (num_hidden_layers) names, found " +
                excerpt(types.dump(), 60));
  const std::string want = c.sliding_window > 0 ? "sliding_attention" : "full_attention";
  for (std::size_t i = 0; i < types.size(); ++i)
    if (!types[i].is_string() || types[i].get<std::string>() != want)
      fail_config(r.where() + ": \"layer_types\"[" + std::to_string(i) + "]: " + excerpt(types[i].dump(), 40) +
                  ": layers of different kinds are not supported yet; expected every layer \"" + want + "\"");
}

// The shape every RoPE family's config gives: layers, heads and K/V heads,
// hidden_size, the head dimension (head_dim, else `default_head_dim`, else
// hidden_size / heads), the MLP's width, the vocabulary and the positions.
ModelConfig read_rope_shape(const ConfigReader& r, int default_head_dim) {
  ModelConfig c;
  c.family = ModelFamily::Llama;
  c.layers = r.positive_int("num_hidden_layers", kMaxLayers);
  c.heads = r.positive_int("num_attention_heads");
  c.kv_heads = r.positive_int_or("num_key_value_heads", c.heads);
  if (c.heads % c.kv_heads != 0)
    fail_config(r.where() + ": \"num_key_value_heads\" " + std::to_string(c.kv_heads) +
         ": expected a divisor of num_attention_heads " + std::to_string(c.heads));
  c.d_model = r.positive_int("hidden_size");
  if (!r.has("head_dim") && default_head_dim == 0 && c.d_model % c.heads != 0)
    fail_config(r.where() + ": \"hidden_size\" " + std::to_string(c.d_model) + ": expected a multiple of " +
         "num_attention_heads " + std::to_string(c.heads) + " (or a \"head_dim\")");
  c.d_head = r.positive_int_or("head_dim", default_head_dim > 0 ? default_head_dim : c.d_model / c.heads);
  if (c.d_head % 2 != 0)
    fail_config(r.where() + ": head dimension " + std::to_string(c.d_head) + ": expected an even number (RoPE turns pairs)");
  // Q's width heads·d_head: an int everywhere downstream (an explicit head_dim makes it more than hidden_size).
  if (static_cast<long long>(c.heads) * c.d_head > kMaxDimension)
    fail_config(r.where() + ": num_attention_heads × head dimension = " + std::to_string(c.heads) + " × " +
         std::to_string(c.d_head) + ": expected at most " + std::to_string(kMaxDimension));
  c.d_ff = r.positive_int("intermediate_size");
  c.vocab = r.positive_int("vocab_size");
  c.max_positions = r.positive_int_or("max_position_embeddings", 1 << 20, 1LL << 30);
  return c;
}

ModelConfig read_llama(const ConfigReader& r, const std::string& model_type) {
  const bool qwen3 = model_type == "qwen3";
  ModelConfig c = read_rope_shape(r, qwen3 ? 128 : 0);  // Qwen3Config's head_dim defaults to 128
  const bool starcoder2 = model_type == "starcoder2";
  // StarCoder2: LayerNorm with biases and GPT-2's ungated GELU MLP, biases everywhere (use_bias).
  c.rms_norm = !starcoder2;
  c.gated_mlp = !starcoder2;
  // A key the file leaves out takes transformers' default for its model_type (XxxConfig.__init__).
  const bool phi3 = model_type == "phi3", smollm3 = model_type == "smollm3";
  c.norm_eps = starcoder2 ? r.positive_number_or("norm_epsilon", 1e-5)
                          : r.positive_number_or("rms_norm_eps", phi3 ? 1e-5 : 1e-6);
  c.activation = read_activation(r, "hidden_act", starcoder2 ? "gelu_pytorch_tanh" : "silu");
  c.tied_embeddings = r.boolean_or("tie_word_embeddings", starcoder2 || smollm3);
  c.rope = read_rope(r, smollm3 ? 2000000.0 : 10000.0);
  if (starcoder2) {
    c.qkv_bias = c.o_bias = c.mlp_bias = r.boolean_or("use_bias", true);
  } else {
    // Qwen2 always has q/k/v biases; Llama, Mistral and Qwen3 have them when attention_bias says so.
    c.qkv_bias = model_type == "qwen2" ? true : r.boolean_or("attention_bias", false);
    c.o_bias = model_type == "qwen2" ? false : c.qkv_bias;
    if (r.boolean_or("mlp_bias", false))
      fail_config(r.where() + ": \"mlp_bias\": true is not supported (no Llama-family checkpoint we know uses it)");
  }
  if (model_type == "phi3" && c.qkv_bias)
    fail_config(r.where() + ": \"attention_bias\": true is not supported for phi3 (its fused qkv_proj has no bias)");
  if (model_type == "mistral" || model_type == "phi3" || starcoder2) {
    // MistralConfig's default window is 4096; a null one is none.
    const bool absent = !r.written("sliding_window");
    c.sliding_window = r.has("sliding_window") ? r.positive_int("sliding_window", 1LL << 30)
                                                : (absent && model_type == "mistral" ? 4096 : 0);
    // Phi-3's original context: read only by its longrope scaling, which read_rope refuses.
    if (model_type == "phi3") r.ignore("original_max_position_embeddings");
  } else if (model_type == "qwen2" || qwen3 || model_type == "smollm3") {
    if (r.boolean_or("use_sliding_window", false))
      fail_config(r.where() + ": \"use_sliding_window\": true (per-layer windows) is not supported yet");
    r.ignore("sliding_window");     // the window's size, unused while use_sliding_window is false
    r.ignore("max_window_layers");  // how many layers use it, likewise
  }
  // SmolLM's configs say their pairs are rotate_half's; HF's Llama ignores the key.
  r.expect_bool("rope_interleaved", false, "RoPE pairs 2i and 2i + 1, which HF's Llama does not compute");
  if (model_type == "smollm3") c.nope_layers = read_nope_layers(r, c.layers);
  if (qwen3) c.qk_norm = QkNormScope::PerHead;  // q_norm and k_norm: RMSNorm over each head's head_dim
  if (model_type == "granite") {
    // Granite's four multipliers (GraniteConfig: 1 when left out)
    c.embedding_scale = static_cast<float>(r.positive_number_or("embedding_multiplier", 1.0));
    c.residual_scale = static_cast<float>(r.positive_number_or("residual_multiplier", 1.0));
    c.score_scale = r.positive_number_or("attention_multiplier", 1.0);
    c.logits_divisor = r.positive_number_or("logits_scaling", 1.0);
  }
  if (model_type == "olmo2") {
    // OLMo-2: q_norm and k_norm over the whole q and k projections, and the
    // layer's norms on the attention's and the MLP's outputs, not their inputs
    c.qk_norm = QkNormScope::Whole;
    c.pre_norms = false;
    c.post_norms = true;
  }
  check_layer_types(r, c);
  return c;
}

// transformers 5's layer_types for a model whose layers differ (Gemma 2, 3):
// "sliding_attention" or "full_attention" per layer.
std::vector<bool> read_sliding_layers(const ConfigReader& r, int layers) {
  const json& types = r.need("layer_types");
  if (!types.is_array() || types.size() != static_cast<std::size_t>(layers))
    fail_config(r.where() + ": \"layer_types\": expected a list of " + std::to_string(layers) +
                " (num_hidden_layers) names, found " + excerpt(types.dump(), 60));
  std::vector<bool> sliding(types.size(), false);
  for (std::size_t i = 0; i < types.size(); ++i) {
    const std::string t = types[i].is_string() ? types[i].get<std::string>() : "";
    if (t != "sliding_attention" && t != "full_attention")
      fail_config(r.where() + ": \"layer_types\"[" + std::to_string(i) + "]: expected \"sliding_attention\" or "
                  "\"full_attention\", found " + excerpt(types[i].dump(), 40));
    sliding[i] = t == "sliding_attention";
  }
  return sliding;
}

// Gemma 2 and Gemma 3 (text): Gemma's block (norms before and after the
// attention and the MLP, RMSNorm gains stored as w for 1 + w, a GELU-tanh
// gated MLP, embeddings times √d, scores times query_pre_attn_scalar^−½),
// layers local (a sliding window) or global; Gemma 2 soft-caps the scores and
// the logits, Gemma 3 norms each head's q and k and gives its local layers
// their own RoPE base.
ModelConfig read_gemma(const ConfigReader& r, const std::string& model_type) {
  const bool gemma2 = model_type == "gemma2";
  ModelConfig c = read_rope_shape(r, 256);  // Gemma2Config's and Gemma3TextConfig's head_dim default
  c.rms_norm = true;
  c.gated_mlp = true;
  c.norm_eps = r.positive_number_or("rms_norm_eps", 1e-6);
  c.activation = read_activation(r, "hidden_activation", "gelu_pytorch_tanh");
  if (r.has("hidden_act") && read_activation(r, "hidden_act", "gelu_pytorch_tanh") != c.activation)
    fail_config(r.where() + ": \"hidden_act\" and \"hidden_activation\" differ: Gemma computes hidden_activation");
  c.tied_embeddings = r.boolean_or("tie_word_embeddings", true);
  c.qkv_bias = c.o_bias = r.boolean_or("attention_bias", false);
  c.pre_norms = c.post_norms = true;
  c.norm_gain_offset = 1.0f;
  c.embedding_scale = static_cast<float>(std::sqrt(static_cast<double>(c.d_model)));
  c.score_scale = 1.0 / std::sqrt(r.positive_number_or("query_pre_attn_scalar", 256.0));
  if (!gemma2) c.qk_norm = QkNormScope::PerHead;
  r.expect_bool("use_bidirectional_attention", false, "every token attending to every other, an encoder's attention");
  // Soft-caps: Gemma2Config's defaults are 50 and 30 when a key is left out; null is none
  const auto softcap = [&](const char* key, double fallback) {
    return r.written(key) && !r.has(key) ? 0.0 : r.positive_number_or(key, fallback);
  };
  c.attn_softcap = softcap("attn_logit_softcapping", gemma2 ? 50.0 : 0.0);
  c.logit_softcap = softcap("final_logit_softcapping", gemma2 ? 30.0 : 0.0);
  // Layers local and global: the window and which layers use it
  c.sliding_window = r.positive_int_or("sliding_window", 4096, 1LL << 30);
  if (r.has("layer_types")) {
    c.sliding_layers = read_sliding_layers(r, c.layers);
    r.ignore("_sliding_window_pattern");  // what layer_types was made from
  } else {
    // Gemma 2 alternates local and global layers; Gemma 3 has `pattern` − 1 local layers per global one
    const int pattern = gemma2 ? 2 : r.positive_int_or("_sliding_window_pattern", r.positive_int_or("sliding_window_pattern", 6));
    c.sliding_layers.assign(static_cast<std::size_t>(c.layers), false);
    for (int i = 0; i < c.layers; ++i) c.sliding_layers[static_cast<std::size_t>(i)] = (i + 1) % pattern != 0;
  }
  // RoPE: transformers 5 writes one rope_parameters per layer type; older
  // files a global rope_theta (and rope_scaling) and rope_local_base_freq.
  const json* nested = r.has("rope_parameters") ? &r.need("rope_parameters") : nullptr;
  if (gemma2) {
    c.rope = read_rope(r, 10000.0);  // one RoPE for every layer
  } else if (nested && nested->is_object() && (nested->contains("full_attention") || nested->contains("sliding_attention"))) {
    for (const auto& [key, value] : nested->items())
      if (key != "full_attention" && key != "sliding_attention")
        fail_config(r.where() + ": \"rope_parameters\": \"" + excerpt(key, 40) + "\": expected full_attention and sliding_attention");
    for (const char* kind : {"full_attention", "sliding_attention"}) {
      if (!nested->contains(kind)) fail_config(r.where() + ": \"rope_parameters\": expected \"" + std::string(kind) + "\"");
      const json wrapped = json{{"rope_parameters", nested->at(kind)}};
      const ConfigReader one(wrapped, r.where() + ": \"rope_parameters\".\"" + kind + "\"");
      (std::string(kind) == "full_attention" ? c.rope : c.rope_sliding) = read_rope(one, 10000.0);
    }
  } else {
    c.rope = read_rope(r, 1000000.0);
    c.rope_sliding = c.rope;
    c.rope_sliding.scaling = RopeScaling::None;  // the local layers' RoPE is never scaled
    c.rope_sliding.factor = 1.0f;
    c.rope_sliding.theta = static_cast<float>(r.positive_number_or("rope_local_base_freq", 10000.0));
  }
  return c;
}

// GPT-NeoX / Pythia: LayerNorms with biases, a GELU MLP, biases on every
// projection, RoPE on the first partial_rotary_factor (rotary_pct) of each
// head, and (use_parallel_residual) the attention and the MLP side by side.
ModelConfig read_gpt_neox(const ConfigReader& r) {
  ModelConfig c;
  c.family = ModelFamily::Llama;  // positions by RoPE
  c.layers = r.positive_int("num_hidden_layers", kMaxLayers);
  c.heads = r.positive_int("num_attention_heads");
  c.kv_heads = c.heads;
  c.d_model = r.positive_int("hidden_size");
  if (c.d_model % c.heads != 0)
    fail_config(r.where() + ": \"hidden_size\" " + std::to_string(c.d_model) + ": expected a multiple of num_attention_heads " +
                std::to_string(c.heads));
  c.d_head = c.d_model / c.heads;
  c.d_ff = r.positive_int("intermediate_size");
  c.vocab = r.positive_int("vocab_size");
  c.max_positions = r.positive_int_or("max_position_embeddings", 2048, 1LL << 30);
  c.rms_norm = false;
  c.gated_mlp = false;
  c.mlp_bias = true;
  c.norm_eps = r.positive_number_or("layer_norm_eps", 1e-5);
  c.activation = read_activation(r, "hidden_act", "gelu");
  c.tied_embeddings = r.boolean_or("tie_word_embeddings", false);
  c.qkv_bias = c.o_bias = r.boolean_or("attention_bias", true);
  c.parallel_residual = r.boolean_or("use_parallel_residual", true);
  // RoPE: transformers 5's rope_parameters, or older files' rotary_emb_base and rotary_pct
  double partial = 0.25;
  if (r.has("rope_parameters") || !r.has("rotary_emb_base")) {
    c.rope = read_rope(r, 10000.0, &partial);
  } else {
    c.rope.on = true;
    c.rope.theta = static_cast<float>(r.positive_number_or("rotary_emb_base", 10000.0));
    partial = r.positive_number_or("rotary_pct", 0.25);
  }
  if (r.has("rotary_pct") && r.has("rope_parameters"))
    fail_config(r.where() + ": \"rotary_pct\" and \"rope_parameters\" both given: expected one");
  // HF: rotary_ndims = int(head_size · partial_rotary_factor)
  const int dims = static_cast<int>(static_cast<double>(c.d_head) * partial);
  if (!(partial > 0.0 && partial <= 1.0) || dims < 2 || dims % 2 != 0)
    fail_config(r.where() + ": partial rotary factor " + std::to_string(partial) + ": expected a share of the " +
                std::to_string(c.d_head) + " dimensions of a head that is an even number of at least 2, found " +
                std::to_string(dims));
  c.rope.dims = dims == c.d_head ? 0 : dims;
  return c;
}

}  // namespace

const std::vector<std::string>& config_inert_keys() {
  static const std::vector<std::string> keys = {
      // what the file is and where it came from
      "architectures", "transformers_version", "_name_or_path", "_commit_hash", "auto_map",
      // the dtype the weights were saved in: each tensor's own dtype is what is read
      "dtype", "torch_dtype",
      // special token ids: for generation and the tokenizer, not the forward pass
      "bos_token_id", "eos_token_id", "pad_token_id", "sep_token_id", "decoder_start_token_id",
      // training only: initialisation and dropout (off at inference)
      "initializer_range", "attention_dropout", "attn_pdrop", "embd_pdrop", "resid_pdrop", "hidden_dropout",
      "classifier_dropout", "embedding_dropout", "residual_dropout", "summary_first_dropout",
      // generation and runtime switches
      "use_cache", "output_attentions", "output_hidden_states", "return_dict", "torchscript", "task_specific_params",
      "max_length", "min_length", "do_sample", "early_stopping", "num_beams", "temperature", "top_k", "top_p",
      "repetition_penalty", "length_penalty", "no_repeat_ngram_size", "num_return_sequences", "bad_words_ids",
      "tokenizer_class", "id2label", "label2id", "_num_labels", "problem_type", "finetuning_task",
      // GPT-2's multiple-choice head (GPT2DoubleHeadsModel), not part of the language model
      "summary_activation", "summary_proj_to_labels", "summary_type", "summary_use_proj",
      // older GPT-2 files: n_positions under its first name
      "n_ctx",
      // Llama's tensor-parallel slicing of the same sums
      "pretraining_tp",
      // PretrainedConfig's encoder-decoder switch: a causal LM computes the same either way
      "is_decoder",
      // GPT-2's float16 path: the same arithmetic, upcast; this app computes in float32
      "reorder_and_upcast_attn",
  };
  return keys;
}

const char* to_string(ModelFamily family) { return family == ModelFamily::Gpt2 ? "gpt2" : "llama"; }

const char* to_string(Activation activation) {
  switch (activation) {
    case Activation::GeluTanh: return "gelu_new";
    case Activation::GeluErf: return "gelu";
    case Activation::Relu: return "relu";
    case Activation::Silu: return "silu";
  }
  return "?";
}

ParsedConfig parse_model_config(const std::string& json_text, const std::string& where) {
  ParsedConfig result;
  io::JsonDocument doc = io::parse_json_document(json_text, where);
  if (!doc.error.empty()) {
    result.error = doc.error.rfind(where, 0) == 0 ? doc.error : where + ": " + doc.error;
    return result;
  }
  try {
    if (!doc.root.is_object()) fail_config(where + ": expected a JSON object");
    const ConfigReader r(doc.root, where);
    if (!r.has("model_type"))
      fail_config(where + ": expected \"model_type\" (supported: " + std::string(kSupported) + ")");
    const std::string type = r.string_or("model_type", "");
    if (type == "gpt2") {
      result.config = read_gpt2(r);
    } else if (type == "gpt_neox") {
      result.config = read_gpt_neox(r);
    } else if (type == "gemma2" || type == "gemma3_text") {
      result.config = read_gemma(r, type);
    } else if (type == "llama" || type == "mistral" || type == "qwen2" || type == "qwen3" || type == "olmo2" ||
               type == "granite" || type == "phi3" || type == "starcoder2" || type == "smollm3") {
      result.config = read_llama(r, type);
    } else {
      fail_config(where + ": model_type '" + excerpt(type, 40) + "' is not supported (supported: " + kSupported + ")");
    }
    result.config.model_type = type;
    r.finish(type);
  } catch (const ConfigError& e) {
    result.error = cap_message(e.message);
  }
  return result;
}

}  // namespace attention_lab
