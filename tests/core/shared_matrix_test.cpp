// Copy-on-write matrices: copies of a scenario (undo entries of resizes,
// toggles and replaced scenarios, background changes, lesson pages, Compare)
// share every matrix that did not change, and a write never reaches another copy.

#include "attention_lab/document.h"
#include "attention_lab/shared_matrix.h"
#include "attention_lab/snapshot.h"

#include "test_support.h"
#include "unit_support.h"

#include <thread>

using namespace attention_lab;
using attention_lab::test::preset;

namespace {

using attention_lab::test::in;

// The scenario the undo entry on top of `doc` would restore, as the Document
// builds it for a background undo.
Scenario scenario_undo_restores(const Document& doc) {
  auto change = doc.prepare_undo();
  EXPECT_NE(change, nullptr);
  return change ? *change->scenario : Scenario{};
}

}  // namespace

TEST(SharedMatrix, CopiesShareUntilOneWrites) {
  SharedMatrix a = Matrix::Constant(3, 4, 1.0f);
  const SharedMatrix b = a;
  EXPECT_TRUE(a.shares_buffer_with(b));
  EXPECT_EQ(a.holders(), 2);
  EXPECT_EQ(a.data(), b.data());
  a(1, 2) = 5.0f;  // a write: a gets its own buffer
  EXPECT_FALSE(a.shares_buffer_with(b));
  EXPECT_EQ(a.get()(1, 2), 5.0f);
  EXPECT_EQ(b(1, 2), 1.0f);
  EXPECT_EQ(a.holders(), 1);
  const float* own = a.data();
  a.edit()(0, 0) = 2.0f;  // not shared any more: written in place
  EXPECT_EQ(a.data(), own);
}

TEST(SharedMatrix, AnEmptyOneReadsAsEmptyAndWritesToItsOwn) {
  SharedMatrix none;
  EXPECT_EQ(none.size(), 0);
  EXPECT_EQ(none.holders(), 0);
  SharedMatrix other = none;
  EXPECT_FALSE(none.shares_buffer_with(other));
  none.edit() = Matrix::Ones(2, 2);
  EXPECT_EQ(none.size(), 4);
  EXPECT_EQ(other.size(), 0);
}

TEST(SharedMatrix, CopiesWrittenOnTwoThreadsStayApart) {
  const SharedMatrix original = Matrix::Zero(64, 64);
  SharedMatrix a = original, b = original;
  std::thread ta([&] {
    for (int i = 0; i < 64; ++i) a(i, i) = 1.0f;
  });
  std::thread tb([&] {
    for (int i = 0; i < 64; ++i) b(i, 0) = 2.0f;
  });
  ta.join();
  tb.join();
  EXPECT_EQ(original.get().sum(), 0.0f);
  EXPECT_EQ(a.get().sum(), 64.0f);
  EXPECT_EQ(b.get().sum(), 128.0f);
}

TEST(SharedScenario, AResizeOfTKeepsTheWeightsSharedWithItsUndoEntry) {
  Document doc(preset("multi-head"));
  ASSERT_EQ(doc.apply(SetDimension{Dimension::T, 5}), "");
  const Scenario before = scenario_undo_restores(doc);
  // The weights did not change: the document and the undo entry hold one buffer each.
  for (auto m : {&Scenario::W_q, &Scenario::W_k, &Scenario::W_v, &Scenario::W_o})
    EXPECT_TRUE((doc.scenario().*m).shares_buffer_with(before.*m));
  // X did: the entry holds the old one, the document the new one.
  EXPECT_FALSE(doc.scenario().X.shares_buffer_with(before.X));
  EXPECT_EQ(before.X.rows(), 8);
  EXPECT_EQ(doc.scenario().X.rows(), 5);
  ASSERT_TRUE(doc.undo());
  EXPECT_EQ(doc.scenario().X.rows(), 8);
  EXPECT_TRUE(doc.scenario().W_q.shares_buffer_with(before.W_q));
}

