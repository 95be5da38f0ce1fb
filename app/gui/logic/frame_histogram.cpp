#include "logic/frame_histogram.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attention_lab::gui {

int FrameHistogram::bucket(double ms) {
  if (!(ms > 0.0)) return 0;  // also NaN
  if (ms <= 50.0) return std::min(kFine - 1, static_cast<int>(std::ceil(ms / 0.5)) - 1);
  if (ms <= 250.0) return kFine + std::min(kMid - 1, static_cast<int>(std::ceil((ms - 50.0) / 5.0)) - 1);
  if (ms <= 2000.0) return kFine + kMid + std::min(kCoarse - 1, static_cast<int>(std::ceil((ms - 250.0) / 50.0)) - 1);
  return kBuckets - 1;
}

double FrameHistogram::upper_edge(int b) {
  if (b < kFine) return 0.5 * (b + 1);
  if (b < kFine + kMid) return 50.0 + 5.0 * (b - kFine + 1);
  if (b < kFine + kMid + kCoarse) return 250.0 + 50.0 * (b - kFine - kMid + 1);
  return INFINITY;
}

void FrameHistogram::add(double ms) {
  if (!std::isfinite(ms) || ms < 0.0) return;
  ++counts_[static_cast<std::size_t>(bucket(ms))];
  ++count_;
  sum_ms_ += ms;
  max_ms_ = std::max(max_ms_, ms);
}

double FrameHistogram::percentile_ms(double q) const {
  if (count_ == 0) return 0.0;
  const auto rank = static_cast<std::uint64_t>(std::ceil(std::clamp(q, 0.0, 1.0) * static_cast<double>(count_)));
  std::uint64_t seen = 0;
  for (int b = 0; b < kBuckets; ++b) {
    seen += counts_[static_cast<std::size_t>(b)];
    if (seen >= std::max<std::uint64_t>(rank, 1)) return std::min(upper_edge(b), max_ms_);
  }
  return max_ms_;
}

std::string FrameHistogram::to_json() const {
  char text[200];
  std::snprintf(text, sizeof text,
                "{\"count\": %llu, \"mean_ms\": %.3f, \"p50_ms\": %.3f, \"p95_ms\": %.3f, \"p99_ms\": %.3f, \"max_ms\": %.3f}",
                static_cast<unsigned long long>(count_), mean_ms(), percentile_ms(0.5), percentile_ms(0.95),
                percentile_ms(0.99), max_ms_);
  return text;
}

}  // namespace attention_lab::gui
