// Compare: a snapshot keeps a read-only copy of the document's engine and
// gives every stage as it was; differences are current − snapshot, with −∞, shape changes and missing stages handled, rounding left
// out; snapshots can be computed on another thread and cancelled; restoring
// is undoable.

#include "attention_lab/snapshot.h"
#include "attention_lab/stage_info.h"

#include "test_support.h"
#include "unit_support.h"

#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <thread>

using namespace attention_lab;
using attention_lab::test::preset;
using attention_lab::test::scenarios_identical;

namespace {

using attention_lab::test::kInf;

using attention_lab::test::in;
using attention_lab::test::head;

}  // namespace

TEST(Snapshot, HoldsEveryStageOfThePipelineAsItWas) {
  Document doc(preset("multi-head"));
  const Snapshot snap = take_snapshot(doc);
  const Scenario then = doc.scenario();
  std::map<StageId, Matrix> expected;
  for (const StageId id : pipeline(doc.scenario())) expected.emplace(id, Matrix(doc.stage(id)));
  ASSERT_EQ(doc.apply(SetCell{in(StageKind::X), 1, 1, 3.0f}), "");
  ASSERT_EQ(doc.apply(SetCell{in(StageKind::W_o), 0, 2, -1.0f}), "");
  for (const StageId id : pipeline(then)) {
    ASSERT_TRUE(snap.has(id)) << to_string(id);
    EXPECT_TRUE(attention_lab::test::matrices_identical(snap.stage(id), expected.at(id), to_string(id)));
  }
  EXPECT_FALSE(snap.has(head(StageKind::Weights, 7)));
  EXPECT_TRUE(scenarios_identical(*snap.scenario, then));
}

TEST(Snapshot, CountsOnlyTheMatricesTheDocumentNoLongerShares) {
  Document doc(preset("multi-head"));
  const Snapshot snap = take_snapshot(doc);
  // The scenario and the mask are the document's, shared.
  const std::uint64_t mask = static_cast<std::uint64_t>(doc.stage(in(StageKind::Mask)).size()) * 4u;
  EXPECT_EQ(snap.engine.bytes_shared(), mask);
  EXPECT_EQ(snap.bytes(), snap.engine.bytes_kept() - mask);
  ASSERT_EQ(doc.apply(SetCell{in(StageKind::X), 1, 1, 3.0f}), "");
  EXPECT_EQ(snap.bytes(), snap.engine.bytes_kept() - mask + static_cast<std::uint64_t>(doc.scenario().X.size()) * 4u);
  // A new mask leaves the snapshot the old one: now only it keeps that.
  ASSERT_EQ(doc.apply(SetMask{MaskKind::None, std::nullopt, -1}), "");
  EXPECT_EQ(snap.engine.bytes_shared(), 0u);
  EXPECT_EQ(snap.bytes(), snap.engine.bytes_kept() + static_cast<std::uint64_t>(doc.scenario().X.size()) * 4u);
  EXPECT_EQ(snap.stage(in(StageKind::Mask))(0, 1), 0.0f);  // still causal
}

namespace {

// Scenarios of every variant at sizes of several 64×64 score blocks, edited
// cell by cell (so the document's stages are incrementally updated ones) and
// pinned on the stages the copy recomputes.
std::vector<std::pair<std::string, Scenario>> edited_variants() {
  std::vector<std::pair<std::string, Scenario>> out;
  Scenario causal = attention_lab::random_scenario(150, 48, 3, MaskKind::Causal, 5);
  out.emplace_back("causal", causal);
  Scenario windowed = attention_lab::random_scenario(130, 32, 4, MaskKind::Window, 6);
  windowed.window = 40;
  windowed.alibi = true;
  windowed.use_sinks = true;
  windowed.sinks = Matrix::Constant(1, 4, 0.5f);
  out.emplace_back("window+alibi+sinks", windowed);
  for (const char* name : {"gqa", "rope", "translate"}) out.emplace_back(name, preset(name));
  return out;
}

}  // namespace

