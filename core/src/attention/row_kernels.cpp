// Vector loops over rows for the engine's incremental paths (see row_kernels.h).

#include "attention/row_kernels.h"
#include "base/vector_lanes.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace attention_lab::engine_detail {

using Index = Eigen::Index;

using simd::Floats;
using simd::Ints;
using simd::kLanes;

namespace {

// sum_output_segments for four rows, written out: restrict-qualified
// parameters (GCC honours restrict on parameters only) let it vectorize.
template <bool First>
void sum_output_rows4(float* __restrict s0, float* __restrict s1, float* __restrict s2, float* __restrict s3,
                      float* __restrict o0, float* __restrict o1, float* __restrict o2, float* __restrict o3,
                      const float* __restrict y_old, const float* __restrict y_new, const float* a, const float* b,
                      const float* scale, Index n) {
  const float a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3], b0 = b[0], b1 = b[1], b2 = b[2], b3 = b[3];
  const float c0 = scale[0], c1 = scale[1], c2 = scale[2], c3 = scale[3];
  for (Index c = 0; c < n; ++c) {
    const float yo = y_old[c], yn = y_new[c];
    const float x0 = s0[c] + (yo * a0 + yn * b0);
    const float x1 = s1[c] + (yo * a1 + yn * b1);
    const float x2 = s2[c] + (yo * a2 + yn * b2);
    const float x3 = s3[c] + (yo * a3 + yn * b3);
    s0[c] = x0, s1[c] = x1, s2[c] = x2, s3[c] = x3;
    if constexpr (First)
      o0[c] = x0 * c0, o1[c] = x1 * c1, o2[c] = x2 * c2, o3[c] = x3 * c3;
    else
      o0[c] += x0 * c0, o1[c] += x1 * c1, o2[c] += x2 * c2, o3[c] += x3 * c3;
  }
}

}  // namespace

template <bool First>
void sum_output_segments(float* const* seg, const float* y_old, const float* y_new, const float* a, const float* b,
                         const float* scale, float* const* out, Index n) {
  static_assert(kGroupRows == 4, "sum_output_rows4 is written out for four rows");
  sum_output_rows4<First>(seg[0], seg[1], seg[2], seg[3], out[0], out[1], out[2], out[3], y_old, y_new, a, b, scale, n);
}
template void sum_output_segments<true>(float* const*, const float*, const float*, const float*, const float*,
                                        const float*, float* const*, Index);
template void sum_output_segments<false>(float* const*, const float*, const float*, const float*, const float*,
                                         const float*, float* const*, Index);

float add_outer_product(float* block, Index stride, const float* a, const float* b, Index rows, Index cols, bool& nan) {
  Floats largest = {};
  Ints not_a_number = {};
  float tail_largest = 0.0f;
  bool tail_nan = false;
  for (Index i = 0; i < rows; ++i) {
    float* row = block + i * stride;
    const float ai = a[i];
    Index j = 0;
    for (; j + kLanes <= cols; j += kLanes) {
      Floats x, bj;
      std::memcpy(&x, row + j, sizeof x);
      std::memcpy(&bj, b + j, sizeof bj);
      x += ai * bj;
      std::memcpy(row + j, &x, sizeof x);
      const Floats magnitude = x < 0.0f ? -x : x;
      largest = magnitude > largest ? magnitude : largest;
      not_a_number |= x != x;
    }
    for (; j < cols; ++j) {
      row[j] += ai * b[j];
      tail_largest = std::max(tail_largest, std::abs(row[j]));
      tail_nan = tail_nan || row[j] != row[j];
    }
  }
  float m = tail_largest;
  for (int k = 0; k < kLanes; ++k) m = std::max(m, largest[k]), tail_nan = tail_nan || not_a_number[k] != 0;
  nan = tail_nan;
  return m;
}

float update_context_row(float* u, const float* v_new, const float* v_old, float en, float eo, float scale,
                         float* concat, Index n) {
  const float d = en - eo;
  Floats largest = {};
  Ints not_a_number = {};
  Index c = 0;
  for (; c + kLanes <= n; c += kLanes) {
    Floats x, vn;
    std::memcpy(&x, u + c, sizeof x);
    std::memcpy(&vn, v_new + c, sizeof vn);
    if (v_old) {
      Floats vo;
      std::memcpy(&vo, v_old + c, sizeof vo);
      x += vn * en - vo * eo;
    } else {
      x += vn * d;
    }
    std::memcpy(u + c, &x, sizeof x);
    const Floats scaled = x * scale;
    std::memcpy(concat + c, &scaled, sizeof scaled);
    const Floats magnitude = x < 0.0f ? -x : x;
    largest = magnitude > largest ? magnitude : largest;
    not_a_number |= x != x;
  }
  float m = 0.0f;
  bool nan = false;
  for (; c < n; ++c) {
    const float x = u[c] + (v_old ? v_new[c] * en - v_old[c] * eo : v_new[c] * d);
    u[c] = x;
    concat[c] = x * scale;
    m = std::max(m, std::abs(x));
    nan = nan || x != x;
  }
  for (int k = 0; k < kLanes; ++k) m = std::max(m, largest[k]), nan = nan || not_a_number[k] != 0;
  return nan ? std::numeric_limits<float>::quiet_NaN() : m;
}

void sum_output_segment(float* seg, const float* y_old, const float* y_new, float a, float b, float scale,
                        float* out, Index n, bool first) {
  if (y_old && first)
    for (Index c = 0; c < n; ++c) {
      const float x = seg[c] + (y_old[c] * a + y_new[c] * b);
      seg[c] = x;
      out[c] = x * scale;
    }
  else if (y_old)
    for (Index c = 0; c < n; ++c) {
      const float x = seg[c] + (y_old[c] * a + y_new[c] * b);
      seg[c] = x;
      out[c] += x * scale;
    }
  else if (first)
    for (Index c = 0; c < n; ++c) out[c] = seg[c] * scale;
  else
    for (Index c = 0; c < n; ++c) out[c] += seg[c] * scale;
}

}  // namespace attention_lab::engine_detail
