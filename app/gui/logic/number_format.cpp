#include "logic/number_format.h"

#include <cmath>
#include <cstdio>

namespace attention_lab::gui {

std::string format_number(float v, int digits) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v < 0 ? "−∞" : "∞";
  char buf[48];
  const float a = std::fabs(v);
  if (a != 0.0f && (a >= 1e5f || a < 1e-3f))
    std::snprintf(buf, sizeof buf, "%.*e", digits, static_cast<double>(a));
  else
    std::snprintf(buf, sizeof buf, "%.*f", digits, static_cast<double>(a));
  std::string s = buf;
  if (s.find_first_not_of("0.") == std::string::npos) return "0" + std::string(s.size() > 1 ? s.substr(1) : "");
  return (v < 0 ? "−" : "") + s;
}

std::string format_cell_value(float v, int digits) {
  if (std::isnan(v) || std::isinf(v) || std::fabs(v) >= 1e5f) return format_number(v, digits);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, static_cast<double>(std::fabs(v)));
  const std::string s = buf;
  const bool rounds_to_zero = s.find_first_not_of("0.") == std::string::npos;
  return (v < 0 && !rounds_to_zero ? "−" : "") + s;  // like format_number: never "−0.00"
}

std::string format_factor(float v, int digits) {
  const std::string s = format_number(v, digits);
  return v < 0 ? "(" + s + ")" : s;
}

std::string format_percent(double fraction, int decimals) {
  if (std::isnan(fraction)) return "NaN %";
  if (std::isinf(fraction)) return fraction < 0 ? "−∞ %" : "∞ %";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, std::fabs(100.0 * fraction));
  const std::string s = buf;
  const bool rounds_to_zero = s.find_first_not_of("0.") == std::string::npos;
  return (fraction < 0 && !rounds_to_zero ? "−" : "") + s + " %";
}

}  // namespace attention_lab::gui
