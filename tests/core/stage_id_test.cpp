// Stage names: every stage prints and parses back; nonsense parses to nothing.

#include "attention_lab/stage_id.h"

#include <gtest/gtest.h>

using namespace attention_lab;

TEST(StageId, EveryStagePrintsAndParsesBack) {
  for (int k = 0; k < kStageKindCount; ++k) {
    const auto kind = static_cast<StageKind>(k);
    for (int h : {0, 1, 15}) {
      const StageId id = is_per_head(kind) ? StageId::of_head(kind, h) : StageId::input(kind);
      const auto back = parse_stage_id(to_string(id));
      ASSERT_TRUE(back) << to_string(id);
      EXPECT_EQ(*back, id) << to_string(id);
    }
  }
}

TEST(StageId, NamesReadLikeTheMath) {
  EXPECT_EQ(to_string(StageId::input(StageKind::X)), "X");
  EXPECT_EQ(to_string(StageId::input(StageKind::Mask)), "mask");
  EXPECT_EQ(to_string(StageId::input(StageKind::Q)), "Q");
  EXPECT_EQ(to_string(StageId::of_head(StageKind::HeadQ, 1)), "Q[1]");
  EXPECT_EQ(to_string(StageId::of_head(StageKind::Scores, 2)), "scores[2]");
  EXPECT_EQ(to_string(StageId::input(StageKind::Output)), "output");
}

TEST(StageId, WholeMatrixAndHeadViewAreDistinct) {
  EXPECT_EQ(parse_stage_id("Q")->kind, StageKind::Q);
  EXPECT_EQ(parse_stage_id("Q[3]")->kind, StageKind::HeadQ);
  EXPECT_EQ(parse_stage_id("Q[3]")->head, 3);
}

TEST(StageId, NonsenseParsesToNothing) {
  for (const char* text : {"", "x", "scores", "scores[", "scores[]", "scores[-1]", "scores[1", "scores[a]",
                           "scores[1]x", "X[0]", "output[0]", "[1]", "scores[99999999999]", "scores[ 1]",
                           "weights[1.5]", "]"})
    EXPECT_FALSE(parse_stage_id(text).has_value()) << "'" << text << "'";
}

TEST(StageId, InputsAndPerHeadKindsAreClassified) {
  EXPECT_TRUE(is_input(StageKind::X));
  EXPECT_TRUE(is_input(StageKind::Mask));
  EXPECT_FALSE(is_input(StageKind::Q));
  EXPECT_TRUE(is_per_head(StageKind::Scores));
  EXPECT_TRUE(is_per_head(StageKind::HeadV));
  EXPECT_FALSE(is_per_head(StageKind::Q));
  EXPECT_FALSE(is_per_head(StageKind::Concat));
}

TEST(StageId, LayersAndGradientsArePrefixesThatParseBack) {
  StageId id = StageId::of_head(StageKind::Weights, 3);
  id.layer = 5;
  EXPECT_EQ(to_string(id), "L5.weights[3]");
  EXPECT_EQ(parse_stage_id("L5.weights[3]"), id);
  id.role = Role::Gradient;
  EXPECT_EQ(to_string(id), "L5.grad.weights[3]");
  EXPECT_EQ(parse_stage_id("L5.grad.weights[3]"), id);
  id.layer = 0;
  EXPECT_EQ(to_string(id), "grad.weights[3]");
  EXPECT_EQ(parse_stage_id("grad.weights[3]"), id);
  for (int k = 0; k < kStageKindCount; ++k) {
    const auto kind = static_cast<StageKind>(k);
    StageId each = is_per_head(kind) ? StageId::of_head(kind, 2) : StageId::input(kind);
    each.layer = 11;
    each.role = Role::Gradient;
    EXPECT_EQ(parse_stage_id(to_string(each)), each) << to_string(each);
  }
}

TEST(StageId, MalformedLayerPrefixesParseToNothing) {
  for (const char* text : {"L0.weights[0]", "L.weights[0]", "L5weights[0]", "L5.", "L-1.weights[0]", "L5.L6.X",
                           "grad.", "grad.grad.X", "L5 .X", "l5.X", "L99999999999.X"})
    EXPECT_FALSE(parse_stage_id(text).has_value()) << "'" << text << "'";
}
