#pragma once
// The trace file: every stage of one computation, for other tools and tests.
// {"format": "attention-lab/trace@1", "dims": {…}, "X", "Q", "K", "V",
//  "heads": [{"Q", "K", "V", "scores", "scaled", "masked", "weights", "context"}, …],
//  "concat", "output", "warnings": [...]}

#include "attention_lab/engine.h"

#include <ostream>

namespace attention_lab {

inline constexpr const char* kTraceFormat = "attention-lab/trace@1";

// Streams the trace without building it in memory first: a trace of a large
// layer holds tens of millions of numbers.
void write_trace(std::ostream& out, const Engine& engine);

}  // namespace attention_lab
