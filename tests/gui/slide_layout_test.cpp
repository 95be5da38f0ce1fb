// A lesson step as a slide: which equations show the stages a step lists,
// and a cell size at which every box fits the centre area.

#include "logic/slide_layout.h"
#include "gui_test_support.h"

#include "attention_lab/presets.h"
#include "attention_lab/stage_info.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace attention_lab;
using namespace attention_lab::gui;
using namespace attention_lab::gui_test;

namespace {


std::vector<StageId> ids(std::initializer_list<const char*> names) {
  std::vector<StageId> out;
  for (const char* n : names) out.push_back(*parse_stage_id(n));
  return out;
}

SlideBox matrix_box(float rows, float cols) {
  SlideBox b;
  b.fixed_w = 50, b.cells_w = cols, b.min_w = 100, b.above = 40, b.cells_h = rows, b.below = 30;
  return b;
}

SlideBox operator_box(float w) {
  SlideBox b;
  b.fixed_w = w, b.above = 10, b.below = 10, b.operator_box = true;
  return b;
}

bool inside(const PlacedBox& p, const SlideArea& a) {
  return p.x >= a.x0 - 0.01f && p.y >= a.y0 - 0.01f && p.x + p.w <= a.x1 + 0.01f && p.y + p.h <= a.y1 + 0.01f;
}

}  // namespace

// [SECTION] slide_equations

TEST(SlideEquations, WeightsValuesAndContextAreOneEquation) {
  EXPECT_EQ(equation_text(slide_equations(preset("fat-cat"), ids({"weights[0]", "V[0]", "context[0]"}))),
            "weights[0] · V[0] = context[0]\n");
}

TEST(SlideEquations, AWeightMatrixBringsItsInputAndItsResult) {
  EXPECT_EQ(equation_text(slide_equations(preset("fat-cat"), ids({"X", "W_q", "Q"}))), "X · W_q = Q\n");
  EXPECT_EQ(equation_text(slide_equations(preset("fat-cat"), ids({"W_q", "Q"}))), "X · W_q = Q\n");
}

TEST(SlideEquations, TheScoresAreQTimesKTransposed) {
  EXPECT_EQ(equation_text(slide_equations(preset("fat-cat"), ids({"Q[0]", "K[0]", "scores[0]"}))), "Q[0] · K[0]ᵀ = scores[0]\n");
}

TEST(SlideEquations, OneStageAloneIsShownAlone) {
  EXPECT_EQ(equation_text(slide_equations(preset("fat-cat"), ids({"X"}))), "X\n");
  EXPECT_EQ(equation_text(slide_equations(preset("fat-cat"), ids({"mask"}))), "mask\n");
}

TEST(SlideEquations, ResultsNobodyAskedForBecomeAnEllipsis) {
  const auto lines = slide_equations(preset("fat-cat"), ids({"W_q", "Q", "scores[0]", "weights[0]"}));
  EXPECT_EQ(equation_text(lines), "X · W_q = Q\nscores[0] → … → masked[0] softmax → weights[0]\n");
}

TEST(SlideEquations, TheMaskIsAddedToTheScaledScores) {
  EXPECT_EQ(equation_text(slide_equations(preset("fat-cat"), ids({"mask", "scaled[0]", "masked[0]"}))),
            "scaled[0] + mask mask = masked[0]\n");
}

TEST(SlideEquations, FourHeadsWeightsAreFourPiecesInTheOrderAsked) {
  const auto lines = slide_equations(preset("multi-head"), ids({"weights[0]", "weights[1]", "weights[2]", "weights[3]"}));
  EXPECT_EQ(equation_text(lines), "weights[0]\nweights[1]\nweights[2]\nweights[3]\n");
}

TEST(SlideEquations, TheHeadsContextsAreConcatenatedOnce) {
  const auto lines =
      slide_equations(preset("multi-head"), ids({"context[0]", "context[1]", "context[2]", "context[3]", "concat"}));
  EXPECT_EQ(equation_text(lines), "context[0] | context[1] | context[2] | context[3] = concat\n");
}

