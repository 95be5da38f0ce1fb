#include "logic/prediction_worker.h"

#include "logic/ui_wake.h"

#include <chrono>
#include <exception>

namespace attention_lab::gui {

PredictionWorker::PredictionWorker() : thread_([this] { run(); }) {}

PredictionWorker::~PredictionWorker() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
    waiting_.reset();
  }
  wake_.notify_all();
  thread_.join();
}

void PredictionWorker::request(Request request) {
  {
    std::lock_guard lock(mutex_);
    waiting_ = std::move(request);
  }
  wake_.notify_all();
}

std::optional<PredictionWorker::Result> PredictionWorker::take() {
  std::lock_guard lock(mutex_);
  std::optional<Result> out = std::move(done_);
  done_.reset();
  return out;
}

bool PredictionWorker::working() const {
  std::lock_guard lock(mutex_);
  return computing_ || waiting_.has_value();
}

void PredictionWorker::run() {
  for (;;) {
    Request r;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || waiting_.has_value(); });
      if (stop_) return;
      r = std::move(*waiting_);
      waiting_.reset();
      computing_ = true;
    }
    Result out;
    out.session = r.session;
    out.revision = r.revision;
    out.row = r.row;
    out.layer = r.session->layer();
    const auto start = std::chrono::steady_clock::now();
    try {
      // Only this thread calls predictions() on a session (it keeps the
      // unedited probabilities of each row it was asked for).
      out.top = r.session->predictions(r.output, r.row, r.k);
    } catch (const std::exception&) {  // out of memory: no predictions this time, the window goes on
      out.top.clear();
    }
    out.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    {
      std::lock_guard lock(mutex_);
      done_ = std::move(out);
      computing_ = false;
    }
    wake_ui();
  }
}

}  // namespace attention_lab::gui
