#pragma once
// Frame times for --frame-stats: the wall time from a frame's start (before
// polling events) to its end (after the swap), which includes building the UI,
// uploads and rendering. Only frames that show a finished result are measured:
// frames drawn while the engine works in the background show a progress
// overlay and say nothing about the cost of showing the matrices.

#include <chrono>
#include <string>
#include <vector>

namespace attention_lab::gui {

struct FrameStats {
  std::size_t frames = 0;
  double median_ms = 0, p95_ms = 0, mean_ms = 0, max_ms = 0;
};

// The first `warm_up` durations (font atlas, first uploads) are left out.
// Empty when nothing is left to measure.
FrameStats summarize_frames(std::vector<double> ms, std::size_t warm_up = 2);

class FrameTimer {
 public:
  void frame_started();
  void frame_finished(bool measured);
  const std::vector<double>& measured_ms() const { return ms_; }
  // Writes {"frames", "median_ms", "p95_ms", "mean_ms", "max_ms", "texture_uploads"}.
  std::string write(const std::string& path, unsigned long long texture_uploads) const;

 private:
  std::vector<double> ms_;
  std::chrono::steady_clock::time_point start_{};
};

}  // namespace attention_lab::gui
