// A trained tiny GPT as a Hugging Face GPT-2 folder, written as
// save_pretrained writes one: model mode and transformers' GPT2LMHeadModel
// read it with the same names and layouts as any GPT-2 checkpoint.
#include "attention_lab/hook_cache.h"
#include "attention_lab/scenario_io.h"  // write_file_atomically
#include "attention_lab/tiny_training.h"

#include <nlohmann/json.hpp>

#include <system_error>

namespace attention_lab {
std::string save_tiny_gpt(const TinyGpt& model, const std::filesystem::path& folder, const std::vector<std::string>* alphabet) {
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec) return folder.string() + ": cannot create the folder: " + ec.message();
  const TinyGptShape& s = model.shape();

  nlohmann::ordered_json config;
  config["architectures"] = {"GPT2LMHeadModel"};
  config["model_type"] = "gpt2";
  config["n_layer"] = s.layers;
  config["n_head"] = s.heads;
  config["n_embd"] = s.d_model;
  config["n_inner"] = s.d_ff;
  config["n_positions"] = s.context;
  config["n_ctx"] = s.context;
  config["vocab_size"] = s.vocab;
  config["layer_norm_epsilon"] = s.norm_eps;
  config["activation_function"] = "gelu_new";
  config["tie_word_embeddings"] = true;
  // Trained without dropout: transformers' defaults (0.1) would not change
  // the forward pass of eval(), but a fine-tune from this folder should see what we did.
  config["attn_pdrop"] = 0.0;
  config["embd_pdrop"] = 0.0;
  config["resid_pdrop"] = 0.0;

  std::vector<NamedTensor> tensors;
  for (const TinyParam& p : model.params()) {
    NamedTensor t;
    t.name = p.name;
    // Biases and norm parameters are vectors in the file, as torch keeps them.
    const bool vector = p.name.ends_with(".bias") || p.name.find(".ln_") != std::string::npos;
    t.shape = vector ? std::vector<std::int64_t>{p.value.cols()} : std::vector<std::int64_t>{p.value.rows(), p.value.cols()};
    t.values.assign(p.value.data(), p.value.data() + p.value.size());
    tensors.push_back(std::move(t));
  }
  nlohmann::ordered_json vocab;
  for (int i = 0; i < s.vocab; ++i)
    vocab[alphabet ? (*alphabet)[static_cast<std::size_t>(i)] : std::to_string(i)] = i;

  if (std::string e = write_file_atomically(folder / "config.json", config.dump(2) + "\n"); !e.empty()) return e;
  if (std::string e = write_file_atomically(folder / "model.safetensors", safetensors_bytes(tensors, {{"format", "pt"}})); !e.empty())
    return e;
  return write_file_atomically(folder / "vocab.json", vocab.dump() + "\n");
}

}  // namespace attention_lab
