#include "logic/frame_timer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace attention_lab::gui {
namespace {

TEST(FrameStats, LeavesOutTheWarmUpFramesAndSummarizesTheRest) {
  // The two warm-up frames are the slowest and must not reach the statistics.
  const FrameStats s = summarize_frames({500, 400, 4, 1, 3, 2, 5, 6, 7, 8, 9, 10});
  EXPECT_EQ(s.frames, 10u);
  EXPECT_DOUBLE_EQ(s.median_ms, 5);  // nearest rank: the 5th of 10
  EXPECT_DOUBLE_EQ(s.p95_ms, 10);
  EXPECT_DOUBLE_EQ(s.max_ms, 10);
  EXPECT_DOUBLE_EQ(s.mean_ms, 5.5);
}

TEST(FrameStats, P95IsTheNearestRank) {
  std::vector<double> ms{0, 0};
  for (int i = 1; i <= 100; ++i) ms.push_back(i);
  const FrameStats s = summarize_frames(ms);
  EXPECT_EQ(s.frames, 100u);
  EXPECT_DOUBLE_EQ(s.median_ms, 50);
  EXPECT_DOUBLE_EQ(s.p95_ms, 95);
}

TEST(FrameStats, NothingToMeasureIsEmpty) {
  EXPECT_EQ(summarize_frames({}).frames, 0u);
  EXPECT_EQ(summarize_frames({1, 2}).frames, 0u);
  EXPECT_EQ(summarize_frames({1, 2, 3}).frames, 1u);
}

TEST(FrameTimer, OnlyMeasuredFramesAreKept) {
  FrameTimer timer;
  for (int i = 0; i < 5; ++i) {
    timer.frame_started();
    timer.frame_finished(i % 2 == 0);  // busy frames (progress overlay) are not measured
  }
  EXPECT_EQ(timer.measured_ms().size(), 3u);
  for (double ms : timer.measured_ms()) EXPECT_GE(ms, 0.0);
}

TEST(FrameTimer, WritesTheStatisticsOrSaysThereAreTooFewFrames) {
  const auto dir = std::filesystem::temp_directory_path() / ("frame_timer_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  FrameTimer timer;
  const auto path = (dir / "stats.json").string();
  EXPECT_NE(timer.write(path, 0).find("not enough frames"), std::string::npos);
  for (int i = 0; i < 4; ++i) {
    timer.frame_started();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    timer.frame_finished(true);
  }
  ASSERT_EQ(timer.write(path, 7), "");
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  EXPECT_NE(text.str().find("\"frames\": 2,"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("\"texture_uploads\": 7}"), std::string::npos) << text.str();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace attention_lab::gui
