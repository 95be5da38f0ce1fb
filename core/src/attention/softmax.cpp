#include "attention_lab/softmax.h"

#include "base/vector_lanes.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#if defined(__FMA__) && (defined(__AVX512F__) || defined(__AVX2__))
#include <immintrin.h>
#endif

namespace attention_lab {

const char* describe(RowIssue issue) {
  switch (issue) {
    case RowIssue::None: return "ok";
    case RowIssue::NoAllowedKey:
      return "the mask allows no key, so its weights and context are 0 (PyTorch would give NaN)";
    case RowIssue::InfiniteScore:
      return "some scores are +inf; they share the weight equally and the others get 0";
    case RowIssue::NotANumber: return "the scores contain NaN, so the weights are NaN";
  }
  return "";
}

// The reductions below keep one accumulator per vector lane (a fixed order,
// so no -ffast-math is needed for the compiler to vectorize them).

float max_and_nan(const float* x, Eigen::Index n, bool& has_nan) {
  using simd::Floats, simd::Ints, simd::kLanes;
  constexpr float kInf = std::numeric_limits<float>::infinity();
  // GCC's vector types: the compiler does not vectorize a max that must
  // keep NaN's rule (v > acc is false for NaN) by itself; lane k sees
  // x[k], x[k + kLanes], … in order, as a loop over an array of lanes would.
  Floats acc;
  Ints nan = {};
  for (int k = 0; k < kLanes; ++k) acc[k] = -kInf;
  Eigen::Index j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    Floats v;
    std::memcpy(&v, x + j, sizeof v);
    acc = v > acc ? v : acc;
    nan |= v != v;
  }
  float m = -kInf;
  bool any_nan = false;
  for (; j < n; ++j) {
    m = x[j] > m ? x[j] : m;
    any_nan = any_nan || x[j] != x[j];
  }
  for (int k = 0; k < kLanes; ++k) {
    m = acc[k] > m ? acc[k] : m;
    any_nan = any_nan || nan[k] != 0;
  }
  has_nan = any_nan;
  return m;
}

double sum_in_double(const float* x, Eigen::Index n) {
  constexpr int kLanes = 8;
  double acc[kLanes] = {};
  Eigen::Index j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int k = 0; k < kLanes; ++k) acc[k] += static_cast<double>(x[j + k]);
  // the tail goes to the lanes its indices belong to, so trailing zeros
  // (a row summed over more columns) never change the result
  for (; j < n; ++j) acc[j % kLanes] += static_cast<double>(x[j]);
  return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

