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

// Playing computes its steps on a thread, from a copy of the scenario: the
// same steps as advance() takes on the document, to the bit, applied when
// poll() finds them done.
TEST(TrainingRun, StepsOnTheThreadEqualStepsOnTheDocument) {
  Document here(fat_cat_with_loss()), there(fat_cat_with_loss());
  TrainingRun direct, threaded;
  for (TrainingRun* r : {&direct, &threaded}) r->settings.optimizer = OptimizerKind::Adam, r->settings.learning_rate = 0.05;
  const std::uint64_t g1 = here.begin_gesture(), g2 = there.begin_gesture();
  EXPECT_EQ(direct.advance(here, 12, applier(here), g1), 12);
  threaded.playing = true;
  int applied = 0;
  for (int batch = 0; batch < 3; ++batch) {
    threaded.play_steps(there, 4);
    EXPECT_TRUE(threaded.computing());
    EXPECT_EQ(threaded.advance(there, 1, applier(there), g2), 0) << "no step on the document while the thread computes";
    while (threaded.computing()) applied += threaded.poll(there, applier(there), g2);
  }
  EXPECT_EQ(applied, 12);
  EXPECT_EQ(threaded.history().loss, direct.history().loss);
  EXPECT_EQ(there.scenario().W_q.get(), here.scenario().W_q.get());
  EXPECT_EQ(there.scenario().W_k.get(), here.scenario().W_k.get());
  ASSERT_TRUE(there.undo());  // still one undo entry for the run
  EXPECT_FALSE(there.can_undo());
}

// An edit while the thread computes: its steps started from matrices the
// document no longer has, so they are dropped and the next batch starts from the edit.
TEST(TrainingRun, StepsComputedBeforeAnEditAreDropped) {
  Document doc(fat_cat_with_loss());
  TrainingRun run;
  run.playing = true;
  run.play_steps(doc, 3);
  doc.apply(SetCell{StageId::input(StageKind::W_q), 0, 0, 2.5f});
  int applied = 0;
  while (run.computing()) applied += run.poll(doc, applier(doc), 0);
  EXPECT_EQ(applied, 0);
  EXPECT_EQ(run.steps(), 0);
  EXPECT_EQ(doc.scenario().W_q.get()(0, 0), 2.5f);
  run.play_steps(doc, 2);
  while (run.computing()) applied += run.poll(doc, applier(doc), 0);
  EXPECT_EQ(applied, 2);
  EXPECT_NE(doc.scenario().W_q.get()(0, 0), 2.5f);
}
