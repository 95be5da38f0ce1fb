// Cell addresses: their text, and whether a stage or cell exists in a scenario.

#include "attention_lab/cell_ref.h"
#include "attention_lab/edit.h"
#include "attention_lab/stage_info.h"

#include "test_support.h"

using namespace attention_lab;
using attention_lab::test::preset;

TEST(CellRef, ReadsAsTheStageIdThenRowThenColumn) {
  EXPECT_EQ(to_string(CellRef{StageId::of_head(StageKind::Weights, 0), 2, 1}), "weights[0][2][1]");
  EXPECT_EQ(to_string(CellRef{StageId::input(StageKind::X), 6, 3}), "X[6][3]");
}

TEST(CellRef, EveryStageOfThePipelineExists) {
  for (const char* name : {"fat-cat", "book", "naive", "multi-head"}) {
    const Scenario s = preset(name);
    for (const StageId id : pipeline(s)) EXPECT_EQ(stage_problem(s, id), "") << name << " " << to_string(id);
  }
}

TEST(CellRef, AHeadBeyondTheLastIsNamedWithTheHeadCount) {
  EXPECT_EQ(stage_problem(preset("fat-cat"), StageId::of_head(StageKind::Weights, 1)),
            "weights[1]: the scenario has 1 head, so the only head is 0");
  EXPECT_EQ(stage_problem(preset("multi-head"), StageId::of_head(StageKind::Scores, 4)),
            "scores[4]: the scenario has 4 heads, numbered 0 to 3");
}

TEST(CellRef, InputsThatAreTurnedOffDoNotExist) {
  const Scenario s = preset("fat-cat");  // no biases, no W_o
  EXPECT_EQ(stage_problem(s, StageId::input(StageKind::b_q)), "b_q: the biases are off in this scenario");
  EXPECT_EQ(stage_problem(s, StageId::input(StageKind::W_o)),
            "W_o: the output projection W_o is off in this scenario");
  EXPECT_EQ(stage_problem(s, StageId::input(StageKind::b_o)), "b_o: the output bias b_o is off in this scenario");
  EXPECT_EQ(stage_shape(s, StageId::input(StageKind::W_o)).rows, 0);
}

TEST(CellRef, ShapesFollowTheScenario) {
  const Scenario s = preset("multi-head");  // T 8, d_model 16, 4 heads of 4, W_o 16 x 16
  EXPECT_EQ(stage_shape(s, StageId::of_head(StageKind::HeadQ, 1)).rows, 8);
  EXPECT_EQ(stage_shape(s, StageId::of_head(StageKind::HeadQ, 1)).cols, 4);
  EXPECT_EQ(stage_shape(s, StageId::input(StageKind::Concat)).cols, 16);
  EXPECT_EQ(stage_shape(s, StageId::input(StageKind::W_o)).rows, 16);
  EXPECT_EQ(stage_shape(s, StageId::of_head(StageKind::Weights, 3)).cols, 8);
}

TEST(CellRef, ACellOutsideItsStageIsNamedWithTheShape) {
  const Scenario s = preset("fat-cat");
  const StageId w = StageId::of_head(StageKind::Weights, 0);
  EXPECT_EQ(cell_problem(s, CellRef{w, 6, 6}), "");
  EXPECT_EQ(cell_problem(s, CellRef{w, 7, 0}), "weights[0][7][0]: expected a cell within 7 x 7, found row 7, column 0");
  EXPECT_EQ(cell_problem(s, CellRef{w, 0, -1}), "weights[0][0][-1]: expected a cell within 7 x 7, found row 0, column -1");
  EXPECT_EQ(cell_problem(s, CellRef{StageId::of_head(StageKind::Weights, 2), 0, 0}),
            "weights[2]: the scenario has 1 head, so the only head is 0");
}