namespace {

#if defined(__FMA__) && (defined(__AVX512F__) || defined(__AVX2__))
// fast_exp written out in intrinsics, operation for operation, so each lane
// gets fast_exp's bits. GCC's own vectorization of the scalar loop kept every
// clamp and select as a pair of compares and a blend (about 45 instructions
// per vector, 0.95 ns a float on Zen 3); min and max here are single
// instructions whose NaN rule (the second operand wins) is the scalar
// clamp's: NaN becomes kLo.
#if defined(__AVX512F__)
struct ExpLanes {
  using V = __m512;
  using I = __m512i;
  static constexpr int kWidth = 16;
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static V set1(float f) { return _mm512_set1_ps(f); }
  static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V max(V a, V b) { return _mm512_max_ps(a, b); }
  static V min(V a, V b) { return _mm512_min_ps(a, b); }
  static I bits(V v) { return _mm512_castps_si512(v); }
  static V floats(I i) { return _mm512_castsi512_ps(i); }
  static I isub(I a, I b) { return _mm512_sub_epi32(a, b); }
  static I iadd(I a, I b) { return _mm512_add_epi32(a, b); }
  static I iset1(int i) { return _mm512_set1_epi32(i); }
  static I half_toward_zero(I i) { return _mm512_srai_epi32(_mm512_add_epi32(i, _mm512_srli_epi32(i, 31)), 1); }
  static I exponent(I i) { return _mm512_slli_epi32(i, 23); }
  // x < kExpLo ? 0 : x > kExpHi ? +∞ : x is NaN ? x : y
  static V finish(V x, V y, V lo, V hi) {
    y = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), y, x);
    y = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, hi, _CMP_GT_OQ), y, set1(std::numeric_limits<float>::infinity()));
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, lo, _CMP_LT_OQ), y, _mm512_setzero_ps());
  }
};
#else
struct ExpLanes {
  using V = __m256;
  using I = __m256i;
  static constexpr int kWidth = 8;
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static V set1(float f) { return _mm256_set1_ps(f); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V max(V a, V b) { return _mm256_max_ps(a, b); }
  static V min(V a, V b) { return _mm256_min_ps(a, b); }
  static I bits(V v) { return _mm256_castps_si256(v); }
  static V floats(I i) { return _mm256_castsi256_ps(i); }
  static I isub(I a, I b) { return _mm256_sub_epi32(a, b); }
  static I iadd(I a, I b) { return _mm256_add_epi32(a, b); }
  static I iset1(int i) { return _mm256_set1_epi32(i); }
  static I half_toward_zero(I i) { return _mm256_srai_epi32(_mm256_add_epi32(i, _mm256_srli_epi32(i, 31)), 1); }
  static I exponent(I i) { return _mm256_slli_epi32(i, 23); }
  // x < kExpLo ? 0 : x > kExpHi ? +∞ : x is NaN ? x : y
  static V finish(V x, V y, V lo, V hi) {
    y = _mm256_blendv_ps(y, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
    y = _mm256_blendv_ps(y, set1(std::numeric_limits<float>::infinity()), _mm256_cmp_ps(x, hi, _CMP_GT_OQ));
    return _mm256_blendv_ps(y, _mm256_setzero_ps(), _mm256_cmp_ps(x, lo, _CMP_LT_OQ));
  }
};
#endif

// fast_exp (softmax.h) of each lane: the same constants and the same operations in the same order.
template <class L>
typename L::V exp_lanes(typename L::V x) {
  using V = typename L::V;
  using I = typename L::I;
  using namespace detail;
  const V lo = L::set1(kExpLo), hi = L::set1(kExpHi), round = L::set1(kExpRound);
  const V xc = L::min(L::max(x, lo), hi);
  const V t = L::fma(xc, L::set1(kExpLog2e), round);
  const V n = L::sub(t, round);
  const I ni = L::isub(L::bits(t), L::bits(round));
  V r = L::fma(n, L::set1(-kExpLn2Hi), xc);
  r = L::fma(n, L::set1(-kExpLn2Lo), r);
  V p = L::set1(kExpPoly[0]);
  for (int k = 1; k < 6; ++k) p = L::fma(p, r, L::set1(kExpPoly[k]));
  p = L::fma(p, L::mul(r, r), L::add(r, L::set1(1.0f)));
  const I n1 = L::half_toward_zero(ni);
  const I n2 = L::isub(ni, n1);
  const I bias = L::iset1(127);
  const V y = L::mul(L::mul(p, L::floats(L::exponent(L::iadd(n1, bias)))), L::floats(L::exponent(L::iadd(n2, bias))));
  return L::finish(x, y, lo, hi);
}
#endif

}  // namespace

void exp_shifted(const float* x, float offset, float* e, Eigen::Index n) {
  Eigen::Index j = 0;
#if defined(__FMA__) && (defined(__AVX512F__) || defined(__AVX2__))
  const ExpLanes::V shift = ExpLanes::set1(offset);
  for (; j + ExpLanes::kWidth <= n; j += ExpLanes::kWidth)
    ExpLanes::store(e + j, exp_lanes<ExpLanes>(ExpLanes::sub(ExpLanes::load(x + j), shift)));
#endif
  for (; j < n; ++j) e[j] = fast_exp(x[j] - offset);
}

RowIssue softmax_row_with_sink(Eigen::Ref<const RowVector> x, float sink, Eigen::Ref<RowVector> w, float& share) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  bool has_nan = false;
  const float row_max = max_and_nan(x.data(), x.size(), has_nan);
  if (has_nan || row_max == kInf || !(sink > -kInf)) {
    const RowIssue issue = softmax_row(x, w);
    share = has_nan ? std::numeric_limits<float>::quiet_NaN() : 0.0f;  // no sink, or +∞ keys take everything
    return issue;
  }
  const float m = std::max(row_max, sink);
  exp_shifted(x.data(), m, w.data(), x.size());
  const float e_sink = fast_exp(sink - m);  // as exp_shifted computes the keys' terms
  const double sum = sum_in_double(w.data(), x.size()) + static_cast<double>(e_sink);
  const auto inv = static_cast<float>(1.0 / sum);
  w *= inv;
  share = e_sink * inv;
  return RowIssue::None;
}

RowIssue softmax_row(Eigen::Ref<const RowVector> x, Eigen::Ref<RowVector> w) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const Eigen::Index n = x.size();

  // pass 1: the row max, and NaN detection
  bool has_nan = false;
  const float max = max_and_nan(x.data(), n, has_nan);
  if (has_nan) {
    w.setConstant(std::numeric_limits<float>::quiet_NaN());
    return RowIssue::NotANumber;
  }
  if (max == -kInf) {
    w.setZero();
    return RowIssue::NoAllowedKey;
  }
  if (max == kInf) {
    // The limit of softmax as those entries grow: equal shares among the largest.
    const auto count = static_cast<float>((x.array() == kInf).count());
    w = (x.array() == kInf).select(RowVector::Constant(n, 1.0f / count), 0.0f);
    return RowIssue::InfiniteScore;
  }

  // pass 2: e^(x − max) (x = −∞ gives exactly 0) and their sum
  exp_shifted(x.data(), max, w.data(), n);
  const double sum = sum_in_double(w.data(), n);
  // pass 3: normalise (sum ≥ 1 because the max entry contributes e^0)
  const auto inv = static_cast<float>(1.0 / sum);
  w *= inv;
  return RowIssue::None;
}

}  // namespace attention_lab
