#pragma once
// --check-slides: every step of a lesson and every page of it, turned as a
// clicker turns them, each looked at once its layout has settled (the room a
// slide asks for is given the frame after, and a page count may change with it).

#include <string>

namespace attention_lab::gui {

// What this frame shows.
struct SlideFrame {
  int step = 0, page = 0, pages = 1;
  std::string room;   // the room the slide took ("text folded", "pages", …)
  bool busy = false;  // background work: not a finished result yet
};

class SlideWalk {
 public:
  // A slide is settled after this many frames the same.
  static constexpr int kSettledFrames = 3;
  // One that has not settled after this many is looked at anyway, and said so.
  static constexpr int kMostFrames = 120;

  enum class Action {
    Wait,  // not settled yet
    Look,  // settled on a page not looked at: record it, then turn (or finish: last_page())
  };
  struct Decision {
    Action action = Action::Wait;
    bool unsettled = false;  // Look after kMostFrames without settling
  };

  explicit SlideWalk(int steps) : steps_(steps) {}
  Decision observe(const SlideFrame& frame);
  // The page just looked at is the lesson's last: the walk is over.
  bool last_page() const { return last_.step >= steps_ - 1 && last_.page >= last_.pages - 1; }
  // The page just looked at is its step's last: the next turn starts a new step.
  bool step_done() const { return last_.page >= last_.pages - 1; }

 private:
  int steps_;
  SlideFrame last_;
  bool have_last_ = false;
  int same_ = 0, frames_here_ = 0;
  int looked_step_ = -1, looked_page_ = -1;
};

}  // namespace attention_lab::gui
