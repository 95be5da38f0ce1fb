#include "attention_lab/limits.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string_view>

namespace attention_lab::limits {

std::uint64_t estimated_bytes(const Dims& d) {
  // In double: the sizes come from files and may be absurd (T = 10^9 gives
  // 10^18 cells per head), and an overflowed uint64 would read as "small".
  // Keys: T_k rows of d_kv from X_kv with cross-attention (0 in a Dims that
  // never set them: self-attention, keys are the tokens), kv_heads of K and V.
  const double T = d.T, D = d.d_model, H = d.heads, wk = H * d.d_k, wv = H * d.d_v, out = d.d_out;
  const double Tk = d.T_k > 0 ? d.T_k : T, Dkv = d.d_kv > 0 ? d.d_kv : D;
  const double KV = d.kv_heads > 0 ? d.kv_heads : H, kvk = KV * d.d_k, kvv = KV * d.d_v;
  const double floats = T * D + Tk * Dkv * (d.T_k > 0 ? 1 : 0)  // X, X_kv (self-attention: X again, an upper bound)
                        + D * wk + Dkv * (kvk + kvv)  // W_q, W_k, W_v
                        + wv * out                    // W_o
                        + T * wk + Tk * (kvk + kvv)   // Q, K, V
                        + 2 * H * T * Tk              // scores, weights
                        + 2 * T * Tk                  // mask, cache of the stage on screen
                        + T * wv + T * out;           // concat, output
  const double bytes = floats * sizeof(float);
  constexpr auto kMax = std::numeric_limits<std::uint64_t>::max();
  if (!(bytes < static_cast<double>(kMax))) return kMax;
  return static_cast<std::uint64_t>(bytes);
}

std::string check_label_length(const std::string& where, const std::string& label) {
  if (label.size() <= static_cast<std::size_t>(kMaxTokenLabelLength)) return {};
  // Bytes, not letters: "ç" takes two of them.
  return where + ": expected at most " + std::to_string(kMaxTokenLabelLength) + " bytes (UTF-8), found " +
         std::to_string(label.size());
}

std::string format_bytes(std::uint64_t bytes) {
  char buf[32];
  const double b = static_cast<double>(bytes);
  constexpr double KiB = 1024.0, MiB = KiB * 1024, GiB = MiB * 1024, TiB = GiB * 1024;
  constexpr double PiB = TiB * 1024, EiB = PiB * 1024;
  if (b >= EiB) std::snprintf(buf, sizeof buf, "%.0f EiB", b / EiB);
  else if (b >= PiB) std::snprintf(buf, sizeof buf, "%.0f PiB", b / PiB);
  else if (b >= TiB) std::snprintf(buf, sizeof buf, "%.1f TiB", b / TiB);
  else if (b >= GiB) std::snprintf(buf, sizeof buf, "%.1f GiB", b / GiB);
  else if (b >= MiB) std::snprintf(buf, sizeof buf, "%.0f MiB", b / MiB);
  else std::snprintf(buf, sizeof buf, "%.0f KiB", b / KiB);
  return buf;
}

namespace {

// MemAvailable from /proc/meminfo ("MemAvailable:   21934512 kB"), or 0.
std::uint64_t available_memory() {
  std::ifstream in("/proc/meminfo");
  for (std::string line; std::getline(in, line);) {
    constexpr std::string_view kKey = "MemAvailable:";
    if (line.rfind(kKey, 0) != 0) continue;
    std::size_t i = kKey.size();
    while (i < line.size() && line[i] == ' ') ++i;
    std::uint64_t kib = 0;
    const auto [end, ec] = std::from_chars(line.data() + i, line.data() + line.size(), kib);
    if (ec != std::errc{} || end == line.data() + i) return 0;
    return kib * 1024;
  }
  return 0;
}

}  // namespace

std::uint64_t memory_budget() {
  std::uint64_t budget = available_memory();
  if (budget == 0) budget = std::numeric_limits<std::uint64_t>::max();
  if (const char* env = std::getenv("ATTENTION_LAB_MEMORY_LIMIT_MIB"); env && *env) {
    std::uint64_t mib = 0;
    const std::string_view v(env);
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), mib);
    if (ec == std::errc{} && end == v.data() + v.size() && mib > 0 && mib < (std::uint64_t{1} << 44))
      budget = std::min(budget, mib << 20);
  }
  return budget;
}

std::string memory_problem(const Dims& d, std::uint64_t budget) {
  const std::uint64_t need = estimated_bytes(d);
  if (need <= budget) return {};
  return "T=" + std::to_string(d.T) + ", d_model=" + std::to_string(d.d_model) + ", " + std::to_string(d.heads) +
         (d.heads == 1 ? " head" : " heads") + ", d_k=" + std::to_string(d.d_k) + ", d_v=" + std::to_string(d.d_v) +
         ": expected a size that fits in memory, found one that needs about " + format_bytes(need) + " (" +
         std::to_string(need) + " bytes) with " + format_bytes(budget) + " available";
}

}  // namespace attention_lab::limits