TEST(SlideEquations, QBlocksAskedForAloneAreTheSplitOfQ) {
  const auto lines = slide_equations(preset("multi-head"), ids({"X", "W_q", "Q", "Q[0]", "Q[1]", "Q[2]", "Q[3]"}));
  EXPECT_EQ(equation_text(lines), "X · W_q = Q = Q[0] | Q[1] | Q[2] | Q[3]\n");
}

TEST(SlideEquations, EveryWantedStageOfEveryBuiltInShapeIsOnTheSlide) {
  for (const char* name : {"fat-cat", "book", "naive", "multi-head"}) {
    const Scenario s = preset(name);
    const auto all = pipeline(s);
    // Each stage alone, and pairs of neighbours in the pipeline.
    for (std::size_t i = 0; i < all.size(); ++i) {
      std::vector<StageId> wanted{all[i]};
      if (i + 1 < all.size()) wanted.push_back(all[i + 1]);
      const auto lines = slide_equations(s, wanted);
      for (const StageId w : wanted) {
        bool found = false;
        for (const auto& l : lines)
          for (const Term& t : l.terms) found = found || (t.kind == Term::Kind::Matrix && t.stage == w);
        EXPECT_TRUE(found) << name << ": " << to_string(w) << " missing from\n" << equation_text(lines);
      }
    }
  }
}

// [SECTION] layout_slide

TEST(SlideLayout, OneMatrixGrowsToFillTheAreaUpToTheLargestCell) {
  const SlideArea area{0, 0, 1000, 600};
  const auto l = layout_slide({SlideGroup{{matrix_box(7, 7)}}}, area);
  ASSERT_TRUE(l.fits);
  EXPECT_FLOAT_EQ(l.cell, 75.0f);  // (600 − 40 − 30) / 7 = 75.7, floored; the height decides
  ASSERT_EQ(l.boxes.size(), 1u);
  EXPECT_TRUE(inside(l.boxes[0], area));
  // Centred both ways.
  EXPECT_NEAR(l.boxes[0].x + l.boxes[0].w * 0.5f, 500.0f, 0.5f);
  EXPECT_NEAR(l.boxes[0].y + l.boxes[0].h * 0.5f, 300.0f, 0.5f);
}

TEST(SlideLayout, ASmallMatrixStopsAtTheLargestCell) {
  SlideSpacing sp;
  sp.max_cell = 60;
  const auto l = layout_slide({SlideGroup{{matrix_box(2, 2)}}}, SlideArea{0, 0, 1920, 1080}, sp);
  EXPECT_TRUE(l.fits);
  EXPECT_FLOAT_EQ(l.cell, 60.0f);
}

TEST(SlideLayout, AnEquationFitsBothAxesAtEveryScreenSize) {
  // A₀ · V₀ = C₀ at T = 7, d_v = 4.
  const SlideGroup eq{{matrix_box(7, 7), operator_box(20), matrix_box(7, 4), operator_box(20), matrix_box(7, 4)}};
  for (const SlideArea area : {SlideArea{0, 0, 600, 300}, SlideArea{10, 20, 910, 420}, SlideArea{0, 0, 1500, 700}}) {
    const auto l = layout_slide({eq}, area);
    ASSERT_TRUE(l.fits);
    EXPECT_GT(l.cell, 10.0f);
    for (const auto& p : l.boxes) EXPECT_TRUE(inside(p, area)) << area.x1 << "×" << area.y1;
    // A slightly larger cell no longer fits: the size is the largest.
    SlideSpacing tight;
    tight.min_cell = l.cell + 1.0f;
    tight.max_cell = l.cell + 1.0f;
    EXPECT_FALSE(layout_slide({eq}, area, tight).fits);
  }
}

