#pragma once
// The Model tab's next-token predictions run the focused layer's output
// through every later layer: at GPT-2 size and T = 1024 that is half a second
// to a second, too long for the UI thread while a cell is dragged. They run
// on a thread of their own: the window keeps the last result (marked as
// updating) until the newest request's is in, and a request made while one
// computes replaces any that waited, so a drag computes its latest state
// rather than every frame's.

#include "attention_lab/model_session.h"

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace attention_lab::gui {

class PredictionWorker {
 public:
  // What the predictions are of: the session's focused layer giving
  // `output`, the row predicted, k of them; `revision` names the document
  // state they belong to.
  struct Request {
    std::shared_ptr<const ModelSession> session;
    Matrix output;
    int row = 0;
    int k = 10;
    std::uint64_t revision = 0;
  };
  struct Result {
    std::shared_ptr<const ModelSession> session;
    std::uint64_t revision = 0;
    int row = 0;
    int layer = 0;
    std::vector<Prediction> top;
    double ms = 0.0;  // how long they took
  };

  PredictionWorker();
  ~PredictionWorker();  // waits for the one computing, drops the one waiting
  PredictionWorker(const PredictionWorker&) = delete;
  PredictionWorker& operator=(const PredictionWorker&) = delete;

  // Queues `request`, replacing one that has not started.
  void request(Request request);
  // The latest finished result, once (older ones are dropped unseen).
  std::optional<Result> take();
  // A request waits or computes.
  bool working() const;

 private:
  void run();

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::optional<Request> waiting_;
  std::optional<Result> done_;
  bool computing_ = false;
  bool stop_ = false;
  std::thread thread_;  // last: starts once the rest is ready
};

}  // namespace attention_lab::gui
