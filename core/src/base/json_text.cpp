#include "attention_lab/json_text.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace attention_lab::json_text {

void write_number(std::ostream& out, float v) {
  if (std::isnan(v)) { out << "\"nan\""; return; }
  if (std::isinf(v)) { out << (v > 0 ? "\"inf\"" : "\"-inf\""); return; }
  // "-0" reads back as the integer 0 and loses its sign; "-0.0" is a float.
  if (v == 0.0f && std::signbit(v)) { out << "-0.0"; return; }
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.write(buf, end - buf);
}

void write_row(std::ostream& out, MatrixView m, Eigen::Index row) {
  out << '[';
  for (Eigen::Index c = 0; c < m.cols(); ++c) {
    if (c) out << ", ";
    write_number(out, m(row, c));
  }
  out << ']';
}

void write_matrix(std::ostream& out, MatrixView m, int indent) {
  const std::string pad(static_cast<std::size_t>(indent + 2), ' ');
  out << '[';
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    out << (r ? ",\n" : "\n") << pad;
    write_row(out, m, r);
  }
  out << '\n' << std::string(static_cast<std::size_t>(indent), ' ') << ']';
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (const char ch : s) {
    const auto u = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (u < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", u);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

}  // namespace attention_lab::json_text
