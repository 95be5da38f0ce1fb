// The inspector's derivation of a gradient cell, on every golden scenario
// and loss (tests/golden/fixtures/*.grad-*.json): the numbers it prints must
// make the gradient the backward pass computed (so the terms it shows are
// the right rows and columns, not merely a formula), and every cell it
// lights must be a cell the pipeline holds.

#include "logic/gradient_derivation.h"
#include "logic/gradient_store.h"
#include "logic/number_format.h"

#include "attention_lab/presets.h"
#include "attention_lab/scenario_io.h"
#include "attention_lab/stage_info.h"
#include "core/golden_support.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

using namespace attention_lab;
using namespace attention_lab::gui;

namespace {

// Evaluates the arithmetic a derivation prints ("0.5×(−0.2) + 1/(7×0.25)"):
// numbers, + − × /, parentheses, a unary minus and a square. With `magnitudes`, every
// number and every operation counts positively: a bound of the rounding error.
class Arithmetic {
 public:
  Arithmetic(std::string text, bool magnitudes) : magnitudes_(magnitudes) {
    for (const auto& [from, to] : {std::pair<std::string, std::string>{"×", "*"}, {"−", "-"}, {"²", "^"}})
      for (std::size_t at; (at = text.find(from)) != std::string::npos;) text.replace(at, from.size(), to);
    text_ = text;
  }
  double value() {
    const double v = sum();
    skip();
    if (pos_ != text_.size()) throw std::runtime_error("unread: '" + text_.substr(pos_) + "' in '" + text_ + "'");
    return v;
  }

 private:
  void skip() { while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_; }
  bool eat(char c) {
    skip();
    if (pos_ < text_.size() && text_[pos_] == c) return ++pos_, true;
    return false;
  }
  double sum() {
    double v = product();
    for (;;) {
      if (eat('+')) v += product();
      else if (eat('-')) v += magnitudes_ ? product() : -product();
      else return v;
    }
  }
  double product() {
    double v = factor();
    for (;;) {
      if (eat('*')) v *= factor();
      else if (eat('/')) v = magnitudes_ ? v / std::fabs(factor()) : v / factor();
      else return v;
    }
  }
  double factor() {
    const double v = base();
    return eat('^') ? v * v : v;  // "(x/c)²"
  }
  double base() {
    if (eat('-')) return magnitudes_ ? factor() : -factor();
    if (eat('(')) {
      const double v = sum();
      if (!eat(')')) throw std::runtime_error("no ')' in '" + text_ + "'");
      return v;
    }
    skip();
    std::size_t used = 0;
    const double v = std::stod(text_.substr(pos_), &used);
    pos_ += used;
    return magnitudes_ ? std::fabs(v) : v;
  }
  std::string text_;
  std::size_t pos_ = 0;
  bool magnitudes_;
};

std::vector<std::string> split_at_equals(const std::string& numbers) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t at; (at = numbers.find(" = ", start)) != std::string::npos; start = at + 3) parts.push_back(numbers.substr(start, at - start));
  parts.push_back(numbers.substr(start));
  return parts;
}

Scenario scenario_with_loss(const std::string& fixture_name) {
  const nlohmann::json fixture = test::read_golden_json(test::golden_dir() / (fixture_name + ".json"));
  nlohmann::json file = test::read_golden_json(test::golden_dir() / fixture["scenario"].get<std::string>());
  file["loss"] = fixture["loss"];
  const LoadResult r = parse_scenario(file.dump());
  if (!r.scenario) throw std::runtime_error(r.error);
  return *r.scenario;
}

}  // namespace

TEST(Arithmetic, ReadsWhatDerivationsPrint) {
  EXPECT_DOUBLE_EQ(Arithmetic("0.5×(−0.2) + 1/(4×0.25)", false).value(), 0.9);
  EXPECT_DOUBLE_EQ(Arithmetic("−(2×3 − 1)", false).value(), -5.0);
  EXPECT_DOUBLE_EQ(Arithmetic("−(2×3 − 1)", true).value(), 7.0);
  EXPECT_DOUBLE_EQ(Arithmetic("3.6e-05 × 2", false).value(), 7.2e-05);
}

class GradientDerivation : public ::testing::TestWithParam<std::string> {};

