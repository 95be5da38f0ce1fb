// Export targets and the file names an export suggests.

#include "logic/animation_clock.h"
#include "logic/export_names.h"

#include <gtest/gtest.h>

using namespace attention_lab;
using namespace attention_lab::gui;

namespace {
std::vector<StageId> two_heads() {
  return {StageId::input(StageKind::X), StageId::input(StageKind::W_q), StageId::of_head(StageKind::Scores, 0),
          StageId::of_head(StageKind::Weights, 0), StageId::of_head(StageKind::Scores, 1),
          StageId::of_head(StageKind::Weights, 1), StageId::input(StageKind::Output)};
}
}  // namespace

TEST(ExportNames, StagesAreNamedByKindAndHead) {
  EXPECT_EQ(stage_file_name(StageId::of_head(StageKind::Weights, 0)), "weights-head0.png");
  EXPECT_EQ(stage_file_name(StageId::of_head(StageKind::Scores, 2)), "scores-head2.png");
  EXPECT_EQ(stage_file_name(StageId::input(StageKind::X)), "x.png");
  EXPECT_EQ(stage_file_name(StageId::input(StageKind::W_q)), "w_q.png");
}

TEST(ExportNames, LessonStepsAreNumberedWithTwoDigits) {
  EXPECT_EQ(step_file_name("attention-from-scratch", 4), "attention-from-scratch-step04.png");
  EXPECT_EQ(step_file_name("many-heads", 12), "many-heads-step12.png");
  EXPECT_EQ(step_file_name("", 6), "step06.png");
  EXPECT_EQ(step_file_name("", 0), "view.png");
}

TEST(ExportNames, TargetsAreStepViewOrAStageOfThisScenario) {
  const auto valid = two_heads();
  EXPECT_EQ(parse_export_target("step", valid)->kind, ExportKind::Step);
  EXPECT_EQ(parse_export_target("view", valid)->kind, ExportKind::View);
  const auto w1 = parse_export_target("weights[1]", valid);
  ASSERT_TRUE(w1);
  EXPECT_EQ(w1->kind, ExportKind::Stage);
  EXPECT_EQ(w1->stage, StageId::of_head(StageKind::Weights, 1));
  EXPECT_FALSE(parse_export_target("weights[2]", valid));  // no third head
  EXPECT_FALSE(parse_export_target("mask", valid));         // not in this pipeline
  EXPECT_FALSE(parse_export_target("wieghts[0]", valid));
  EXPECT_FALSE(parse_export_target("", valid));
}

TEST(ExportNames, TheListOfValidNamesFoldsTheHeads) {
  EXPECT_EQ(stage_names_list(two_heads()), "X, W_q, scores[0..1], weights[0..1], output");
  EXPECT_EQ(stage_names_list({StageId::of_head(StageKind::Weights, 0)}), "weights[0]");
}

TEST(ExportNames, OnlyTheOfferedScalesAreAccepted) {
  EXPECT_TRUE(is_export_scale(1));
  EXPECT_TRUE(is_export_scale(2));
  EXPECT_TRUE(is_export_scale(4));
  EXPECT_FALSE(is_export_scale(3));
  EXPECT_FALSE(is_export_scale(0));
  EXPECT_FALSE(is_export_scale(8));
}

TEST(AnimationClock, InteractivelyItIsTheWallClock) {
  AnimationClock clock;
  clock.advance(10.0);
  const double start = clock.now();
  clock.advance(12.5);
  EXPECT_DOUBLE_EQ(clock.now(), 12.5);
  EXPECT_DOUBLE_EQ(clock.animation_elapsed(start), 2.5);
}

TEST(AnimationClock, FinishedEndsEveryAnimationAndCountsFrames) {
  AnimationClock clock;
  clock.set_finished(true);
  clock.advance(1000.0);  // the wall clock is ignored
  const double start = clock.now();
  EXPECT_GT(clock.animation_elapsed(start), 3600.0);  // every animation at its end
  for (int i = 0; i < 60; ++i) clock.advance(1000.0 + i * 7.0);
  EXPECT_DOUBLE_EQ(clock.now() - start, 1.0);  // sixty frames, one second, however slow they were
}
