// The sliding-window mask: key j is allowed for query i iff i − W < j ≤ i.
// Its cells, its weights, its limits (W = 1, W ≥ T), its edits and undo, and
// incremental edits under it against a full recompute.

#include "attention_lab/document.h"
#include "attention_lab/edit.h"
#include "random_edits.h"
#include "test_support.h"
#include "unit_support.h"

#include <gtest/gtest.h>

using namespace attention_lab;
using attention_lab::test::preset;

namespace {

Scenario windowed(const char* name, int window) {
  Scenario s = preset(name);
  s.mask_kind = MaskKind::Window;
  s.window = window;
  return s;
}

}  // namespace

TEST(Window, TheMaskAllowsTheLastWKeysUpToTheDiagonal) {
  const Scenario s = windowed("book", 3);
  const Matrix m = s.effective_mask();
  for (int i = 0; i < s.T(); ++i)
    for (int j = 0; j < s.T(); ++j) {
      const bool allowed = i - 3 < j && j <= i;
      EXPECT_EQ(m(i, j), allowed ? 1.0f : 0.0f) << i << "," << j;
      EXPECT_EQ(s.mask_allows(i, j), allowed) << i << "," << j;
    }
}

TEST(Window, WeightsAreZeroOutsideTheWindowAndRowsSumToOne) {
  const Document doc(windowed("multi-head", 2));
  for (int h = 0; h < doc.scenario().heads; ++h) {
    const MatrixView w = doc.stage(StageId::of_head(StageKind::Weights, h));
    const MatrixView masked = doc.stage(StageId::of_head(StageKind::Masked, h));
    for (Eigen::Index i = 0; i < w.rows(); ++i) {
      EXPECT_NEAR(w.row(i).sum(), 1.0f, 1e-5f) << "head " << h << " row " << i;
      for (Eigen::Index j = 0; j < w.cols(); ++j)
        if (!(i - 2 < j && j <= i)) {
          EXPECT_EQ(w(i, j), 0.0f) << i << "," << j;
          EXPECT_EQ(masked(i, j), -std::numeric_limits<float>::infinity()) << i << "," << j;
        }
    }
  }
}

TEST(Window, OfOneEachTokenSeesOnlyItselfAndWiderThanTheTextIsCausal) {
  const Document one(windowed("fat-cat", 1));
  const MatrixView w = one.stage(StageId::of_head(StageKind::Weights, 0));
  EXPECT_TRUE(w.isApprox(Matrix::Identity(w.rows(), w.cols()))) << w;
  EXPECT_TRUE(one.stage(StageId::of_head(StageKind::Context, 0)).isApprox(one.stage(StageId::of_head(StageKind::HeadV, 0))));

  Scenario causal = preset("fat-cat");
  causal.mask_kind = MaskKind::Causal;
  const Document wide(windowed("fat-cat", causal.T() + 5)), reference(causal);
  for (const StageId id : attention_lab::test::all_stages(reference.engine().dims()))
    EXPECT_TRUE(attention_lab::test::matrices_identical(wide.stage(id), reference.stage(id), to_string(id)));
}

TEST(Window, ChoosingAWindowIsOneUndoableEditThatKeepsItsWidth) {
  Document doc(preset("book"));
  const Scenario before = doc.scenario();
  ASSERT_EQ(doc.apply(SetMask{MaskKind::Window, std::nullopt, 2}), "");
  EXPECT_EQ(doc.scenario().mask_kind, MaskKind::Window);
  EXPECT_EQ(doc.scenario().window, 2);
  ASSERT_EQ(doc.apply(SetMask{MaskKind::Causal, std::nullopt}), "");
  ASSERT_EQ(doc.apply(SetMask{MaskKind::Window, std::nullopt}), "");  // -1: the width it had
  EXPECT_EQ(doc.scenario().window, 2);
  EXPECT_NE(doc.apply(SetMask{MaskKind::Window, std::nullopt, 0}), "");
  while (doc.can_undo()) doc.undo();
  EXPECT_TRUE(attention_lab::test::scenarios_identical(doc.scenario(), before));
}

TEST(Window, EditingAMaskCellStartsACustomMaskFromTheWindow) {
  Document doc(windowed("book", 2));
  ASSERT_EQ(doc.apply(SetCell{StageId::input(StageKind::Mask), 4, 0, 1.0f}), "");
  EXPECT_EQ(doc.scenario().mask_kind, MaskKind::Custom);
  Matrix expected = windowed("book", 2).effective_mask();
  expected(4, 0) = 1.0f;
  EXPECT_EQ(doc.scenario().custom_mask.get(), expected);
}

TEST(Window, RandomEditsUnderAWindowMatchAFullRecompute) {
  for (std::uint32_t seed : {11u, 12u, 13u}) {
    attention_lab::test::RandomOptions o;
    o.T = 9;
    o.heads = 2;
    o.mask = MaskKind::Window;
    Document doc(attention_lab::test::random_scenario(seed, o));
    attention_lab::test::RandomEdits edits(seed);
    for (int i = 0; i < 60; ++i) {
      auto e = edits.next(doc.scenario());
      if (std::holds_alternative<SetMask>(e)) continue;  // keep the window
      if (const auto* cell = std::get_if<SetCell>(&e); cell && cell->target.kind == StageKind::Mask) continue;
      doc.apply(e);
    }
    ASSERT_EQ(doc.scenario().mask_kind, MaskKind::Window);
    Engine fresh;
    fresh.recompute_all(doc.scenario());
    EXPECT_TRUE(attention_lab::test::engines_near(doc.engine(), fresh)) << "seed " << seed;
  }
}
