#include "logic/frame_pacer.h"

#include <gtest/gtest.h>

namespace attention_lab::gui {
namespace {

TEST(FramePacer, TheFirstFrameStartsAtOnce) {
  const FramePacer pacer(60.0);
  EXPECT_EQ(pacer.wait_before(123.0), 0.0);
}

TEST(FramePacer, AFrameStartsNoSoonerThanOneRefreshAfterTheLast) {
  FramePacer pacer(50.0);  // 20 ms a refresh
  pacer.frame_started(10.0);
  EXPECT_NEAR(pacer.wait_before(10.0), 0.020, 1e-12);  // drawn in no time: wait the whole refresh
  EXPECT_NEAR(pacer.wait_before(10.015), 0.005, 1e-12);
  EXPECT_EQ(pacer.wait_before(10.020), 0.0);
  EXPECT_EQ(pacer.wait_before(10.5), 0.0);  // a slow frame (or a long wait for input) never waits more
  pacer.frame_started(10.5);
  EXPECT_NEAR(pacer.wait_before(10.501), 0.019, 1e-12);
}

TEST(FramePacer, AnUnknownRateIsSixtyAFrameASecond) {
  EXPECT_NEAR(FramePacer(0.0).period(), 1.0 / 60.0, 1e-15);
  EXPECT_NEAR(FramePacer(-1.0).period(), 1.0 / 60.0, 1e-15);
  EXPECT_NEAR(FramePacer(144.0).period(), 1.0 / 144.0, 1e-15);
}

}  // namespace
}  // namespace attention_lab::gui
