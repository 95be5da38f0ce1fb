#pragma once
// Long work (a full recompute at a large size, loading a big file) runs on a
// worker thread while the window keeps showing the last finished result, with
// a progress bar and a Cancel button.

#include "attention_lab/document.h"
#include "attention_lab/model_session.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace attention_lab::gui {

// Opening a checkpoint (or refocusing one already open): the model, its
// input text and the layer the pipeline shows.
struct ModelRequest {
  std::string path;                               // loaded when `model` is null
  std::shared_ptr<const TransformerModel> model;  // an open model to reuse
  std::shared_ptr<const Tokenizer> tokenizer;
  std::string text;                               // empty: a default input
  int layer = 0;
  // The scenario of this layer's kept document (edited, then left; kept
  // without its stages): its stages are computed too, for it to come back.
  std::shared_ptr<const Scenario> kept;
  // Heads, attention or MLPs ablated (ModelSession::start); those at a
  // position the text does not have are dropped (the result says which).
  std::vector<Ablation> ablations;
  // The session shown now: a rerun of the same text takes from it the layers
  // that do not change (ModelSession::start's `previous`).
  std::shared_ptr<const ModelSession> previous;

  // A model opened from its file or folder, on `text` (empty: a default).
  static ModelRequest open(std::string path, std::string text = {}, int layer = 0) {
    return ModelRequest{std::move(path), nullptr, nullptr, std::move(text), layer, nullptr, {}, nullptr};
  }
};

// The input a model opens with when none is given: a sentence for a BPE
// tokenizer, else a few vocabulary entries.
std::string default_model_text(const Tokenizer& tokenizer);

class BackgroundJob {
 public:
  // What the worker produced; owned jointly with the thread, so a cancelled
  // job can be dropped at once while its thread finishes on its own.
  struct Result {
    std::atomic<bool> done{false};
    std::atomic<bool> cancel{false};
    ComputeControl control;  // the engine's progress, and how Cancel stops it early
    std::unique_ptr<Document::PendingChange> change;  // a prepared edit, undo or redo
    std::unique_ptr<Document> document;               // a loaded file
    std::unique_ptr<ModelSession> session;            // an opened model (with `document`, its focused layer)
    std::string model_text;                           // the text it ran
    std::vector<Ablation> dropped_ablations;          // at positions the text does not have
    std::unique_ptr<Engine> kept_engine;              // the stages of ModelRequest::kept
    std::shared_ptr<const Scenario> kept_scenario;    // what kept_engine read (alive until rebound)
    bool model_job = false;
    std::string path;
    std::string error;
  };

  // Computes a prepared change of the open document.
  BackgroundJob(std::string what, std::unique_ptr<Document::PendingChange> change);
  // Loads a scenario file and computes it.
  BackgroundJob(std::string what, std::string path);
  // Computes a new document for `scenario` (a big preset at start-up); `path` may be empty.
  BackgroundJob(std::string what, Scenario scenario, std::string path);
  // Opens a model (or refocuses an open one) and computes its focused layer's document.
  BackgroundJob(std::string what, ModelRequest request);
  ~BackgroundJob();
  BackgroundJob(const BackgroundJob&) = delete;
  BackgroundJob& operator=(const BackgroundJob&) = delete;

  // Tests only (--hold-jobs-while FILE): every job waits to start its work
  // while FILE exists, so a test can click Cancel on a job that is certainly
  // still running, however fast or busy the machine is. Call before any job.
  static void hold_while_file_exists(std::string path);

  bool done() const { return result_->done.load(); }
  void cancel();
  const std::string& what() const { return what_; }
  double seconds() const;
  // 0…1 while a prepared change computes; negative when unknown (loading a file).
  float progress() const;
  // Only once done(): hands the result over.
  std::shared_ptr<Result> result() const { return result_; }

 private:
  std::string what_;
  bool reports_progress_ = false;  // only an engine computing (a change, a model) reports a fraction
  std::shared_ptr<Result> result_ = std::make_shared<Result>();
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::thread thread_;
};

// Whether `edit` should run in the background: it recomputes every stage and
// the size makes that take longer than a frame or two.
bool is_heavy(const Document& doc, const Edit& edit);
bool is_heavy(const Document& doc, const std::vector<Edit>& edits);
bool is_heavy(const Dims& dims);

// FLOPs of one full forward pass at these sizes: 8·T·d² + 4·T²·d.
double full_forward_flops(const Dims& dims);

}  // namespace attention_lab::gui
