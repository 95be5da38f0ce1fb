#include "attention_lab/seeded_fill.h"

#include <algorithm>
#include <cmath>

namespace attention_lab {

namespace {
// splitmix64: a tiny, well-mixed hash, enough to decorrelate neighbouring cells.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
}  // namespace

float seeded_uniform(std::uint64_t seed, StageKind matrix, int row, int col) {
  std::uint64_t h = mix(seed ^ (static_cast<std::uint64_t>(matrix) << 56));
  h = mix(h ^ static_cast<std::uint64_t>(static_cast<std::uint32_t>(row)));
  h = mix(h ^ (static_cast<std::uint64_t>(static_cast<std::uint32_t>(col)) << 32));
  // 24 random bits → [0, 1) exactly representable in float, then to [-1, 1).
  const float unit = static_cast<float>(h >> 40) * (1.0f / 16777216.0f);
  return 2.0f * unit - 1.0f;
}

float fresh_scale(StageKind matrix, int fan_in) {
  switch (matrix) {
    case StageKind::X: return 1.0f;
    case StageKind::b_q: case StageKind::b_k: case StageKind::b_v: case StageKind::b_o: return 0.1f;
    default: return std::sqrt(3.0f / static_cast<float>(std::max(fan_in, 1)));  // unit variance out
  }
}

Matrix seeded_matrix(std::uint64_t seed, StageKind matrix, int rows, int cols, int fan_in) {
  Matrix m(rows, cols);
  if (matrix == StageKind::Mask) {
    m.setZero();
    m.triangularView<Eigen::Lower>().setOnes();
    return m;
  }
  const float scale = fresh_scale(matrix, fan_in);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) m(r, c) = scale * seeded_uniform(seed, matrix, r, c);
  return m;
}

Matrix regrow_seeded(const Matrix& old, int rows, int cols, int old_block, int new_block, std::uint64_t seed,
                     StageKind matrix, int fan_in) {
  Matrix m = seeded_matrix(seed, matrix, rows, cols, fan_in);
  if (old_block <= 0 || new_block <= 0) {
    old_block = static_cast<int>(old.cols());
    new_block = cols;
  }
  const int blocks = std::min(old_block > 0 ? static_cast<int>(old.cols()) / old_block : 0,
                              new_block > 0 ? cols / new_block : 0);
  const auto r = std::min<Eigen::Index>(old.rows(), rows);
  const auto w = to_index(std::min(old_block, new_block));
  for (int b = 0; b < blocks; ++b)
    m.block(0, to_index(b * new_block), r, w) = old.block(0, to_index(b * old_block), r, w);
  return m;
}

}  // namespace attention_lab
