#pragma once
// The step-through order: which stages each step reveals, and what to say.

#include "attention_lab/scenario.h"
#include "attention_lab/stage_id.h"

#include <string>
#include <vector>

namespace attention_lab::gui {

enum class StepAnimation { None, Product, Softmax };

struct Step {
  std::string title;             // "3. Scale"
  std::vector<StageKind> kinds;  // stages this step reveals
  StageKind focus;               // the stage the explanation is about
  StepAnimation animation = StepAnimation::None;
};

const std::vector<Step>& steps();

// The step that reveals `kind` (inputs: step 0).
int step_of(StageKind kind);

}  // namespace attention_lab::gui
