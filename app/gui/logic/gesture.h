#pragma once
// Turning widget gestures into edits. A widget never writes into the
// document: it asks for an Edit here and the app applies it.

#include "attention_lab/edit.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

namespace attention_lab::gui {

// Setting a cell to `value`: a real edit for inputs, a pin for computed
// stages, a 0/1 toggle for the mask.
Edit cell_edit(StageId stage, int row, int col, float value);

// The edit a click on a mask cell makes: flip it.
Edit mask_toggle(int row, int col, float current);

// Vertical drag: up increases. `pixels_up` since the press; Shift gives 10× finer steps.
// The step follows the size of the value so small and large numbers both drag well.
float dragged_value(float start, float pixels_up, bool fine);

// Parses what the user typed ("0.5", "-1e-3", "−2", "-inf" for a masked pin is refused).
std::optional<float> parse_typed_value(const std::string& text);

// Who a turn of the mouse wheel belongs to: the page (scroll) or a heatmap
// (zoom). A wheel gesture — notches less than kPause apart — keeps the owner
// it had when it began, so a heatmap that the scrolling page slides under a
// still pointer does not start zooming half way through the scroll; and a
// zoom that started over a heatmap does not turn into a scroll.
class WheelGesture {
 public:
  static constexpr double kPause = 0.3;  // seconds without a notch that end a gesture
  static constexpr std::uint64_t kPage = 0;  // "no heatmap": the page scrolls

  // Whether a notch at `now` over heatmap `over` would zoom it. ImGui decides
  // whether to scroll the page from last frame's claim, so the heatmap asks
  // this every hovered frame, before the notch arrives.
  bool would_zoom(std::uint64_t over, double now) const {
    return over != kPage && (ended(now) ? true : owner_ == over);
  }
  // A notch at `now` with heatmap `over` under the pointer (kPage: none).
  // Returns whether it zooms `over`. Several calls in one frame (the heatmap,
  // then the app for the page) count as one notch.
  bool wheel(std::uint64_t over, double now) {
    if (ended(now)) owner_ = over;
    last_notch_ = now;
    return over != kPage && owner_ == over;
  }
  std::uint64_t owner() const { return owner_; }

 private:
  bool ended(double now) const { return now - last_notch_ > kPause; }
  double last_notch_ = -std::numeric_limits<double>::infinity();
  std::uint64_t owner_ = kPage;
};

}  // namespace attention_lab::gui