TEST(Snapshot, KeepsNoScoresYetGivesEveryStageOfEveryVariantAsItWas) {
  for (auto& [name, scenario] : edited_variants()) {
    SCOPED_TRACE(name);
    Document doc(scenario);
    const int T = doc.scenario().T(), d = doc.scenario().d_model();
    for (int i = 0; i < 12; ++i)
      ASSERT_EQ(doc.apply(SetCell{in(StageKind::X), (i * 37) % T, (i * 11) % d, 0.1f * static_cast<float>(i % 5) - 0.2f}), "");
    ASSERT_EQ(doc.apply(SetPin{PinKey{head(StageKind::Scores, 0), T - 1, 0}, 2.5f}), "");
    ASSERT_EQ(doc.apply(SetPin{PinKey{head(StageKind::Weights, doc.scenario().heads - 1), T / 2, 0}, 0.75f}), "");
    // pins on what the copy projects again (with RoPE: on the turned Q and K)
    const int last = doc.scenario().heads - 1;
    ASSERT_EQ(doc.apply(SetPin{PinKey{head(StageKind::HeadQ, last), 1, 1}, 1.5f}), "");
    ASSERT_EQ(doc.apply(SetPin{PinKey{head(StageKind::HeadK, last), 0, 2}, -1.25f}), "");
    ASSERT_EQ(doc.apply(SetPin{PinKey{head(StageKind::HeadV, 0), 0, 0}, 2.0f}), "");
    const std::vector<StageId> ids = pipeline(doc.scenario());
    std::map<StageId, Matrix> expected;
    for (const StageId id : ids) expected.emplace(id, Matrix(doc.stage(id)));

    const Snapshot snap = take_snapshot(doc);
    EXPECT_TRUE(snap.engine.read_only());
    // No scores and no U or R: a fraction of what the document's engine keeps
    // (at sizes where scores outweigh the per-row state).
    const bool big = T >= 128;
    if (big) {
      EXPECT_LT(snap.bytes(), doc.engine().bytes_kept() / 2);
    }
    ASSERT_EQ(doc.apply(SetCell{in(StageKind::X), 0, 0, 9.0f}), "");  // the document moves on
    // Heads read back and forth, each bringing its scores back and letting the last head's go.
    for (int pass = 0; pass < 2; ++pass)
      for (auto it = ids.rbegin(); it != ids.rend(); ++it) {
        const MatrixView then = snap.stage(*it);
        const Matrix& want = expected.at(*it);
        ASSERT_EQ(then.rows(), want.rows()) << to_string(*it);
        ASSERT_EQ(then.cols(), want.cols()) << to_string(*it);
        const StageDiff change = diff_matrices(*it, want, then, kSnapshotRoundingTolerance);
        EXPECT_FALSE(change.changed) << to_string(*it) << ": " << change.largest_change << " at " << change.largest_row
                                     << "," << change.largest_col;
      }
    // Rows of a derived stage (the head view) agree with the whole.
    const StageId w = head(StageKind::Weights, 0);
    EXPECT_TRUE(attention_lab::test::matrices_identical(snap.engine.rows(w, 1, 2), Matrix(snap.stage(w).middleRows(1, 2)),
                                                        "rows of weights[0]"));
    // At most one head's scores and one derived matrix came back.
    const std::uint64_t one_head = static_cast<std::uint64_t>(T) * static_cast<std::uint64_t>(doc.scenario().dims().T_k) * 4u;
    if (big) {
      EXPECT_LE(snap.engine.bytes_kept(), doc.engine().bytes_kept() / 2 + 2 * one_head);
    }
  }
}

