#pragma once
// A number in text with `digits` significant digits ("%g": 0.125, 1.5e-05),
// for the formulas and messages the core writes.

#include <string>

namespace attention_lab {

std::string significant(double v, int digits);

}  // namespace attention_lab
