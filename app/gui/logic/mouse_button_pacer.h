#pragma once
// Dear ImGui 1.86 reads the mouse buttons once a frame, as "down now or not".
// When frames are slow (software OpenGL on a busy classroom laptop), a whole
// click, or the second click of a double-click, can begin and end between two
// frames and vanish. The pacer queues the button events from GLFW and lets each
// button change at most once a frame, so every press and every release is seen
// by exactly one frame. (ImGui 1.87 has an input queue of its own for this.)

#include <array>
#include <deque>

namespace attention_lab::gui {

class MouseButtonPacer {
 public:
  static constexpr int kButtons = 5;  // ImGuiMouseButton_COUNT

  // From the GLFW mouse-button callback; other buttons are ignored.
  void event(int button, bool down);
  // Once a frame, before ImGui::NewFrame: the state of each button this frame.
  void advance(bool (&down)[kButtons]);
  // Events still waiting for a frame: the loop must not sleep on them.
  bool pending() const;

 private:
  std::array<std::deque<bool>, kButtons> queued_;
  std::array<bool, kButtons> down_{};
};

}  // namespace attention_lab::gui