// What Compare costs in memory: after an edit of X the document has
// replaced X, Q, K, V, the contexts and the output; the snapshot keeps the old
// X, contexts and output, the rows' softmax state, and whatever it projected
// and computed again for the last stages read: one head's blocks of Q, K and
// V and its scores or one derived matrix. Not Q, K and V.
TEST(Snapshot, KeepsOneHeadsProjectionsNotQKAndV) {
  auto variants = edited_variants();
  variants.emplace_back("wide", attention_lab::random_scenario(192, 128, 4, MaskKind::Causal, 8));
  for (auto& [name, scenario] : variants) {
    SCOPED_TRACE(name);
    Document doc(scenario);
    const Snapshot snap = take_snapshot(doc);
    ASSERT_EQ(doc.apply(SetCell{in(StageKind::X), 3, 2, 0.5f}), "");
    for (const StageId id : pipeline(doc.scenario())) (void)snap.stage(id);
    const Dims d = doc.scenario().dims();
    const auto floats = [](Eigen::Index rows, Eigen::Index cols) { return static_cast<std::uint64_t>(rows * cols) * 4u; };
    const std::uint64_t kept_whole = floats(d.T, d.d_model) +              // X
                                     2 * floats(d.T, d.heads * d.d_v) +   // the contexts and the output (d_out = d_model)
                                     floats(d.T, d.T_k);                   // one head's scores or a derived matrix
    const std::uint64_t head_blocks = floats(d.T, d.d_k) * 2 + floats(d.T_k, d.d_k) * 2 + floats(d.T_k, d.d_v);
    const std::uint64_t rope = 3 * floats(std::max(d.T, d.T_k), d.d_k / 2);  // cos, sin and the angles
    const std::uint64_t per_row = 64u * static_cast<std::uint64_t>(d.T) * static_cast<std::uint64_t>(d.heads);
    EXPECT_LE(snap.bytes(), kept_whole + head_blocks + rope + per_row);
    // where Q, K and V outweigh the slack, that bound leaves no room for them
    const std::uint64_t qkv = floats(d.T, d.heads * d.d_k) + floats(d.T_k, d.kv_heads * (d.d_k + d.d_v));
    if (name == "wide") {
      EXPECT_GT(qkv, head_blocks + rope + per_row);
    }
  }
}

// A whole Q, K or V is projected when it is read and let go when another
// one or a stage of a head is read (the top of the pipeline on screen, inputs
// and one projection, costs no projection a frame); a head's blocks stay
// until another head's are read.
TEST(Snapshot, HoldsOneWholeProjectionUntilAHeadIsRead) {
  Document doc(attention_lab::random_scenario(130, 48, 3, MaskKind::Causal, 9));
  const Snapshot snap = take_snapshot(doc);
  const std::uint64_t before = snap.engine.bytes_kept();
  const Matrix q = snap.stage(in(StageKind::Q));
  EXPECT_TRUE(attention_lab::test::matrices_identical(q, doc.stage(in(StageKind::Q)), "Q"));
  const std::uint64_t one_whole = static_cast<std::uint64_t>(q.size()) * 4u;
  EXPECT_EQ(snap.engine.bytes_kept(), before + one_whole);
  (void)snap.stage(in(StageKind::X));
  (void)snap.stage(in(StageKind::Output));
  EXPECT_EQ(snap.engine.bytes_kept(), before + one_whole);
  EXPECT_TRUE(attention_lab::test::matrices_identical(snap.stage(in(StageKind::V)), doc.stage(in(StageKind::V)), "V"));
  EXPECT_EQ(snap.engine.bytes_kept(), before + one_whole);  // in Q's place
  (void)snap.stage(head(StageKind::Context, 1));
  EXPECT_EQ(snap.engine.bytes_kept(), before);
  // head 1's blocks, then head 2's in their place
  (void)snap.stage(head(StageKind::HeadV, 1));
  const std::uint64_t one_head = snap.engine.bytes_kept();
  EXPECT_GT(one_head, before);
  // (projected d_k wide, where the forward projected all heads at once: the same to within rounding)
  const StageDiff k2 = diff_matrices(head(StageKind::HeadK, 2), doc.stage(head(StageKind::HeadK, 2)),
                                     snap.stage(head(StageKind::HeadK, 2)), kSnapshotRoundingTolerance);
  EXPECT_FALSE(k2.changed) << k2.largest_change;
  EXPECT_EQ(snap.engine.bytes_kept(), one_head);
}

