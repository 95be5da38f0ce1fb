#include "background_job.h"

#include "attention_lab/scenario_io.h"

#include <exception>
#include <filesystem>

namespace attention_lab::gui {

namespace {
// About 50 ms on this class of machine (a few tens of GFLOP/s achieved).
constexpr double kHeavyFlops = 1.5e9;

// Set once at start-up, before any job exists (--hold-jobs-while).
std::string g_hold_file;

// A job starts its work only once the hold file is gone (tests), or as soon
// as it is cancelled: returns false when the job was cancelled while held.
bool wait_until_released(const BackgroundJob::Result& r) {
  if (g_hold_file.empty()) return true;
  std::error_code ignored;
  while (std::filesystem::exists(g_hold_file, ignored) && !r.cancel)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return !r.cancel;
}
}  // namespace

void BackgroundJob::hold_while_file_exists(std::string path) { g_hold_file = std::move(path); }

BackgroundJob::BackgroundJob(std::string what, std::unique_ptr<Document::PendingChange> change)
    : what_(std::move(what)) {
  result_->change = std::move(change);
  reports_progress_ = true;
  thread_ = std::thread([r = result_] {
    if (!wait_until_released(*r)) {  // cancelled before it began
      r->done = true;
      return;
    }
    try {
      // The engine reports progress and stops at the next block when Cancel is pressed.
      r->change->engine.set_control(&r->control);
      r->change->compute();
      r->change->engine.set_control(nullptr);
    } catch (const Cancelled&) {
      r->change.reset();
    } catch (const std::exception& e) {  // e.g. out of memory: report, keep the old result
      r->error = e.what();
      r->change.reset();
    }
    r->done = true;
  });
}

BackgroundJob::BackgroundJob(std::string what, std::string path) : what_(std::move(what)) {
  result_->path = std::move(path);
  thread_ = std::thread([r = result_] {
    if (!wait_until_released(*r)) {  // cancelled before it began
      r->done = true;
      return;
    }
    try {
      LoadResult loaded = load_scenario(r->path);
      if (!loaded.scenario)
        r->error = loaded.error;
      else if (!r->cancel)
        r->document = std::make_unique<Document>(std::move(*loaded.scenario));
    } catch (const std::exception& e) {
      r->error = e.what();
    }
    r->done = true;
  });
}

BackgroundJob::BackgroundJob(std::string what, Scenario scenario, std::string path) : what_(std::move(what)) {
  result_->path = std::move(path);
  thread_ = std::thread([r = result_, s = std::move(scenario)]() mutable {
    if (!wait_until_released(*r)) {  // cancelled before it began
      r->done = true;
      return;
    }
    try {
      r->document = std::make_unique<Document>(std::move(s));
    } catch (const std::exception& e) {
      r->error = e.what();
    }
    r->done = true;
  });
}

BackgroundJob::BackgroundJob(std::string what, std::shared_ptr<const Scenario> snapshot_of) : what_(std::move(what)) {
  reports_progress_ = true;
  thread_ = std::thread([r = result_, s = std::move(snapshot_of)]() mutable {
    if (!wait_until_released(*r)) {  // cancelled before it began
      r->done = true;
      return;
    }
    try {
      r->snapshot = std::make_unique<Snapshot>(compute_snapshot(std::move(s), &r->control));
    } catch (const Cancelled&) {
      r->snapshot.reset();
    } catch (const std::exception& e) {
      r->error = e.what();
    }
    r->done = true;
  });
}

BackgroundJob::~BackgroundJob() {
  // A cancelled job's thread may still be computing; it owns its share of the
  // result and ends on its own.
  if (thread_.joinable()) {
    if (done()) thread_.join();
    else thread_.detach();
  }
}

void BackgroundJob::cancel() {
  result_->cancel = true;
  result_->control.cancel = true;
}

float BackgroundJob::progress() const { return reports_progress_ ? result_->control.progress.load() : -1.0f; }

double BackgroundJob::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

double full_forward_flops(const Dims& d) {
  const double T = d.T, D = d.d_model;
  return 8.0 * T * D * D + 4.0 * T * T * D;
}

bool is_heavy(const Document& doc, const Edit& edit) {
  Dims dims = doc.scenario().dims();
  if (const auto* resize = std::get_if<SetDimension>(&edit)) {
    if (resize->which == Dimension::T) dims.T = std::max(dims.T, resize->value);
    if (resize->which == Dimension::d_model) dims.d_model = std::max(dims.d_model, resize->value);
  }
  if (const auto* replace = std::get_if<ReplaceScenario>(&edit); replace && replace->scenario) {
    const Dims other = replace->scenario->dims();
    if (full_forward_flops(other) > full_forward_flops(dims)) dims = other;
  }
  if (full_forward_flops(dims) < kHeavyFlops) return false;
  // Cell edits, pins and label changes update a few rows and columns: fast at any size.
  return std::holds_alternative<SetDimension>(edit) || std::holds_alternative<ReplaceScenario>(edit) ||
         std::holds_alternative<SetToggle>(edit) || std::holds_alternative<SetMask>(edit) ||
         std::holds_alternative<SetMatrix>(edit) || std::holds_alternative<SetPins>(edit);
}

bool is_heavy(const Dims& dims) { return full_forward_flops(dims) >= kHeavyFlops; }

bool is_heavy(const Document& doc, const std::vector<Edit>& edits) {
  for (const Edit& e : edits)
    if (is_heavy(doc, e)) return true;
  return false;
}

}  // namespace attention_lab::gui
