// The fuzz targets' checks (fuzz/checks/round_trip.h) on every committed seed
// and on every input a fuzzer once failed on (fuzz/regressions/TARGET/), in
// the normal build: a fixed crash stays fixed without clang or libFuzzer.

#include "checks/round_trip.h"

#include "attention_lab/lesson.h"
#include "attention_lab/safetensors.h"
#include "attention_lab/scenario_io.h"
#include "attention_lab/transformer_model.h"

#include "scoped_env.h"
#include "temp_dir.h"

#include "attention_lab/tiny_training.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace attention_lab;
namespace fs = std::filesystem;

namespace {

const fs::path kFuzzDir = fs::path(ATTENTION_LAB_FUZZ_DIR);

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.is_regular_file()) out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

// As the fuzz targets run: inputs asking for more than 64 MiB are refused.
test::ScopedEnv fuzz_budget() { return test::ScopedEnv("ATTENTION_LAB_MEMORY_LIMIT_MIB", "64"); }

}  // namespace

TEST(FuzzCorpus, EverySeedAndRegressionInputPassesTheScenarioCheck) {
  const auto budget = fuzz_budget();
  const auto seeds = files_in(kFuzzDir / "corpus" / "scenario");
  ASSERT_GE(seeds.size(), 5u);
  for (const auto& f : seeds) {
    EXPECT_TRUE(parse_scenario(attention_lab::test::read_text(f)).scenario.has_value()) << f << ": a seed should load";
    EXPECT_EQ(fuzz::check_scenario_file(attention_lab::test::read_text(f)), "") << f;
  }
  for (const auto& f : files_in(kFuzzDir / "regressions" / "scenario"))
    EXPECT_EQ(fuzz::check_scenario_file(attention_lab::test::read_text(f)), "") << f;
}

TEST(FuzzCorpus, EverySeedAndRegressionInputPassesTheLessonCheck) {
  const auto budget = fuzz_budget();
  const fs::path folder = kFuzzDir / "lesson-folder";
  const auto seeds = files_in(kFuzzDir / "corpus" / "lesson");
  ASSERT_GE(seeds.size(), 5u);
  for (const auto& f : seeds) {
    const LoadedLesson l = parse_lesson(attention_lab::test::read_text(f), folder);
    // outside-the-folder.json is there to keep the refusal of paths out of the folder covered.
    EXPECT_EQ(l.lesson.has_value(), f.stem() != "outside-the-folder") << f << ": " << l.error;
    EXPECT_EQ(fuzz::check_lesson_file(attention_lab::test::read_text(f), folder), "") << f;
  }
  for (const auto& f : files_in(kFuzzDir / "regressions" / "lesson"))
    EXPECT_EQ(fuzz::check_lesson_file(attention_lab::test::read_text(f), folder), "") << f;
}

TEST(FuzzCorpus, EverySeedAndRegressionInputPassesTheTraceCheck) {
  const auto budget = fuzz_budget();
  const auto seeds = files_in(kFuzzDir / "corpus" / "trace");
  ASSERT_GE(seeds.size(), 3u);
  for (const auto& f : seeds) EXPECT_EQ(fuzz::check_trace_of(attention_lab::test::read_text(f)), "") << f;
  for (const auto& f : files_in(kFuzzDir / "regressions" / "trace"))
    EXPECT_EQ(fuzz::check_trace_of(attention_lab::test::read_text(f)), "") << f;
}

TEST(FuzzCorpus, EverySeedAndRegressionInputPassesTheSafetensorsCheck) {
  const auto seeds = files_in(kFuzzDir / "corpus" / "safetensors");
  ASSERT_GE(seeds.size(), 5u);
  for (const auto& f : seeds) {
    std::string error;
    EXPECT_TRUE(SafetensorsFile::parse(attention_lab::test::read_text(f), f.filename().string(), error)) << f << ": a seed should load: " << error;
    EXPECT_EQ(fuzz::check_safetensors(attention_lab::test::read_text(f)), "") << f;
  }
  for (const auto& f : files_in(kFuzzDir / "regressions" / "safetensors"))
    EXPECT_EQ(fuzz::check_safetensors(attention_lab::test::read_text(f)), "") << f;
}

