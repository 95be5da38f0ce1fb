// The pipeline panel's equations: every computed stage of the focused head
// is the result of exactly one equation, with the right operands and operators.

#include "logic/pipeline_layout.h"

#include "attention_lab/presets.h"
#include "attention_lab/stage_info.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

using namespace attention_lab;
using namespace attention_lab::gui;

namespace {

Scenario preset(const char* name) { return *make_preset(name); }

StageId head(StageKind k, int h) { return StageId::of_head(k, h); }

// "Q[0] · K[0]ᵀ = scores[0] ÷ √4  = scaled[0] …": matrices by id, operators as drawn.
std::string text(const EquationLine& line) {
  std::string s;
  for (const Term& t : line.terms) {
    if (!s.empty()) s += ' ';
    s += t.kind == Term::Kind::Matrix ? to_string(t.stage) + (t.transposed ? "ᵀ" : "") : t.text;
  }
  return s;
}

std::string text(const std::vector<EquationLine>& lines) {
  std::string s;
  for (const auto& line : lines) s += text(line) + "\n";
  return s;
}

bool has_line_containing(const std::vector<EquationLine>& lines, const std::string& part) {
  return std::any_of(lines.begin(), lines.end(), [&](const auto& l) { return text(l).find(part) != std::string::npos; });
}

// A matrix is a result when the operator before it ends an expression ("=", "softmax →").
bool ends_expression(const Term& t) {
  return t.kind == Term::Kind::Operator &&
         (t.text.ends_with("=") || t.text.find("softmax") != std::string::npos);
}

std::map<StageId, int> result_counts(const std::vector<EquationLine>& lines) {
  std::map<StageId, int> out;
  for (const auto& line : lines)
    for (std::size_t i = 1; i < line.terms.size(); ++i)
      if (line.terms[i].kind == Term::Kind::Matrix && ends_expression(line.terms[i - 1])) ++out[line.terms[i].stage];
  return out;
}

// The computed stages the panel shows for head `h`: the layer's and the head's own,
// except the per-head Q/K/V views, which are operands of the scores and the context.
std::vector<StageId> expected_results(const Scenario& s, int h) {
  std::vector<StageId> out;
  for (const StageId id : pipeline(s)) {
    if (is_input(id.kind)) continue;
    if (id.kind == StageKind::HeadQ || id.kind == StageKind::HeadK || id.kind == StageKind::HeadV) continue;
    if (is_per_head(id.kind) && id.head != h) continue;
    if (id.kind == StageKind::Concat && s.heads == 1) continue;  // one head's concat is its context
    out.push_back(id);
  }
  return out;
}

}  // namespace

TEST(PipelineLayout, TheFatCatProjectionsAreXTimesTheirWeights) {
  const auto lines = pipeline_equations(preset("fat-cat"), 0);
  EXPECT_TRUE(has_line_containing(lines, "X · W_q = Q")) << text(lines);
  EXPECT_TRUE(has_line_containing(lines, "X · W_k = K")) << text(lines);
  EXPECT_TRUE(has_line_containing(lines, "X · W_v = V")) << text(lines);
}

TEST(PipelineLayout, TheFatCatHeadIsOneChainFromScoresToOutput) {
  const auto lines = pipeline_equations(preset("fat-cat"), 0);
  EXPECT_TRUE(has_line_containing(lines,
                                  "Q[0] · K[0]ᵀ = scores[0] ÷ √4  = scaled[0] + mask mask = masked[0] softmax → "
                                  "weights[0] · V[0] = context[0] (no W_o)  = output"))
      << text(lines);
}

TEST(PipelineLayout, TheScoresTermUsesKTransposedAndNothingElseIsTransposed) {
  for (const char* name : {"fat-cat", "book", "naive", "multi-head"}) {
    const Scenario s = preset(name);
    for (int h = 0; h < s.heads; ++h) {
      int transposed = 0;
      for (const auto& line : pipeline_equations(s, h))
        for (const Term& t : line.terms)
          if (t.transposed) {
            ++transposed;
            EXPECT_EQ(t.stage, head(StageKind::HeadK, h)) << name;
            EXPECT_EQ(t.kind, Term::Kind::Matrix);
          }
      EXPECT_EQ(transposed, 1) << name << " head " << h;
    }
  }
}

