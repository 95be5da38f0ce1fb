// A model's weights in the file's own type (stored_floats.h): every 16-bit
// value widens exactly as the scalar conversions do (in bulk, eight at a time
// where the CPU converts float16 itself), and the first NaN or ±∞ of a tensor
// is found wherever it sits, in the parallel blocks of the check or between them.

#include "attention_lab/stored_floats.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace attention_lab {
namespace {

TEST(StoredFloats, EverySixteenBitValueWidensAsTheScalarConversion) {
  std::vector<std::uint16_t> all(65536);
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::uint16_t>(i);
  for (const StoredType type : {StoredType::F16, StoredType::BF16}) {
    SCOPED_TRACE(to_string(type));
    const StoredFloats v{all.data(), type};
    std::vector<float> wide(all.size() + 3);
    v.widen(3, 65533, wide.data());  // from an odd start: the bulk loop and its tail
    for (std::size_t i = 3; i < all.size(); ++i) {
      const float want = type == StoredType::F16 ? half_to_float(all[i]) : bfloat16_to_float(all[i]);
      const float got = wide[i - 3];
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(got)) << std::hex << i;
      } else {
        ASSERT_EQ(std::bit_cast<std::uint32_t>(got), std::bit_cast<std::uint32_t>(want)) << std::hex << i;
        ASSERT_EQ(std::bit_cast<std::uint32_t>(v.at(static_cast<std::ptrdiff_t>(i))), std::bit_cast<std::uint32_t>(want));
      }
    }
  }
  const std::vector<float> f = {1.5f, -2.0f, 3.25f};
  float out[2];
  StoredFloats{f.data(), StoredType::F32}.plus(1).widen(0, 2, out);
  EXPECT_EQ(out[0], -2.0f);
  EXPECT_EQ(out[1], 3.25f);
  EXPECT_EQ(StoredFloats({f.data(), StoredType::F32}).f32(), f.data());
  EXPECT_EQ(StoredFloats({f.data(), StoredType::BF16}).f32(), nullptr);
}

TEST(StoredFloats, TheFirstNonFiniteValueIsFoundWhereverItIs) {
  constexpr std::ptrdiff_t n = 5 * 65536 + 17;  // several of the check's blocks, run in parallel
  struct Case {
    StoredType type;
    std::uint32_t nan, inf, one;
  };
  for (const Case c : {Case{StoredType::F32, 0x7fc00000u, 0xff800000u, 0x3f800000u},
                       Case{StoredType::F16, 0x7e00u, 0xfc00u, 0x3c00u}, Case{StoredType::BF16, 0x7fc0u, 0xff80u, 0x3f80u}}) {
    SCOPED_TRACE(to_string(c.type));
    std::vector<std::uint32_t> wide(static_cast<std::size_t>(n), c.one);
    std::vector<std::uint16_t> narrow(static_cast<std::size_t>(n), static_cast<std::uint16_t>(c.one));
    const auto set = [&](std::ptrdiff_t i, std::uint32_t bits) {
      wide[static_cast<std::size_t>(i)] = bits;
      narrow[static_cast<std::size_t>(i)] = static_cast<std::uint16_t>(bits);
    };
    const auto first = [&] {
      const StoredFloats v{c.type == StoredType::F32 ? static_cast<const void*>(wide.data()) : narrow.data(), c.type};
      return v.first_non_finite(n);
    };
    EXPECT_EQ(first(), -1);
    for (const std::ptrdiff_t at : {std::ptrdiff_t{0}, std::ptrdiff_t{65535}, std::ptrdiff_t{65536}, std::ptrdiff_t{3 * 65536 + 5}, n - 1}) {
      set(at, c.nan);
      EXPECT_EQ(first(), at);
      set(at, c.inf);
      EXPECT_EQ(first(), at);
      set(n - 1, c.nan);  // a later one does not hide the first
      EXPECT_EQ(first(), at);
      set(at, c.one);
      set(n - 1, c.one);
    }
    // The largest finite values and the smallest subnormals are finite.
    set(7, c.type == StoredType::F32 ? 0x7f7fffffu : c.type == StoredType::F16 ? 0x7bffu : 0x7f7fu);
    set(8, 1u);
    EXPECT_EQ(first(), -1);
  }
}

}  // namespace
}  // namespace attention_lab
