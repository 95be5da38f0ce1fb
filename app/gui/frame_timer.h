#pragma once
// Frame times for --frame-stats: the wall time from one frame's start to the
// next, which includes building the UI, uploads, rendering and the swap.

#include <chrono>
#include <string>
#include <vector>

namespace attention_lab::gui {

class FrameTimer {
 public:
  void frame_started();
  // Writes {"frames", "median_ms", "p95_ms", "mean_ms", "max_ms", "texture_uploads"};
  // the first two frames (font atlas, first uploads) are left out.
  std::string write(const std::string& path, unsigned long long texture_uploads) const;

 private:
  std::vector<double> ms_;
  std::chrono::steady_clock::time_point last_{};
  bool started_ = false;
};

}  // namespace attention_lab::gui
