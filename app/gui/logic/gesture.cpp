#include "logic/gesture.h"

#include <cmath>
#include <cstdlib>
#include <string>

namespace attention_lab::gui {

Edit cell_edit(StageId stage, int row, int col, float value) {
  if (is_input(stage.kind)) return SetCell{stage, row, col, value};
  return SetPin{PinKey{stage, row, col}, value};
}

Edit mask_toggle(int row, int col, float current) {
  return SetCell{StageId::input(StageKind::Mask), row, col, current != 0.0f ? 0.0f : 1.0f};
}

float dragged_value(float start, float pixels_up, bool fine) {
  // 1 % of the value's magnitude per pixel, at least 0.005, so 0.5 moves by 0.005/px.
  const float base = std::max(0.005f, std::fabs(start) * 0.01f);
  const float v = start + pixels_up * base * (fine ? 0.1f : 1.0f);
  // Round to the step's resolution so dragged numbers stay readable.
  const float unit = fine ? 0.0001f : 0.001f;
  // v / unit overflows to ∞ for |v| ≳ 3.4e35; such values have no digits at
  // that resolution anyway, so they are kept as they are.
  const float rounded = std::round(v / unit) * unit;
  return std::isfinite(rounded) ? rounded : v;
}

std::optional<float> parse_typed_value(const std::string& text) {
  std::string t;
  for (std::size_t i = 0; i < text.size(); ++i) {
    // Accept the true minus sign (U+2212) that the app itself prints.
    if (text.compare(i, 3, "\xE2\x88\x92") == 0) {
      t += '-';
      i += 2;
    } else if (text[i] == ',') {
      t += '.';  // a decimal comma from a European keyboard
    } else if (text[i] != ' ') {
      t += text[i];
    }
  }
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  const float v = std::strtof(t.c_str(), &end);
  if (end != t.c_str() + t.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace attention_lab::gui
