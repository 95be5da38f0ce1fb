#include "attention_lab/limits.h"

#include <cstdio>

namespace attention_lab::limits {

std::uint64_t estimated_bytes(const Dims& d) {
  const auto T = static_cast<std::uint64_t>(d.T), D = static_cast<std::uint64_t>(d.d_model),
             H = static_cast<std::uint64_t>(d.heads), wk = H * static_cast<std::uint64_t>(d.d_k),
             wv = H * static_cast<std::uint64_t>(d.d_v), out = static_cast<std::uint64_t>(d.d_out);
  const std::uint64_t floats = T * D                 // X
                               + D * (2 * wk + wv)   // W_q, W_k, W_v
                               + wv * out            // W_o
                               + T * (2 * wk + wv)   // Q, K, V
                               + 2 * H * T * T       // scores, weights
                               + 2 * T * T           // mask, cache of the stage on screen
                               + T * wv + T * out;   // concat, output
  return floats * sizeof(float);
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
  if (b >= 1024.0 * 1024 * 1024) std::snprintf(buf, sizeof buf, "%.1f GiB", b / (1024.0 * 1024 * 1024));
  else if (b >= 1024.0 * 1024) std::snprintf(buf, sizeof buf, "%.0f MiB", b / (1024.0 * 1024));
  else std::snprintf(buf, sizeof buf, "%.0f KiB", b / 1024.0);
  return buf;
}

}  // namespace attention_lab::limits
