#include "logic/matrix_csv.h"

#include <charconv>
#include <cmath>

namespace attention_lab::gui {

namespace {

void append_value(std::string& out, float v) {
  char buf[32];
  if (std::isnan(v)) out += "nan";
  else if (std::isinf(v)) out += v < 0 ? "-inf" : "inf";
  else {
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, end);
  }
}

std::string to_csv(MatrixView m, const std::vector<std::string>* row_labels, const std::vector<std::string>* col_labels) {
  std::string out;
  if (col_labels) {
    for (Eigen::Index c = 0; c < m.cols(); ++c) {
      out += ',';
      const auto i = static_cast<std::size_t>(c);
      out += csv_field(i < col_labels->size() ? (*col_labels)[i] : std::to_string(c));
    }
    out += '\n';
  }
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    if (row_labels) {
      const auto i = static_cast<std::size_t>(r);
      out += csv_field(i < row_labels->size() ? (*row_labels)[i] : std::to_string(r));
      out += ',';
    }
    for (Eigen::Index c = 0; c < m.cols(); ++c) {
      if (c) out += ',';
      append_value(out, m(r, c));
    }
    out += '\n';
  }
  return out;
}

}  // namespace

std::string csv_field(const std::string& text) {
  const bool needs_quotes = text.find_first_of(",\"\r\n") != std::string::npos ||
                            (!text.empty() && (text.front() == ' ' || text.back() == ' '));
  if (!needs_quotes) return text;
  std::string out = "\"";
  for (char ch : text) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + '"';
}

std::string matrix_to_csv(MatrixView m) { return to_csv(m, nullptr, nullptr); }

std::string matrix_to_csv(MatrixView m, const std::vector<std::string>& row_labels,
                          const std::vector<std::string>& col_labels) {
  return to_csv(m, &row_labels, &col_labels);
}

}  // namespace attention_lab::gui
