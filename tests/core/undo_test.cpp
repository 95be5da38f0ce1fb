// Undo and redo restore scenarios exactly; gestures merge; modified() tracks
// whether the document differs from what was last saved.

#include "attention_lab/document.h"
#include "attention_lab/edit.h"
#include "attention_lab/scenario_io.h"

#include "random_edits.h"
#include "test_support.h"
#include "unit_support.h"

#include <algorithm>
#include <thread>

using namespace attention_lab;
using attention_lab::test::RandomEdits;
using attention_lab::test::RandomOptions;
using attention_lab::test::scenarios_identical;

namespace {

using attention_lab::test::in;

::testing::AssertionResult engine_is_fresh(const Document& doc) {
  const Scenario copy = doc.scenario();
  Engine fresh;
  fresh.recompute_all(copy);
  // within 1e-5 of each stage's largest magnitude: the engine updates rows
  // incrementally after single-cell edits, which rounds differently
  return attention_lab::test::engines_near(doc.engine(), fresh, 1e-5);
}

}  // namespace

// [SECTION] Round trips

TEST(Undo, UndoingEveryRandomEditRestoresTheOriginalAndRedoingRestoresTheFinal) {
  for (std::uint32_t seed : {1u, 2u, 3u, 4u}) {
    RandomOptions o;
    o.heads = static_cast<int>(seed % 3) + 1;
    o.bias = seed % 2 == 0;
    o.mask = static_cast<MaskKind>(seed % 4);
    const Scenario original = attention_lab::test::random_scenario(seed, o);
    Document doc(original);
    RandomEdits edits(seed);
    int applied = 0;
    for (int i = 0; i < 120; ++i)
      if (doc.apply(edits.next(doc.scenario())).empty()) ++applied;
    const Scenario final_state = doc.scenario();

    int undone = 0;
    while (doc.undo()) {
      ++undone;
      ASSERT_EQ(validate(doc.scenario()), "") << "seed " << seed << " after " << undone << " undos";
    }
    EXPECT_EQ(undone, applied);
    EXPECT_TRUE(scenarios_identical(doc.scenario(), original)) << "seed " << seed;
    EXPECT_TRUE(engine_is_fresh(doc));
    EXPECT_FALSE(doc.modified());

    int redone = 0;
    while (doc.redo()) ++redone;
    EXPECT_EQ(redone, applied);
    EXPECT_TRUE(scenarios_identical(doc.scenario(), final_state)) << "seed " << seed;
    EXPECT_TRUE(engine_is_fresh(doc));
  }
}

TEST(Undo, EveryPresetRoundTripsThroughRandomEdits) {
  for (const auto& p : presets()) {
    const Scenario original = *make_preset(p.name);
    Document doc(original);
    RandomEdits edits(17);
    for (int i = 0; i < 80; ++i) doc.apply(edits.next(doc.scenario()));
    const Scenario final_state = doc.scenario();
    while (doc.undo()) {}
    EXPECT_TRUE(scenarios_identical(doc.scenario(), original)) << p.name;
    while (doc.redo()) {}
    EXPECT_TRUE(scenarios_identical(doc.scenario(), final_state)) << p.name;
  }
}

