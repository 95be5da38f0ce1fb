#pragma once
// Row-wise softmax, computed stably and with every edge case decided, and the
// vectorizable pieces the engine builds its softmax from.

#include "attention_lab/matrix.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace attention_lab {

// What was unusual about a row, if anything.
enum class RowIssue : std::uint8_t {
  None,
  NoAllowedKey,    // every entry is −∞ (the mask forbids all keys): weights are all 0
  InfiniteScore,   // some entries are +∞: they share the weight equally, the rest get 0
  NotANumber,      // the row holds NaN: the weights are NaN too
};

const char* describe(RowIssue issue);

// weights_j = e^(x_j − max x) / Σ_k e^(x_k − max x). Subtracting the max keeps
// every exponent ≤ 0, so nothing overflows even for scores of ±1e30; −∞ entries
// get exactly 0. The sum is accumulated in double.
RowIssue softmax_row(Eigen::Ref<const RowVector> scores, Eigen::Ref<RowVector> weights);

// softmax_row over the row plus one more logit, the sink, whose share is
// returned in `sink_share` and dropped from the weights (they sum to
// 1 − sink_share). A row the mask empties gives all its weight to the sink
// (weights 0, share 1, no issue); NaN and +∞ rows are softmax_row's (share 0,
// or NaN with NaN). A sink of −∞ is no sink.
RowIssue softmax_row_with_sink(Eigen::Ref<const RowVector> scores, float sink, Eigen::Ref<RowVector> weights,
                               float& sink_share);

namespace detail {
inline float float_from_bits(std::int32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}
inline std::int32_t bits_from_float(float f) {
  std::int32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}
// fast_exp's constants, which its vector form (softmax.cpp) shares
inline constexpr float kExpLog2e = 1.44269504088896341f;
inline constexpr float kExpLn2Hi = 0.693359375f;
inline constexpr float kExpLn2Lo = -2.12194440e-4f;
inline constexpr float kExpLo = -87.33654475f;  // below: 0 (under the smallest normal float)
inline constexpr float kExpHi = 88.72283935f;   // above: +∞
inline constexpr float kExpRound = 12582912.0f;  // 1.5·2^23: adding it rounds to an integer
// the Cephes polynomial's coefficients, highest degree first
inline constexpr float kExpPoly[6] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                                      4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};
}  // namespace detail

// e^x in float, within 1.3 ulp of the exact value (Cody–Waite reduction and
// the Cephes polynomial). Written without calls or branches so that loops over
// it vectorize, and every caller, scalar or vector, gets the same bits: the
// engine recomputes single entries of a row and relies on that. Results below
// the smallest normal float (x < −87.34, −∞ included) are exactly 0, x above
// 88.72 gives +∞, NaN stays NaN.
// a·b + c: one fused instruction where the CPU has FMA. A build for a CPU
// without it (the portable x86-64-v2 package) would make std::fma a call to
// libm's software emulation, 30× slower at T = 128; a rounded product and sum
// there costs under an ulp of accuracy, and both paths, scalar and vector,
// still get the same bits (ISO C++ mode: the compiler does not contract).
inline float mul_add(float a, float b, float c) {
#if defined(__FMA__) || defined(__aarch64__)
  return std::fma(a, b, c);
#else
  return a * b + c;
#endif
}

inline float fast_exp(float x) {
  using namespace detail;
  // clamped, NaN included (it becomes kExpLo), so the integer part stays small
  float xc = x >= kExpLo ? x : kExpLo;
  xc = xc <= kExpHi ? xc : kExpHi;
  const float t = mul_add(xc, kExpLog2e, kExpRound);
  const float n = t - kExpRound;
  const std::int32_t ni = bits_from_float(t) - bits_from_float(kExpRound);
  float r = mul_add(n, -kExpLn2Hi, xc);
  r = mul_add(n, -kExpLn2Lo, r);
  float p = kExpPoly[0];
  for (int k = 1; k < 6; ++k) p = mul_add(p, r, kExpPoly[k]);
  p = mul_add(p, r * r, r + 1.0f);
  // 2^n as two factors, so n = 128 (x near 88.7) stays representable
  const std::int32_t n1 = ni / 2;
  const std::int32_t n2 = ni - n1;
  const float y = p * float_from_bits((n1 + 127) * (1 << 23)) * float_from_bits((n2 + 127) * (1 << 23));
  constexpr float kInf = std::numeric_limits<float>::infinity();
  return x < kExpLo ? 0.0f : (x > kExpHi ? kInf : (x != x ? x : y));
}

// The largest of x[0..n) (−∞ when n = 0), and whether any entry is NaN.
float max_and_nan(const float* x, Eigen::Index n, bool& has_nan);

// Σ x[0..n) accumulated in double.
double sum_in_double(const float* x, Eigen::Index n);

// e[j] = fast_exp(x[j] − offset) for j < n.
void exp_shifted(const float* x, float offset, float* e, Eigen::Index n);

}  // namespace attention_lab