TEST(PipelineLayout, BiasesAreAddedToTheProjectionsWhenOn) {
  const auto lines = pipeline_equations(preset("naive"), 0);
  EXPECT_TRUE(has_line_containing(lines, "X · W_q + b_q = Q")) << text(lines);
  EXPECT_TRUE(has_line_containing(lines, "X · W_k + b_k = K")) << text(lines);
  EXPECT_TRUE(has_line_containing(lines, "X · W_v + b_v = V")) << text(lines);
}

TEST(PipelineLayout, EveryComputedStageOfTheFocusedHeadIsTheResultOfExactlyOneEquation) {
  for (const char* name : {"fat-cat", "book", "naive", "multi-head"}) {
    const Scenario s = preset(name);
    for (int h = 0; h < s.heads; ++h) {
      const auto lines = pipeline_equations(s, h);
      const auto results = result_counts(lines);
      const auto expected = expected_results(s, h);
      for (const StageId id : expected) {
        const auto it = results.find(id);
        EXPECT_TRUE(it != results.end() && it->second == 1)
            << name << " head " << h << ": " << to_string(id) << " is a result "
            << (it == results.end() ? 0 : it->second) << " times\n" << text(lines);
      }
      EXPECT_EQ(results.size(), expected.size()) << name << " head " << h << "\n" << text(lines);
    }
  }
}

TEST(PipelineLayout, NoOtherHeadAppearsExceptAsAPartOfTheConcatenation) {
  const Scenario s = preset("multi-head");
  for (int h = 0; h < s.heads; ++h) {
    const auto lines = pipeline_equations(s, h);
    for (const auto& line : lines) {
      const bool is_concat = std::any_of(line.terms.begin(), line.terms.end(), [](const Term& t) {
        return t.kind == Term::Kind::Matrix && t.stage.kind == StageKind::Concat;
      });
      for (std::size_t i = 0; i < line.terms.size(); ++i) {
        const Term& t = line.terms[i];
        if (t.kind != Term::Kind::Matrix || !is_per_head(t.stage.kind) || t.stage.head == h) continue;
        // concat = [C₀ | C₁ | C₂ | C₃] needs every head's context, and only as its operands
        EXPECT_TRUE(is_concat && t.stage.kind == StageKind::Context) << "head " << h << ": " << text(line);
        EXPECT_TRUE(i == 0 || line.terms[i - 1].text == "|") << "head " << h << ": " << text(line);
      }
    }
  }
}

TEST(PipelineLayout, TheFocusedHeadsChainUsesOnlyItsOwnStages) {
  const auto lines = pipeline_equations(preset("multi-head"), 2);
  EXPECT_TRUE(has_line_containing(lines,
                                  "Q[2] · K[2]ᵀ = scores[2] ÷ √4  = scaled[2] + mask mask = masked[2] softmax → "
                                  "weights[2] · V[2] = context[2]"))
      << text(lines);
}

TEST(PipelineLayout, MultiHeadConcatenatesEveryHeadAndProjectsWithWo) {
  for (int h = 0; h < 4; ++h) {
    const auto lines = pipeline_equations(preset("multi-head"), h);
    EXPECT_TRUE(has_line_containing(lines,
                                    "context[0] | context[1] | context[2] | context[3] = concat · W_o = output"))
        << "head " << h << "\n" << text(lines);
  }
}

TEST(PipelineLayout, AScenarioWithoutScalingSaysTimesOne) {
  Scenario s = preset("book");
  s.scale = false;
  EXPECT_TRUE(has_line_containing(pipeline_equations(s, 0), "scores[0] × 1  = scaled[0]"));
  s.temperature = 0.5f;
  EXPECT_TRUE(has_line_containing(pipeline_equations(s, 0), "scores[0] ÷ τ=0.5  = scaled[0]"))
      << text(pipeline_equations(s, 0));
}

TEST(PipelineLayout, OutputBiasIsAddedAfterTheProjection) {
  Scenario s = preset("multi-head");
  s.use_output_bias = true;
  s.b_o = Matrix::Zero(1, 16);
  EXPECT_TRUE(has_line_containing(pipeline_equations(s, 0), "concat · W_o + b_o = output"))
      << text(pipeline_equations(s, 0));
}