// Each kind of edit on its own: apply, undo, and the scenario is what it was.
TEST(Undo, EachKindOfEditHasAnExactInverse) {
  const Scenario book = attention_lab::test::preset("book");  // no custom mask, no biases, no labels set by edits
  Scenario with_bias = attention_lab::test::preset("naive");
  with_bias.use_output_bias = true;
  with_bias.b_o = Matrix::Constant(1, 4, 0.5f);
  const std::vector<std::pair<Scenario, Edit>> cases = {
      {book, SetCell{in(StageKind::Mask), 0, 1, 0.0f}},
      {book, SetMask{MaskKind::Causal, std::nullopt}},
      {book, SetMask{MaskKind::Custom, std::nullopt}},
      {book, SetMatrix{in(StageKind::Mask), Matrix::Identity(6, 6)}},
      {book, SetToggle{Toggle::Bias, true}},
      {book, SetToggle{Toggle::OutputProjection, true}},
      {book, SetToggle{Toggle::OutputBias, true}},
      {with_bias, SetToggle{Toggle::OutputProjection, true}},
      {book, SetToggle{Toggle::Scale, false}},
      {book, SetTemperature{2.0f}},
      {book, SetPin{{StageId::of_head(StageKind::Scores, 0), 1, 1}, 3.0f}},
      {book, SetPins{{{{StageId::input(StageKind::Output), 0, 0}, 1.0f}}}},
      {book, SetDimension{Dimension::T, 9}},
      {book, SetDimension{Dimension::heads, 3}},
      {[] {
         Scenario s = attention_lab::test::preset("book");
         s.tokens.clear();
         return s;
       }(),
       SetTokenLabel{0, "first"}},
      {book, SetTokenLabel{0, "first"}},
      {book, SetFeatureLabel{1, "size"}},
      {[] {
         Scenario s = attention_lab::test::preset("book");
         s.features = {"a", "b", "c"};
         return s;
       }(),
       SetFeatureLabel{1, "size"}},
      {book, SetLabels{LabelList::Tokens, {}}},
      {book, SetLabels{LabelList::Features, {"x", "y", "z"}}},
      {book, ReplaceScenario{std::make_shared<const Scenario>(attention_lab::test::preset("naive"))}},
  };
  for (const auto& [start, edit] : cases) {
    Document doc(start);
    ASSERT_EQ(doc.apply(edit), "") << describe(edit);
    EXPECT_TRUE(doc.modified());
    ASSERT_TRUE(doc.undo()) << describe(edit);
    EXPECT_TRUE(scenarios_identical(doc.scenario(), start)) << "undo of " << describe(edit);
    EXPECT_TRUE(engine_is_fresh(doc)) << describe(edit);
    EXPECT_FALSE(doc.modified()) << describe(edit);
  }
}

TEST(Undo, RenamesUndoRedoAndSurviveSavingAndLoading) {
  const Scenario book = attention_lab::test::preset("book");
  Document doc(book);
  ASSERT_EQ(doc.apply(SetTokenLabel{2, "begins"}), "");
  ASSERT_EQ(doc.apply(SetFeatureLabel{0, "size"}), "");
  ASSERT_EQ(doc.apply(SetFeatureLabel{0, "scale"}), "");
  EXPECT_EQ(doc.scenario().token_label(2), "begins");
  EXPECT_EQ(doc.scenario().feature_label(0), "scale");
  EXPECT_EQ(doc.undo_label(), "feature 0 = \"scale\"");

  ASSERT_TRUE(doc.undo());
  EXPECT_EQ(doc.scenario().feature_label(0), "size");
  ASSERT_TRUE(doc.undo());
  EXPECT_TRUE(doc.scenario().features.empty());  // back to no names at all, not three empty ones
  ASSERT_TRUE(doc.undo());
  EXPECT_TRUE(scenarios_identical(doc.scenario(), book));
  EXPECT_FALSE(doc.modified());

  ASSERT_TRUE(doc.redo());
  ASSERT_TRUE(doc.redo());
  ASSERT_TRUE(doc.redo());
  EXPECT_EQ(doc.scenario().token_label(2), "begins");
  EXPECT_EQ(doc.scenario().feature_label(0), "scale");

  const LoadResult back = parse_scenario(scenario_to_json(doc.scenario()));
  ASSERT_EQ(back.error, "");
  EXPECT_TRUE(scenarios_identical(*back.scenario, doc.scenario()));
  EXPECT_EQ(back.scenario->token_label(2), "begins");
  EXPECT_EQ(back.scenario->feature_label(0), "scale");
}

TEST(Undo, ARefusedRenameNamesTheIndexAndChangesNothing) {
  Document doc(attention_lab::test::preset("book"));
  EXPECT_EQ(doc.apply(SetTokenLabel{9, "x"}), "token label: expected an index from 0 to 5, found 9 (T = 6)");
  EXPECT_EQ(doc.apply(SetFeatureLabel{-2, "x"}), "feature name: expected an index from 0 to 2, found -2 (d_model = 3)");
  EXPECT_FALSE(doc.modified());
  EXPECT_FALSE(doc.can_undo());
}

TEST(Undo, AnEditAfterUndoClearsTheRedoStack) {
  Document doc(attention_lab::test::preset("book"));
  ASSERT_EQ(doc.apply(SetTemperature{2.0f}), "");
  ASSERT_TRUE(doc.undo());
  EXPECT_TRUE(doc.can_redo());
  ASSERT_EQ(doc.apply(SetTemperature{3.0f}), "");
  EXPECT_FALSE(doc.can_redo());
  EXPECT_FALSE(doc.redo());
}

