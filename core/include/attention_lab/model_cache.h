#pragma once
// Finding models on disk: what a model folder is, and the models the Hugging
// Face libraries left in their cache (File ▸ Open model… lists them).

#include <filesystem>
#include <string>
#include <vector>

namespace attention_lab {

// A folder with config.json and model.safetensors (or its sharded index).
bool is_model_folder(const std::filesystem::path& folder);

// $HF_HUB_CACHE, else $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub,
// else ~/.cache/huggingface/hub (the libraries' own order).
std::filesystem::path huggingface_hub_dir();

struct CachedModel {
  std::string name;               // "openai-community/gpt2"
  std::filesystem::path folder;   // its snapshot: hub/models--ORG--NAME/snapshots/HASH
};

// What to call a model at `path`: "ORG/NAME" for a snapshot of the cache
// (…/models--ORG--NAME/snapshots/HASH), else the folder's (or the
// .safetensors file's folder's) name.
std::string model_display_name(const std::filesystem::path& path);

// Every cached model with safetensors weights, by name. The snapshot is the
// one refs/main names, else the most recently changed one.
std::vector<CachedModel> find_cached_models(const std::filesystem::path& hub);

}  // namespace attention_lab
