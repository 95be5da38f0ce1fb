#pragma once
// Numbers as a learner reads them: "0.52", "−0.31", "−∞", "1.2e+05".

#include <string>

namespace attention_lab::gui {

// `digits` significant decimals for ordinary magnitudes; a true minus sign.
std::string format_number(float v, int digits = 2);
// A heatmap cell's text: always `digits` decimals in fixed notation, so every
// cell of a heatmap reads the same way and a tiny value costs no more room
// than any other ("6.7e-04" forced a whole difference heatmap down to one
// decimal). A value that rounds to zero reads "0.00" (never "−0.00", as in
// format_number); only magnitudes from 1e5 up use an exponent. Hovering gives
// the exact number.
std::string format_cell_value(float v, int digits = 2);
// Wraps negatives in parentheses for products: "(−0.31)".
std::string format_factor(float v, int digits = 2);
// A share as a percentage with `decimals` decimals: 0.123 → "12.3 %". A share
// that rounds to zero reads "0.0 %", never "−0.0 %" (1 − a sum of weights
// that is a hair above 1 is a tiny negative number).
std::string format_percent(double fraction, int decimals = 1);

}  // namespace attention_lab::gui