TEST(Undo, TheRevisionChangesWithEveryChangeOfTheScenarioOnly) {
  Document doc(attention_lab::test::preset("book"));
  const Document other(attention_lab::test::preset("book"));
  EXPECT_NE(doc.revision(), other.revision());  // views cached by revision never mix documents
  std::vector<std::uint64_t> seen{doc.revision()};
  auto changed = [&] {
    const bool fresh = std::find(seen.begin(), seen.end(), doc.revision()) == seen.end();
    seen.push_back(doc.revision());
    return fresh;
  };
  ASSERT_EQ(doc.apply(SetTemperature{2.0f}), "");
  EXPECT_TRUE(changed());
  EXPECT_NE(doc.apply(SetTemperature{-1.0f}), "");  // refused: nothing changed
  EXPECT_FALSE(changed());
  ASSERT_TRUE(doc.undo());
  EXPECT_TRUE(changed());  // the same scenario as at first, but views must not assume so
  ASSERT_TRUE(doc.redo());
  EXPECT_TRUE(changed());
  std::string error;
  auto pending = doc.prepare(SetDimension{Dimension::T, 8}, error);
  ASSERT_TRUE(pending) << error;
  pending->compute();
  doc.commit(std::move(pending));
  EXPECT_TRUE(changed());
}

TEST(Undo, LabelsDescribeTheNextStep) {
  Document doc(attention_lab::test::preset("book"));
  EXPECT_EQ(doc.undo_label(), "");
  ASSERT_EQ(doc.apply(SetCell{in(StageKind::X), 2, 1, 0.5f}), "");
  EXPECT_EQ(doc.undo_label(), "X[2][1] = 0.5");
  doc.undo();
  EXPECT_EQ(doc.redo_label(), "X[2][1] = 0.5");
  EXPECT_EQ(doc.undo_label(), "");
}

TEST(Undo, NothingToUndoOrRedoIsHarmless) {
  Document doc(attention_lab::test::preset("book"));
  EXPECT_FALSE(doc.undo());
  EXPECT_FALSE(doc.redo());
  EXPECT_FALSE(doc.modified());
}

// [SECTION] Gestures

TEST(Undo, EditsOfOneGestureShareOneUndoEntry) {
  const Scenario original = attention_lab::test::preset("book");
  Document doc(original);
  const auto g = doc.begin_gesture();
  for (float v : {0.1f, 0.2f, 0.3f, 0.4f}) ASSERT_EQ(doc.apply(SetCell{in(StageKind::X), 0, 0, v}, g), "");
  EXPECT_EQ(doc.undo_label(), "X[0][0] = 0.4");
  ASSERT_TRUE(doc.undo());
  EXPECT_FALSE(doc.can_undo());
  EXPECT_TRUE(scenarios_identical(doc.scenario(), original));
  ASSERT_TRUE(doc.redo());
  EXPECT_EQ(doc.scenario().X(0, 0), 0.4f);
  EXPECT_FALSE(doc.can_redo());
}

// A drag may paint several cells (a row of the mask): it still undoes in one step.
TEST(Undo, AGestureOverSeveralCellsUndoesAndRedoesAsAWhole) {
  const Scenario original = attention_lab::test::preset("book");
  Document doc(original);
  const auto g = doc.begin_gesture();
  ASSERT_EQ(doc.apply(SetCell{in(StageKind::X), 0, 0, 0.5f}, g), "");
  ASSERT_EQ(doc.apply(SetCell{in(StageKind::X), 0, 1, 0.75f}, g), "");
  ASSERT_EQ(doc.apply(SetCell{in(StageKind::X), 0, 0, 0.25f}, g), "");
  ASSERT_EQ(doc.apply(SetCell{in(StageKind::W_q), 1, 1, -1.0f}, g), "");
  const Scenario final_state = doc.scenario();
  ASSERT_TRUE(doc.undo());
  EXPECT_FALSE(doc.can_undo());
  EXPECT_TRUE(scenarios_identical(doc.scenario(), original));
  EXPECT_TRUE(engine_is_fresh(doc));
  ASSERT_TRUE(doc.redo());
  EXPECT_TRUE(scenarios_identical(doc.scenario(), final_state));
  EXPECT_TRUE(engine_is_fresh(doc));
  ASSERT_TRUE(doc.undo());
  EXPECT_TRUE(scenarios_identical(doc.scenario(), original));
}

