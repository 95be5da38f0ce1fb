#include "logic/mouse_button_pacer.h"

#include <gtest/gtest.h>

#include <string>

namespace attention_lab::gui {
namespace {

// The left button's state over `frames` frames, as "1" (down) and "0" (up).
std::string left_button_frames(MouseButtonPacer& pacer, int frames) {
  std::string seen;
  bool down[MouseButtonPacer::kButtons] = {};
  for (int f = 0; f < frames; ++f) {
    pacer.advance(down);
    seen += down[0] ? '1' : '0';
  }
  return seen;
}

TEST(MouseButtonPacer, AClickWithinOneFrameIsSeenDownThenUp) {
  MouseButtonPacer pacer;
  pacer.event(0, true);
  pacer.event(0, false);
  EXPECT_TRUE(pacer.pending());
  EXPECT_EQ(left_button_frames(pacer, 3), "100");
  EXPECT_FALSE(pacer.pending());
}

TEST(MouseButtonPacer, ADoubleClickWithinOneFrameIsTwoClicks) {
  MouseButtonPacer pacer;
  for (int click = 0; click < 2; ++click) pacer.event(0, true), pacer.event(0, false);
  EXPECT_EQ(left_button_frames(pacer, 5), "10100");
}

TEST(MouseButtonPacer, SlowInputPassesStraightThrough) {
  MouseButtonPacer pacer;
  bool down[MouseButtonPacer::kButtons] = {};
  pacer.advance(down);
  EXPECT_FALSE(down[0]);
  pacer.event(0, true);
  pacer.advance(down);
  EXPECT_TRUE(down[0]);
  pacer.advance(down);
  EXPECT_TRUE(down[0]);  // held
  EXPECT_FALSE(pacer.pending());
  pacer.event(0, false);
  pacer.advance(down);
  EXPECT_FALSE(down[0]);
}

TEST(MouseButtonPacer, ButtonsArePacedIndependently) {
  MouseButtonPacer pacer;
  pacer.event(0, true);
  pacer.event(1, true);
  pacer.event(1, false);
  pacer.event(0, false);
  bool down[MouseButtonPacer::kButtons] = {};
  pacer.advance(down);
  EXPECT_TRUE(down[0] && down[1]);
  pacer.advance(down);
  EXPECT_FALSE(down[0] || down[1]);
}

TEST(MouseButtonPacer, RepeatedEventsAndUnknownButtonsChangeNothing) {
  MouseButtonPacer pacer;
  pacer.event(0, false);  // a release without a press (focus came back mid-click)
  pacer.event(-1, true);
  pacer.event(MouseButtonPacer::kButtons, true);
  EXPECT_FALSE(pacer.pending());
  EXPECT_EQ(left_button_frames(pacer, 2), "00");
  pacer.event(0, true);
  pacer.event(0, true);
  EXPECT_EQ(left_button_frames(pacer, 2), "11");
}

}  // namespace
}  // namespace attention_lab::gui