TEST(FuzzCorpus, EverySeedOfATrainingRunParsesAndPassesItsCheck) {
  const auto seeds = files_in(kFuzzDir / "corpus" / "train_run");
  ASSERT_GE(seeds.size(), 4u);
  for (const auto& f : seeds) {
    std::string error;
    parse_tiny_train_config(attention_lab::test::read_text(f), f.filename().string(), error);
    EXPECT_EQ(error, "") << f << ": a seed should parse";
    EXPECT_EQ(fuzz::check_train_run(attention_lab::test::read_text(f)), "") << f;
  }
  EXPECT_EQ(fuzz::check_train_run("{\"heads\": 7}"), "");  // refused by name: passes the check
}

TEST(FuzzCorpus, EverySeedAndRegressionInputPassesTheModelConfigCheck) {
  const auto seeds = files_in(kFuzzDir / "corpus" / "model_config");
  ASSERT_GE(seeds.size(), 10u);
  for (const auto& f : seeds) {
    const ParsedConfig parsed = parse_model_config(attention_lab::test::read_text(f), f.filename().string());
    EXPECT_EQ(parsed.error, "") << f << ": a seed should parse";
    EXPECT_EQ(fuzz::check_model_config(attention_lab::test::read_text(f)), "") << f;
  }
  for (const auto& f : files_in(kFuzzDir / "regressions" / "model_config"))
    EXPECT_EQ(fuzz::check_model_config(attention_lab::test::read_text(f)), "") << f;
}

#include "checks/tokenizer_check.h"

TEST(FuzzCorpus, EverySeedAndRegressionInputPassesTheSentencePieceCheck) {
  const auto seeds = files_in(kFuzzDir / "corpus" / "sentencepiece");
  ASSERT_GE(seeds.size(), 2u);
  for (const auto& f : seeds) EXPECT_EQ(fuzz::check_sentencepiece_input(attention_lab::test::read_text(f)), "") << f;
  for (const auto& f : files_in(kFuzzDir / "regressions" / "sentencepiece"))
    EXPECT_EQ(fuzz::check_sentencepiece_input(attention_lab::test::read_text(f)), "") << f;
}

TEST(FuzzCorpus, EverySeedAndRegressionInputPassesThePromptsCheck) {
  const auto seeds = files_in(kFuzzDir / "corpus" / "prompts");
  ASSERT_GE(seeds.size(), 3u);
  for (const auto& f : seeds) EXPECT_EQ(fuzz::check_prompts_input(attention_lab::test::read_text(f)), "") << f;
  for (const auto& f : files_in(kFuzzDir / "regressions" / "prompts"))
    EXPECT_EQ(fuzz::check_prompts_input(attention_lab::test::read_text(f)), "") << f;
}

// .npy arrays imported onto a scenario (weight_import.h).
#include "checks/npy_check.h"

#include "attention_lab/presets.h"
#include "attention_lab/weight_import.h"
#include "temp_dir.h"

TEST(FuzzCorpus, EverySeedAndRegressionInputPassesTheNpyCheck) {
  const auto budget = fuzz_budget();
  const auto seeds = files_in(kFuzzDir / "corpus" / "npy");
  ASSERT_GE(seeds.size(), 4u);
  const Scenario cat = *make_preset("fat-cat");
  for (const auto& f : seeds) {
    const ImportResult r = import_npy_bytes(cat, attention_lab::test::read_text(f), f.filename().string(), StageKind::W_q, false);
    EXPECT_TRUE(r.scenario) << f << ": a seed should import: " << r.error;
    EXPECT_EQ(fuzz::check_npy_import(attention_lab::test::read_text(f)), "") << f;
  }
  for (const auto& f : files_in(kFuzzDir / "regressions" / "npy")) EXPECT_EQ(fuzz::check_npy_import(attention_lab::test::read_text(f)), "") << f;
}