TEST(SlideLayout, TheCellsOfAnEquationShareOneCentreLine) {
  const SlideGroup eq{{matrix_box(7, 8), operator_box(20), matrix_box(8, 4), operator_box(20), matrix_box(7, 4)}};
  const auto l = layout_slide({eq}, SlideArea{0, 0, 1200, 600});
  ASSERT_EQ(l.boxes.size(), 5u);
  const auto centre = [&](const PlacedBox& p, const SlideBox& b) { return p.y + b.above + b.cells_h * l.cell * 0.5f; };
  for (std::size_t i = 1; i < 5; ++i) EXPECT_NEAR(centre(l.boxes[i], eq.boxes[i]), centre(l.boxes[0], eq.boxes[0]), 0.01f);
}

TEST(SlideLayout, HeadsGoSideBySideWhenWideAndOnTwoRowsWhenTall) {
  const std::vector<SlideGroup> heads(4, SlideGroup{{matrix_box(8, 8)}});
  const auto wide = layout_slide(heads, SlideArea{0, 0, 1600, 400});
  EXPECT_EQ(wide.rows, 1);
  const auto tall = layout_slide(heads, SlideArea{0, 0, 700, 900});
  EXPECT_GE(tall.rows, 2);
  for (const auto* l : {&wide, &tall}) EXPECT_TRUE(l->fits);
}

TEST(SlideLayout, WrappedHeadsAreBalancedTwoAndTwoNotThreeAndOne) {
  const std::vector<SlideGroup> heads(4, SlideGroup{{matrix_box(8, 8)}});
  // At the largest cells (45 px) two rows are needed and three heads would
  // fit on the first: greedy rows would leave the fourth alone.
  const SlideArea area{0, 0, 1400, 900};
  const auto l = layout_slide(heads, area);
  ASSERT_TRUE(l.fits);
  ASSERT_EQ(l.rows, 2);
  ASSERT_EQ(l.boxes.size(), 4u);
  // Heads 0, 1 share the first row's top; 2, 3 the second's.
  EXPECT_FLOAT_EQ(l.boxes[0].y, l.boxes[1].y);
  EXPECT_FLOAT_EQ(l.boxes[2].y, l.boxes[3].y);
  EXPECT_GT(l.boxes[2].y, l.boxes[1].y);
  for (const auto& p : l.boxes) EXPECT_TRUE(inside(p, area));
  // Balancing keeps the cell size that the greedy rows allowed.
  SlideSpacing tight;
  tight.min_cell = tight.max_cell = l.cell + 1.0f;
  EXPECT_FALSE(layout_slide(heads, area, tight).fits);
}

TEST(SlideLayout, ALongEquationWrapsBeforeAnOperator) {
  SlideGroup eq;
  for (int i = 0; i < 6; ++i) {
    if (i > 0) eq.boxes.push_back(operator_box(30));
    eq.boxes.push_back(matrix_box(7, 7));
  }
  SlideSpacing sp;
  sp.min_cell = 20;  // too wide for one row at this size
  const auto l = layout_slide({eq}, SlideArea{0, 0, 800, 900}, sp);
  ASSERT_TRUE(l.fits);
  ASSERT_GE(l.rows, 2);
  // Every row after the first starts with an operator box.
  float first_y = l.boxes[0].y;
  for (std::size_t i = 1; i < l.boxes.size(); ++i) {
    const bool starts_row = l.boxes[i].x < l.boxes[i - 1].x;
    if (starts_row) {
      EXPECT_TRUE(eq.boxes[i].operator_box) << "row starts with box " << i;
    }
  }
  (void)first_y;
}

TEST(SlideLayout, WhatCannotFitSaysSo) {
  const std::vector<SlideGroup> many(30, SlideGroup{{matrix_box(64, 64)}});
  const auto l = layout_slide(many, SlideArea{0, 0, 300, 200});
  EXPECT_FALSE(l.fits);
  EXPECT_EQ(l.boxes.size(), 30u);
}

