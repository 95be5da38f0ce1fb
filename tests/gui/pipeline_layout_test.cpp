// The pipeline panel's equations: every computed stage of the focused head
// is the result of exactly one equation, with the right operands and operators.

#include "logic/pipeline_layout.h"
#include "gui_test_support.h"
#include "logic/steps.h"

#include "attention_lab/presets.h"
#include "attention_lab/stage_info.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

using namespace attention_lab;
using namespace attention_lab::gui;
using namespace attention_lab::gui_test;

namespace {




bool has_line_containing(const std::vector<EquationLine>& lines, const std::string& part) {
  return std::any_of(lines.begin(), lines.end(), [&](const auto& l) { return equation_text(l).find(part) != std::string::npos; });
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
  EXPECT_TRUE(has_line_containing(lines, "X · W_q = Q")) << equation_text(lines);
  EXPECT_TRUE(has_line_containing(lines, "X · W_k = K")) << equation_text(lines);
  EXPECT_TRUE(has_line_containing(lines, "X · W_v = V")) << equation_text(lines);
}

TEST(PipelineLayout, TheFatCatHeadIsOneChainFromScoresToOutput) {
  const auto lines = pipeline_equations(preset("fat-cat"), 0);
  EXPECT_TRUE(has_line_containing(lines,
                                  "Q[0] · K[0]ᵀ = scores[0] ÷ √4  = scaled[0] + mask mask = masked[0] softmax → "
                                  "weights[0] · V[0] = context[0] = output (no W_o)"))
      << equation_text(lines);
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
  EXPECT_TRUE(has_line_containing(lines, "X · W_q + b_q = Q")) << equation_text(lines);
  EXPECT_TRUE(has_line_containing(lines, "X · W_k + b_k = K")) << equation_text(lines);
  EXPECT_TRUE(has_line_containing(lines, "X · W_v + b_v = V")) << equation_text(lines);
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
            << (it == results.end() ? 0 : it->second) << " times\n" << equation_text(lines);
      }
      EXPECT_EQ(results.size(), expected.size()) << name << " head " << h << "\n" << equation_text(lines);
    }
  }
}

// A step's stage is drawn by the equations (the presenter view scrolls to it
// and fits it): with one head "concatenate heads" is the head's context.
TEST(PipelineLayout, TheStageEveryStepIsAboutIsAnEquationsTerm) {
  for (const char* name : {"fat-cat", "multi-head"}) {
    const Scenario s = preset(name);
    const auto lines = pipeline_equations(s, 0);
    for (const Step& step : steps()) {
      const StageKind shown = shown_focus(s, step.focus);
      const bool drawn = std::any_of(lines.begin(), lines.end(), [&](const EquationLine& line) {
        return std::any_of(line.terms.begin(), line.terms.end(),
                           [&](const Term& t) { return t.kind == Term::Kind::Matrix && t.stage.kind == shown; });
      });
      EXPECT_TRUE(drawn) << name << ": step \"" << step.title << "\" is about " << to_string(StageId{shown, 0})
                         << ", which no equation draws\n" << equation_text(lines);
    }
  }
  EXPECT_EQ(shown_focus(preset("fat-cat"), StageKind::Concat), StageKind::Context);
  EXPECT_EQ(shown_focus(preset("multi-head"), StageKind::Concat), StageKind::Concat);
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
        EXPECT_TRUE(is_concat && t.stage.kind == StageKind::Context) << "head " << h << ": " << equation_text(line);
        EXPECT_TRUE(i == 0 || line.terms[i - 1].text == "|") << "head " << h << ": " << equation_text(line);
      }
    }
  }
}

TEST(PipelineLayout, TheFocusedHeadsChainUsesOnlyItsOwnStages) {
  const auto lines = pipeline_equations(preset("multi-head"), 2);
  EXPECT_TRUE(has_line_containing(lines,
                                  "Q[2] · K[2]ᵀ = scores[2] ÷ √4  = scaled[2] + mask mask = masked[2] softmax → "
                                  "weights[2] · V[2] = context[2]"))
      << equation_text(lines);
}

TEST(PipelineLayout, MultiHeadConcatenatesEveryHeadAndProjectsWithWo) {
  for (int h = 0; h < 4; ++h) {
    const auto lines = pipeline_equations(preset("multi-head"), h);
    EXPECT_TRUE(has_line_containing(lines,
                                    "context[0] | context[1] | context[2] | context[3] = concat · W_o = output"))
        << "head " << h << "\n" << equation_text(lines);
  }
}

TEST(PipelineLayout, AScenarioWithoutScalingSaysTimesOne) {
  Scenario s = preset("book");
  s.scale = false;
  EXPECT_TRUE(has_line_containing(pipeline_equations(s, 0), "scores[0] × 1  = scaled[0]"));
  s.temperature = 0.5f;
  EXPECT_TRUE(has_line_containing(pipeline_equations(s, 0), "scores[0] ÷ τ=0.5  = scaled[0]"))
      << equation_text(pipeline_equations(s, 0));
}

