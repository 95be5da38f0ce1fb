// Stage descriptions agree with what the engine computes: shapes, labels,
// inputs and the order of the pipeline.

#include "attention_lab/engine.h"
#include "attention_lab/stage_info.h"

#include "test_support.h"
#include "unit_support.h"

#include <algorithm>

using namespace attention_lab;

namespace {

std::vector<Scenario> scenarios() {
  std::vector<Scenario> out;
  for (const auto& p : presets()) out.push_back(*make_preset(p.name));
  attention_lab::test::RandomOptions o;
  o.heads = 3, o.bias = true, o.w_o = true, o.b_o = true, o.d_out = 7;
  out.push_back(attention_lab::test::random_scenario(5, o));
  return out;
}

}  // namespace

TEST(StageInfo, ShapesAndLabelsMatchTheComputedStages) {
  for (const Scenario& s : scenarios()) {
    Engine e;
    e.recompute_all(s);
    for (const StageId id : pipeline(s)) {
      const StageInfo info = describe_stage(s, id);
      const auto m = e.stage(id);
      EXPECT_EQ(info.rows, m.rows()) << s.title << ": " << to_string(id);
      EXPECT_EQ(info.cols, m.cols()) << s.title << ": " << to_string(id);
      EXPECT_EQ(info.row_labels.size(), static_cast<std::size_t>(info.rows)) << to_string(id);
      EXPECT_EQ(info.col_labels.size(), static_cast<std::size_t>(info.cols)) << to_string(id);
      EXPECT_EQ(info.id, id);
      EXPECT_EQ(info.id_text, to_string(id));
      EXPECT_FALSE(info.name.empty()) << to_string(id);
      EXPECT_FALSE(info.symbol.empty()) << to_string(id);
      EXPECT_FALSE(info.formula.empty()) << to_string(id);
      EXPECT_FALSE(info.explanation.empty()) << to_string(id);
      EXPECT_TRUE(info.active) << to_string(id) << " is in the pipeline, so it is used";
    }
  }
}

TEST(StageInfo, EveryInputOfAStageComesEarlierInThePipeline) {
  for (const Scenario& s : scenarios()) {
    const auto order = pipeline(s);
    for (std::size_t i = 0; i < order.size(); ++i)
      for (const StageId input : describe_stage(s, order[i]).inputs) {
        const auto at = std::find(order.begin(), order.end(), input);
        ASSERT_NE(at, order.end()) << to_string(order[i]) << " reads " << to_string(input);
        EXPECT_LT(static_cast<std::size_t>(at - order.begin()), i) << to_string(order[i]) << " reads " << to_string(input);
      }
  }
}

TEST(StageInfo, PipelineListsEachStageOnceInTheOrderOfTheMath) {
  const Scenario s = attention_lab::test::preset("multi-head");
  const auto order = pipeline(s);
  auto sorted = order;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
  EXPECT_EQ(order.front(), StageId::input(StageKind::X));
  EXPECT_EQ(order.back(), StageId::input(StageKind::Output));
  // 3 projections + W's + X + mask, 8 stages per head, concat, W_o, output
  EXPECT_EQ(order.size(), 8u + 4u * 8u + 3u);
  EXPECT_EQ(std::count(order.begin(), order.end(), StageId::input(StageKind::b_q)), 0);
}

TEST(StageInfo, UnusedInputsAreLeftOutOfThePipelineAndMarkedInactive) {
  const Scenario s = attention_lab::test::preset("book");
  const auto order = pipeline(s);
  for (auto k : {StageKind::b_q, StageKind::b_k, StageKind::b_v, StageKind::W_o, StageKind::b_o}) {
    EXPECT_EQ(std::count(order.begin(), order.end(), StageId::input(k)), 0) << kind_name(k);
    EXPECT_FALSE(describe_stage(s, StageId::input(k)).active) << kind_name(k);
  }
  const Scenario naive = attention_lab::test::preset("naive");
  EXPECT_TRUE(describe_stage(naive, StageId::input(StageKind::b_q)).active);
  const auto q = describe_stage(naive, StageId::input(StageKind::Q));
  EXPECT_EQ(q.formula, "Q = X·W_q + b_q");
  EXPECT_EQ(q.inputs.size(), 3u);
}

