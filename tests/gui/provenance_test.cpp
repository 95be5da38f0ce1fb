// Hovering a cell lights the cells it is made from, one level up: exactly the
// operands the engine multiplies, adds or normalises.

#include "logic/provenance.h"
#include "gui_test_support.h"

#include "attention_lab/presets.h"
#include "attention_lab/stage_info.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
#include <vector>

using namespace attention_lab;
using namespace attention_lab::gui;
using namespace attention_lab::gui_test;

namespace attention_lab {
std::ostream& operator<<(std::ostream& os, const CellSource& l) {
  return os << to_string(l.stage) << " row " << l.row << " col " << l.col << " cell " << l.cell_row << ","
            << l.cell_col;
}
}  // namespace attention_lab

namespace {



Lit row(StageId id, int r) { return {id, r, -1, -1, -1}; }
Lit col(StageId id, int c) { return {id, -1, c, -1, -1}; }
Lit cell(StageId id, int r, int c) { return {id, -1, -1, r, c}; }

}  // namespace

TEST(Provenance, AScoreLightsItsQueryRowAndItsKeyRow) {
  const Scenario s = preset("multi-head");
  EXPECT_EQ(provenance(s, head(StageKind::Scores, 2), 5, 3),
            (std::vector<Lit>{row(head(StageKind::HeadQ, 2), 5), row(head(StageKind::HeadK, 2), 3)}));
}

TEST(Provenance, AScaledScoreLightsItsScore) {
  const Scenario s = preset("fat-cat");
  EXPECT_EQ(provenance(s, head(StageKind::Scaled, 0), 4, 2), (std::vector<Lit>{cell(head(StageKind::Scores, 0), 4, 2)}));
}

TEST(Provenance, AMaskedScoreLightsItsScaledScoreAndItsMaskCell) {
  const Scenario s = preset("fat-cat");
  EXPECT_EQ(provenance(s, head(StageKind::Masked, 0), 1, 3),
            (std::vector<Lit>{cell(head(StageKind::Scaled, 0), 1, 3), cell(in(StageKind::Mask), 1, 3)}));
}

TEST(Provenance, AWeightLightsTheWholeRowOfMaskedScoresItIsNormalisedOver) {
  const Scenario s = preset("multi-head");
  const auto lit = provenance(s, head(StageKind::Weights, 1), 6, 2);
  ASSERT_EQ(lit.size(), 1u);
  EXPECT_EQ(lit[0].stage, head(StageKind::Masked, 1));
  EXPECT_EQ(lit[0].row, 6);
  EXPECT_EQ(lit[0].col, -1);
  EXPECT_EQ(lit[0].cell_row, 6);  // its own score stands out within the row
  EXPECT_EQ(lit[0].cell_col, 2);
}

TEST(Provenance, AContextCellLightsAWeightRowAndAValueColumn) {
  const Scenario s = preset("multi-head");
  EXPECT_EQ(provenance(s, head(StageKind::Context, 3), 7, 1),
            (std::vector<Lit>{row(head(StageKind::Weights, 3), 7), col(head(StageKind::HeadV, 3), 1)}));
}

TEST(Provenance, AConcatCellLightsTheContextCellItCopies) {
  const Scenario s = preset("multi-head");  // d_v = 4
  EXPECT_EQ(provenance(s, in(StageKind::Concat), 2, 9), (std::vector<Lit>{cell(head(StageKind::Context, 2), 2, 1)}));
}

TEST(Provenance, AnOutputCellWithWoLightsAConcatRowAndAWoColumn) {
  const Scenario s = preset("multi-head");
  EXPECT_EQ(provenance(s, in(StageKind::Output), 4, 11),
            (std::vector<Lit>{row(in(StageKind::Concat), 4), col(in(StageKind::W_o), 11)}));
}

TEST(Provenance, AnOutputCellWithoutWoLightsOnlyItsConcatRow) {
  const Scenario s = preset("book");
  EXPECT_EQ(provenance(s, in(StageKind::Output), 1, 0), (std::vector<Lit>{row(in(StageKind::Concat), 1)}));
}

TEST(Provenance, AnOutputBiasLightsItsColumnsCell) {
  Scenario s = preset("multi-head");
  s.use_output_bias = true;
  EXPECT_EQ(provenance(s, in(StageKind::Output), 4, 11),
            (std::vector<Lit>{row(in(StageKind::Concat), 4), col(in(StageKind::W_o), 11), cell(in(StageKind::b_o), 0, 11)}));
}

TEST(Provenance, AProjectionLightsAnEmbeddingRowAndAWeightColumn) {
  const Scenario s = preset("fat-cat");
  EXPECT_EQ(provenance(s, in(StageKind::K), 3, 2), (std::vector<Lit>{row(in(StageKind::X), 3), col(in(StageKind::W_k), 2)}));
  const Scenario biased = preset("naive");
  EXPECT_EQ(provenance(biased, in(StageKind::V), 3, 2),
            (std::vector<Lit>{row(in(StageKind::X), 3), col(in(StageKind::W_v), 2), cell(in(StageKind::b_v), 0, 2)}));
}

TEST(Provenance, AHeadsQueryViewLightsTheColumnOfTheWholeWeightMatrix) {
  const Scenario s = preset("multi-head");  // d_k = 4: head 1's column 3 is column 7
  EXPECT_EQ(provenance(s, head(StageKind::HeadQ, 1), 5, 3),
            (std::vector<Lit>{row(in(StageKind::X), 5), col(in(StageKind::W_q), 7), cell(in(StageKind::Q), 5, 7)}));
}

TEST(Provenance, InputsAreMadeFromNothing) {
  for (const char* name : {"fat-cat", "naive", "multi-head"}) {
    Scenario s = preset(name);
    s.use_bias = s.use_w_o = s.use_output_bias = true;
    for (int k = 0; k < kStageKindCount; ++k) {
      const auto kind = static_cast<StageKind>(k);
      if (!is_input(kind)) continue;
      EXPECT_TRUE(provenance(s, in(kind), 0, 0).empty()) << name << " " << kind_name(kind);
    }
  }
}

TEST(Provenance, EveryLitStageIsAnInputOfTheHoveredStage) {
  // One level up: what lights up is what describe_stage says the stage is made from
  // (a head's Q/K/V view also lights the cell of Q/K/V it shows).
  for (const char* name : {"fat-cat", "naive", "multi-head"}) {
    const Scenario s = preset(name);
    for (const StageId id : pipeline(s)) {
      if (is_input(id.kind)) continue;
      const StageInfo info = describe_stage(s, id);
      for (const Lit& l : provenance(s, id, 0, 0)) {
        const bool is_input_of = std::find(info.inputs.begin(), info.inputs.end(), l.stage) != info.inputs.end();
        const bool projection_source = l.stage == in(StageKind::X) ||
                                       (is_input(l.stage.kind) && id.kind >= StageKind::Q && id.kind <= StageKind::HeadV);
        EXPECT_TRUE(is_input_of || projection_source) << name << ": " << to_string(id) << " lights " << l;
      }
    }
  }
}
