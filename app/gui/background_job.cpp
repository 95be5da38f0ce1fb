#include "background_job.h"

#include "logic/ui_wake.h"

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
    const WakeUiOnExit wake;  // after `done` is set, whichever way this ends
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
    const WakeUiOnExit wake;  // after `done` is set, whichever way this ends
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
    const WakeUiOnExit wake;  // after `done` is set, whichever way this ends
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

std::string default_model_text(const Tokenizer& tokenizer) {
  if (tokenizer.splits_text()) return "The quick brown fox jumps over the lazy dog.";
  // Six entries of the vocabulary, cycling through a small one ("0 1 2 0 1 2").
  std::string text;
  for (int i = 0; i < 6; ++i) text += (i ? " " : "") + tokenizer.token_text(i % std::max(1, tokenizer.vocab_size()));
  return text;
}

BackgroundJob::BackgroundJob(std::string what, ModelRequest request) : what_(std::move(what)) {
  reports_progress_ = true;
  result_->path = request.model ? std::string() : request.path;
  result_->model_job = true;
  thread_ = std::thread([r = result_, q = std::move(request)]() mutable {
    const WakeUiOnExit wake;  // after `done` is set, whichever way this ends
    if (!wait_until_released(*r)) {  // cancelled before it began
      r->done = true;
      return;
    }
    try {
      if (!q.model) {
        LoadedModel loaded = load_model(q.path, [&](double fraction, const std::string&) {
          r->control.progress = static_cast<float>(fraction);
          return !r->cancel.load();
        });
        if (!loaded.model) {
          if (!r->cancel) r->error = loaded.error;
          r->done = true;
          return;
        }
        q.model = loaded.model;
        const auto folder = std::filesystem::is_directory(q.path) ? std::filesystem::path(q.path)
                                                                   : std::filesystem::path(q.path).parent_path();
        std::string error;
        q.tokenizer = Tokenizer::load(folder.empty() ? "." : folder, q.model->config.vocab, error);
        if (!q.tokenizer) {
          r->error = error;
          r->done = true;
          return;
        }
      }
      if (q.text.empty()) q.text = default_model_text(*q.tokenizer);
      const Encoded ids = q.tokenizer->encode(q.text);
      if (!ids.error.empty()) {
        r->error = "Text: " + ids.error;
        r->done = true;
        return;
      }
      // The focused layer's document is made as the forward reaches it, and
      // the later layers run from its output: the predictions shown first
      // need no second pass.
      std::unique_ptr<Document> document;
      const FocusedLayer focus = [&](LayerScenario layer) {
        document = std::make_unique<Document>(std::move(layer.scenario));
        FocusedAttention f;
        f.output = document->stage(StageId::input(StageKind::Output));
        for (int h = 0; h < document->scenario().heads; ++h)
          f.weights.emplace_back(document->stage(StageId::of_head(StageKind::Weights, h)));
        return f;
      };
      std::string error;
      std::vector<Ablation> ablations;
      for (const Ablation& a : q.ablations)
        (a.position < static_cast<int>(ids.ids.size()) ? ablations : r->dropped_ablations).push_back(a);
      auto session =
          ModelSession::start(q.model, q.tokenizer, ids.ids, q.layer, &r->control, error, focus, ablations, q.previous.get());
      if (!session) {
        r->error = error;
        r->done = true;
        return;
      }
      session->prepare_baseline(session->T() - 1);  // the predictions the Model tab shows first: one row's logits
      std::unique_ptr<Engine> kept_engine;
      if (q.kept && !r->cancel) {  // one layer's forward: no progress of its own (the bar stays full)
        kept_engine = std::make_unique<Engine>();
        kept_engine->recompute_all(*q.kept);
      }
      if (!r->cancel) {
        r->kept_engine = std::move(kept_engine);
        r->kept_scenario = std::move(q.kept);
        r->session = std::move(session);
        r->document = std::move(document);
        r->model_text = std::move(q.text);
      }
    } catch (const Cancelled&) {
    } catch (const std::exception& e) {  // e.g. out of memory: report, keep what is shown
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