TEST(Snapshot, AReadOnlyCopyRecomputedIsAWholeEngineAgain) {
  Document doc(attention_lab::random_scenario(100, 32, 2, MaskKind::Causal, 3));
  Snapshot snap = take_snapshot(doc);
  Engine engine = snap.engine;
  const Scenario& s = *snap.scenario;
  Invalidation one;
  one.mark(StageKind::W_q, 0);
  engine.recompute(s, one);
  EXPECT_FALSE(engine.read_only());
  const Document fresh(s);
  for (const StageId id : pipeline(s))
    EXPECT_TRUE(attention_lab::test::matrices_identical(engine.stage(id), fresh.stage(id), to_string(id)));
}

TEST(Snapshot, OutlivesTheDocumentItWasTakenOf) {
  std::optional<Snapshot> snap;
  Matrix weights;
  {
    const Document doc(preset("book"));
    snap = take_snapshot(doc);
    weights = doc.stage(head(StageKind::Weights));
  }
  EXPECT_TRUE(attention_lab::test::matrices_identical(snap->stage(head(StageKind::Weights)), weights, "weights"));
  const Snapshot moved = std::move(*snap);
  snap.reset();
  EXPECT_TRUE(attention_lab::test::matrices_identical(moved.stage(head(StageKind::Weights)), weights, "weights"));
}

TEST(Snapshot, ComputesOnAnotherThreadWhileTheDocumentIsEdited) {
  Document doc(preset("multi-head"));
  const auto then = std::make_shared<const Scenario>(doc.scenario());
  std::optional<Snapshot> snap;
  std::thread worker([&] { snap = compute_snapshot(then); });
  for (int i = 0; i < 50; ++i) ASSERT_EQ(doc.apply(SetCell{in(StageKind::X), i % 4, i % 3, 0.1f * static_cast<float>(i)}), "");
  worker.join();
  ASSERT_TRUE(snap.has_value());
  const Document fresh(*then);
  for (const StageId id : pipeline(*then))
    EXPECT_TRUE(attention_lab::test::matrices_identical(snap->stage(id), fresh.stage(id), to_string(id)));
}

TEST(Snapshot, ACancelledSnapshotThrowsAndReportsProgressOtherwise) {
  const auto scenario = std::make_shared<const Scenario>(preset("multi-head"));
  ComputeControl cancelled;
  cancelled.cancel = true;
  EXPECT_THROW(compute_snapshot(scenario, &cancelled), Cancelled);
  ComputeControl watched;
  const Snapshot snap = compute_snapshot(scenario, &watched);
  EXPECT_FLOAT_EQ(watched.progress.load(), 1.0f);
  EXPECT_TRUE(snap.has(in(StageKind::Output)));
}

TEST(Snapshot, AFreshSnapshotOfAnIncrementallyEditedDocumentShowsNoChange) {
  // The document's stages were updated cell by cell; the snapshot computes
  // them from scratch. They differ only by rounding, which diff() leaves out.
  Document doc(attention_lab::random_scenario(150, 96, 3, MaskKind::Causal, 11));
  for (int i = 0; i < 40; ++i) {
    ASSERT_EQ(doc.apply(SetCell{in(StageKind::X), (i * 37) % 150, (i * 11) % 96, 0.05f * static_cast<float>(i % 9) - 0.2f}), "");
    ASSERT_EQ(doc.apply(SetCell{in(StageKind::W_v), (i * 5) % 96, (i * 7) % 96, 0.3f}), "");
  }
  const Snapshot snap = take_snapshot(doc);
  for (const StageId id : pipeline(doc.scenario())) EXPECT_FALSE(diff(snap, doc, id).changed) << to_string(id);
}

