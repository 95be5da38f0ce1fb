#include "autosave.h"

#include "app_state.h"

#include "attention_lab/lesson.h"
#include "attention_lab/scenario_io.h"

#include <chrono>
#include <cstdio>

namespace attention_lab::gui {

namespace {

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// What the recovery file says about the document, for the restore question.
RecoveryInfo describe(const AppState& state) {
  const Scenario& s = state.doc->scenario();
  RecoveryInfo info;
  info.saved_unix = unix_now();
  info.file_path = state.file_path;
  info.title = s.title;
  if (state.lesson.lesson) info.lesson_path = state.lesson.path, info.lesson_step = std::max(state.lesson.step, 0);
  info.T = s.T(), info.d_model = s.d_model(), info.heads = s.heads;
  return info;
}

void report(RecoveryState& r, AppState& state, const std::string& error) {
  if (error != r.error) state.set_status("Autosave failed: " + error);  // once, not every retry
  r.error = error;
  r.retry_at = seconds_now() + 10.0;
}

// Drops the job in flight: its result would replace what is restored.
void cancel_job(AppState& state) {
  if (!state.job) return;
  state.job->cancel();
  state.job.reset();
}

}  // namespace

RecoveryState::~RecoveryState() {
  writer.wait();
  if (enabled && session) session->remove();
  for (Orphan& o : offered) o.lock.release();  // not decided: offered again next time
}

void start_recovery(AppState& state) {
  RecoveryState& r = state.recovery;
  const Options& o = state.options;
  r.enabled = o.screenshot.empty() && o.export_target.empty() && o.frame_stats.empty() && !o.check_slides;
  r.session.emplace(recovery_dir(), this_session());
  if (!r.enabled && !o.recover) return;
  r.offered = claim_orphans(r.session->dir());
  if (!o.recover) return;
  for (std::size_t i = 0; i < r.offered.size(); ++i)
    if (r.offered[i].error.empty() && restore_orphan(state, i)) return;
  std::fprintf(stderr, "attention-lab: --recover: no unsaved work to restore in %s\n", r.session->dir().c_str());
  state.set_status("--recover: no unsaved work to restore in " + r.session->dir().string());
}

bool restore_orphan(AppState& state, std::size_t index) {
  RecoveryState& r = state.recovery;
  Orphan& orphan = r.offered[index];
  LoadedRecovery loaded = load_recovery_file(orphan.file);
  if (!loaded.scenario) {
    orphan.error = loaded.error;  // the dialog says so, and offers only Discard or Not now
    std::fprintf(stderr, "attention-lab: %s\n", loaded.error.c_str());
    return false;
  }
  const RecoveryInfo& info = *loaded.info;
  cancel_job(state);
  std::string note;
  state.lesson = LessonState{};
  state.quiz.round.reset();
  if (!info.lesson_path.empty()) {
    // Back at the lesson step it was edited at, the step's text beside it.
    LoadedLesson l = load_lesson(info.lesson_path);
    if (l.lesson && info.lesson_step < static_cast<int>(l.lesson->steps.size())) {
      state.open_lesson(std::move(*l.lesson), info.lesson_path, info.lesson_step);
      cancel_job(state);
    } else {
      note = " (its lesson " + info.lesson_path + " could not be opened: " +
             (l.lesson ? "it has fewer steps now" : l.error) + ")";
    }
  }
  // A big scenario computes here, once, on a click: restoring is rare, and
  // showing the finished result is what the click asked for.
  state.open_document(std::move(*loaded.scenario), info.file_path);
  state.doc->mark_unsaved();
  if (r.enabled) {
    if (auto err = r.session->claim(); !err.empty()) report(r, state, err);
    else if (auto adopt = adopt_orphan(orphan, *r.session); !adopt.empty()) report(r, state, adopt);
    else r.timer.file_exists();
  }
  if (orphan.lock.held()) {  // not adopted: rewritten under this session's name at the next autosave, then gone
    if (r.enabled) discard_orphan(orphan);
    else orphan.lock.release();  // --screenshot --recover changes nothing on disk
  }
  r.offered.erase(r.offered.begin() + static_cast<long>(index));
  const std::size_t more = r.offered.size();
  for (Orphan& o : r.offered) o.lock.release();  // this window holds one document: the next start offers the rest
  r.offered.clear();
  state.set_status("Restored unsaved work autosaved " + describe_saved_time(info.saved_unix, unix_now()) + note +
                   (more ? "; " + std::to_string(more) + " more will be offered at the next start" : std::string()));
  return true;
}

void autosave_frame(AppState& state) {
  RecoveryState& r = state.recovery;
  if (!r.enabled || !r.session) return;
  if (auto done = r.writer.finished()) {
    if (done->error.empty()) {
      r.timer.wrote(done->tag);
      ++r.autosaves;
      r.error.clear();
    } else {
      report(r, state, done->error);
    }
  }
  if (r.writer.busy()) return;  // one write at a time; the next poll catches up
  const double now = seconds_now();
  switch (r.timer.poll(state.doc->revision(), state.doc->modified(), now)) {
    case AutosaveTimer::Action::Wait: break;
    case AutosaveTimer::Action::Remove:
      r.session->remove();
      r.timer.removed();
      break;
    case AutosaveTimer::Action::Write: {
      if (now < r.retry_at) break;
      if (auto err = r.session->claim(); !err.empty()) {
        report(r, state, err);
        break;
      }
      // A copy to serialize on the worker: the document changes meanwhile.
      auto scenario = std::make_shared<const Scenario>(state.doc->scenario());
      r.writer.start([path = r.session->file(), info = describe(state), scenario] {
        return write_durably(path, recovery_file_text(info, scenario_to_json(*scenario)));
      }, state.doc->revision());
      break;
    }
  }
}

}  // namespace attention_lab::gui
