#pragma once
// The head detectors' three layers × heads grids (previous token, duplicate
// token, induction), each titled with its highest-scoring head: a cell's
// colour and number its score (0 to 1, one scale for the three), its tooltip
// what the kind measures, a click focuses the head and a right-click ablates
// it. The Model tab draws them for the model's text, the Interpret tab for
// text made for them.

#include "app_state.h"
#include "attention_lab/head_detectors.h"

#include <functional>
#include <string>

namespace attention_lab::gui {

// `id` prefixes each grid's id ("detector" → "detector induction"); `more`
// (may be empty) adds lines to a cell's tooltip. Returns the hovered cell as
// "<grid id> <layer> <head>", or "".
std::string draw_head_score_grids(AppState& state, const HeadScores& scores, const std::string& id,
                                  const std::function<std::string(HeadKind kind, int layer, int head)>& more = {});

}  // namespace attention_lab::gui
