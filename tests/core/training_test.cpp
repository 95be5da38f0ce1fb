// The trainer against torch.optim in float64: every
// tests/golden/fixtures/<name>.fit-<optimizer>.json
// (tests/golden/generate_training.py) is a few steps of SGD, SGD with
// momentum, Adam or AdamW on a golden scenario's loss; replayed here, the
// loss before each step and the trained matrices after the last must match.
// Tolerance 1e-3 of a value plus 1e-5 of the matrix's scale: our matrices are
// float32 between steps, torch's float64, and six steps compound that.

#include "attention_lab/presets.h"
#include "attention_lab/scenario_io.h"
#include "attention_lab/stage_registry.h"
#include "attention_lab/training.h"

#include "cli/cli_run.h"

#include "golden_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace attention_lab;
namespace fs = std::filesystem;

namespace {

StageKind kind_named(const std::string& name) {
  const auto id = parse_stage_id(name);
  if (!id) throw std::runtime_error("no stage " + name);
  return id->kind;
}

// fat-cat's head 0 asked to look at: 'the' → 'the', 'fat' → 'the', 'cat' → 'fat', 'sat' → 'cat', …
Loss fat_cat_attend() {
  Loss loss;
  loss.kind = LossKind::Attend;
  loss.targets = {0, 0, 1, 2, 2, 0, 4};
  return loss;
}

// Applies a step's new matrices to the scenario, as the CLI does.
void apply_step(Scenario& s, const TrainStep& step) {
  for (const auto& [kind, m] : step.updated) s.*(spec(kind).member) = SharedMatrix(m);
}

}  // namespace

TEST(TrainingFixtures, AreThere) { EXPECT_GE(test::golden_files_of(".fit-").size(), 16u) << "run tests/golden/generate_training.py"; }

class TrainerMatchesTorchOptim : public ::testing::TestWithParam<std::string> {};

TEST_P(TrainerMatchesTorchOptim, StepForStep) {
  const nlohmann::json fixture = test::read_golden_json(test::golden_dir() / (GetParam() + ".json"));
  nlohmann::json file = test::read_golden_json(test::golden_dir() / fixture["scenario"].get<std::string>());
  file["loss"] = fixture["loss"];
  const LoadResult r = parse_scenario(file.dump());
  ASSERT_TRUE(r.scenario) << r.error;
  Scenario s = *r.scenario;
  const nlohmann::json& o = fixture["settings"];
  TrainSettings settings;
  settings.optimizer = *parse_optimizer(o["optimizer"].get<std::string>());
  settings.learning_rate = o["learning_rate"].get<double>();
  settings.weight_decay = o["weight_decay"].get<double>();
  settings.momentum = o["momentum"].get<double>();
  settings.trained.clear();
  for (const auto& name : o["trained"]) settings.trained.push_back(kind_named(name.get<std::string>()));
  Trainer trainer(settings);
  const auto& losses = fixture["expected"]["losses"];
  for (std::size_t i = 0; i < losses.size(); ++i) {
    Engine engine;
    engine.recompute_all(s);
    const TrainStep step = trainer.step(engine, s, *s.loss);
    ASSERT_EQ(step.error, "");
    EXPECT_EQ(step.step, static_cast<int>(i) + 1);
    const double want = losses[i].get<double>();
    EXPECT_NEAR(step.loss, want, 1e-4 * std::max(1.0, std::abs(want))) << "step " << i + 1;
    apply_step(s, step);
  }
  for (const auto& [name, rows] : fixture["expected"]["final"].items()) {
    const Matrix& ours = (s.*(spec(kind_named(name)).member)).get();
    ASSERT_EQ(ours.rows(), static_cast<Eigen::Index>(rows.size())) << name;
    double scale = 0.0;
    for (const auto& row : rows)
      for (const auto& v : row) scale = std::max(scale, std::abs(v.get<double>()));
    for (std::size_t i = 0; i < rows.size(); ++i)
      for (std::size_t j = 0; j < rows[i].size(); ++j) {
        const double want = rows[i][j].get<double>(), got = ours(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j));
        EXPECT_LE(std::abs(got - want), 1e-3 * std::abs(want) + 1e-5 * scale) << name << "[" << i << "][" << j << "]";
      }
  }
}

INSTANTIATE_TEST_SUITE_P(Golden, TrainerMatchesTorchOptim, ::testing::ValuesIn(test::golden_files_of(".fit-")),
                         [](const ::testing::TestParamInfo<std::string>& tested) { return test::golden_test_name(tested.param); });

TEST(Trainer, ALearningRateThatDivergesStopsTheRunAndNamesTheMatrix) {
  Scenario s = *make_preset("fat-cat");
  const Loss loss = fat_cat_attend();
  TrainSettings settings;
  settings.optimizer = OptimizerKind::Sgd;
  settings.learning_rate = 1e40;  // past float32's range
  Trainer trainer(settings);
  Engine engine;
  engine.recompute_all(s);
  const TrainStep step = trainer.step(engine, s, loss);
  EXPECT_TRUE(step.updated.empty());
  EXPECT_EQ(step.error.rfind("step 1: W_q would hold a number that is not finite", 0), 0u) << step.error;
  EXPECT_NE(step.error.find("learning rate"), std::string::npos);
  EXPECT_EQ(trainer.steps(), 0);  // the optimizer's state is as before the step
}

