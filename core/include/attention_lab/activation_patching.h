#pragma once
// Activation patching, as TransformerLens's `patching` module defines it:
// run the corrupted prompt, but put one activation of the clean prompt's run
// in its place, and measure how much of the clean answer comes back. Every
// patched run starts at the patched layer from the corrupted run's residual
// stream there (the layers before it cannot change).
//
// A metric of the last position's logits — the logit difference of two
// answer tokens, or the probability of one — is normalised so the corrupted
// run scores 0 and the clean run 1.

#include "attention_lab/run_cache.h"

#include <Eigen/Core>

#include <functional>
#include <span>
#include <string>
#include <vector>

namespace attention_lab {

enum class PatchKind {
  ResidPre,           // layer × position: the residual stream entering the layer (get_act_patch_resid_pre)
  AttnOut,            // layer × position: what the attention adds (get_act_patch_attn_out)
  MlpOut,             // layer × position: what the MLP adds (get_act_patch_mlp_out)
  HeadOut,            // layer × head, every position: the head's z (get_act_patch_attn_head_out_all_pos)
  HeadQ,              // layer × head: q before RoPE (…_head_q_all_pos)
  HeadK,              // layer × K/V head: k before RoPE (grouped-query models patch each shared K/V head)
  HeadV,              // layer × K/V head: v
  HeadPattern,        // layer × head: the attention weights (…_head_pattern_all_pos)
  HeadOutByPosition,  // layer × position × head: z at one position (…_head_out_by_pos)
};
inline constexpr PatchKind kPatchKinds[] = {PatchKind::ResidPre, PatchKind::AttnOut, PatchKind::MlpOut,
                                            PatchKind::HeadOut,  PatchKind::HeadQ,   PatchKind::HeadK,
                                            PatchKind::HeadV,    PatchKind::HeadPattern, PatchKind::HeadOutByPosition};

// "resid_pre", "attn_out", "mlp_out", "z", "q", "k", "v", "pattern", "z_by_position".
const char* to_string(PatchKind kind);
// The kind of a name to_string gives; false when none.
bool parse_patch_kind(const std::string& name, PatchKind& kind);

// What a sweep's columns are (its rows are layers): positions (resid_pre,
// attn_out, mlp_out), heads (or K/V heads), or position × head
// (z_by_position, column p·heads + h).
enum class PatchColumns { Positions, Heads, PositionsByHeads };
PatchColumns columns_of(PatchKind kind);
// "position", "head" or "position×head".
const char* to_string(PatchColumns columns);

// What a patched run is measured by, at the last position's logits.
struct PatchMetric {
  enum Kind { LogitDiff, Probability } kind = LogitDiff;
  int answer = 0;  // the clean prompt's answer token
  int wrong = 0;   // LogitDiff: the corrupted prompt's answer (logit[answer] − logit[wrong])
  double of(const RowVector& logits) const;
  std::string describe() const;  // "logit[12] − logit[40]", "p(12)"
};

// "" when the two prompts can be patched into each other (valid ids, same
// length, at least one token) and the metric's tokens are in the
// vocabulary; else what is wrong, naming both lengths.
std::string check_patching(const ModelConfig& config, std::span<const int> clean, std::span<const int> corrupted,
                           const PatchMetric& metric);

struct PatchSweep {
  PatchKind kind = PatchKind::ResidPre;
  int layers = 0, positions = 0, heads = 0;  // heads: query heads, or K/V heads for k and v
  double clean = 0.0, corrupted = 0.0;       // the metric of the two unpatched runs
  // The metric of every patched run: layers × positions, layers × heads, or
  // for z_by_position layers × (positions · heads), column p·heads + h.
  Eigen::MatrixXd metric;
  // (metric − corrupted) / (clean − corrupted); NaN everywhere when the two
  // runs score the same (nothing to normalise by).
  Eigen::MatrixXd normalised() const;
};

// Called after each patched run with the runs done and the total; return
// false to stop (the sweep then returns what it had, `complete` false).
using PatchProgress = std::function<bool(int done, int total)>;

// Every patch of `kind` (check_patching first). Patched runs are spread over
// the machine's threads.
PatchSweep patch_sweep(const TransformerModel& model, std::span<const int> clean, std::span<const int> corrupted,
                       PatchKind kind, const PatchMetric& metric, const PatchProgress& progress = {},
                       bool* complete = nullptr);

}  // namespace attention_lab
