// Counting from 1, as the textbooks do: x₁ … x_T, heads 1 … h. Only what is
// shown counts from 1; stage ids and cell addresses in files count from 0.

#include "attention_lab/document.h"
#include "attention_lab/lesson.h"
#include "attention_lab/presets.h"
#include "attention_lab/quiz.h"
#include "attention_lab/scenario_io.h"
#include "attention_lab/stage_info.h"

#include <gtest/gtest.h>

using namespace attention_lab;

namespace {

Scenario counted_from(int base) {
  Scenario s = *make_preset("fat-cat");
  s.heads = 2;
  s.index_base = base;
  return s;
}

}  // namespace

TEST(IndexBase, SymbolsFormulasAndIndexLabelsCountFromTheBase) {
  const Scenario zero = counted_from(0), one = counted_from(1);
  const StageId context1 = StageId::of_head(StageKind::Context, 1);
  EXPECT_EQ(describe_stage(zero, context1).symbol, "C₁");
  EXPECT_EQ(describe_stage(one, context1).symbol, "C₂");
  EXPECT_EQ(describe_stage(one, context1).formula, "C₂ = A₂·V₂");
  EXPECT_NE(describe_stage(one, context1).name.find("(head 2)"), std::string::npos) << describe_stage(one, context1).name;
  EXPECT_EQ(describe_stage(one, StageId::input(StageKind::Concat)).formula, "C = [C₁, C₂]");
  // A head's slice of Q, as an inclusive range either way.
  const Dims d = one.dims();
  EXPECT_EQ(describe_stage(zero, StageId::of_head(StageKind::HeadQ, 1)).formula,
            "Q₁ = Q[:, " + std::to_string(d.d_k) + "…" + std::to_string(2 * d.d_k - 1) + "]");
  EXPECT_EQ(describe_stage(one, StageId::of_head(StageKind::HeadQ, 1)).formula,
            "Q₂ = Q[:, " + std::to_string(d.d_k + 1) + "…" + std::to_string(2 * d.d_k) + "]");
  // Columns numbered by index: W_q's columns 1 … h·d_k; tokens keep their words.
  const StageInfo wq = describe_stage(one, StageId::input(StageKind::W_q));
  ASSERT_FALSE(wq.col_labels.empty());
  EXPECT_EQ(wq.col_labels.front(), "1");
  EXPECT_EQ(wq.col_labels.back(), std::to_string(2 * d.d_k));
  EXPECT_EQ(describe_stage(one, StageId::of_head(StageKind::Weights, 0)).row_labels,
            describe_stage(zero, StageId::of_head(StageKind::Weights, 0)).row_labels);
  // A token without a word is named by its number as shown.
  Scenario unnamed = one;
  unnamed.tokens.clear();
  EXPECT_EQ(unnamed.token_label(0), "t1");
}

TEST(IndexBase, ACellIsWrittenAsShownButAddressedFromZero) {
  const Scenario one = counted_from(1);
  EXPECT_EQ(cell_symbol(one, StageId::of_head(StageKind::Weights, 0), 2, 1), "A₁[3,2]");
  EXPECT_EQ(cell_symbol(counted_from(0), StageId::of_head(StageKind::Weights, 0), 2, 1), "A₀[2,1]");
  // A quiz names the cell as shown; its address stays the file's.
  const Document doc(one);
  const auto q = make_question(doc, CellRef{StageId::of_head(StageKind::Weights, 0), 2, 1}, 0.01);
  ASSERT_TRUE(q);
  EXPECT_EQ(q->name, "A₁[3,2]");
  EXPECT_EQ(to_string(q->cell), "weights[0][2][1]");
}

TEST(IndexBase, AScenarioFileKeepsItAndRefusesAnythingButZeroOrOne) {
  const std::string text = scenario_to_json(counted_from(1));
  EXPECT_NE(text.find("\"index_base\": 1"), std::string::npos) << text;
  const LoadResult back = parse_scenario(text);
  ASSERT_TRUE(back.scenario) << back.error;
  EXPECT_EQ(back.scenario->index_base, 1);
  // 0 is the default and is not written.
  EXPECT_EQ(scenario_to_json(counted_from(0)).find("index_base"), std::string::npos);
  for (const char* bad : {"2", "-1", "0.5", "\"1\"", "true"}) {
    std::string wrong = text;
    wrong.replace(wrong.find("\"index_base\": 1"), 15, std::string("\"index_base\": ") + bad);
    const LoadResult r = parse_scenario(wrong);
    EXPECT_FALSE(r.scenario) << bad;
    EXPECT_NE(r.error.find("index_base: expected 0 (rows, columns and heads shown from 0, as in code) or 1"), std::string::npos)
        << r.error;
    EXPECT_NE(r.error.find(std::string("found ") + bad), std::string::npos) << r.error;
  }
}

TEST(IndexBase, ALessonCountsFromOneForEveryStep) {
  const LoadedLesson l = parse_lesson(R"({"format": "attention-lab/lesson@1", "title": "Book", "preset": "fat-cat",
    "index_base": 1,
    "steps": [{"title": "One", "text": "a", "quiz": {"stage": "weights[0]", "row": 2, "col": 1}},
              {"title": "Two", "text": "b", "apply": [{"heads": 2}]}]})",
                                      ".");
  ASSERT_TRUE(l.lesson) << l.error;
  EXPECT_EQ(describe_stage(scenario_at_step(*l.lesson, 0), StageId::of_head(StageKind::Weights, 0)).symbol, "A₁");
  EXPECT_EQ(describe_stage(scenario_at_step(*l.lesson, 1), StageId::of_head(StageKind::Weights, 1)).symbol, "A₂");
  const LoadedLesson bad = parse_lesson(R"({"format": "attention-lab/lesson@1", "title": "Book", "preset": "fat-cat",
    "index_base": 3, "steps": [{"title": "One", "text": "a"}]})",
                                        ".");
  EXPECT_EQ(bad.error,
            "index_base: expected 0 (rows, columns and heads shown from 0, as in code) or 1 (from 1, as in most textbooks), found 3");
}
