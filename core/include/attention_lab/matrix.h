#pragma once
// Matrix types shared by the engine, the file formats and the front ends.
// Row-major float32, as real models store activations: one row per token.

#include <Eigen/Core>

#include <cstddef>

namespace attention_lab {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowVector = Eigen::Matrix<float, 1, Eigen::Dynamic, Eigen::RowMajor>;

// A read-only window onto a matrix or onto a column block of one (a head's slice of Q).
using MatrixView = Eigen::Ref<const Matrix, 0, Eigen::OuterStride<>>;

inline Eigen::Index to_index(int v) { return static_cast<Eigen::Index>(v); }

}  // namespace attention_lab
