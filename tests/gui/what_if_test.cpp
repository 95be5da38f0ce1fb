// A live "what if" during a lesson, set aside when the next step starts from
// the lesson's own numbers: which edits carry it into the new step.

#include "logic/what_if.h"

#include "attention_lab/document.h"
#include "attention_lab/presets.h"

#include <gtest/gtest.h>

using namespace attention_lab;
using namespace attention_lab::gui;

namespace {
Scenario fat_cat() { return *make_preset("fat-cat"); }
}  // namespace

TEST(WhatIf, NothingChangedSetsNothingAside) {
  const SetAside a = set_aside(fat_cat(), fat_cat());
  EXPECT_TRUE(a.edits.empty());
  EXPECT_EQ(a.summary, "");
}

TEST(WhatIf, AChangedWeightIsOneCellEditNamedWithItsOldAndNewValue) {
  Document doc(fat_cat());
  const float was = doc.scenario().W_q(1, 1);
  ASSERT_EQ(doc.apply(SetCell{StageId::input(StageKind::W_q), 1, 1, 0.5f}), "");
  const SetAside a = set_aside(fat_cat(), doc.scenario());
  ASSERT_EQ(a.edits.size(), 1u);
  const auto* cell = std::get_if<SetCell>(&a.edits[0]);
  ASSERT_NE(cell, nullptr);
  EXPECT_EQ(cell->target, StageId::input(StageKind::W_q));
  EXPECT_EQ(cell->row, 1);
  EXPECT_EQ(cell->value, 0.5f);
  EXPECT_NE(was, 0.5f);
  EXPECT_EQ(a.summary.rfind("W_q[1,1] ", 0), 0u) << a.summary;
  EXPECT_NE(a.summary.find("→ 0.50"), std::string::npos) << a.summary;
}

TEST(WhatIf, CarriedIntoAnotherStepTheEditsGiveTheSameCellsAndPins) {
  Document doc(fat_cat());
  ASSERT_EQ(doc.apply(SetCell{StageId::input(StageKind::X), 0, 2, -1.25f}), "");
  ASSERT_EQ(doc.apply(SetCell{StageId::input(StageKind::W_v), 3, 0, 2.0f}), "");
  ASSERT_EQ(doc.apply(SetPin{PinKey{StageId::of_head(StageKind::Scores, 0), 2, 1}, 4.0f}), "");
  const SetAside a = set_aside(fat_cat(), doc.scenario());
  EXPECT_EQ(a.edits.size(), 3u);
  EXPECT_NE(a.summary.find("and 2 more changes"), std::string::npos) << a.summary;
  // The next step: another temperature; the what-if goes on top of it.
  Scenario next = fat_cat();
  next.temperature = 0.5f;
  Document carried(next);
  for (const Edit& e : a.edits) ASSERT_EQ(carried.apply(e), "");
  EXPECT_EQ(carried.scenario().X(0, 2), -1.25f);
  EXPECT_EQ(carried.scenario().W_v(3, 0), 2.0f);
  EXPECT_EQ(carried.scenario().pins.at(PinKey{StageId::of_head(StageKind::Scores, 0), 2, 1}), 4.0f);
  EXPECT_EQ(carried.scenario().temperature, 0.5f);
}

TEST(WhatIf, ARemovedPinIsCarriedAsAnUnpin) {
  Scenario pinned = fat_cat();
  pinned.pins[PinKey{StageId::of_head(StageKind::Weights, 0), 1, 0}] = 0.9f;
  const SetAside a = set_aside(pinned, fat_cat());
  ASSERT_EQ(a.edits.size(), 1u);
  const auto* pin = std::get_if<SetPin>(&a.edits[0]);
  ASSERT_NE(pin, nullptr);
  EXPECT_FALSE(pin->value.has_value());
  EXPECT_NE(a.summary.find("unpinned"), std::string::npos) << a.summary;
}

TEST(WhatIf, AMatrixOfAnotherShapeIsNotCompared) {
  Scenario wider = fat_cat();
  wider.X = Matrix::Ones(wider.X.rows(), wider.X.cols() + 1);
  EXPECT_TRUE(set_aside(fat_cat(), wider).edits.empty());
}
