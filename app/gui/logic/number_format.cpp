#include "logic/number_format.h"

#include <algorithm>
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

std::string compact_cell_value(const std::string& formatted) {
  const std::string minus = "−";
  const bool negative = formatted.rfind(minus, 0) == 0;
  const std::size_t digits_at = negative ? minus.size() : 0;
  if (formatted.compare(digits_at, 2, "0.") != 0) return formatted;
  return formatted.substr(0, digits_at) + formatted.substr(digits_at + 1);
}

std::string format_significant(float v, int digits) {
  if (std::isnan(v) || std::isinf(v)) return format_number(v, digits);
  if (v == 0.0f) return "0";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*g", digits, static_cast<double>(std::fabs(v)));
  return (v < 0 ? "−" : "") + std::string(buf);
}

std::string power_of_ten(int exponent) {
  static const char* const kDigits[] = {"⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"};
  std::string out = "×10";
  if (exponent < 0) out += "⁻";
  const std::string digits = std::to_string(exponent < 0 ? -exponent : exponent);
  for (const char d : digits) out += kDigits[d - '0'];
  return out;
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

std::string format_probability(double p) {
  if (!std::isfinite(p)) return format_percent(p);
  const double percent = 100.0 * p;
  char buf[48];
  if (percent == 0.0) return "0 %";
  if (std::fabs(percent) >= 10.0) std::snprintf(buf, sizeof buf, "%.1f %%", percent);
  else if (std::fabs(percent) >= 1.0) std::snprintf(buf, sizeof buf, "%.2f %%", percent);
  else std::snprintf(buf, sizeof buf, "%#.3g %%", percent);
  return buf;
}

std::string format_probability_change(double before, double after) {
  const double change = 100.0 * (after - before);
  if (!std::isfinite(change)) return format_number(static_cast<float>(change)) + " pt";
  if (std::fabs(after - before) <= 1e-6 * std::max(std::fabs(before), std::fabs(after))) return "±0";
  char buf[48];
  const double size = std::fabs(change);
  if (size >= 0.1) {
    std::snprintf(buf, sizeof buf, "%.1f", size);
  } else if (size >= 1e-9) {
    // two significant digits in fixed notation ("0.000073", not "7.3e-05")
    const int decimals = 1 - static_cast<int>(std::floor(std::log10(size)));
    std::snprintf(buf, sizeof buf, "%.*f", decimals, size);
  } else {
    std::snprintf(buf, sizeof buf, "%.1e", size);
  }
  return std::string(change < 0 ? "−" : "+") + buf + " pt";
}

}  // namespace attention_lab::gui
