// A teacher's letters for our symbols: the book's ω, α and z on the slide.

#include "attention_lab/document.h"
#include "attention_lab/lesson.h"
#include "attention_lab/presets.h"
#include "attention_lab/scenario_io.h"
#include "attention_lab/stage_info.h"
#include "attention_lab/symbol_names.h"

#include <gtest/gtest.h>

using namespace attention_lab;

namespace {

const SymbolNames kBook = {{"S", "ω"}, {"A", "α"}, {"C", "z"}};

}  // namespace

TEST(SymbolNames, RenamesSymbolsWhereTheyStandAsSymbols) {
  EXPECT_EQ(rename_symbols("S₀", kBook), "ω₀");
  EXPECT_EQ(rename_symbols("S′₀ = S₀ / √d_k", kBook), "ω′₀ = ω₀ / √d_k");
  EXPECT_EQ(rename_symbols("C₀ = A₀·V₀", kBook), "z₀ = α₀·V₀");
  EXPECT_EQ(rename_symbols("C = [C₀, C₁]", kBook), "z = [z₀, z₁]");
  EXPECT_EQ(rename_symbols("Σⱼ A₀[6,j] × V₀[j,1]", kBook), "Σⱼ α₀[6,j] × V₀[j,1]");
  // Not inside a word, a stage id or a quoted token, and Ŝ is a symbol of its own.
  EXPECT_EQ(rename_symbols("Softmax of Scores", kBook), "Softmax of Scores");
  EXPECT_EQ(rename_symbols("W_q · SA · AS", kBook), "W_q · SA · AS");
  EXPECT_EQ(rename_symbols("S₀[2,1]  ('A' → 'C')", kBook), "ω₀[2,1]  ('A' → 'C')");
  EXPECT_EQ(rename_symbols("Ŝ₀ = S′₀ + mask", kBook), "Ŝ₀ = ω′₀ + mask");
  EXPECT_EQ(rename_symbols("Ŝ₀", {{"Ŝ", "ω̂"}}), "ω̂₀");
  EXPECT_EQ(rename_symbols("S₀", {}), "S₀");
}

TEST(SymbolNames, OnlyOurBaseSymbolsShortAndOnOneLine) {
  EXPECT_EQ(check_symbol_names(kBook, "symbols"), "");
  EXPECT_EQ(check_symbol_names({{"W", "w"}}, "symbols"),
            "symbols.W: expected one of X, Q, K, V, S, Ŝ, A, C, O, M, B, found \"W\"");
  EXPECT_EQ(check_symbol_names({{"S", ""}}, "symbols"), "symbols.S: expected a short symbol without spaces (\"ω\"), found \"\"");
  EXPECT_EQ(check_symbol_names({{"S", "o m"}}, "symbols"),
            "symbols.S: expected a short symbol without spaces (\"ω\"), found \"o m\"");
}

TEST(SymbolNames, AScenarioShowsItsLettersInSymbolsAndFormulas) {
  Scenario s = *make_preset("fat-cat");
  s.symbols = kBook;
  const StageInfo scores = describe_stage(s, StageId::of_head(StageKind::Scores, 0));
  EXPECT_EQ(scores.symbol, "ω₀");
  const StageInfo context = describe_stage(s, StageId::of_head(StageKind::Context, 0));
  EXPECT_EQ(context.symbol, "z₀");
  EXPECT_EQ(context.formula, "z₀ = α₀·V₀");
  // The explanation is prose, in our words.
  EXPECT_EQ(context.explanation, describe_stage(*make_preset("fat-cat"), StageId::of_head(StageKind::Context, 0)).explanation);
}

TEST(SymbolNames, AScenarioFileKeepsItsLetters) {
  Scenario s = *make_preset("fat-cat");
  s.symbols = kBook;
  const std::string text = scenario_to_json(s);
  EXPECT_NE(text.find("\"symbols\": {\"A\": \"α\", \"C\": \"z\", \"S\": \"ω\"}"), std::string::npos) << text;
  const LoadResult back = parse_scenario(text);
  ASSERT_TRUE(back.scenario) << back.error;
  EXPECT_EQ(back.scenario->symbols, kBook);
  // A symbol we do not have is refused by name.
  std::string wrong = text;
  const std::string alpha = "\"A\": \"α\"";
  wrong.replace(wrong.find(alpha), alpha.size(), "\"W\": \"w\"");
  const LoadResult bad = parse_scenario(wrong);
  EXPECT_FALSE(bad.scenario);
  EXPECT_NE(bad.error.find("symbols.W: expected one of"), std::string::npos) << bad.error;
}

TEST(SymbolNames, ALessonsLettersHoldForEveryStep) {
  const LoadedLesson l = parse_lesson(R"({"format": "attention-lab/lesson@1", "title": "Book", "preset": "fat-cat",
    "symbols": {"S": "ω", "A": "α", "C": "z"},
    "steps": [{"title": "One", "text": "a"}, {"title": "Two", "text": "b", "apply": [{"mask": "none"}]}]})",
                                      ".");
  ASSERT_TRUE(l.lesson) << l.error;
  for (int step = 0; step < 2; ++step)
    EXPECT_EQ(describe_stage(scenario_at_step(*l.lesson, step), StageId::of_head(StageKind::Weights, 0)).symbol, "α₀") << step;
  const LoadedLesson bad = parse_lesson(R"({"format": "attention-lab/lesson@1", "title": "Book", "preset": "fat-cat",
    "symbols": {"S": 1}, "steps": [{"title": "One", "text": "a"}]})",
                                        ".");
  EXPECT_EQ(bad.error, "symbols.S: expected a string, found number");
}
