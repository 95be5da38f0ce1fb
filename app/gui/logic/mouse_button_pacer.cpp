#include "logic/mouse_button_pacer.h"

namespace attention_lab::gui {

void MouseButtonPacer::event(int button, bool down) {
  if (button < 0 || button >= kButtons) return;
  queued_[static_cast<std::size_t>(button)].push_back(down);
}

void MouseButtonPacer::advance(bool (&down)[kButtons]) {
  for (std::size_t b = 0; b < static_cast<std::size_t>(kButtons); ++b) {
    auto& q = queued_[b];
    while (!q.empty() && q.front() == down_[b]) q.pop_front();  // no change (e.g. a repeated release)
    if (!q.empty()) {
      down_[b] = q.front();
      q.pop_front();
    }
    down[b] = down_[b];
  }
}

bool MouseButtonPacer::pending() const {
  for (std::size_t b = 0; b < static_cast<std::size_t>(kButtons); ++b)
    for (bool d : queued_[b])
      if (d != down_[b]) return true;
  return false;
}

}  // namespace attention_lab::gui
