#pragma once
// A live "what if" during a lesson: the teacher changes a weight, then moves
// to the next step, which starts from the lesson's own numbers. What was
// changed is not lost: it is "set aside" as edits that can be carried into
// the new step (C), and the slide says so. GL-free, so it is unit-tested.

#include "attention_lab/edit.h"
#include "attention_lab/scenario.h"

#include <string>
#include <vector>

namespace attention_lab::gui {

struct SetAside {
  std::vector<Edit> edits;  // SetCell for input cells, SetPin for pins, in stage order
  std::string summary;      // "W_q[1,1] 0.30 → 0.50" or "W_q[1,1] 0.30 → 0.50 and 2 more changes"; empty: none
};

// What `edited` changes relative to `lesson_numbers` (the step's own state):
// every input cell that differs in a matrix of the same shape, and every pin
// added, changed or removed. Settings (mask, temperature, sizes) are not
// carried: a lesson's next step usually changes them on purpose.
SetAside set_aside(const Scenario& lesson_numbers, const Scenario& edited);

}  // namespace attention_lab::gui
