#pragma once
// Size limits enforced when loading files and when changing dimensions, and
// the memory a size needs. They admit a real model's layer (GPT-2 small:
// d_model 768, 12 heads; GPT-2 XL: d_model 1600, 25 heads) and sequences of
// 4096 tokens; the largest stages kept per head are T×T.

#include "attention_lab/scenario.h"

#include <cstdint>
#include <string>

namespace attention_lab::limits {

inline constexpr int kMaxTokens = 4096;     // T
inline constexpr int kMaxModelDim = 2048;   // d_model, and the output width d_out
inline constexpr int kMaxHeads = 32;        // h
inline constexpr int kMaxHeadDim = 1024;    // d_k and d_v
inline constexpr int kMaxLossVocabulary = 4096;  // the columns of a next_token loss's W_U
inline constexpr int kMaxProjectionWidth = 4096;  // h·d_k and h·d_v
inline constexpr int kMaxTokenLabelLength = 64;   // bytes of one token label
// A checkpoint's config.json (a real one is a few KB; read whole before parsing).
inline constexpr std::uintmax_t kMaxConfigBytes = 16ull << 20;

// Bytes the engine keeps for a scenario of these sizes: inputs and weights,
// Q, K, V, two T×T stages per head (scores and weights), a T×T cache for the
// stage on screen, the mask, concat and output. An estimate to within ~10 %.
// Saturates at UINT64_MAX for absurd sizes (T = 10^9 asked by a file).
std::uint64_t estimated_bytes(const Dims& dims);

// A token label or feature name over kMaxTokenLabelLength bytes: the error
// "WHERE: expected at most 64 bytes (UTF-8), found N"; else an empty string.
std::string check_label_length(const std::string& where, const std::string& label);

// "2.3 GiB", "512 MiB", "12 KiB", "1.2 TiB", "16 EiB".
std::string format_bytes(std::uint64_t bytes);

// The memory a scenario may take: what the system reports as available now
// (MemAvailable in /proc/meminfo), or less when the environment variable
// ATTENTION_LAB_MEMORY_LIMIT_MIB sets a lower limit (the fuzz targets use it
// to stay small). UINT64_MAX when neither is known.
std::uint64_t memory_budget();

// "" when a scenario of these sizes fits into `budget` bytes; otherwise why
// not, with the bytes it would need, so a size that would not fit is refused
// before anything is allocated instead of being left to the OOM killer.
std::string memory_problem(const Dims& dims, std::uint64_t budget);
inline std::string memory_problem(const Dims& dims) { return memory_problem(dims, memory_budget()); }

}  // namespace attention_lab::limits
