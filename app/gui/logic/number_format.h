#pragma once
// Numbers as a learner reads them: "0.52", "−0.31", "−∞", "1.2e+05".

#include <string>

namespace attention_lab::gui {

// `digits` significant decimals for ordinary magnitudes; a true minus sign.
std::string format_number(float v, int digits = 2);
// Wraps negatives in parentheses for products: "(−0.31)".
std::string format_factor(float v, int digits = 2);

}  // namespace attention_lab::gui
