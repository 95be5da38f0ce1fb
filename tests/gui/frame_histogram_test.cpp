#include "logic/frame_histogram.h"

#include <gtest/gtest.h>

#include <cmath>

namespace attention_lab::gui {
namespace {

TEST(FrameHistogram, PercentilesAreTheUpperEdgeOfTheirBucket) {
  FrameHistogram h;
  for (int i = 1; i <= 100; ++i) h.add(i * 0.4);  // 0.4 … 40 ms
  EXPECT_EQ(h.count(), 100u);
  EXPECT_DOUBLE_EQ(h.percentile_ms(0.5), 20.0);   // the 50th is 20.0 ms: bucket (19.5, 20]
  EXPECT_DOUBLE_EQ(h.percentile_ms(0.95), 38.0);  // the 95th is 38.0 ms
  EXPECT_DOUBLE_EQ(h.max_ms(), 40.0);
  EXPECT_NEAR(h.mean_ms(), 20.2, 1e-9);
}

TEST(FrameHistogram, SlowFramesLandInCoarserBucketsAndTheMaxIsExact) {
  FrameHistogram h;
  for (int i = 0; i < 98; ++i) h.add(10.0);
  h.add(123.0);
  h.add(5000.0);
  EXPECT_DOUBLE_EQ(h.percentile_ms(0.5), 10.0);
  EXPECT_DOUBLE_EQ(h.percentile_ms(0.99), 125.0);  // (120, 125]
  EXPECT_DOUBLE_EQ(h.percentile_ms(1.0), 5000.0);  // beyond 2 s: the exact maximum
  EXPECT_DOUBLE_EQ(h.max_ms(), 5000.0);
}

TEST(FrameHistogram, EmptyAndNonsenseInputs) {
  FrameHistogram h;
  EXPECT_DOUBLE_EQ(h.percentile_ms(0.5), 0.0);
  h.add(NAN);
  h.add(-1.0);
  h.add(INFINITY);
  EXPECT_EQ(h.count(), 0u);
  h.add(0.0);
  EXPECT_EQ(h.count(), 1u);
  EXPECT_EQ(h.to_json(), "{\"count\": 1, \"mean_ms\": 0.000, \"p50_ms\": 0.000, \"p95_ms\": 0.000, \"p99_ms\": 0.000, \"max_ms\": 0.000}");
}

}  // namespace
}  // namespace attention_lab::gui
