#pragma once
// Autosave and crash recovery in the app: a few seconds after the last change
// the unsaved scenario (with the lesson and step it was edited at) is written
// on a worker thread to this process's own recovery file; at start-up files
// left by sessions that died are offered (Restore / Discard / Not now), or
// restored at once with --recover. A normal quit removes the file: the user
// has saved, or chose to drop the changes. The files and their locks:
// logic/recovery_store.h.

#include "logic/autosave_timer.h"
#include "logic/recovery_store.h"

#include <optional>
#include <string>
#include <vector>

namespace attention_lab::gui {

struct AppState;

struct RecoveryState {
  bool enabled = false;  // off for --screenshot, --export and --frame-stats: they change nothing
  std::optional<RecoverySession> session;
  AutosaveTimer timer;
  BackgroundWriter writer;
  std::uint64_t autosaves = 0;  // recovery files written (the probe's autosave generation)
  std::string error;            // the last autosave failure (shown once in the status bar)
  double retry_at = 0.0;        // after a failure, when to try again
  std::vector<Orphan> offered;  // left by dead sessions, waiting for the user (the dialog shows the first)
  // A key's answer to the dialog (a clicker's page keys, arrows, Enter, Esc):
  // +1 Restore, −1 Not now, 0 none yet.
  int key_answer = 0;

  // This session's recovery file while it holds unsaved work, else "".
  std::string file() const { return session && timer.has_file() ? session->file().string() : std::string(); }

  RecoveryState() = default;
  RecoveryState(const RecoveryState&) = delete;
  RecoveryState& operator=(const RecoveryState&) = delete;
  // Destructors run only on a normal exit (the user quit, after saving or
  // choosing not to): a crash or a kill skips this and leaves the file for
  // the next start.
  ~RecoveryState();
};

// At start-up (end of App::init): finds what dead sessions left, and with
// --recover restores the newest at once.
void start_recovery(AppState& state);
// Every frame: writes or removes this session's recovery file when due.
void autosave_frame(AppState& state);
// Replaces the open document with an orphan's work (unsaved, with its file
// name and lesson step) and makes its file this session's. false: it could
// not be read (the orphan's error says why; it stays offered, to discard).
bool restore_orphan(AppState& state, std::size_t index);
// The start-up question (panels/recovery_dialog.cpp).
inline constexpr const char* kRecoveryDialogTitle = "Recover unsaved work";
void draw_recovery_dialog(AppState& state);

}  // namespace attention_lab::gui