TEST(Snapshot, AnUnchangedDocumentHasNoDifferenceEvenWhereCellsAreMinusInfinity) {
  const Document doc(preset("fat-cat"));  // causal: masked has −∞ above the diagonal
  const Snapshot snap = take_snapshot(doc);
  for (const StageId id : pipeline(doc.scenario())) {
    const StageDiff d = diff(snap, doc, id);
    EXPECT_FALSE(d.shape_changed) << to_string(id);
    EXPECT_FALSE(d.changed) << to_string(id);
    EXPECT_EQ(d.largest_row, -1);
    EXPECT_EQ(d.largest_col, -1);
    EXPECT_TRUE(d.difference.isZero()) << to_string(id);
  }
}

TEST(Snapshot, EditingAWeightShowsWhereAndHowMuchItChanged) {
  Document doc(preset("fat-cat"));
  const Snapshot snap = take_snapshot(doc);
  ASSERT_EQ(doc.apply(SetCell{in(StageKind::W_q), 2, 1, 0.0f}), "");  // was 1.8
  const StageDiff w = diff(snap, doc, in(StageKind::W_q));
  EXPECT_TRUE(w.changed);
  EXPECT_EQ(w.largest_row, 2);
  EXPECT_EQ(w.largest_col, 1);
  EXPECT_FLOAT_EQ(w.largest_change, -1.8f);
  EXPECT_EQ((w.difference.array() != 0.0f).count(), 1);
  // Q changes only in column 1, most for 'cat' (X[2][2] = 1).
  const StageDiff q = diff(snap, doc, in(StageKind::Q));
  EXPECT_EQ(q.largest_row, 2);
  EXPECT_EQ(q.largest_col, 1);
  EXPECT_NEAR(q.largest_change, -1.8f, 1e-6);
  for (int c : {0, 2, 3}) EXPECT_TRUE(q.difference.col(c).isZero()) << c;
  // The weights change, and the difference is current − snapshot cell by cell.
  const StageDiff a = diff(snap, doc, head(StageKind::Weights), 0.0);
  EXPECT_TRUE(a.changed);
  const Matrix expected = doc.stage(head(StageKind::Weights)) - snap.stage(head(StageKind::Weights));
  EXPECT_TRUE(attention_lab::test::matrices_identical(a.difference, expected, "weights"));
  EXPECT_EQ(std::fabs(a.largest_change), expected.cwiseAbs().maxCoeff());
  // X did not change.
  EXPECT_FALSE(diff(snap, doc, in(StageKind::X)).changed);
}

TEST(Snapshot, ChangesWithinRoundingCountAsNone) {
  const Document doc(preset("fat-cat"));
  const StageId w = head(StageKind::Weights);
  Matrix then = doc.stage(w);
  then(2, 1) *= 1.0f + 1e-6f;  // weights ≤ 1: the allowance is 1e-5
  const StageDiff rounding = diff_matrices(w, then, doc.stage(w));
  EXPECT_DOUBLE_EQ(rounding.tolerance, 1e-5);  // the largest weight is 1
  EXPECT_FALSE(rounding.changed);
  EXPECT_TRUE(rounding.difference.isZero());
  EXPECT_EQ(rounding.largest_row, -1);
  const StageDiff exact = diff_matrices(w, then, doc.stage(w), 0.0);
  EXPECT_TRUE(exact.changed);
  EXPECT_EQ(exact.largest_row, 2);
  EXPECT_EQ(exact.largest_col, 1);
  then(3, 0) += 2e-5f;
  const StageDiff real = diff_matrices(w, then, doc.stage(w));
  EXPECT_TRUE(real.changed);
  EXPECT_EQ(real.largest_row, 3);
  EXPECT_EQ(real.difference(2, 1), 0.0f);
}

