// Changes prepared on the UI thread, computed on a worker thread and committed
// must leave the document exactly as the synchronous path does.

#include "attention_lab/document.h"
#include "attention_lab/stage_info.h"
#include "core/test_support.h"

#include <gtest/gtest.h>

#include <thread>

using namespace attention_lab;
using attention_lab::test::preset;

namespace {

void expect_same_stages(const Document& a, const Document& b) {
  for (const StageId id : pipeline(a.scenario())) {
    const MatrixView x = a.stage(id), y = b.stage(id);
    ASSERT_EQ(x.rows(), y.rows()) << to_string(id);
    ASSERT_EQ(x.cols(), y.cols()) << to_string(id);
    EXPECT_TRUE(attention_lab::test::matrices_near(x, y, 0.0, 0.0, to_string(id))) << to_string(id);
  }
}

}  // namespace

TEST(BackgroundChange, ACommittedResizeEqualsTheSynchronousOne) {
  Document sync(preset("multi-head")), async(preset("multi-head"));
  const Edit edit = SetDimension{Dimension::T, 11};
  ASSERT_EQ(sync.apply(edit), "");
  std::string error;
  auto change = async.prepare(edit, error);
  ASSERT_TRUE(change) << error;
  std::thread worker([&] { change->compute(); });
  worker.join();
  async.commit(std::move(change));
  EXPECT_EQ(async.scenario().T(), 11);
  expect_same_stages(sync, async);
  EXPECT_TRUE(async.can_undo());
  EXPECT_EQ(async.undo_label(), sync.undo_label());
}

TEST(BackgroundChange, UndoAndRedoInTheBackgroundMatchTheSynchronousOnes) {
  Document sync(preset("fat-cat")), async(preset("fat-cat"));
  for (Document* d : {&sync, &async}) {
    ASSERT_EQ(d->apply(SetCell{StageId::input(StageKind::X), 1, 2, 0.75f}), "");
    ASSERT_EQ(d->apply(SetDimension{Dimension::heads, 2}), "");
  }
  sync.undo();
  auto undo = async.prepare_undo();
  ASSERT_TRUE(undo);
  async.commit(std::move(undo));  // commit computes when the worker did not
  expect_same_stages(sync, async);
  EXPECT_EQ(async.scenario().heads, 1);
  EXPECT_TRUE(async.can_redo());

  sync.redo();
  auto redo = async.prepare_redo();
  ASSERT_TRUE(redo);
  redo->compute();
  async.commit(std::move(redo));
  expect_same_stages(sync, async);
  EXPECT_EQ(async.scenario().heads, 2);
  // …and the history still works synchronously afterwards.
  ASSERT_TRUE(async.undo());
  ASSERT_TRUE(async.undo());
  EXPECT_EQ(async.scenario().X(1, 2), preset("fat-cat").X(1, 2));
}

TEST(BackgroundChange, AnInvalidEditIsRefusedBeforeAnyWork) {
  Document doc(preset("book"));
  std::string error;
  EXPECT_FALSE(doc.prepare(SetDimension{Dimension::T, 0}, error));
  EXPECT_EQ(error.rfind("T: expected 1 to ", 0), 0u) << error;
  EXPECT_FALSE(doc.prepare_undo());
  EXPECT_FALSE(doc.prepare_redo());
  EXPECT_FALSE(doc.modified());
}

TEST(BackgroundChange, CommittingMarksTheDocumentModifiedAndSavedStateIsTracked) {
  Document doc(preset("book"));
  doc.mark_saved();
  std::string error;
  auto change = doc.prepare(SetToggle{Toggle::OutputProjection, true}, error);
  ASSERT_TRUE(change) << error;
  doc.commit(std::move(change));
  EXPECT_TRUE(doc.modified());
  auto undo = doc.prepare_undo();
  doc.commit(std::move(undo));
  EXPECT_FALSE(doc.modified());
}
