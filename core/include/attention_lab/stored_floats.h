#pragma once
// The values of a stored tensor in the file's own type — float32, or the
// 16-bit float16 and bfloat16 most checkpoints ship in — where the file
// mapping put them. A model's weights are kept this way and widened to float
// a panel at a time inside the products that read them (gemm.h), so an open
// model takes the memory of its file, not twice it.

#include <cstddef>
#include <cstdint>

namespace attention_lab {

enum class StoredType : unsigned char { F32, F16, BF16 };

const char* to_string(StoredType type);
inline std::size_t stored_bytes(StoredType type) { return type == StoredType::F32 ? 4 : 2; }

// IEEE half and bfloat16 to float (every value exact).
float half_to_float(std::uint16_t bits);
float bfloat16_to_float(std::uint16_t bits);

struct StoredFloats {
  const void* data = nullptr;  // aligned to its element (4 or 2 bytes)
  StoredType type = StoredType::F32;

  explicit operator bool() const { return data != nullptr; }
  // The values from element `elements` on.
  StoredFloats plus(std::ptrdiff_t elements) const {
    return {data ? static_cast<const std::byte*>(data) + elements * static_cast<std::ptrdiff_t>(stored_bytes(type)) : nullptr,
            type};
  }
  // Float32 values in place, or null for a 16-bit type.
  const float* f32() const { return type == StoredType::F32 ? static_cast<const float*>(data) : nullptr; }
  const std::uint16_t* bits16() const { return type == StoredType::F32 ? nullptr : static_cast<const std::uint16_t*>(data); }

  float at(std::ptrdiff_t i) const;
  // The index of the first of n values that is NaN or ±∞, or −1: read from
  // the bits, blocks in parallel (a model's every weight is checked on load).
  std::ptrdiff_t first_non_finite(std::ptrdiff_t n) const;
  // Elements first … first + n − 1, widened into out.
  void widen(std::ptrdiff_t first, std::ptrdiff_t n, float* out) const;
};

}  // namespace attention_lab
