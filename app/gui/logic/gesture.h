#pragma once
// Turning widget gestures into edits. A widget never writes into the
// document: it asks for an Edit here and the app applies it.

#include "attention_lab/edit.h"

#include <optional>

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

}  // namespace attention_lab::gui