TEST(PipelineLayout, OutputBiasIsAddedAfterTheProjection) {
  Scenario s = preset("multi-head");
  s.use_output_bias = true;
  s.b_o = Matrix::Zero(1, 16);
  EXPECT_TRUE(has_line_containing(pipeline_equations(s, 0), "concat · W_o + b_o = output"))
      << equation_text(pipeline_equations(s, 0));
}

TEST(PipelineLayout, WithoutWoTheOutputReadsAsAnEquationWithTheNoteAfterIt) {
  for (const char* name : {"fat-cat", "book"}) {
    Scenario s = preset(name);
    s.use_w_o = false;
    const auto lines = pipeline_equations(s, 0);
    EXPECT_TRUE(has_line_containing(lines, "context[0] = output (no W_o)")) << name << "\n" << equation_text(lines);
    EXPECT_FALSE(has_line_containing(lines, "(no W_o)  =")) << equation_text(lines);
  }
  Scenario multi = preset("multi-head");
  multi.use_w_o = false;
  EXPECT_TRUE(has_line_containing(pipeline_equations(multi, 0), "= concat = output (no W_o)"))
      << equation_text(pipeline_equations(multi, 0));
}

namespace {

// The rows an equation wraps into, as text.
std::vector<std::vector<Term>> rows_of(const EquationLine& line, const std::vector<std::size_t>& starts) {
  std::vector<std::vector<Term>> rows;
  for (std::size_t k = 0; k < starts.size(); ++k) {
    const std::size_t end = k + 1 < starts.size() ? starts[k + 1] : line.terms.size();
    rows.emplace_back(line.terms.begin() + static_cast<std::ptrdiff_t>(starts[k]),
                      line.terms.begin() + static_cast<std::ptrdiff_t>(end));
  }
  return rows;
}

}  // namespace

TEST(PipelineLayout, AWrappedEquationContinuesWithItsOperatorNeverWithAFreshEquation) {
  // Every preset, every head, at row widths from two terms' worth to the whole
  // line: a continuation row starts with an operator and no row ends with one.
  for (const char* name : {"fat-cat", "book", "naive", "multi-head"}) {
    const Scenario s = preset(name);
    for (int h = 0; h < s.heads; ++h)
      for (const auto& line : pipeline_equations(s, h)) {
        std::vector<float> widths;
        for (const Term& t : line.terms) widths.push_back(t.kind == Term::Kind::Matrix ? 150.0f : 40.0f);
        for (float row = 100.0f; row <= 2000.0f; row += 37.0f) {
          const auto starts = equation_rows(line, widths, row);
          ASSERT_FALSE(starts.empty());
          EXPECT_EQ(starts.front(), 0u);
          const auto rows = rows_of(line, starts);
          for (std::size_t k = 0; k < rows.size(); ++k) {
            const std::string shown = equation_text(EquationLine{rows[k]});
            if (k > 0) {
              EXPECT_TRUE(may_break_before(rows[k].front())) << name << " row " << row << ": '" << shown << "' starts a continuation";
            }
            if (k + 1 < rows.size()) {
              EXPECT_EQ(rows[k].back().kind, Term::Kind::Matrix) << name << ": '" << shown << "' ends with an operator";
            }
          }
        }
      }
  }
}

TEST(PipelineLayout, TheMaskStepWrapsBeforeItsOperatorNotBeforeTheMask) {
  // The reported case: "S′₀ + mask" ending a row and "M = Ŝ₀" starting the next.
  const auto lines = pipeline_equations(preset("fat-cat"), 0);
  for (const auto& line : lines) {
    std::vector<float> widths;
    for (const Term& t : line.terms) widths.push_back(t.kind == Term::Kind::Matrix ? 150.0f : 40.0f);
    for (float row = 100.0f; row <= 1500.0f; row += 10.0f)
      for (const std::size_t start : equation_rows(line, widths, row)) {
        const Term& first = line.terms[start];
        EXPECT_FALSE(first.kind == Term::Kind::Matrix && first.stage.kind == StageKind::Mask) << "a row starts with the mask";
        EXPECT_FALSE(start > 0 && line.terms[start - 1].text == "+ mask") << "a row ends with '+ mask'";
      }
  }
}

TEST(PipelineLayout, RowsAreFilledAndAnEquationThatFitsIsOneRow) {
  EquationLine line{{Term{Term::Kind::Matrix, StageId::input(StageKind::X), false, {}}, Term{Term::Kind::Operator, {}, false, "·"},
                     Term{Term::Kind::Matrix, StageId::input(StageKind::W_q), false, {}}, Term{Term::Kind::Operator, {}, false, "="},
                     Term{Term::Kind::Matrix, StageId::input(StageKind::Q), false, {}}}};
  const std::vector<float> widths = {100, 20, 100, 20, 100};
  EXPECT_EQ(equation_rows(line, widths, 340.0f), (std::vector<std::size_t>{0}));
  EXPECT_EQ(equation_rows(line, widths, 250.0f), (std::vector<std::size_t>{0, 3}));  // "X · W_q" / "= Q"
  EXPECT_EQ(equation_rows(line, widths, 50.0f), (std::vector<std::size_t>{0, 1, 3}));  // too narrow: one group a row
}
