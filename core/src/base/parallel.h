#pragma once

// When a loop is worth OpenMP's threads.
//
// A parallel region costs a few microseconds on an idle machine. On a busy
// one (another program keeping the cores busy, two test processes side by
// side) a thread that reaches a barrier spins, then waits, for a teammate
// the scheduler has taken off its core: each region can cost a time slice,
// milliseconds. Measured here: 1200 edits of tiny scenarios took 0.07 s
// alone and 82 s with a second such process beside them, all of it in
// regions whose work was a few hundred multiply-adds. Below this much work
// the calling thread does it alone.

namespace attention_lab::parallel {

// Floating-point operations: 2¹⁸ multiply-adds, 10–50 µs of one core's work
// (the packed GEMM measured its threshold so: below it one thread was faster).
inline constexpr double kMinFlops = 1 << 19;

inline bool worth_threads(double flops) { return flops >= kMinFlops; }

}  // namespace attention_lab::parallel