TEST_P(GradientDerivation, PrintsNumbersThatMakeTheGradient) {
  const Scenario s = scenario_with_loss(GetParam());
  const Document doc(s);
  GradientStore store;
  const Gradients* g = store.get(doc);
  ASSERT_NE(g, nullptr) << store.problem();
  int checked = 0;
  for (const auto& [id, m] : g->of) {
    for (int r = 0; r < m.rows(); ++r)
      for (int c = 0; c < m.cols(); ++c) {
        const GradientCell cell = derive_gradient(doc, *g, id, r, c);
        const std::string where = to_string(id) + "[" + std::to_string(r) + "][" + std::to_string(c) + "]";
        ASSERT_FALSE(cell.text.title.empty()) << where;
        ASSERT_FALSE(cell.text.numbers.empty()) << where;
        EXPECT_NE(cell.text.title.find("∂L/∂"), std::string::npos) << where;
        // every cell it lights is one the pipeline draws: a stage's value or a held gradient
        for (const Lit& l : cell.sources) {
          if (l.stage.role == Role::Gradient) {
            EXPECT_NE(g->find(l.stage), nullptr) << where << " lights " << to_string(l.stage);
          } else {
            EXPECT_EQ(doc.engine().not_held(l.stage), "") << where << " lights " << to_string(l.stage);
          }
        }
        // (a sum cut to its first terms, "+ … (7 terms)", is not re-added here)
        if (cell.text.numbers.find("…") != std::string::npos) continue;
        const std::vector<std::string> parts = split_at_equals(cell.text.numbers);
        const double shown = std::stod(parts.back() == "0" ? "0" : [&] {
          std::string t = parts.back();
          if (t.rfind("−", 0) == 0) t.replace(0, std::string("−").size(), "-");
          return t;
        }());
        EXPECT_NEAR(shown, m(r, c), 5e-3 * static_cast<double>(std::fabs(m(r, c))) + 1e-12) << where << ": " << cell.text.numbers;
        for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
          const double v = Arithmetic(parts[i], false).value(), bound = Arithmetic(parts[i], true).value();
          // each printed number is rounded to 3 significant digits (off by up to 0.5 %)
          EXPECT_NEAR(v, m(r, c), 1e-2 * bound + 5e-3 * static_cast<double>(std::fabs(m(r, c))) + 1e-9)
              << where << ": " << cell.text.formula << " = " << cell.text.numbers;
        }
        ++checked;
      }
  }
  EXPECT_GT(checked, 50) << "too few cells small enough to re-add";
}

INSTANTIATE_TEST_SUITE_P(Golden, GradientDerivation, ::testing::ValuesIn(test::golden_files_of(".grad-")),
                         [](const ::testing::TestParamInfo<std::string>& tested) { return test::golden_test_name(tested.param); });

TEST(GradientStore, SaysWhyThereAreNoGradientsAndFollowsEdits) {
  Document doc(*make_preset("fat-cat"));
  GradientStore store;
  EXPECT_EQ(store.get(doc), nullptr);
  EXPECT_NE(store.problem().find("no loss"), std::string::npos);
  Loss loss;
  loss.kind = LossKind::Attend;
  loss.targets = {0, 0, 1, 2, 2, 0, 4};
  auto with_loss = std::make_shared<Scenario>(doc.scenario());
  with_loss->loss = loss;
  doc.apply(ReplaceScenario{with_loss, "set the loss"});
  const Gradients* g = store.get(doc);
  ASSERT_NE(g, nullptr) << store.problem();
  const double before = g->loss;
  const std::uint64_t version = store.version();
  EXPECT_EQ(store.get(doc), g);  // nothing changed: the same gradients
  EXPECT_EQ(store.version(), version);
  doc.apply(SetCell{StageId::input(StageKind::W_q), 0, 0, 3.0f});
  ASSERT_NE(store.get(doc), nullptr);
  EXPECT_NE(store.version(), version);
  EXPECT_NE(store.get(doc)->loss, before);
  EXPECT_EQ(store.current(doc), store.get(doc));
}

TEST(GradientStore, DescribesAGradientStage) {
  const Scenario s = *make_preset("fat-cat");
  const StageInfo info = describe_stage(s, StageId{StageKind::W_q, 0, 0, Role::Gradient});
  EXPECT_EQ(info.symbol, "∂L/∂W_q");
  EXPECT_EQ(info.formula, "∂W_q = Xᵀ·∂Q");
  EXPECT_EQ(info.domain, ValueDomain::Signed);
  EXPECT_EQ(info.editability, Editability::ReadOnly);
  EXPECT_EQ(info.id_text, "grad.W_q");
}

TEST(NumberFormat, SignificantDigitsForGradients) {
  EXPECT_EQ(format_significant(0.0036123f), "0.00361");
  EXPECT_EQ(format_significant(-0.5f), "−0.5");
  EXPECT_EQ(format_significant(0.0f), "0");
  EXPECT_EQ(power_of_ten(-2), "×10⁻²");
  EXPECT_EQ(power_of_ten(12), "×10¹²");
}
