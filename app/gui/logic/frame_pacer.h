#pragma once
// At most one interactive frame per refresh of the display. A swap interval
// of 1 usually makes the swap wait for the display; where it does not (a
// software renderer, a virtual display, some compositors), an animation would
// otherwise be drawn as fast as the CPU allows: measured at 100 frames a
// second and most of a core under Xvfb, for no picture anyone can see. The
// pacer says how long to sleep before the next frame so frames start no
// closer than one refresh apart. Pictures made from the command line
// (screenshots, exports, --frame-stats) are not paced.

namespace attention_lab::gui {

class FramePacer {
 public:
  // `refresh_hz` is the display's rate; 0 or less (unknown) means 60.
  explicit FramePacer(double refresh_hz) : period_(1.0 / (refresh_hz > 0.0 ? refresh_hz : 60.0)) {}

  // Seconds to wait at time `now` (seconds, any steady origin) before
  // starting a frame, given when the last frame started; 0 for the first.
  double wait_before(double now) const {
    if (!started_) return 0.0;
    const double wait = last_start_ + period_ - now;
    return wait > 0.0 ? wait : 0.0;
  }
  // Records the start of a frame at `now`.
  void frame_started(double now) {
    last_start_ = now;
    started_ = true;
  }
  double period() const { return period_; }

 private:
  double period_;
  double last_start_ = 0.0;
  bool started_ = false;
};

}  // namespace attention_lab::gui
