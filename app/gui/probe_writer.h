#pragma once
// --probe FILE: the app's state as JSON, rewritten every frame, for the GUI
// tests to wait on (tests/gui/probe.py): where each heatmap is on screen and
// how it is drawn, what is hovered, selected and asked, the lesson, the
// slide, the model and the Interpret tab. Read by tests only; its keys are
// theirs to rely on.

#include "app_state.h"

#include <nlohmann/json.hpp>

#include <string>

namespace attention_lab::gui {

// Keys in the order written (ordered_json): tests compare a member's text,
// such as "hovered": {"stage": "X", "row": 2, "col": 1}.
nlohmann::ordered_json probe_json(const AppState& state);

// Writes probe_json(state) beside `path` and renames it over, so a reader
// between frames never sees half a file.
void write_probe_file(const AppState& state, const std::string& path);

}  // namespace attention_lab::gui