// Random edits grouped into random gestures (drags over one cell, over several
// cells, resizes, pins, mask painting): each undo lands exactly on the state
// before its gesture, each redo on the state after it.
TEST(Undo, RandomGesturesUndoAndRedoToTheStatesAroundEachGesture) {
  for (std::uint32_t seed : {5u, 6u, 7u, 8u, 9u, 10u}) {
    RandomOptions o;
    o.heads = static_cast<int>(seed % 2) + 1;
    o.w_o = seed % 3 == 0;
    Document doc(attention_lab::test::random_scenario(seed, o));
    RandomEdits edits(seed * 31u);
    std::vector<Scenario> states{doc.scenario()};  // the state after each undo entry
    for (int group = 0; group < 40; ++group) {
      const auto g = doc.begin_gesture();
      bool any = false;
      const Edit first = edits.next(doc.scenario());
      for (int i = 0, n = edits.pick(1, 6); i < n; ++i) {
        // half of the steps repeat the first edit's kind on the same target with a new value
        Edit e = edits.next(doc.scenario());
        if (auto* c = std::get_if<SetCell>(&first); c && edits.pick(0, 1)) {
          SetCell again = *c;
          again.value = c->target.kind == StageKind::Mask ? static_cast<float>(edits.pick(0, 1)) : edits.value(-2, 2);
          e = again;
        }
        any = doc.apply(e, g).empty() || any;
      }
      if (any) states.push_back(doc.scenario());
    }
    for (std::size_t i = states.size() - 1; i > 0; --i) {
      ASSERT_TRUE(doc.undo());
      ASSERT_TRUE(scenarios_identical(doc.scenario(), states[i - 1])) << "seed " << seed << ", undo to " << i - 1;
      ASSERT_TRUE(engine_is_fresh(doc));
    }
    EXPECT_FALSE(doc.can_undo());
    for (std::size_t i = 1; i < states.size(); ++i) {
      ASSERT_TRUE(doc.redo());
      ASSERT_TRUE(scenarios_identical(doc.scenario(), states[i])) << "seed " << seed << ", redo to " << i;
      ASSERT_TRUE(engine_is_fresh(doc));
    }
  }
}

TEST(Undo, DifferentGesturesAreSeparateEntries) {
  Document doc(attention_lab::test::preset("book"));
  const auto g1 = doc.begin_gesture();
  const auto g2 = doc.begin_gesture();
  EXPECT_NE(g1, g2);
  ASSERT_EQ(doc.apply(SetCell{in(StageKind::X), 0, 0, 0.1f}, g1), "");
  ASSERT_EQ(doc.apply(SetCell{in(StageKind::X), 0, 0, 0.2f}, g2), "");
  ASSERT_EQ(doc.apply(SetCell{in(StageKind::X), 0, 0, 0.3f}), "");  // 0: never merges
  ASSERT_EQ(doc.apply(SetCell{in(StageKind::X), 0, 0, 0.4f}), "");
  int entries = 0;
  while (doc.undo()) ++entries;
  EXPECT_EQ(entries, 4);
}

TEST(Undo, AGestureResumedAfterUndoStartsANewEntry) {
  Document doc(attention_lab::test::preset("book"));
  const float original = doc.scenario().X(0, 0);
  const auto g = doc.begin_gesture();
  ASSERT_EQ(doc.apply(SetCell{in(StageKind::X), 0, 0, 0.1f}, g), "");
  ASSERT_TRUE(doc.undo());
  ASSERT_TRUE(doc.redo());
  ASSERT_EQ(doc.apply(SetCell{in(StageKind::X), 0, 0, 0.2f}, g), "");
  ASSERT_TRUE(doc.undo());
  EXPECT_EQ(doc.scenario().X(0, 0), 0.1f);
  ASSERT_TRUE(doc.undo());
  EXPECT_EQ(doc.scenario().X(0, 0), original);
}

TEST(Undo, AResizeDragUndoesToTheSizeBeforeTheDrag) {
  const Scenario original = attention_lab::test::preset("fat-cat");
  Document doc(original);
  const auto g = doc.begin_gesture();
  for (int t = 8; t <= 12; ++t) ASSERT_EQ(doc.apply(SetDimension{Dimension::T, t}, g), "");
  for (int t = 11; t >= 3; --t) ASSERT_EQ(doc.apply(SetDimension{Dimension::T, t}, g), "");
  EXPECT_EQ(doc.scenario().T(), 3);
  ASSERT_TRUE(doc.undo());
  EXPECT_FALSE(doc.can_undo());
  EXPECT_TRUE(scenarios_identical(doc.scenario(), original));
}

