#pragma once
// The trace file: every stage of one computation, for other tools and tests.
// {"format": "attention-lab/trace@1", "dims": {…}, "X", "Q", "K", "V",
//  "heads": [{"Q", "K", "V", "scores", "scaled", "masked", "weights", "context"}, …],
//  "concat", "output", "warnings": [...]}; the stages a setting adds
// ("Q_unrotated" with RoPE, "position_bias" with ALiBi…) only when it is on.

#include "attention_lab/engine.h"
#include "attention_lab/gradients.h"

#include <functional>
#include <ostream>

namespace attention_lab {

inline constexpr const char* kTraceFormat = "attention-lab/trace@1";

// Streams the trace of `engine`, just computed from `scenario`, without
// building it in memory first: a trace of a large layer holds tens of
// millions of numbers.
// `extra` (if given) writes more top-level members before "warnings", each
// as `  "key": value,\n` (trace --model adds "model").
void write_trace(std::ostream& out, const Engine& engine, const Scenario& scenario,
                 const std::function<void(std::ostream&)>& extra = {});

// `  "loss": L,\n  "grad": {…},\n`: the gradients in the trace's own layout
// ("grad": {"X", "W_q", …, "heads": [{"scores", "weights", …}], "concat",
// "output"}), each stage that has one; for write_trace's `extra`.
void write_gradients(std::ostream& out, const Gradients& grads, const Scenario& scenario);

}  // namespace attention_lab
