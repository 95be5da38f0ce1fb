#pragma once
// The trace file: every stage of one computation, for other tools and tests.
// {"format": "attention-lab/trace@1", "dims": {…}, "X", "Q", "K", "V",
//  "heads": [{"Q", "K", "V", "scores", "scaled", "masked", "weights", "context"}, …],
//  "concat", "output", "warnings": [...]}; the stages a setting adds
// ("Q_unrotated" with RoPE, "position_bias" with ALiBi…) only when it is on.

#include "attention_lab/engine.h"

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

}  // namespace attention_lab
