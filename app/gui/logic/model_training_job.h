#pragma once
// A tiny Transformer trained from scratch in the app (tiny_training.h), on a
// thread of its own so the window stays live: Play runs steps until Pause or
// the last step, each logged step is copied out for the curves, and a paused
// run saves as a GPT-2 folder that model mode opens. No GL.

#include "attention_lab/tiny_training.h"

#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace attention_lab::gui {

class ModelTrainingJob {
 public:
  explicit ModelTrainingJob(TinyTrainConfig config);
  ~ModelTrainingJob();  // stops the run and waits for its step
  ModelTrainingJob(const ModelTrainingJob&) = delete;
  ModelTrainingJob& operator=(const ModelTrainingJob&) = delete;

  // Runs steps on the job's thread until pause() or the config's last step.
  void play();
  // Asks the thread to stop after its current step and waits for it.
  void pause();
  bool running() const { return running_.load(); }

  // What the window draws, copied under the lock.
  struct View {
    int steps = 0;
    int target = 0;  // the config's steps
    std::vector<TinyTrainLog> logs;
    std::string error;  // a step that would leave a number that is not finite
  };
  View view() const;
  const TinyTrainConfig& config() const { return config_; }

  // Pauses, then writes the model as it is (tiny_training.h); "" or the error.
  std::string save(const std::filesystem::path& folder);

 private:
  void loop();

  TinyTrainConfig config_;
  TinyTrainingRun run_;
  std::thread thread_;
  std::atomic<bool> stop_{false}, running_{false};
  mutable std::mutex mutex_;  // guards what view() reads
  int steps_ = 0;
  std::vector<TinyTrainLog> logs_;
  std::string error_;
  double seconds_ = 0.0;  // of stepping so far, over every Play
};

}  // namespace attention_lab::gui