TEST(SlideLayout, AColourBarKeepsASmallMatrixWideEnough) {
  SlideBox b = matrix_box(1, 1);
  b.min_w = 160;
  const auto l = layout_slide({SlideGroup{{b}}}, SlideArea{0, 0, 1000, 150});
  ASSERT_EQ(l.boxes.size(), 1u);
  EXPECT_GE(l.boxes[0].w, 160.0f);
}

TEST(SlideLayout, AnEquationWrappedAfterItsFirstMatrixUsesBothRows) {
  // "S₀ ÷ √64 = S′₀" on a 1024×768 projector: too wide for one row at 22 px,
  // two rows ("S₀" / "÷ √64 = S′₀") fit with room to spare.
  SlideBox m;
  m.fixed_w = 91, m.cells_w = 8, m.min_w = 182, m.above = 60, m.cells_h = 8, m.below = 7;
  SlideBox op = operator_box(155);
  op.above = op.below = 19;
  SlideSpacing sp;
  sp.box_gap = 7, sp.group_gap = 42, sp.row_gap = 14, sp.max_cell = 70;
  const SlideLayout l = layout_slide({SlideGroup{{m, op, m}}}, SlideArea{0, 0, 686, 536}, sp);
  EXPECT_TRUE(l.fits);
  EXPECT_EQ(l.rows, 2);
  EXPECT_GE(l.cell, 22.0f);
}

// [SECTION] Slides in pages

namespace {
EquationLine line_of(std::initializer_list<const char*> items) {
  // Matrices are stage ids; anything that does not parse as one is an operator.
  EquationLine l;
  for (const char* item : items) {
    if (const auto id = parse_stage_id(item)) l.terms.push_back({Term::Kind::Matrix, *id, false, {}});
    else l.terms.push_back({Term::Kind::Operator, {}, false, item});
  }
  return l;
}
}  // namespace

TEST(SlidePages, AChainIsCutAfterEachResultWhichStartsTheNextStatement) {
  const auto parts = split_statements(line_of({"scaled[0]", "+ mask", "mask", "=", "masked[0]", "softmax →", "weights[0]"}));
  EXPECT_EQ(equation_text(parts), "scaled[0] + mask mask = masked[0]\nmasked[0] softmax → weights[0]\n");
}

TEST(SlidePages, AnOperandIsNeverCutFromItsProduct) {
  // "X · W_q" is not a statement: the cut comes after Q, the product's result.
  const auto parts = split_statements(line_of({"X", "·", "W_q", "=", "Q", "=", "Q[0]", "|", "Q[1]"}));
  EXPECT_EQ(equation_text(parts), "X · W_q = Q\nQ = Q[0] | Q[1]\n");
  EXPECT_EQ(split_statements(line_of({"weights[0]", "·", "V[0]", "=", "context[0]"})).size(), 1u);
}

TEST(SlidePages, WhatFitsReadablyIsOnePage) {
  const std::vector<SlideGroup> two(2, SlideGroup{{matrix_box(8, 8)}});
  const auto pages = page_groups(two, SlideArea{0, 0, 1200, 700}, 22.0f);
  ASSERT_EQ(pages.size(), 1u);
  EXPECT_EQ(pages[0], (std::vector<int>{0, 1}));
}

TEST(SlidePages, TooMuchForOneScreenGoesOnPagesInOrderEachReadable) {
  const std::vector<SlideGroup> many(6, SlideGroup{{matrix_box(8, 16)}});
  const SlideArea area{0, 0, 1000, 600};
  const auto pages = page_groups(many, area, 22.0f);
  ASSERT_GT(pages.size(), 1u);
  int next = 0;
  for (const auto& page : pages) {
    std::vector<SlideGroup> shown;
    for (const int g : page) EXPECT_EQ(g, next++), shown.push_back(many[static_cast<std::size_t>(g)]);
    const auto l = layout_slide(shown, area);
    EXPECT_TRUE(l.fits);
    EXPECT_GE(l.cell, 22.0f);
  }
  EXPECT_EQ(next, 6);
}

