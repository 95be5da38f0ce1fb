#include "frame_timer.h"

#include "attention_lab/scenario_io.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

namespace attention_lab::gui {

void FrameTimer::frame_started() {
  const auto now = std::chrono::steady_clock::now();
  if (started_) ms_.push_back(std::chrono::duration<double, std::milli>(now - last_).count());
  last_ = now;
  started_ = true;
}

std::string FrameTimer::write(const std::string& path, unsigned long long texture_uploads) const {
  std::vector<double> v(ms_.begin() + std::min<std::ptrdiff_t>(2, static_cast<std::ptrdiff_t>(ms_.size())), ms_.end());
  if (v.empty()) return path + ": not enough frames to measure (use --frames 10 or more)";
  std::sort(v.begin(), v.end());
  const auto at = [&](double q) { return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5))]; };
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "{\"frames\": %zu, \"median_ms\": %.3f, \"p95_ms\": %.3f, \"mean_ms\": %.3f, \"max_ms\": %.3f, "
                "\"texture_uploads\": %llu}\n",
                v.size(), at(0.5), at(0.95), mean, v.back(), texture_uploads);
  return write_file_atomically(path, buf);
}

}  // namespace attention_lab::gui
