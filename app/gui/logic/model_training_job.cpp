#include "logic/model_training_job.h"

#include <chrono>
#include <stdexcept>

namespace attention_lab::gui {

ModelTrainingJob::ModelTrainingJob(TinyTrainConfig config) : config_(config), run_(config) {
  std::lock_guard lock(mutex_);
  logs_.push_back(run_.measure(0.0));  // step 0: where the curves begin (the loss of the untrained model)
  logs_.back().loss = logs_.back().eval_loss;
}

ModelTrainingJob::~ModelTrainingJob() { pause(); }

void ModelTrainingJob::play() {
  if (running_.load() || run_.steps_done() >= config_.steps) return;
  {
    std::lock_guard lock(mutex_);
    if (!error_.empty()) return;
  }
  if (thread_.joinable()) thread_.join();
  stop_ = false;
  running_ = true;
  thread_ = std::thread([this] { loop(); });
}

void ModelTrainingJob::pause() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void ModelTrainingJob::loop() {
  auto start = std::chrono::steady_clock::now();
  const double before = seconds_;
  while (!stop_.load() && run_.steps_done() < config_.steps) {
    double loss = 0.0;
    try {
      loss = run_.step();
    } catch (const std::runtime_error& e) {
      std::lock_guard lock(mutex_);
      error_ = e.what();
      break;
    }
    const int done = run_.steps_done();
    seconds_ = before + std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const bool logged = done % config_.log_every == 0 || done == config_.steps;
    TinyTrainLog log;
    if (logged) {
      log = run_.measure(loss);
      log.seconds = seconds_;
    }
    std::lock_guard lock(mutex_);
    steps_ = done;
    if (logged) logs_.push_back(std::move(log));
  }
  running_ = false;
}

ModelTrainingJob::View ModelTrainingJob::view() const {
  std::lock_guard lock(mutex_);
  return View{steps_, config_.steps, logs_, error_};
}

std::string ModelTrainingJob::save(const std::filesystem::path& folder) {
  pause();
  return save_tiny_gpt(run_.model(), folder, config_.corpus ? &config_.corpus->alphabet : nullptr);
}

}  // namespace attention_lab::gui
