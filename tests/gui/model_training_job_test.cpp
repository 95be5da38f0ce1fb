// The Train tab's tiny Transformer run on its own thread: play, pause,
// the logged steps, a diverging run, save.

#include "logic/model_training_job.h"

#include "attention_lab/transformer_model.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>
#include <unistd.h>

using namespace attention_lab;
using namespace attention_lab::gui;

namespace {

TinyTrainConfig small(int steps) {
  TinyTrainConfig c;
  c.task = TrainTask::Copy;
  c.length = 3;
  c.shape = {1, 2, 8, 32, 5, task_context(TrainTask::Copy, 3)};
  c.batch = 4;
  c.steps = steps;
  c.log_every = 5;
  return c;
}

// Waits (on the job's state, not on time) until it stops running.
void wait_until_stopped(const ModelTrainingJob& job) {
  while (job.running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

}  // namespace

TEST(ModelTrainingJob, RunsToTheLastStepLoggingEveryFifth) {
  ModelTrainingJob job(small(23));
  ModelTrainingJob::View v = job.view();
  ASSERT_EQ(v.logs.size(), 1u);  // step 0, the untrained model
  EXPECT_EQ(v.logs[0].step, 0);
  job.play();
  wait_until_stopped(job);
  v = job.view();
  EXPECT_EQ(v.steps, 23);
  EXPECT_EQ(v.target, 23);
  std::vector<int> steps;
  for (const TinyTrainLog& l : v.logs) steps.push_back(l.step);
  EXPECT_EQ(steps, (std::vector<int>{0, 5, 10, 15, 20, 23}));
  EXPECT_EQ(v.error, "");
  job.play();  // nothing left to run
  EXPECT_FALSE(job.running());
}

TEST(ModelTrainingJob, PausesAndGoesOnAsIfNeverPaused) {
  ModelTrainingJob paused(small(200)), straight(small(200));
  paused.play();
  while (paused.view().steps < 3) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  paused.pause();
  const int at = paused.view().steps;
  EXPECT_FALSE(paused.running());
  EXPECT_LT(at, 200);
  EXPECT_EQ(paused.view().steps, at);
  paused.play();
  straight.play();
  wait_until_stopped(paused);
  wait_until_stopped(straight);
  EXPECT_EQ(paused.view().logs.back().loss, straight.view().logs.back().loss) << "the same seeded run, paused at " << at;
}

TEST(ModelTrainingJob, ADivergingRunStopsWithTheStepNamed) {
  TinyTrainConfig c = small(300);
  c.optimizer.learning_rate = 9.9;
  ModelTrainingJob job(c);
  job.play();
  wait_until_stopped(job);
  const ModelTrainingJob::View v = job.view();
  if (v.error.empty()) GTEST_SKIP() << "this learning rate did not diverge";
  EXPECT_NE(v.error.find("step "), std::string::npos) << v.error;
  EXPECT_LT(v.steps, 300);
  job.play();  // refused: the run stopped for a reason
  EXPECT_FALSE(job.running());
}

TEST(ModelTrainingJob, SavesAFolderModelModeOpens) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("attention-lab-job-" + std::to_string(::getpid()));
  ModelTrainingJob job(small(40));
  job.play();
  ASSERT_EQ(job.save(dir), "");  // pauses first
  EXPECT_FALSE(job.running());
  const LoadedModel m = load_model(dir);
  EXPECT_TRUE(m.model) << m.error;
  std::filesystem::remove_all(dir);
}
