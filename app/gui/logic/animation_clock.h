#pragma once
// The one clock every animation reads (step reveals, the sweeping cell, Play,
// timed status messages). Interactively it is the wall clock. For --screenshot
// and --export it is "finished": every animation shows its end state at once
// and the rest counts frames, so the same arguments give the same picture
// however busy the machine is.

namespace attention_lab::gui {

class AnimationClock {
 public:
  static constexpr double kFrameSeconds = 1.0 / 60.0;  // one frame of a finished clock

  // Finished: animations end at once, time advances one frame per frame.
  void set_finished(bool finished) { finished_ = finished; }
  bool finished() const { return finished_; }

  // Once per frame, before anything reads the clock.
  void advance(double wall_seconds) {
    frames_ += 1;
    wall_ = wall_seconds;
  }
  // Seconds since the start: the wall clock, or frames / 60 when finished.
  double now() const { return finished_ ? static_cast<double>(frames_) * kFrameSeconds : wall_; }
  // How far an animation that began at `start` (a now()) has run. Finished:
  // longer than any animation lasts.
  double animation_elapsed(double start) const { return finished_ ? kLongerThanAnyAnimation : now() - start; }

 private:
  static constexpr double kLongerThanAnyAnimation = 1e9;
  bool finished_ = false;
  long long frames_ = 0;
  double wall_ = 0.0;
};

}  // namespace attention_lab::gui
