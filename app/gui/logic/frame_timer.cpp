#include "logic/frame_timer.h"

#include "attention_lab/scenario_io.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace attention_lab::gui {

FrameStats summarize_frames(std::vector<double> ms, std::size_t warm_up) {
  FrameStats s;
  if (ms.size() <= warm_up) return s;
  ms.erase(ms.begin(), ms.begin() + static_cast<std::ptrdiff_t>(warm_up));
  std::sort(ms.begin(), ms.end());
  // Nearest rank: the smallest value with at least q of the frames at or below it.
  const auto at = [&](double q) {
    const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(ms.size())));
    return ms[std::clamp<std::size_t>(rank, 1, ms.size()) - 1];
  };
  s.frames = ms.size();
  s.median_ms = at(0.5);
  s.p95_ms = at(0.95);
  s.mean_ms = std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(ms.size());
  s.max_ms = ms.back();
  return s;
}

void FrameTimer::frame_started() { start_ = std::chrono::steady_clock::now(); }

void FrameTimer::frame_finished(bool measured) {
  if (measured) ms_.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count());
}

std::string FrameTimer::write(const std::string& path, unsigned long long texture_uploads) const {
  const FrameStats s = summarize_frames(ms_);
  if (s.frames == 0) return path + ": not enough frames to measure (use --frames 10 or more)";
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "{\"frames\": %zu, \"median_ms\": %.3f, \"p95_ms\": %.3f, \"mean_ms\": %.3f, \"max_ms\": %.3f, "
                "\"texture_uploads\": %llu}\n",
                s.frames, s.median_ms, s.p95_ms, s.mean_ms, s.max_ms, texture_uploads);
  return write_file_atomically(path, buf);
}

}  // namespace attention_lab::gui
