#pragma once
// The width of the GCC vector types (`float __attribute__((vector_size))`)
// the hand-vectorized row loops use: one register of the widest vector unit
// the build targets. A wider type is lowered lane by lane wherever it
// compares or selects (a 16-float max on AVX2 became 16 scalar vmaxss, and
// max_and_nan took 7 % of the forward), so the width follows -march.
// Nothing may depend on the width but speed: the loops using it either work
// element by element or reduce with an operation whose result does not
// depend on the order (max, or).

namespace attention_lab::simd {

#if defined(__AVX512F__)
inline constexpr int kLanes = 16;
#elif defined(__AVX__)
inline constexpr int kLanes = 8;
#else
inline constexpr int kLanes = 4;
#endif

using Floats = float __attribute__((vector_size(kLanes * sizeof(float))));
using Ints = int __attribute__((vector_size(kLanes * sizeof(int))));

}  // namespace attention_lab::simd
