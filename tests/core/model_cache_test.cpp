// Model folders and the Hugging Face cache layout File ▸ Open model… lists.

#include "attention_lab/model_cache.h"
#include "scoped_env.h"
#include "temp_dir.h"

#include <gtest/gtest.h>

#include <fstream>

namespace attention_lab {
namespace {

namespace fs = std::filesystem;

void touch(const fs::path& p, const std::string& text = "{}") {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

TEST(ModelCache, AModelFolderHasAConfigAndSafetensorsWeights) {
  test::TempDir dir;
  EXPECT_FALSE(is_model_folder(dir.path()));
  touch(dir.path() / "config.json");
  EXPECT_FALSE(is_model_folder(dir.path()));
  touch(dir.path() / "model.safetensors.index.json");
  EXPECT_TRUE(is_model_folder(dir.path()));
  EXPECT_TRUE(is_model_folder(ATTENTION_LAB_MODEL_FIXTURES_DIR "/gpt2-conv1d"));
}

TEST(ModelCache, ListsCachedModelsByNameAtTheSnapshotMainNames) {
  test::TempDir hub;
  const fs::path gpt2 = hub.path() / "models--openai-community--gpt2";
  touch(gpt2 / "refs" / "main", "abc123");
  touch(gpt2 / "snapshots" / "abc123" / "config.json");
  touch(gpt2 / "snapshots" / "abc123" / "model.safetensors");
  touch(gpt2 / "snapshots" / "old999" / "config.json");
  touch(gpt2 / "snapshots" / "old999" / "model.safetensors");
  const fs::path smol = hub.path() / "models--HuggingFaceTB--SmolLM-135M";  // no refs/main: the one snapshot there
  touch(smol / "snapshots" / "f00" / "config.json");
  touch(smol / "snapshots" / "f00" / "model.safetensors");
  touch(hub.path() / "models--someone--pytorch-only" / "snapshots" / "1" / "config.json");  // no safetensors: left out
  touch(hub.path() / "datasets--someone--data" / "snapshots" / "1" / "config.json");
  const auto models = find_cached_models(hub.path());
  ASSERT_EQ(models.size(), 2u);
  EXPECT_EQ(models[0].name, "HuggingFaceTB/SmolLM-135M");
  EXPECT_EQ(models[0].folder, smol / "snapshots" / "f00");
  EXPECT_EQ(models[1].name, "openai-community/gpt2");
  EXPECT_EQ(models[1].folder, gpt2 / "snapshots" / "abc123");
  EXPECT_TRUE(find_cached_models(hub.path() / "missing").empty());
}

TEST(ModelCache, ACachedSnapshotIsCalledByItsRepositorysName) {
  EXPECT_EQ(model_display_name("/h/hub/models--openai-community--gpt2/snapshots/abc"), "openai-community/gpt2");
  EXPECT_EQ(model_display_name("/h/hub/models--openai-community--gpt2/snapshots/abc/"), "openai-community/gpt2");
  EXPECT_EQ(model_display_name("/h/hub/models--gpt2/snapshots/abc/model.safetensors"), "gpt2");
  EXPECT_EQ(model_display_name("/models/smollm-135m"), "smollm-135m");
  EXPECT_EQ(model_display_name("/models/smollm-135m/model.safetensors"), "smollm-135m");
  EXPECT_EQ(model_display_name("gpt-nano-sort"), "gpt-nano-sort");
}

TEST(ModelCache, TheHubFolderFollowsTheLibrariesVariables) {
  test::ScopedEnv a("HF_HUB_CACHE", "/x/hub");
  EXPECT_EQ(huggingface_hub_dir(), fs::path("/x/hub"));
  test::ScopedEnv b("HF_HUB_CACHE", "");
  test::ScopedEnv c("HF_HOME", "/y");
  EXPECT_EQ(huggingface_hub_dir(), fs::path("/y/hub"));
  test::ScopedEnv d("HF_HOME", "");
  test::ScopedEnv e("XDG_CACHE_HOME", "");
  test::ScopedEnv f("HOME", "/home/u");
  EXPECT_EQ(huggingface_hub_dir(), fs::path("/home/u/.cache/huggingface/hub"));
}

}  // namespace
}  // namespace attention_lab
