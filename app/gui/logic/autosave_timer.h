#pragma once
// When to write the recovery file: a few seconds after the last change
// (debounced, so a drag writes once when it ends, not every frame), but no
// later than `longest` after the first unwritten change, so an hour of
// continuous dragging is never all at risk. When nothing is unsaved any more
// (saved, or undone back to the saved state) the file goes.
// The app polls it every frame; no GUI, no clock of its own (tested).

#include <cstdint>
#include <functional>
#include <future>
#include <optional>
#include <string>

namespace attention_lab::gui {

class AutosaveTimer {
 public:
  static constexpr double kQuietSeconds = 3.0;
  static constexpr double kLongestSeconds = 30.0;
  explicit AutosaveTimer(double quiet = kQuietSeconds, double longest = kLongestSeconds)
      : quiet_(quiet), longest_(longest) {}

  enum class Action { Wait, Write, Remove };
  // Every frame: the document's revision (changes with every edit), whether it
  // has unsaved changes, and the time now in seconds.
  Action poll(std::uint64_t revision, bool unsaved, double now);
  // The file now holds `revision` / is gone.
  void wrote(std::uint64_t revision);
  void removed();
  // A file exists that holds other work than the document's (restored from a
  // crash): the next poll with unsaved changes writes over it.
  void file_exists() { file_ = true; }
  bool has_file() const { return file_; }

 private:
  double quiet_, longest_;
  std::uint64_t seen_ = 0;     // the last revision polled
  std::uint64_t written_ = 0;  // the revision the file holds (0: none)
  double last_change_ = 0.0;
  std::optional<double> first_unwritten_;  // when the oldest change not in the file was made
  bool file_ = false;
};

// Runs one write at a time on a worker thread, so serializing and fsyncing a
// large scenario never stalls a frame.
class BackgroundWriter {
 public:
  ~BackgroundWriter() { wait(); }
  bool busy() const { return pending_.valid(); }
  // `work` returns "" or an error message. Only when !busy().
  void start(std::function<std::string()> work, std::uint64_t tag);
  // Once the work is done: its tag and result, handed over once.
  struct Done {
    std::uint64_t tag = 0;
    std::string error;
  };
  std::optional<Done> finished();
  void wait();  // blocks until the work in flight (if any) is done; its result is dropped

 private:
  std::future<std::string> pending_;
  std::uint64_t tag_ = 0;
};

}  // namespace attention_lab::gui