// [SECTION] modified() and mark_saved()

TEST(Undo, ModifiedFollowsTheSavedState) {
  Document doc(attention_lab::test::preset("book"));
  EXPECT_FALSE(doc.modified());
  ASSERT_EQ(doc.apply(SetTemperature{2.0f}), "");
  EXPECT_TRUE(doc.modified());
  doc.mark_saved();
  EXPECT_FALSE(doc.modified());
  ASSERT_EQ(doc.apply(SetTemperature{3.0f}), "");
  EXPECT_TRUE(doc.modified());
  doc.undo();
  EXPECT_FALSE(doc.modified());  // back at the saved state
  doc.undo();
  EXPECT_TRUE(doc.modified());   // before the saved state
  doc.redo();
  EXPECT_FALSE(doc.modified());
}

TEST(Undo, AGestureAfterSavingMakesTheDocumentModified) {
  Document doc(attention_lab::test::preset("book"));
  const auto g = doc.begin_gesture();
  ASSERT_EQ(doc.apply(SetTemperature{2.0f}, g), "");
  doc.mark_saved();
  ASSERT_EQ(doc.apply(SetTemperature{3.0f}, g), "");  // merges into the saved entry
  EXPECT_TRUE(doc.modified());
}

TEST(Undo, ARefusedEditDoesNotChangeModified) {
  Document doc(attention_lab::test::preset("book"));
  EXPECT_NE(doc.apply(SetTemperature{-1.0f}), "");
  EXPECT_FALSE(doc.modified());
}

TEST(Undo, HistoryIsCappedAndStillKnowsItIsModified) {
  const Scenario original = attention_lab::test::preset("book");
  Document doc(original);
  const int n = static_cast<int>(Document::kMaxUndo) + 5;
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(doc.apply(SetCell{in(StageKind::X), 0, 0, static_cast<float>(i) / 1024.0f}), "");
  int undone = 0;
  while (doc.undo()) ++undone;
  EXPECT_EQ(undone, static_cast<int>(Document::kMaxUndo));
  // the oldest edits were forgotten, so this is not the original scenario
  EXPECT_FALSE(scenarios_identical(doc.scenario(), original));
  EXPECT_TRUE(doc.modified());
}

// A document set aside lets its stages go and keeps its scenario and
// history; its stages come back computed elsewhere (a worker, from a copy of
// its scenario) or here, and its edits still undo and redo.
TEST(Undo, ADocumentSetAsideWithoutItsStagesComesBackWithItsHistory) {
  RandomOptions o;
  o.T = 96, o.d_model = 24, o.heads = 3, o.d_k = o.d_v = 8;
  o.mask = MaskKind::Causal;
  const Scenario original = attention_lab::test::random_scenario(31, o);
  for (const bool elsewhere : {true, false}) {
    Document doc(original);
    RandomEdits edits(31);
    int applied = 0;
    for (int i = 0; i < 40; ++i)
      if (doc.apply(edits.next(doc.scenario())).empty()) ++applied;
    ASSERT_GT(applied, 0);
    const Scenario edited = doc.scenario();
    const std::size_t bytes = doc.engine().bytes_kept();
    doc.release_stages();
    EXPECT_TRUE(doc.stages_released());
    EXPECT_LT(doc.engine().bytes_kept() * 10, bytes);
    EXPECT_TRUE(doc.modified());
    EXPECT_TRUE(doc.can_undo());
    if (elsewhere) {
      Engine computed;
      const Scenario copy = doc.scenario();
      std::thread([&] { computed.recompute_all(copy); }).join();
      doc.restore_stages(std::move(computed));
    } else {
      doc.restore_stages();
    }
    EXPECT_FALSE(doc.stages_released());
    EXPECT_TRUE(scenarios_identical(doc.scenario(), edited));
    EXPECT_TRUE(engine_is_fresh(doc)) << "elsewhere " << elsewhere;
    // the engine reads the document's own scenario: edits and undo work on
    ASSERT_EQ(doc.apply(SetCell{StageId::input(StageKind::W_q), 0, 0, 0.75f}), "");
    EXPECT_TRUE(engine_is_fresh(doc));
    int undone = 0;
    while (doc.undo()) ++undone;
    EXPECT_EQ(undone, applied + 1);
    EXPECT_TRUE(scenarios_identical(doc.scenario(), original));
    EXPECT_TRUE(engine_is_fresh(doc));
  }
}
