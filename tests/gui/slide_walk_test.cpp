#include "logic/slide_walk.h"

#include <gtest/gtest.h>

namespace attention_lab::gui {
namespace {

SlideFrame at(int step, int page, int pages, const char* room = "as written") { return {step, page, pages, room, false}; }

// Frames until the walk says Look (or `most` frames).
int frames_until_look(SlideWalk& walk, const SlideFrame& f, int most = 500) {
  for (int n = 1; n <= most; ++n)
    if (walk.observe(f).action == SlideWalk::Action::Look) return n;
  return -1;
}

TEST(SlideWalk, LooksOnceTheSlideIsTheSameForThreeFrames) {
  SlideWalk walk(2);
  EXPECT_EQ(frames_until_look(walk, at(0, 0, 1)), SlideWalk::kSettledFrames + 1);
  EXPECT_FALSE(walk.last_page());
  EXPECT_TRUE(walk.step_done());
  // Until the turn shows, the same page is not looked at again.
  EXPECT_EQ(walk.observe(at(0, 0, 1)).action, SlideWalk::Action::Wait);
}

TEST(SlideWalk, ARoomOrPageCountThatChangesRestartsTheWait) {
  SlideWalk walk(1);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(walk.observe(at(0, 0, 1)).action, SlideWalk::Action::Wait);
  // The slide asked for the text's room: a new layout, three frames more.
  EXPECT_EQ(walk.observe(at(0, 0, 1, "text folded")).action, SlideWalk::Action::Wait);
  EXPECT_EQ(frames_until_look(walk, at(0, 0, 2, "pages")), SlideWalk::kSettledFrames + 1);
  EXPECT_FALSE(walk.step_done());  // page 1 of 2
  EXPECT_EQ(frames_until_look(walk, at(0, 1, 2, "pages")), SlideWalk::kSettledFrames + 1);
  EXPECT_TRUE(walk.step_done());
  EXPECT_TRUE(walk.last_page());
}

TEST(SlideWalk, BusyFramesAreNotFinishedResults) {
  SlideWalk walk(1);
  SlideFrame busy = at(0, 0, 1);
  busy.busy = true;
  for (int i = 0; i < 10; ++i) EXPECT_EQ(walk.observe(busy).action, SlideWalk::Action::Wait);
  EXPECT_EQ(frames_until_look(walk, at(0, 0, 1)), SlideWalk::kSettledFrames);
}

TEST(SlideWalk, ASlideThatNeverSettlesIsLookedAtAnywayAndSaysSo) {
  SlideWalk walk(1);
  SlideWalk::Decision d;
  int n = 0;
  while (d.action == SlideWalk::Action::Wait && n < 1000) d = walk.observe(at(0, 0, 1, n++ % 2 ? "a" : "b"));
  EXPECT_EQ(d.action, SlideWalk::Action::Look);
  EXPECT_TRUE(d.unsettled);
  EXPECT_EQ(n, SlideWalk::kMostFrames + 1);
}

}  // namespace
}  // namespace attention_lab::gui
