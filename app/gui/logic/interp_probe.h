#pragma once
// The Interpret tab's state as the probe reports it (JSON): the last
// patching sweep (kind, metric values, the normalised grid), whether one is
// running and how far, the last attribution, and the hovered cell.

#include "interp_state.h"

#include <string>

namespace attention_lab::gui {

std::string interp_probe_json(const InterpState& interp);

}  // namespace attention_lab::gui
