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
// The same value without its leading zero ("−.4", ".25"), as plots print it
// where a cell has no room for "−0.4"; other numbers are returned as they are.
std::string compact_cell_value(const std::string& formatted);
// `digits` significant digits, whatever the magnitude: a gradient of 0.0036
// reads "0.0036", not "0.00" ("3.6e-05" below 1e-4); a true minus sign.
std::string format_significant(float v, int digits = 3);
// A power of ten as a heatmap's title writes it: −2 → "×10⁻²".
std::string power_of_ten(int exponent);
// Wraps negatives in parentheses for products: "(−0.31)".
std::string format_factor(float v, int digits = 2);
// A share as a percentage with `decimals` decimals: 0.123 → "12.3 %". A share
// that rounds to zero reads "0.0 %", never "−0.0 %" (1 − a sum of weights
// that is a hair above 1 is a tiny negative number).
std::string format_percent(double fraction, int decimals = 1);
// A next-token probability as a percentage that shows it whatever its size:
// one decimal from 10 % up, two from 1 %, else three significant digits
// ("0.0171 %": with a vocabulary of 50 000 most are far below 0.1 %).
std::string format_probability(double p);
// Its change since before the edits, in percentage points, as many digits
// as the change needs ("+2.3 pt", "−0.00041 pt", fixed notation down to
// 1e-9); "±0" when the two agree to a millionth of the larger (float noise
// of recomputing the same row).
std::string format_probability_change(double before, double after);

}  // namespace attention_lab::gui
