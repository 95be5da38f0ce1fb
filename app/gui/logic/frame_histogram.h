#pragma once
// Every frame's work time (from the end of waiting for input to the end of
// the swap) in a fixed histogram, so a long interactive session (scripts/soak)
// reports percentiles of all its frames in constant memory. Buckets: 0.5 ms
// wide up to 50 ms, 5 ms up to 250 ms, 50 ms up to 2 s, then one for the rest;
// a percentile is its bucket's upper edge (the maximum is exact).

#include <array>
#include <cstdint>
#include <string>

namespace attention_lab::gui {

class FrameHistogram {
 public:
  void add(double ms);
  std::uint64_t count() const { return count_; }
  double mean_ms() const { return count_ ? sum_ms_ / static_cast<double>(count_) : 0.0; }
  double max_ms() const { return max_ms_; }
  // The smallest bucket edge at or above the q-quantile (nearest rank), 0 when empty.
  double percentile_ms(double q) const;
  // {"count", "mean_ms", "p50_ms", "p95_ms", "p99_ms", "max_ms"}
  std::string to_json() const;

 private:
  static constexpr int kFine = 100, kMid = 40, kCoarse = 35;  // 0.5 ms to 50, 5 ms to 250, 50 ms to 2000
  static constexpr int kBuckets = kFine + kMid + kCoarse + 1;
  static int bucket(double ms);
  static double upper_edge(int bucket);
  std::array<std::uint64_t, kBuckets> counts_{};
  std::uint64_t count_ = 0;
  double sum_ms_ = 0.0, max_ms_ = 0.0;
};

}  // namespace attention_lab::gui
