#pragma once
// One computation at a time on a thread of its own, for work the user starts
// and may wait seconds for (a patching sweep, an attribution): the window
// stays live, shows its progress and can cancel it. Starting another stops
// the one running first (its result is dropped). The work reports progress
// through a callback that returns false once it should stop.

#include "logic/ui_wake.h"

#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

namespace attention_lab::gui {

template <typename Result>
class TaskThread {
 public:
  using Progress = std::function<bool(double fraction)>;
  using Work = std::function<Result(const Progress& progress)>;

  TaskThread() = default;
  ~TaskThread() { stop(); }
  TaskThread(const TaskThread&) = delete;
  TaskThread& operator=(const TaskThread&) = delete;

  void start(Work work) {
    stop();
    shared_ = std::make_shared<Shared>();
    thread_ = std::thread([s = shared_, work = std::move(work)] {
      WakeUiOnExit wake;
      const Progress progress = [&s](double f) {
        s->progress = static_cast<float>(f);
        return !s->cancel.load();
      };
      try {
        s->result = work(progress);
      } catch (const std::exception& e) {
        s->error = e.what();
      }
      s->done = true;
    });
  }
  // Asks the running work to stop; its result (incomplete) still arrives.
  void cancel() {
    if (shared_) shared_->cancel = true;
  }
  bool running() const { return shared_ && !shared_->done.load(); }
  float progress() const { return shared_ ? shared_->progress.load() : 0.0f; }
  // The finished result, once; `error` gets what the work threw.
  std::optional<Result> take(std::string& error) {
    if (!shared_ || !shared_->done.load()) return std::nullopt;
    thread_.join();
    std::optional<Result> r = std::move(shared_->result);
    error = shared_->error;
    shared_.reset();
    return r;
  }

 private:
  struct Shared {
    std::atomic<bool> done{false};
    std::atomic<bool> cancel{false};
    std::atomic<float> progress{0.0f};
    std::optional<Result> result;
    std::string error;
  };
  void stop() {
    cancel();
    if (thread_.joinable()) thread_.join();
    shared_.reset();
  }

  std::shared_ptr<Shared> shared_;
  std::thread thread_;
};

}  // namespace attention_lab::gui