TEST(StageInfo, RowsOfTokenStagesAreLabelledWithTheTokens) {
  const Scenario s = attention_lab::test::preset("book");
  const auto w = describe_stage(s, StageId::of_head(StageKind::Weights, 0));
  EXPECT_EQ(w.row_labels[1], "journey");
  EXPECT_EQ(w.col_labels[5], "step");
  EXPECT_EQ(w.domain, ValueDomain::Probability);
  EXPECT_EQ(w.editability, Editability::PinCells);
  const auto x = describe_stage(s, StageId::input(StageKind::X));
  EXPECT_EQ(x.editability, Editability::EditCells);
  EXPECT_EQ(x.col_labels, (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_EQ(describe_stage(s, StageId::input(StageKind::Mask)).domain, ValueDomain::Binary);
}

TEST(StageInfo, FeatureNamesLabelTheColumnsOfXAndTheRowsOfTheWeights) {
  Scenario s = attention_lab::test::preset("book");
  s.features = {"size", "", "colour"};
  const std::vector<std::string> names = {"size", "1", "colour"};
  EXPECT_EQ(describe_stage(s, StageId::input(StageKind::X)).col_labels, names);
  for (StageKind k : {StageKind::W_q, StageKind::W_k, StageKind::W_v})
    EXPECT_EQ(describe_stage(s, StageId::input(k)).row_labels, names) << kind_name(k);
  EXPECT_EQ(describe_stage(s, StageId::input(StageKind::X)).col_label_kind, LabelKind::Feature);
  EXPECT_EQ(describe_stage(s, StageId::input(StageKind::W_k)).row_label_kind, LabelKind::Feature);
  // Q's columns are projections, not features: they keep their indices.
  const auto q = describe_stage(s, StageId::input(StageKind::Q));
  EXPECT_EQ(q.col_labels.front(), "0");
  EXPECT_EQ(q.col_label_kind, LabelKind::Index);
  EXPECT_EQ(q.row_label_kind, LabelKind::Token);
}

TEST(StageInfo, EveryLabelSaysWhetherItNamesATokenAFeatureOrAnIndex) {
  const Scenario s = attention_lab::test::preset("book");
  for (const StageId id : pipeline(s)) {
    const auto info = describe_stage(s, id);
    const bool t_by_t = info.rows == s.T() && info.cols == s.T() && id.kind != StageKind::X;
    if (id.kind == StageKind::X || id.kind == StageKind::W_q || id.kind == StageKind::W_k || id.kind == StageKind::W_v) {
      EXPECT_EQ(id.kind == StageKind::X ? info.col_label_kind : info.row_label_kind, LabelKind::Feature) << to_string(id);
    }
    if (t_by_t) {
      EXPECT_EQ(info.col_label_kind, LabelKind::Token) << to_string(id);
    }
    // whatever names a token shows its label
    for (std::size_t r = 0; r < info.row_labels.size(); ++r) {
      if (info.row_label_kind == LabelKind::Token) {
        EXPECT_EQ(info.row_labels[r], s.token_label(static_cast<int>(r)));
      }
    }
  }
}

TEST(StageInfo, HeadViewsAreLabelledWithTheirColumnsOfTheWholeMatrix) {
  const Scenario s = attention_lab::test::preset("multi-head");  // d_k = 4
  const auto q2 = describe_stage(s, StageId::of_head(StageKind::HeadQ, 2));
  EXPECT_EQ(q2.col_labels.front(), "8");
  EXPECT_EQ(q2.col_labels.back(), "11");
  EXPECT_EQ(q2.formula, "Q₂ = Q[:, 8…11]");
  EXPECT_EQ(q2.name, "Queries (head 2)");
}

TEST(StageInfo, FormulasFollowTheSettings) {
  Scenario s = attention_lab::test::preset("book");  // d_k = 2
  // "<symbol> = <right-hand side>", whatever symbol the scaled scores get
  const auto scaled = [&] {
    const StageInfo info = describe_stage(s, StageId::of_head(StageKind::Scaled, 0));
    EXPECT_EQ(info.formula.rfind(info.symbol + " = ", 0), 0u) << info.formula;
    return info.formula.substr(info.symbol.size());
  };
  EXPECT_EQ(scaled(), " = S₀ / √2");
  s.temperature = 0.5f;
  EXPECT_EQ(scaled(), " = S₀ / √2 / τ");
  s.scale = false;
  s.temperature = 1.0f;
  EXPECT_EQ(scaled(), " = S₀");
  EXPECT_EQ(describe_stage(s, StageId::input(StageKind::Output)).formula, "O = C");
  const Scenario m = attention_lab::test::preset("multi-head");
  EXPECT_EQ(describe_stage(m, StageId::input(StageKind::Concat)).formula, "C = [C₀, C₁, C₂, C₃]");
  EXPECT_EQ(describe_stage(m, StageId::input(StageKind::Output)).formula, "O = C·W_o");
  // one head: no "(head 0)" noise in names
  EXPECT_EQ(describe_stage(s, StageId::of_head(StageKind::Scores, 0)).name, "Attention scores");
}

TEST(StageInfo, SubscriptsUseUnicodeDigits) {
  EXPECT_EQ(subscript(0), "₀");
  EXPECT_EQ(subscript(12), "₁₂");
  EXPECT_EQ(subscript(-3), "₋₃");
}
