#pragma once
// Crash recovery files: where they live, what they hold, who owns them.
//
// Each running app (one window per process) writes its unsaved work to its
// own file in $XDG_STATE_HOME/attention-lab/recovery/ (default
// ~/.local/state/attention-lab/recovery/), named after the process id and its
// start time so a recycled pid never reuses a name:
//
//   session-<pid>-<start ms>.json   line 1: what it is (RecoveryInfo, one JSON
//                                   line); the rest: the scenario, as saved
//   session-<pid>-<start ms>.lock   flock()ed by the owner while it runs
//
// A file whose lock nobody holds belongs to a process that died (crash, kill,
// power cut): an orphan, offered to the next instance. The new instance takes
// the orphan's lock while it offers it, so two instances starting together
// never both restore it. The lock file is separate because the .json is
// replaced by rename() on every write (a lock on its old inode would be lost).
// No GUI here: unit-tested in tests/gui/recovery_store_test.cpp.

#include "attention_lab/scenario.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace attention_lab::gui {

// The recovery folder for these XDG_STATE_HOME and HOME values (nullptr or
// empty: unset). A relative XDG_STATE_HOME is ignored, as the XDG spec says.
std::filesystem::path recovery_dir_for(const char* xdg_state_home, const char* home);
// The same from this process's environment.
std::filesystem::path recovery_dir();

// Which process a recovery file belongs to.
struct SessionId {
  long pid = 0;
  std::uint64_t started_ms = 0;  // wall clock at start, milliseconds since 1970
  bool operator==(const SessionId&) const = default;
};
SessionId this_session();  // this process (its start time is taken once)
std::string session_stem(const SessionId& id);  // "session-1234-1763942400123"
std::optional<SessionId> parse_session_stem(const std::string& stem);

// What a recovery file says about the work in it (its first line).
struct RecoveryInfo {
  std::int64_t saved_unix = 0;  // when it was written, seconds since 1970
  std::string file_path;        // the scenario's file ("" = never saved)
  std::string title;            // the scenario's title
  std::string lesson_path;      // the lesson it was edited in ("" = none)
  int lesson_step = 0;          // 0-based
  int T = 0, d_model = 0, heads = 0;
};
inline constexpr const char* kRecoveryFormat = "attention-lab/recovery@1";

// The whole file: the info as one JSON line, then the scenario's JSON.
std::string recovery_file_text(const RecoveryInfo& info, const std::string& scenario_json);
// Parses the first line; an error message names what is wrong.
struct ParsedInfo {
  std::optional<RecoveryInfo> info;
  std::string error;
};
ParsedInfo parse_recovery_info(const std::string& first_line);

// Reads a recovery file in full: its info and its scenario, validated like any
// scenario file.
struct LoadedRecovery {
  std::optional<RecoveryInfo> info;
  std::optional<Scenario> scenario;
  std::string error;
};
LoadedRecovery load_recovery_file(const std::filesystem::path& path);

// An exclusive flock() on a file, held until release() or destruction. The
// descriptor is close-on-exec: a child process never keeps a session alive.
class FileLock {
 public:
  FileLock() = default;
  ~FileLock() { release(); }
  FileLock(FileLock&& other) noexcept : fd_(other.fd_), path_(std::move(other.path_)) { other.fd_ = -1; }
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

  // Creates `path` if missing and locks it without waiting; nullopt when
  // another open file (this process's or another's) holds the lock.
  static std::optional<FileLock> try_acquire(const std::filesystem::path& path);
  bool held() const { return fd_ >= 0; }
  const std::filesystem::path& path() const { return path_; }
  void release();             // unlock and close; the file stays
  void release_and_remove();  // unlink the file first, then unlock

 private:
  int fd_ = -1;
  std::filesystem::path path_;
};

// Creates `dir` and any missing parents, private to the user (0700).
std::string make_private_dir(const std::filesystem::path& dir);
// Writes `contents` to a temporary file in the same folder, fsyncs it, renames
// it over `path` and fsyncs the folder, so after a power cut the file is either
// the old one or the new one, never a torn mix. "" or an error message.
std::string write_durably(const std::filesystem::path& path, const std::string& contents);

// This process's recovery file and its lock.
class RecoverySession {
 public:
  RecoverySession(std::filesystem::path dir, SessionId id);
  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path file() const { return dir_ / (session_stem(id_) + ".json"); }
  std::filesystem::path lock_file() const { return dir_ / (session_stem(id_) + ".lock"); }
  // Takes the session's lock (creating the folder) if not yet held. Call on
  // the UI thread before handing a write to a worker. "" or an error.
  std::string claim();
  bool claimed() const { return lock_.held(); }
  // Removes the recovery file and the lock file: the work is saved, or the
  // user chose to drop it.
  void remove();

 private:
  std::filesystem::path dir_;
  SessionId id_;
  FileLock lock_;
};

// A recovery file whose owner is gone, locked by us while we decide.
struct Orphan {
  std::filesystem::path file;
  SessionId owner;
  RecoveryInfo info;  // valid when error is empty
  std::string error;  // the first line could not be read (the file is still offered to discard)
  FileLock lock;
};

// Every orphan in `dir`, newest first, each locked by the caller. Along the
// way removes what dead sessions left with nothing to recover: lock files
// without a .json and half-written temporary files.
std::vector<Orphan> claim_orphans(const std::filesystem::path& dir);
// Deletes an orphan's files (Discard, or after it was restored).
void discard_orphan(Orphan& orphan);
// Makes an orphan's file this session's, in one rename: restored work is never
// without a file on disk. The orphan's lock file goes; `session` must be claimed.
std::string adopt_orphan(Orphan& orphan, const RecoverySession& session);

// "23:51:02 today, 4 minutes ago" style text for the restore question.
std::string describe_saved_time(std::int64_t saved_unix, std::int64_t now_unix);

}  // namespace attention_lab::gui
