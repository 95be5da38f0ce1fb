// config.json of a Hugging Face checkpoint → ModelConfig.

#include "attention_lab/excerpt.h"
#include "attention_lab/transformer_model.h"
#include "io/json_document.h"

#include <cmath>

namespace attention_lab {

namespace {

using json = nlohmann::json;

struct ConfigError {
  std::string message;
};

[[noreturn]] void fail_config(std::string message) { throw ConfigError{std::move(message)}; }

constexpr const char* kSupported =
    "gpt2 (HF GPT-2, minGPT, nanoGPT), llama (Llama, SmolLM), mistral, qwen2";

// Sizes beyond these are not models this app can hold (and would overflow an int).
constexpr long long kMaxDimension = 1 << 20;
constexpr long long kMaxLayers = 1024;

class ConfigReader {
 public:
  ConfigReader(const json& root, std::string where) : root_(root), where_(std::move(where)) {}

  bool has(const char* key) const {
    const auto it = root_.find(key);
    return it != root_.end() && !it->is_null();
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
    const auto it = root_.find(key);
    if (it == root_.end() || it->is_null()) fail_config(where_ + ": expected \"" + key + "\"");
    return *it;
  }
  const std::string& where() const { return where_; }

 private:
  const json& root_;
  std::string where_;
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
  return c;
}

ModelConfig read_llama(const ConfigReader& r, const std::string& model_type) {
  ModelConfig c;
  c.family = ModelFamily::Llama;
  c.layers = r.positive_int("num_hidden_layers", kMaxLayers);
  c.heads = r.positive_int("num_attention_heads");
  c.kv_heads = r.positive_int_or("num_key_value_heads", c.heads);
  if (c.heads % c.kv_heads != 0)
    fail_config(r.where() + ": \"num_key_value_heads\" " + std::to_string(c.kv_heads) +
         ": expected a divisor of num_attention_heads " + std::to_string(c.heads));
  c.d_model = r.positive_int("hidden_size");
  if (!r.has("head_dim") && c.d_model % c.heads != 0)
    fail_config(r.where() + ": \"hidden_size\" " + std::to_string(c.d_model) + ": expected a multiple of " +
         "num_attention_heads " + std::to_string(c.heads) + " (or a \"head_dim\")");
  c.d_head = r.positive_int_or("head_dim", c.d_model / c.heads);
  if (c.d_head % 2 != 0)
    fail_config(r.where() + ": head dimension " + std::to_string(c.d_head) + ": expected an even number (RoPE turns pairs)");
  // Q's width heads·d_head: an int everywhere downstream (an explicit head_dim makes it more than hidden_size).
  if (static_cast<long long>(c.heads) * c.d_head > kMaxDimension)
    fail_config(r.where() + ": num_attention_heads × head dimension = " + std::to_string(c.heads) + " × " +
         std::to_string(c.d_head) + ": expected at most " + std::to_string(kMaxDimension));
  c.d_ff = r.positive_int("intermediate_size");
  c.vocab = r.positive_int("vocab_size");
  c.max_positions = r.positive_int_or("max_position_embeddings", 1 << 20, 1LL << 30);
  c.norm_eps = r.positive_number_or("rms_norm_eps", 1e-6);
  c.activation = read_activation(r, "hidden_act", "silu");
  c.tied_embeddings = r.boolean_or("tie_word_embeddings", false);
  c.rope_theta = r.positive_number_or("rope_theta", 10000.0);
  if (!(c.rope_theta > 1.0))
    fail_config(r.where() + ": \"rope_theta\": expected a number above 1, found " + std::to_string(c.rope_theta));
  if (r.has("rope_scaling"))
    fail_config(r.where() + ": \"rope_scaling\" " + excerpt(r.need("rope_scaling").dump(), 60) +
         ": scaled RoPE (Llama 3.1+, YaRN, linear, dynamic) is not supported yet; plain RoPE is");
  // Qwen2 always has q/k/v biases; Llama and Mistral have them when attention_bias says so.
  c.qkv_bias = model_type == "qwen2" ? true : r.boolean_or("attention_bias", false);
  c.o_bias = model_type == "qwen2" ? false : c.qkv_bias;
  if (r.boolean_or("mlp_bias", false))
    fail_config(r.where() + ": \"mlp_bias\": true is not supported (no Llama-family checkpoint we know uses it)");
  if (model_type == "mistral") {
    c.sliding_window = r.has("sliding_window") ? r.positive_int("sliding_window", 1LL << 30) : 0;
  } else if (model_type == "qwen2" && r.boolean_or("use_sliding_window", false)) {
    fail_config(r.where() + ": \"use_sliding_window\": true (Qwen2's per-layer windows) is not supported yet");
  }
  return c;
}

}  // namespace

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
    } else if (type == "llama" || type == "mistral" || type == "qwen2") {
      result.config = read_llama(r, type);
    } else {
      fail_config(where + ": model_type '" + excerpt(type, 40) + "' is not supported (supported: " + kSupported + ")");
    }
    result.config.model_type = type;
  } catch (const ConfigError& e) {
    result.error = cap_message(e.message);
  }
  return result;
}

}  // namespace attention_lab