TEST(Snapshot, EditsAndTheirUndoLeaveNoChangeBeyondRounding) {
  for (const char* name : {"fat-cat", "book", "naive", "multi-head"}) {
    Document doc(preset(name));
    const Snapshot snap = take_snapshot(doc);
    for (int i = 0; i < 6; ++i) {
      ASSERT_EQ(doc.apply(SetCell{in(StageKind::X), i % doc.scenario().T(), 1, 0.37f * static_cast<float>(i) - 0.5f}), "");
      ASSERT_EQ(doc.apply(SetCell{in(StageKind::W_v), 0, i % 2, 0.9f}), "");
      ASSERT_EQ(doc.apply(SetCell{in(StageKind::W_q), 1, i % 2, -0.4f}), "");
      ASSERT_EQ(doc.apply(SetCell{in(StageKind::Mask), 3, 1, 0.0f}), "");
    }
    while (doc.undo()) {
    }
    for (const StageId id : pipeline(doc.scenario())) EXPECT_FALSE(diff(snap, doc, id).changed) << name << " " << to_string(id);
  }
}

TEST(Snapshot, ACausalLayerDoesNotChangeRowsBeforeTheEditedToken) {
  Document doc(preset("fat-cat"));
  const Snapshot snap = take_snapshot(doc);
  ASSERT_EQ(doc.apply(SetCell{in(StageKind::X), 6, 2, 0.0f}), "");
  for (const StageId id : {head(StageKind::Weights), head(StageKind::Context), in(StageKind::Output)}) {
    const StageDiff d = diff(snap, doc, id);
    EXPECT_TRUE(d.changed) << to_string(id);
    EXPECT_TRUE(d.difference.topRows(6).isZero()) << to_string(id);
    EXPECT_EQ(d.largest_row, 6) << to_string(id);
  }
}

TEST(Snapshot, ACellThatWasMinusInfinityChangesByInfinity) {
  Document doc(preset("fat-cat"));
  const Snapshot causal = take_snapshot(doc);
  ASSERT_EQ(doc.apply(SetMask{MaskKind::None, std::nullopt, -1}), "");
  const StageDiff opened = diff(causal, doc, head(StageKind::Masked));
  EXPECT_TRUE(opened.changed);
  EXPECT_EQ(opened.difference(0, 1), kInf);  // finite − (−∞)
  EXPECT_EQ(opened.difference(1, 0), 0.0f);  // allowed before and after: same value
  EXPECT_EQ(opened.largest_change, kInf);
  EXPECT_EQ(opened.largest_row, 0);  // the first infinite change in row order
  EXPECT_EQ(opened.largest_col, 1);

  const Snapshot none = take_snapshot(doc);
  ASSERT_EQ(doc.apply(SetMask{MaskKind::Causal, std::nullopt}), "");
  const StageDiff closed = diff(none, doc, head(StageKind::Masked));
  EXPECT_EQ(closed.difference(0, 1), -kInf);
  EXPECT_EQ(closed.largest_change, -kInf);
}

TEST(Snapshot, ANaNChangeRanksAboveAnyOtherAndNaNAgainstNaNIsNoChange) {
  const Document doc(preset("book"));
  const StageId w = head(StageKind::Weights);
  Matrix then = doc.stage(w);
  then(0, 0) += 0.5f;
  then(3, 2) = std::numeric_limits<float>::quiet_NaN();
  then(4, 4) = -kInf;
  const StageDiff d = diff_matrices(w, then, doc.stage(w));
  EXPECT_TRUE(d.changed);
  EXPECT_EQ(d.largest_row, 3);
  EXPECT_EQ(d.largest_col, 2);
  EXPECT_TRUE(std::isnan(d.largest_change));
  EXPECT_TRUE(std::isnan(d.difference(3, 2)));
  EXPECT_EQ(d.difference(4, 4), kInf);
  EXPECT_FLOAT_EQ(d.difference(0, 0), -0.5f);
}