TEST(Trainer, RefusesWhatItCannotTrainByName) {
  const Scenario s = *make_preset("fat-cat");
  TrainSettings settings;
  EXPECT_EQ(training_problem(s, settings), "");
  settings.trained = {StageKind::Scores};
  EXPECT_EQ(training_problem(s, settings), "trained: scores is computed, not a matrix of the scenario (train W_q, W_k, W_v, …)");
  settings.trained = {StageKind::W_o};
  EXPECT_EQ(training_problem(s, settings), "trained: W_o is not used by this scenario");
  settings.trained = {StageKind::W_q};
  settings.learning_rate = 0.0;
  EXPECT_NE(training_problem(s, settings).find("learning rate: expected a number greater than 0"), std::string::npos);
  EXPECT_FALSE(parse_optimizer("lion"));
  EXPECT_EQ(*parse_optimizer("adamw"), OptimizerKind::AdamW);
}

TEST(Trainer, AttentionLearnsWhereToLook) {
  // seed 004: train W_q and W_k only; 'sat' (row 3) should come to look at 'cat' (key 2)
  Scenario s = *make_preset("fat-cat");
  const Loss loss = fat_cat_attend();
  TrainSettings settings;
  settings.trained = {StageKind::W_q, StageKind::W_k};
  settings.learning_rate = 0.05;
  Trainer trainer(settings);
  double first = 0.0, last = 0.0;
  for (int i = 0; i < 60; ++i) {
    Engine engine;
    engine.recompute_all(s);
    const TrainStep step = trainer.step(engine, s, loss);
    ASSERT_EQ(step.error, "");
    if (i == 0) first = step.loss;
    last = step.loss;
    apply_step(s, step);
  }
  Engine engine;
  engine.recompute_all(s);
  EXPECT_LT(last, first * 0.5);
  EXPECT_GT(engine.stage(StageId::of_head(StageKind::Weights, 0))(3, 2), 0.5f);
}

TEST(FitCommand, TrainsWritesOneLineAStepAndTheTrainedScenario) {
  const fs::path dir = fs::temp_directory_path() / ("fit-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  Scenario s = *make_preset("fat-cat");
  const Loss loss = fat_cat_attend();
  s.loss = loss;
  std::ofstream(dir / "in.json") << scenario_to_json(s);
  const std::string in = (dir / "in.json").string(), trained = (dir / "trained.json").string();
  const test::CliResult r =
      test::run_cli({"fit", in, "--steps", "20", "--lr", "0.05", "--optimizer", "adamw", "--train", "W_q,W_k", "-o", trained});
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<nlohmann::json> lines;
  std::istringstream text(r.out);
  for (std::string line; std::getline(text, line);) lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 20u);
  EXPECT_EQ(lines.back()["step"], 20);
  EXPECT_LT(lines.back()["loss"].get<double>(), lines.front()["loss"].get<double>());
  EXPECT_TRUE(lines.front()["grad_norm"].contains("W_q"));
  EXPECT_FALSE(lines.front()["grad_norm"].contains("W_v"));  // only what --train names
  // the trained scenario: W_v as it was, W_q moved, the loss kept
  const LoadResult back = load_scenario(trained);
  ASSERT_TRUE(back.scenario) << back.error;
  EXPECT_EQ(back.scenario->W_v.get(), s.W_v.get());
  EXPECT_NE(back.scenario->W_q.get(), s.W_q.get());
  EXPECT_EQ(back.scenario->loss, s.loss);
  // a learning rate that diverges: exit 1, the step and the matrix named, the last finite scenario written
  const test::CliResult diverged = test::run_cli({"fit", in, "--steps", "3", "--optimizer", "sgd", "--lr", "1e40", "-o", trained});
  EXPECT_EQ(diverged.code, cli::kExitFailure);
  EXPECT_NE(diverged.err.find("step 1: W_q would hold a number that is not finite"), std::string::npos) << diverged.err;
  ASSERT_TRUE(load_scenario(trained).scenario);
  EXPECT_EQ(load_scenario(trained).scenario->W_q.get(), s.W_q.get());
  for (const auto& [args, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"fit", in, "--optimizer", "lion"}, "--optimizer: expected sgd, momentum, adam or adamw, found 'lion'"},
           {{"fit", in, "--train", "scores[0]"}, "--train: expected matrices of the scenario"},
           {{"fit", in, "--train", "W_o"}, "trained: W_o is not used by this scenario"},
           {{"fit", in, "--lr", "fast"}, "--lr: expected a number, found 'fast'"},
           {{"fit", in, "--steps", "0"}, "--steps: expected a whole number from 1"}}) {
    const test::CliResult bad = test::run_cli(args);
    EXPECT_EQ(bad.code, cli::kExitBadInput) << message;
    EXPECT_NE(bad.err.find(message), std::string::npos) << bad.err;
  }
  fs::remove_all(dir);
}

TEST(Trainer, AMatrixThatChangesShapeStartsFreshMoments) {
  Scenario s = *make_preset("fat-cat");
  const Loss loss = fat_cat_attend();
  for (const OptimizerKind kind : {OptimizerKind::Momentum, OptimizerKind::Adam}) {
    TrainSettings settings;
    settings.optimizer = kind;
    Trainer trainer(settings);
    Engine engine;
    engine.recompute_all(s);
    ASSERT_EQ(trainer.step(engine, s, loss).error, "");
    // d_k from 4 to 2: W_q, W_k and W_v are narrower now
    Scenario narrower = s;
    narrower.W_q = s.W_q.get().leftCols(2);
    narrower.W_k = s.W_k.get().leftCols(2);
    narrower.W_v = s.W_v.get().leftCols(2);
    Engine again;
    again.recompute_all(narrower);
    const TrainStep step = trainer.step(again, narrower, loss);
    ASSERT_EQ(step.error, "");
    ASSERT_EQ(step.updated.size(), 3u);
    EXPECT_EQ(step.updated[0].second.cols(), 2);
  }
}
