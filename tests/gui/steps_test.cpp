// The step-through: every stage is revealed by exactly one step, inputs first,
// and no stage is revealed before the stages it is computed from.

#include "logic/steps.h"

#include "attention_lab/presets.h"
#include "attention_lab/stage_info.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace attention_lab;
using namespace attention_lab::gui;

namespace {

StageKind kind(int k) { return static_cast<StageKind>(k); }

int steps_revealing(StageKind k) {
  return static_cast<int>(std::count_if(steps().begin(), steps().end(), [&](const Step& s) {
    return std::find(s.kinds.begin(), s.kinds.end(), k) != s.kinds.end();
  }));
}

}  // namespace

TEST(Steps, EveryStageKindIsRevealedByExactlyOneStep) {
  for (int k = 0; k < kStageKindCount; ++k) EXPECT_EQ(steps_revealing(kind(k)), 1) << kind_name(kind(k));
}

TEST(Steps, StepOfNamesTheStepThatRevealsTheKind) {
  for (int k = 0; k < kStageKindCount; ++k) {
    const int step = step_of(kind(k));
    ASSERT_GE(step, 0);
    ASSERT_LT(step, static_cast<int>(steps().size()));
    const auto& kinds = steps()[static_cast<std::size_t>(step)].kinds;
    EXPECT_NE(std::find(kinds.begin(), kinds.end(), kind(k)), kinds.end()) << kind_name(kind(k));
  }
}

TEST(Steps, InputsAreAllShownInTheFirstStep) {
  for (int k = 0; k < kStageKindCount; ++k) {
    if (is_input(kind(k)))
      EXPECT_EQ(step_of(kind(k)), 0) << kind_name(kind(k));
    else
      EXPECT_GT(step_of(kind(k)), 0) << kind_name(kind(k));
  }
}

TEST(Steps, EachStepFocusesOnAStageItReveals) {
  for (const Step& s : steps()) {
    EXPECT_NE(std::find(s.kinds.begin(), s.kinds.end(), s.focus), s.kinds.end()) << s.title;
    EXPECT_FALSE(s.title.empty());
  }
}

TEST(Steps, StepsAreNumberedInOrder) {
  for (std::size_t i = 0; i < steps().size(); ++i)
    EXPECT_TRUE(steps()[i].title.starts_with(std::to_string(i + 1) + ". ")) << steps()[i].title;
}

TEST(Steps, StepOfIsMonotonicAlongEachHeadsPipeline) {
  // Inputs all appear in step 0 and the heads run side by side, so the order
  // that must hold is the one of the layer's and one head's computed stages.
  for (const auto& p : presets()) {
    const Scenario s = *make_preset(p.name);
    for (int h = 0; h < s.heads; ++h) {
      int last = 0;
      for (const StageId id : pipeline(s)) {
        if (is_input(id.kind) || (is_per_head(id.kind) && id.head != h)) continue;
        EXPECT_GE(step_of(id.kind), last) << p.name << " head " << h << ": " << to_string(id);
        last = step_of(id.kind);
      }
    }
  }
}

TEST(Steps, NoStageIsRevealedBeforeWhatItIsComputedFrom) {
  for (const auto& p : presets()) {
    Scenario s = *make_preset(p.name);
    for (const StageId id : pipeline(s))
      for (const StageId from : describe_stage(s, id).inputs)
        EXPECT_LE(step_of(from.kind), step_of(id.kind)) << p.name << ": " << to_string(id) << " from " << to_string(from);
  }
}

TEST(Steps, TheProductAndSoftmaxStepsAnimate) {
  EXPECT_EQ(steps()[static_cast<std::size_t>(step_of(StageKind::Scores))].animation, StepAnimation::Product);
  EXPECT_EQ(steps()[static_cast<std::size_t>(step_of(StageKind::Weights))].animation, StepAnimation::Softmax);
  EXPECT_EQ(steps()[static_cast<std::size_t>(step_of(StageKind::Context))].animation, StepAnimation::Product);
  EXPECT_EQ(steps()[static_cast<std::size_t>(step_of(StageKind::Mask))].animation, StepAnimation::None);
}
