#include "logic/slide_walk.h"

namespace attention_lab::gui {

SlideWalk::Decision SlideWalk::observe(const SlideFrame& frame) {
  const bool same = have_last_ && frame.step == last_.step && frame.page == last_.page && frame.pages == last_.pages &&
                    frame.room == last_.room && !frame.busy;
  const bool moved = !have_last_ || frame.step != last_.step || frame.page != last_.page;
  same_ = same ? same_ + 1 : 0;
  frames_here_ = moved ? 0 : frames_here_ + 1;
  last_ = frame;
  have_last_ = true;
  if (frame.step == looked_step_ && frame.page == looked_page_) return {};  // the turn has not shown yet
  const bool settled = same_ >= kSettledFrames;
  if (!settled && frames_here_ < kMostFrames) return {};
  looked_step_ = frame.step, looked_page_ = frame.page;
  return {Action::Look, !settled};
}

}  // namespace attention_lab::gui
