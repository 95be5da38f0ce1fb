#include "logic/matrix_csv.h"

#include <charconv>
#include <cmath>

namespace attention_lab::gui {

std::string matrix_to_csv(MatrixView m) {
  std::string out;
  char buf[32];
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    for (Eigen::Index c = 0; c < m.cols(); ++c) {
      if (c) out += ',';
      const float v = m(r, c);
      if (std::isnan(v)) out += "nan";
      else if (std::isinf(v)) out += v < 0 ? "-inf" : "inf";
      else {
        const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
        out.append(buf, end);
      }
    }
    out += '\n';
  }
  return out;
}

}  // namespace attention_lab::gui
