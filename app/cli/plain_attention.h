#pragma once
// The bench's reference: multi-head attention written the plain way, as a
// framework computes it — three dense projection GEMMs, then per head a dense
// T×T product Q_h·K_hᵀ, scale, mask, row softmax and A_h·V_h, then concat·W_o.
// No blocks skipped, nothing kept for edits, no pins. Heads run in parallel
// (OpenMP). It handles what the bench draws: no/causal mask, grouped-query
// heads, RoPE, cross-attention, W_o; it exists so `bench` can say how the engine compares
// with the obvious implementation of the same math on the same machine.

#include "attention_lab/scenario.h"

namespace attention_lab::cli {

// The output (T × d_out) of `s`; biases, ALiBi, sinks, windows, custom masks
// and pins are not modelled (the bench uses none of them).
Matrix plain_attention_forward(const Scenario& s);

}  // namespace attention_lab::cli
