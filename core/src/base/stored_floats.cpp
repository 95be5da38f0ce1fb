#include "attention_lab/stored_floats.h"

#include <algorithm>
#include <bit>
#include <cstring>

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace attention_lab {

const char* to_string(StoredType type) {
  switch (type) {
    case StoredType::F32: return "F32";
    case StoredType::F16: return "F16";
    case StoredType::BF16: return "BF16";
  }
  return "?";
}

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu;
  std::uint32_t mantissa = h & 0x3ffu;
  std::uint32_t bits;
  if (exponent == 0x1f) {  // infinity or NaN
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {  // normal
    bits = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {  // ±0
    bits = sign;
  } else {  // subnormal half: normalise it into a float
    int e = -1;
    do {
      ++e;
      mantissa <<= 1;
    } while ((mantissa & 0x400u) == 0);
    bits = sign | (static_cast<std::uint32_t>(112 - e) << 23) | ((mantissa & 0x3ffu) << 13);
  }
  return std::bit_cast<float>(bits);
}

float bfloat16_to_float(std::uint16_t bits) { return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16); }

float StoredFloats::at(std::ptrdiff_t i) const {
  switch (type) {
    case StoredType::F32: return f32()[i];
    case StoredType::F16: return half_to_float(bits16()[i]);
    case StoredType::BF16: return bfloat16_to_float(bits16()[i]);
  }
  return 0.0f;
}

namespace {

// Whether any of n values has every exponent bit set (NaN or ±∞): the
// exponent bits a value lacks are 0 only then, so the minimum of those over
// the block — a reduction the compiler vectorizes (an OR of comparisons it
// did not) — is 0 exactly when one is special.
template <class Bits>
bool any_special(const Bits* v, std::ptrdiff_t n, Bits exponent) {
  Bits lacking = exponent;
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    const Bits missing = static_cast<Bits>(~v[i] & exponent);
    lacking = missing < lacking ? missing : lacking;
  }
  return lacking == 0;
}

template <class Bits>
std::ptrdiff_t first_special(const Bits* v, std::ptrdiff_t n, Bits exponent) {
  constexpr std::ptrdiff_t kBlock = 1 << 16;
  const std::ptrdiff_t blocks = (n + kBlock - 1) / kBlock;
  std::ptrdiff_t first_block = blocks;
#pragma omp parallel for schedule(static) reduction(min : first_block) if (n > 4 * kBlock)
  for (std::ptrdiff_t b = 0; b < blocks; ++b) {
    const std::ptrdiff_t begin = b * kBlock, count = std::min(kBlock, n - begin);
    if (b < first_block && any_special(v + begin, count, exponent)) first_block = b;
  }
  if (first_block == blocks) return -1;
  for (std::ptrdiff_t i = first_block * kBlock; i < n; ++i)
    if ((v[i] & exponent) == exponent) return i;
  return -1;
}

}  // namespace

std::ptrdiff_t StoredFloats::first_non_finite(std::ptrdiff_t n) const {
  switch (type) {
    case StoredType::F32:
      return first_special(static_cast<const std::uint32_t*>(data), n, std::uint32_t{0x7f800000u});
    case StoredType::F16: return first_special(bits16(), n, std::uint16_t{0x7c00u});
    case StoredType::BF16: return first_special(bits16(), n, std::uint16_t{0x7f80u});
  }
  return -1;
}

void StoredFloats::widen(std::ptrdiff_t first, std::ptrdiff_t n, float* out) const {
  switch (type) {
    case StoredType::F32: std::memcpy(out, f32() + first, static_cast<std::size_t>(n) * sizeof(float)); return;
    case StoredType::F16: {
      const std::uint16_t* in = bits16() + first;
      std::ptrdiff_t i = 0;
#if defined(__F16C__)  // (builds for this machine's CPU: eight at a time, exact as half_to_float)
      for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
#endif
      for (; i < n; ++i) out[i] = half_to_float(in[i]);
      return;
    }
    case StoredType::BF16: {  // a shift: vectorized
      const std::uint16_t* in = bits16() + first;
      for (std::ptrdiff_t i = 0; i < n; ++i) out[i] = std::bit_cast<float>(static_cast<std::uint32_t>(in[i]) << 16);
      return;
    }
  }
}

}  // namespace attention_lab