TEST(SlidePages, AGroupTooBigForAnyPageStillGetsOneOfItsOwn) {
  const std::vector<SlideGroup> groups{SlideGroup{{matrix_box(4, 4)}}, SlideGroup{{matrix_box(64, 64)}},
                                       SlideGroup{{matrix_box(4, 4)}}};
  const auto pages = page_groups(groups, SlideArea{0, 0, 800, 600}, 22.0f);
  ASSERT_EQ(pages.size(), 3u);
  EXPECT_EQ(pages[1], (std::vector<int>{1}));
}

TEST(SlidePages, ALesserBoxTakesItsShareOfTheCellSize) {
  SlideBox small = matrix_box(8, 8);
  small.cell_scale = 0.5f;
  const auto l = layout_slide({SlideGroup{{matrix_box(8, 8), operator_box(20), small}}}, SlideArea{0, 0, 2000, 2000});
  ASSERT_EQ(l.boxes.size(), 3u);
  EXPECT_FLOAT_EQ(l.boxes[2].cell, 0.5f * l.boxes[0].cell);
  EXPECT_FLOAT_EQ(l.boxes[2].h, 40 + 8 * 0.5f * l.cell + 30);
}

TEST(SlideEquations, WithOneHeadTheWholeMatrixAndTheHeadsBlockLayOutAlike) {
  // One head: Q and Q[0] are one matrix; either name gives the equation, in the name given.
  const Scenario s = preset("fat-cat");
  ASSERT_EQ(s.heads, 1);
  EXPECT_EQ(equation_text(slide_equations(s, ids({"Q[0]", "K[0]", "scores[0]"}))), "Q[0] · K[0]ᵀ = scores[0]\n");
  EXPECT_EQ(equation_text(slide_equations(s, ids({"Q", "K", "scores[0]"}))), "Q · Kᵀ = scores[0]\n");
  EXPECT_EQ(equation_text(slide_equations(s, ids({"weights[0]", "V", "context[0]"}))), "weights[0] · V = context[0]\n");
  // The whole matrix stays the result of its projection when the step shows that.
  EXPECT_EQ(equation_text(slide_equations(s, ids({"X", "W_q", "Q[0]"}))), "X · W_q = Q[0]\n");
  // A block alone is not split from a matrix it equals.
  EXPECT_EQ(equation_text(slide_equations(s, ids({"V[0]"}))), "V[0]\n");
}

TEST(SlideLayout, BalancedRowsNeverPutATallerBoxWhereItNoLongerFits) {
  // "S₀ ÷ √64 = S′₀ → … → Ŝ₀" (Ŝ₀ at half size) in two rows: S₀ and S′₀ on
  // the first fit; S′₀ moved to the second to balance the widths would not.
  SlideBox m;
  m.fixed_w = 91, m.cells_w = 8, m.above = 60, m.cells_h = 8, m.below = 7;
  SlideBox lesser = m;
  lesser.fixed_w = 0, lesser.above = 32, lesser.cell_scale = 0.5f;
  SlideBox op1 = operator_box(155), op2 = operator_box(115.5f);
  op1.above = op1.below = op2.above = op2.below = 18.9f;
  SlideSpacing sp;
  sp.box_gap = 7, sp.group_gap = 42, sp.row_gap = 14, sp.max_cell = 70;
  const SlideArea area{0, 0, 998, 494};
  const SlideLayout l = layout_slide({SlideGroup{{m, op1, m, op2, lesser}}}, area, sp);
  ASSERT_TRUE(l.fits);
  for (const PlacedBox& p : l.boxes) EXPECT_TRUE(inside(p, area)) << p.box << " at " << p.y << " + " << p.h;
}
