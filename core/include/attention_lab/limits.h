#pragma once
// Size limits enforced when loading files and when changing dimensions.
// They keep every stage of one scenario within a few hundred MiB of float32:
// the largest stage kept per head is T×T, so T = 1024 with 16 heads is
// 16 × 6 T×T stages × 4 MiB = 384 MiB.

namespace attention_lab::limits {

inline constexpr int kMaxTokens = 1024;     // T
inline constexpr int kMaxModelDim = 1024;   // d_model, and the output width d_out
inline constexpr int kMaxHeads = 16;        // h
inline constexpr int kMaxHeadDim = 1024;    // d_k and d_v
inline constexpr int kMaxProjectionWidth = 4096;  // h·d_k and h·d_v
inline constexpr int kMaxTokenLabelLength = 64;   // characters of one token label

}  // namespace attention_lab::limits
