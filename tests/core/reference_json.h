#pragma once
// Reading the float64 outputs the real library wrote (gzipped JSON beside
// ../shared's checkpoints) and comparing with them.

#include "attention_lab/matrix.h"

#include <nlohmann/json.hpp>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace attention_lab::test {

inline nlohmann::json read_gzipped_json(const std::filesystem::path& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) throw std::runtime_error("cannot open " + path.string());
  std::string text;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
  gzclose(f);
  return nlohmann::json::parse(text);
}

inline Matrix matrix_of(const nlohmann::json& rows) {
  Matrix m(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(rows.at(0).size()));
  for (Eigen::Index r = 0; r < m.rows(); ++r)
    for (Eigen::Index c = 0; c < m.cols(); ++c)
      m(r, c) = static_cast<float>(rows[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)].get<double>());
  return m;
}

// The largest difference relative to the reference's own scale: float32
// sums of a few hundred terms round at about 1e-6 of the values they add.
inline double relative_difference(const Matrix& ours, const Matrix& reference) {
  const double scale = std::max(1.0, static_cast<double>(reference.cwiseAbs().maxCoeff()));
  return static_cast<double>((ours - reference).cwiseAbs().maxCoeff()) / scale;
}

}  // namespace attention_lab::test