TEST(Snapshot, NaNOnBothSidesIsNoChange) {
  Document doc(preset("book"));
  // An overflowing query (∞) against keys of 0 gives ∞·0 = NaN scores in row 0.
  ASSERT_EQ(doc.apply(SetCell{in(StageKind::X), 0, 0, 1e10f}), "");
  ASSERT_EQ(doc.apply(SetCell{in(StageKind::W_q), 0, 0, 1e30f}), "");
  for (int r = 0; r < 3; ++r) ASSERT_EQ(doc.apply(SetCell{in(StageKind::W_k), r, 0, 0.0f}), "");
  ASSERT_TRUE(std::isnan(doc.stage(head(StageKind::Scores))(0, 1)));
  const Snapshot snap = take_snapshot(doc);
  ASSERT_EQ(doc.apply(SetCell{in(StageKind::W_v), 0, 0, 2.0f}), "");
  EXPECT_FALSE(diff(snap, doc, head(StageKind::Scores)).changed);
  EXPECT_FALSE(diff(snap, doc, head(StageKind::Weights)).changed);
  EXPECT_TRUE(diff(snap, doc, in(StageKind::V)).changed);
}

TEST(Snapshot, AChangedShapeIsReportedInsteadOfADifference) {
  Document doc(preset("fat-cat"));
  const Snapshot snap = take_snapshot(doc);
  ASSERT_EQ(doc.apply(SetDimension{Dimension::T, 5}), "");
  const StageDiff d = diff(snap, doc, head(StageKind::Weights));
  EXPECT_TRUE(d.shape_changed);
  EXPECT_FALSE(d.changed);
  EXPECT_EQ(d.note, "shape changed: 7 x 7 then, 5 x 5 now");
  EXPECT_EQ(d.difference.size(), 0);
  EXPECT_FALSE(diff(snap, doc, in(StageKind::W_q)).shape_changed);  // d_model and d_k kept
}

TEST(Snapshot, AStageInOnlyOneOfThemIsReported) {
  Document doc(preset("fat-cat"));
  const Snapshot one_head = take_snapshot(doc);
  ASSERT_EQ(doc.apply(SetDimension{Dimension::heads, 2}), "");
  EXPECT_EQ(diff(one_head, doc, head(StageKind::Weights, 1)).note, "not in the snapshot");
  const Snapshot two_heads = take_snapshot(doc);
  ASSERT_EQ(doc.apply(SetDimension{Dimension::heads, 1}), "");
  const StageDiff gone = diff(two_heads, doc, head(StageKind::Weights, 1));
  EXPECT_TRUE(gone.shape_changed);
  EXPECT_EQ(gone.note, "no longer in the scenario");
  EXPECT_EQ(diff(two_heads, doc, head(StageKind::Weights, 5)).note, "in neither the snapshot nor the scenario now");
  EXPECT_EQ(diff(two_heads, doc, in(StageKind::W_o)).note, "in neither the snapshot nor the scenario now");
}

TEST(Snapshot, RestoringBringsTheSnapshotBackAsOneUndoableEdit) {
  Document doc(preset("multi-head"));
  const Snapshot snap = take_snapshot(doc);
  ASSERT_EQ(doc.apply(SetCell{in(StageKind::X), 1, 1, 3.0f}), "");
  ASSERT_EQ(doc.apply(SetDimension{Dimension::heads, 2}), "");
  const Scenario edited = doc.scenario();
  const ReplaceScenario restore = restore_edit(snap);
  EXPECT_EQ(restore.label, "restore snapshot");
  ASSERT_EQ(doc.apply(restore), "");
  EXPECT_TRUE(scenarios_identical(doc.scenario(), *snap.scenario));
  for (const StageId id : pipeline(doc.scenario())) EXPECT_FALSE(diff(snap, doc, id).changed) << to_string(id);
  EXPECT_EQ(doc.undo_label(), "restore snapshot");
  ASSERT_TRUE(doc.undo());
  EXPECT_TRUE(scenarios_identical(doc.scenario(), edited));
}
