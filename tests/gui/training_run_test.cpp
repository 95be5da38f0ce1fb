// The Train tab's run without a window: steps applied as edits, one undo
// entry for the run, the curves, and stops that say why.

#include "logic/training_run.h"

#include "attention_lab/presets.h"

#include <gtest/gtest.h>

using namespace attention_lab;
using namespace attention_lab::gui;

namespace {

Scenario fat_cat_with_loss() {
  Scenario s = *make_preset("fat-cat");
  Loss loss;
  loss.kind = LossKind::Attend;
  loss.targets = attend_targets(s, "previous");
  s.loss = loss;
  return s;
}

TrainingRun::ApplyEdit applier(Document& doc) {
  return [&doc](const Edit& e, std::uint64_t gesture) { return doc.apply(e, gesture).empty(); };
}

}  // namespace

TEST(TrainingRun, StepsAreEditsAndARunIsOneUndoEntry) {
  Document doc(fat_cat_with_loss());
  const Matrix before = doc.scenario().W_q.get();
  TrainingRun run;
  run.settings.learning_rate = 0.05;
  const std::uint64_t gesture = doc.begin_gesture();
  EXPECT_EQ(run.advance(doc, 10, applier(doc), gesture), 10);
  EXPECT_EQ(run.advance(doc, 10, applier(doc), gesture), 10);
  EXPECT_EQ(run.steps(), 20);
  EXPECT_EQ(run.message, "");
  EXPECT_LT(run.history().loss.back(), run.history().loss.front());
  EXPECT_EQ(run.history().grad_norm.at(StageKind::W_q).size(), 20u);
  EXPECT_EQ(run.history().update_ratio.at(StageKind::W_v).size(), 20u);
  EXPECT_NE(doc.scenario().W_q.get(), before);
  ASSERT_TRUE(doc.undo());  // the whole run
  EXPECT_EQ(doc.scenario().W_q.get(), before);
  EXPECT_FALSE(doc.can_undo());
}

TEST(TrainingRun, StopsAndSaysWhy) {
  Document no_loss(*make_preset("fat-cat"));
  TrainingRun run;
  run.playing = true;
  EXPECT_EQ(run.advance(no_loss, 5, applier(no_loss), 0), 0);
  EXPECT_FALSE(run.playing);
  EXPECT_NE(run.message.find("no loss"), std::string::npos);

  Document doc(fat_cat_with_loss());
  TrainingRun wild;
  wild.settings.optimizer = OptimizerKind::Sgd;
  wild.settings.learning_rate = 1e40;
  wild.playing = true;
  EXPECT_EQ(wild.advance(doc, 5, applier(doc), 0), 0);
  EXPECT_FALSE(wild.playing);
  EXPECT_NE(wild.message.find("step 1: W_q would hold a number that is not finite"), std::string::npos) << wild.message;
  EXPECT_FALSE(doc.can_undo());  // nothing changed

  TrainingRun busy;
  EXPECT_EQ(busy.advance(doc, 5, [](const Edit&, std::uint64_t) { return false; }, 0), 0);
  EXPECT_NE(busy.message.find("busy"), std::string::npos);
}

TEST(TrainingRun, AttendTargetsStayWhereTheMaskAllows) {
  const Scenario causal = *make_preset("fat-cat");  // causal, 7 tokens
  EXPECT_EQ(attend_targets(causal, "previous"), (std::vector<int>{0, 0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(attend_targets(causal, "first"), (std::vector<int>(7, 0)));
  EXPECT_EQ(attend_targets(causal, "itself"), (std::vector<int>{0, 1, 2, 3, 4, 5, 6}));
}
