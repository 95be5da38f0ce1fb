#pragma once
// What the readers of File ▸ Import weights… (weight_import.cpp: safetensors
// layers, .npy arrays) hand to adapt() (weight_adapt.cpp), which fits the
// scenario around them, and the error and text helpers both use.

#include "attention_lab/excerpt.h"
#include "attention_lab/transformer_model.h"
#include "attention_lab/weight_import.h"

#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace attention_lab::import_detail {

// A problem with the file: import_* catch it and return its message.
struct ImportError {
  std::string message;
};

[[noreturn]] inline void fail(std::string message) { throw ImportError{std::move(message)}; }

inline std::string num(long long v) { return std::to_string(v); }
inline std::string size_text(Eigen::Index rows, Eigen::Index cols) { return num(rows) + " × " + num(cols); }
inline std::string range_text(long long first, long long count) { return num(first) + "–" + num(first + count - 1); }
inline std::string number_text(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", v);
  return buffer;
}
inline std::string tensor_name(const std::string& name) { return "'" + excerpt(name, 80) + "'"; }

// One matrix read from the file, and where it came from.
struct Piece {
  Matrix value;
  std::string source;  // "h.1.attn.c_attn.weight columns 0–31 (Conv1D [in, out], F32)"
};

struct Hints {
  std::optional<ModelConfig> config;
  bool whole_layer = false;  // Q, K and V all imported: biases not in the file are off
  int layer = 0;             // the model's layer they came from (its RoPE may be off: NoPE)
};

// "" when a matrix of this shape may go into `kind`; else why not. Checked on
// shapes before anything is read.
std::string size_problem(StageKind kind, long long rows, long long cols);

// A copy of `current` with `pieces` in place and the rest fitted around them
// (heads, sizes, biases, pins); `notes` gains what was changed. Throws
// ImportError naming `name` when they do not make a scenario.
ImportResult adapt(const Scenario& current, const std::map<StageKind, Piece>& pieces, const Hints& hints,
                   const std::string& name, std::vector<std::string> notes);

}  // namespace attention_lab::import_detail