// What the history costs in memory: the matrices its edits hold that the
// scenario does not, each buffer once.
TEST(SharedScenario, TheHistoryCountsOnlyTheMatricesItKeepsAlone) {
  Document doc(preset("multi-head"));
  const auto bytes = [](const Matrix& m) { return static_cast<std::uint64_t>(m.size()) * 4u; };
  EXPECT_EQ(doc.history_bytes(), 0u);
  ASSERT_EQ(doc.apply(SetCell{in(StageKind::X), 1, 1, 2.0f}), "");
  EXPECT_EQ(doc.history_bytes(), 0u);  // a cell's inverse is a number
  const Matrix old_x = doc.scenario().X;
  ASSERT_EQ(doc.apply(SetDimension{Dimension::T, 5}), "");
  EXPECT_EQ(doc.history_bytes(), bytes(old_x));  // the old X, not the weights it shares
  const Matrix old_wq = doc.scenario().W_q;
  ASSERT_EQ(doc.apply(SetMatrix{in(StageKind::W_q), Matrix::Constant(old_wq.rows(), old_wq.cols(), 0.5f)}), "");
  EXPECT_EQ(doc.history_bytes(), bytes(old_x) + bytes(old_wq));  // the new W_q is the scenario's
  ASSERT_TRUE(doc.undo());
  // the redo entry holds the pasted W_q now; the undo entry still the old X
  EXPECT_EQ(doc.history_bytes(), bytes(old_x) + bytes(old_wq));
  ASSERT_TRUE(doc.undo());
  // back at T = 8: the scenario holds the old X again; redo holds only sizes and the pasted W_q
  EXPECT_EQ(doc.history_bytes(), bytes(old_wq));
}

TEST(SharedScenario, AResizeOfHeadsSharesXAndANewPresetSharesNothingItDidNotNeed) {
  Document doc(preset("multi-head"));
  const Scenario first = doc.scenario();
  ASSERT_EQ(doc.apply(SetDimension{Dimension::heads, 2}), "");
  EXPECT_TRUE(doc.scenario().X.shares_buffer_with(first.X));
  EXPECT_FALSE(doc.scenario().W_q.shares_buffer_with(first.W_q));
  // A scenario swapped in is shared with the edit that brought it, not copied.
  auto next = std::make_shared<const Scenario>(preset("fat-cat"));
  ASSERT_EQ(doc.apply(ReplaceScenario{next, "preset"}), "");
  EXPECT_TRUE(doc.scenario().X.shares_buffer_with(next->X));
  EXPECT_TRUE(doc.scenario().W_v.shares_buffer_with(next->W_v));
}

TEST(SharedScenario, AnEditAfterACopyLeavesTheCopyAsItWas) {
  Document doc(preset("multi-head"));
  ASSERT_EQ(doc.apply(SetToggle{Toggle::OutputProjection, false}), "");  // undo entry: the whole scenario
  const Scenario before = scenario_undo_restores(doc);
  const float old = doc.scenario().X(2, 3);
  ASSERT_TRUE(doc.scenario().X.shares_buffer_with(before.X));
  ASSERT_EQ(doc.apply(SetCell{in(StageKind::X), 2, 3, old + 1.0f}), "");
  EXPECT_FALSE(doc.scenario().X.shares_buffer_with(before.X));
  EXPECT_EQ(before.X(2, 3), old);
  EXPECT_EQ(doc.scenario().X(2, 3), old + 1.0f);
  // Undo twice: both states come back exactly.
  ASSERT_TRUE(doc.undo());
  EXPECT_EQ(doc.scenario().X(2, 3), old);
  ASSERT_TRUE(doc.undo());
  EXPECT_TRUE(doc.scenario().use_w_o);
  EXPECT_TRUE(attention_lab::test::scenarios_identical(doc.scenario(), preset("multi-head")));
}

TEST(SharedScenario, ABackgroundChangeAndASnapshotShareTheScenarioTheyCopy) {
  Document doc(preset("multi-head"));
  std::string error;
  auto change = doc.prepare(SetDimension{Dimension::d_out, 3}, error);
  ASSERT_NE(change, nullptr) << error;
  EXPECT_TRUE(change->scenario->X.shares_buffer_with(doc.scenario().X));
  EXPECT_TRUE(change->scenario->W_q.shares_buffer_with(doc.scenario().W_q));
  EXPECT_FALSE(change->scenario->W_o.shares_buffer_with(doc.scenario().W_o));
  const Snapshot snap = take_snapshot(doc);
  EXPECT_TRUE(snap.scenario->W_v.shares_buffer_with(doc.scenario().W_v));
}

TEST(SharedScenario, SetMatrixSharesItsValueAndItsInverseTheOldOne) {
  Document doc(preset("multi-head"));
  const SharedMatrix old = doc.scenario().W_v;
  const SharedMatrix value = Matrix::Constant(old.rows(), old.cols(), 0.25f);
  ASSERT_EQ(doc.apply(SetMatrix{in(StageKind::W_v), value, "fill"}), "");
  EXPECT_TRUE(doc.scenario().W_v.shares_buffer_with(value));
  ASSERT_TRUE(doc.undo());
  EXPECT_TRUE(doc.scenario().W_v.shares_buffer_with(old));
}
