#pragma once
// Addresses of every matrix the engine knows: the inputs the user edits and the
// stages it computes. Per-head stages carry their head index.

#include <compare>
#include <optional>
#include <string>
#include <string_view>

namespace attention_lab {

enum class StageKind {
  // Inputs (edited for real)
  X, W_q, W_k, W_v, b_q, b_k, b_v, W_o, b_o, Mask, Sinks, X_kv, QNorm, KNorm,
  // Computed for all heads at once (Q and K rotated when RoPE is on; before
  // the rotation they are QUnrotated and KUnrotated, turned by RopeAngle;
  // with a q/k norm, QProjected and KProjected are X·W before it)
  Q, K, V, QUnrotated, KUnrotated, RopeAngle, QProjected, KProjected,
  // Computed per head
  HeadQ, HeadK, HeadV, HeadQUnrotated, HeadKUnrotated, HeadQProjected, HeadKProjected, Scores, Scaled, Capped,
  PositionBias, Masked, Weights, SinkShare, Context,
  // Computed after the heads
  Concat, Output,
};

inline constexpr int kStageKindCount = static_cast<int>(StageKind::Output) + 1;

bool is_input(StageKind kind);
bool is_per_head(StageKind kind);

// What a stage's numbers are: the values the forward pass computes, or (for
// training, next) the gradient of the loss with respect to them.
enum class Role : unsigned char { Value, Gradient };

struct StageId {
  StageKind kind = StageKind::X;
  int head = 0;   // meaningful only when is_per_head(kind); 0 otherwise
  int layer = 0;  // which layer of a model; a scenario is one layer, layer 0
  Role role = Role::Value;

  static StageId input(StageKind k) { return {k, 0}; }
  static StageId of_head(StageKind k, int h) { return {k, h}; }

  friend auto operator<=>(const StageId&, const StageId&) = default;
};

// "X", "W_q", "mask", "Q", "scores[2]", "weights[0]", "output" …; a layer
// other than 0 is a prefix ("L5.weights[3]"), a gradient another
// ("grad.weights[3]", "L5.grad.weights[3]"), so every id of a one-layer
// scenario reads as before.
std::string to_string(StageId id);
// Inverse of to_string; nullopt when the text names no stage. TransformerLens
// hook names are read too ("blocks.5.attn.hook_pattern[3]": hook_names.h).
std::optional<StageId> parse_stage_id(std::string_view text);

// The name used in ids and in trace files ("scores", "W_q").
const char* kind_name(StageKind kind);

}  // namespace attention_lab
