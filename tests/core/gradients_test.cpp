// The backward pass against PyTorch autograd in float64: every
// tests/golden/fixtures/<name>.grad-<loss>.json (tests/golden/generate_gradients.py)
// holds a golden scenario's loss and ∂L/∂(every stage); the engine's
// gradients must match them, in-process and through `trace --grad`.
//
// Tolerance, per cell: |ours − reference| ≤ 1e-3·|reference| + 1e-5·max|any gradient|.
// A gradient is a longer chain of float32 steps than a forward stage (a
// softmax's backward subtracts a row's weighted sum), so it is ten times
// looser than golden_test.cpp's; a wrong rule (a missed 1/√d_k, a transposed
// product, a forgotten head) is off by percent, not by 1e-3. The absolute
// term is the scale of all the fixture's gradients, not of the one stage:
// ∂b_k is zero exactly (a softmax ignores what adds the same to a whole
// row), and ours is the float32 rounding of a sum of terms of that scale.

#include "attention_lab/gradients.h"
#include "attention_lab/presets.h"
#include "attention_lab/scenario_io.h"

#include "cli/cli_run.h"

#include "golden_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace attention_lab;
namespace fs = std::filesystem;

namespace {

Eigen::MatrixXd autograd_matrix(const nlohmann::json& rows) {
  Eigen::MatrixXd m(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(rows[0].size()));
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (std::size_t c = 0; c < rows[r].size(); ++c) m(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(c)) = rows[r][c].get<double>();
  return m;
}

// The fixture's scenario with its loss, read as a scenario file would be.
Scenario scenario_with_loss(const nlohmann::json& fixture) {
  nlohmann::json file = test::read_golden_json(test::golden_dir() / fixture["scenario"].get<std::string>());
  file["loss"] = fixture["loss"];
  const LoadResult r = parse_scenario(file.dump());
  if (!r.scenario) throw std::runtime_error(r.error);
  return *r.scenario;
}

::testing::AssertionResult close_to(const Matrix& ours, const Eigen::MatrixXd& ref, const std::string& what, double scale) {
  if (ours.rows() != ref.rows() || ours.cols() != ref.cols())
    return ::testing::AssertionFailure() << what << ": " << ours.rows() << " x " << ours.cols() << ", reference " << ref.rows()
                                         << " x " << ref.cols();
  for (Eigen::Index r = 0; r < ref.rows(); ++r)
    for (Eigen::Index c = 0; c < ref.cols(); ++c) {
      const double a = ours(r, c), b = ref(r, c);
      if (!(std::abs(a - b) <= 1e-3 * std::abs(b) + 1e-5 * scale))
        return ::testing::AssertionFailure() << what << "[" << r << "][" << c << "]: " << a << ", reference " << b;
    }
  return ::testing::AssertionSuccess();
}

// Our gradient of every stage the reference names, in the trace's layout.
// The largest magnitude of any gradient in `grad`.
double gradient_scale(const nlohmann::json& grad) {
  double scale = 0.0;
  for (const auto& [name, value] : grad.items()) {
    if (name == "heads") {
      for (const auto& head : value)
        for (const auto& [stage, rows] : head.items()) scale = std::max(scale, autograd_matrix(rows).cwiseAbs().maxCoeff());
    } else {
      scale = std::max(scale, autograd_matrix(value).cwiseAbs().maxCoeff());
    }
  }
  return scale;
}

void expect_gradients_match(const nlohmann::json& grad, const std::function<const Matrix*(StageId)>& ours) {
  const double scale = gradient_scale(grad);
  for (const auto& [name, value] : grad.items()) {
    if (name == "heads") {
      for (std::size_t h = 0; h < value.size(); ++h)
        for (const auto& [stage, rows] : value[h].items()) {
          const auto id = parse_stage_id(stage + "[" + std::to_string(h) + "]");
          ASSERT_TRUE(id) << stage;
          const Matrix* m = ours(*id);
          ASSERT_NE(m, nullptr) << "no gradient of " << to_string(*id);
          EXPECT_TRUE(close_to(*m, autograd_matrix(rows), "grad." + to_string(*id), scale));
        }
      continue;
    }
    const auto id = parse_stage_id(name);
    ASSERT_TRUE(id) << name;
    const Matrix* m = ours(*id);
    ASSERT_NE(m, nullptr) << "no gradient of " << name;
    EXPECT_TRUE(close_to(*m, autograd_matrix(value), "grad." + name, scale));
  }
}

}  // namespace

TEST(GradientFixtures, AreThere) {
  EXPECT_GE(test::golden_files_of(".grad-").size(), 95u) << "run tests/golden/generate_gradients.py";
}

class GradientsMatchAutograd : public ::testing::TestWithParam<std::string> {};

TEST_P(GradientsMatchAutograd, OnEveryStageOf) {
  const nlohmann::json fixture = test::read_golden_json(test::golden_dir() / (GetParam() + ".json"));
  const Scenario s = scenario_with_loss(fixture);
  ASSERT_TRUE(s.loss);
  ASSERT_EQ(gradients_problem(s, *s.loss), "");
  Engine engine;
  engine.recompute_all(s);
  const Gradients g = backward(engine, s, *s.loss);
  const double L = fixture["expected"]["loss"].get<double>();
  EXPECT_NEAR(g.loss, L, 1e-5 * std::max(1.0, std::abs(L)));
  expect_gradients_match(fixture["expected"]["grad"], [&](StageId id) { return g.find(id); });
}

TEST_P(GradientsMatchAutograd, ThroughTraceGrad) {
  const nlohmann::json fixture = test::read_golden_json(test::golden_dir() / (GetParam() + ".json"));
  const fs::path dir = fs::temp_directory_path() / ("grad-" + GetParam() + "-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path file = dir / "scenario.json";
  std::ofstream(file) << scenario_to_json(scenario_with_loss(fixture));
  const test::CliResult r = test::run_cli({"trace", file.string(), "--grad"});
  fs::remove_all(dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json trace = nlohmann::json::parse(r.out);
  EXPECT_NEAR(trace["loss"].get<double>(), fixture["expected"]["loss"].get<double>(), 1e-5);
  // the trace's own names for the gradients, in float32 text
  std::map<StageId, Matrix> read;
  for (const auto& [name, value] : trace["grad"].items()) {
    if (name == "heads") {
      for (std::size_t h = 0; h < value.size(); ++h)
        for (const auto& [stage, rows] : value[h].items())
          read[*parse_stage_id(stage + "[" + std::to_string(h) + "]")] = autograd_matrix(rows).cast<float>();
    } else {
      read[*parse_stage_id(name)] = autograd_matrix(value).cast<float>();
    }
  }
  expect_gradients_match(fixture["expected"]["grad"], [&](StageId id) {
    const auto it = read.find(id);
    return it == read.end() ? nullptr : &it->second;
  });
}

INSTANTIATE_TEST_SUITE_P(Golden, GradientsMatchAutograd, ::testing::ValuesIn(test::golden_files_of(".grad-")),
                         [](const ::testing::TestParamInfo<std::string>& tested) { return test::golden_test_name(tested.param); });

TEST(Gradients, SettingsWithoutABackwardPassAreRefusedByName) {
  Scenario s = *make_preset("fat-cat");
  Loss loss;
  loss.kind = LossKind::Attend;
  loss.targets.assign(static_cast<std::size_t>(s.T()), 0);
  EXPECT_EQ(gradients_problem(s, loss), "");
  Scenario rope = s;
  rope.rope.on = true;
  EXPECT_EQ(gradients_problem(rope, loss), "");
  rope.rope.scaling = RopeScaling::Linear;
  rope.rope.factor = 2.0f;
  EXPECT_EQ(gradients_problem(rope, loss),
            "RoPE with a scaling: its backward pass is not written yet, so no gradient is computed (turn it off)");
  Engine engine;
  engine.recompute_all(rope);
  EXPECT_THROW(backward(engine, rope, loss), std::invalid_argument);
  Scenario pinned = s;
  pinned.pins[PinKey{StageId::of_head(StageKind::Scores, 0), 0, 0}] = 1.0f;
  EXPECT_NE(gradients_problem(pinned, loss).find("pins"), std::string::npos);
  // a key the causal mask forbids: the loss would be infinite
  Loss forbidden = loss;
  forbidden.targets[1] = 5;
  EXPECT_EQ(gradients_problem(s, forbidden),
            "loss.targets[1]: row 1 may not attend to key 5 (the mask forbids it), so its loss would be infinite");
  Loss short_list = loss;
  short_list.targets.pop_back();
  EXPECT_NE(gradients_problem(s, short_list).find("loss.targets: expected 7 keys"), std::string::npos);
  Loss mse;
  mse.target = Matrix::Zero(2, 2);
  EXPECT_NE(gradients_problem(s, mse).find("loss.target: expected 7 x 4"), std::string::npos);
}

TEST(Gradients, TheScenarioFileKeepsItsLoss) {
  Scenario s = *make_preset("fat-cat");
  Loss loss;
  loss.kind = LossKind::Attend;
  loss.head = 0;
  loss.targets = {0, 0, 1, 2, 2, 0, 4};
  s.loss = loss;
  const std::string text = scenario_to_json(s);
  EXPECT_NE(text.find("\"loss\": {\"kind\": \"attend\", \"head\": 0, \"targets\": [0, 0, 1, 2, 2, 0, 4]}"), std::string::npos) << text;
  const LoadResult back = parse_scenario(text);
  ASSERT_TRUE(back.scenario) << back.error;
  EXPECT_EQ(back.scenario->loss, s.loss);
  for (const auto& [bad, message] : std::vector<std::pair<std::string, std::string>>{
           {R"({"kind": "next_token", "targets": [0]})", "loss.W_U: missing"},
           {R"({"kind": "next_token", "W_U": [[1, 2], [3, 4]], "targets": [0, 2]})",
            "loss.targets[1]: expected a whole number from 0 to 1, found 2"},
           {R"({"kind": "next_token", "W_U": [[1]], "targets": [0], "head": 0})", "loss.head: not a key of a \"next_token\" loss"},
           {R"({"kind": "hinge"})", "loss.kind: expected \"mse\", \"attend\" or \"next_token\", found \"hinge\""},
           {R"({"kind": "attend", "targets": [0], "weight": 2})", "loss.weight: not a key of a \"attend\" loss"},
           {R"({"kind": "mse"})", "loss.target: missing"}}) {
    std::string wrong = text;
    const std::string was = "{\"kind\": \"attend\", \"head\": 0, \"targets\": [0, 0, 1, 2, 2, 0, 4]}";
    wrong.replace(wrong.find(was), was.size(), bad);
    const LoadResult r = parse_scenario(wrong);
    EXPECT_FALSE(r.scenario) << bad;
    EXPECT_NE(r.error.find(message), std::string::npos) << r.error;
  }
}

TEST(Gradients, ANextTokenLossRoundTripsAndNamesAWrongShape) {
  Scenario s = *make_preset("fat-cat");  // T 7, d_out 4
  Loss loss;
  loss.kind = LossKind::NextToken;
  Matrix W_U(4, 3);
  W_U << 0.5f, -1.0f, 0.25f, 1.0f, 0.0f, -0.5f, 0.125f, 0.75f, -0.25f, -1.5f, 2.0f, 0.0f;
  loss.W_U = W_U;
  loss.targets = {1, 2, 0, 0, 1, 2, 1};
  s.loss = loss;
  EXPECT_EQ(gradients_problem(s, loss), "");
  const LoadResult back = parse_scenario(scenario_to_json(s));
  ASSERT_TRUE(back.scenario) << back.error;
  EXPECT_EQ(back.scenario->loss, s.loss);
  Loss wrong_rows = loss;
  wrong_rows.W_U = Matrix::Ones(3, 3);
  EXPECT_EQ(gradients_problem(s, wrong_rows),
            "loss.W_U: expected 4 rows (d_out, one per output column) and a column per token, found 3 x 3");
  Loss short_list = loss;
  short_list.targets.pop_back();
  EXPECT_EQ(gradients_problem(s, short_list), "loss.targets: expected 7 token ids (one per row, T), found 6");
  Loss outside = loss;
  outside.targets[4] = 3;
  EXPECT_EQ(gradients_problem(s, outside),
            "loss.targets[4]: expected a token id from 0 to 2 (W_U's columns, the vocabulary), found 3");
  // the loss by hand: −(1/T) Σᵢ log softmax(Oᵢ·W_U)[tᵢ], in double
  Engine engine;
  engine.recompute_all(s);
  const Matrix logits = Matrix(engine.stage(StageId::input(StageKind::Output))) * W_U;
  double expected = 0.0;
  for (int i = 0; i < 7; ++i) {
    const Eigen::VectorXd row = logits.row(i).transpose().cast<double>();
    expected -= row(loss.targets[static_cast<std::size_t>(i)]) - std::log(row.array().exp().sum());
  }
  EXPECT_NEAR(backward(engine, s, loss).loss, expected / 7.0, 1e-6);
}

TEST(Gradients, TraceGradSaysWhyNot) {
  const fs::path dir = fs::temp_directory_path() / ("grad-why-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  Scenario s = *make_preset("fat-cat");
  std::ofstream(dir / "no-loss.json") << scenario_to_json(s);
  s.rope.on = true;
  s.rope.scaling = RopeScaling::Linear;
  s.rope.factor = 2.0f;
  Loss loss;
  loss.kind = LossKind::Attend;
  loss.targets.assign(7, 0);
  s.loss = loss;
  std::ofstream(dir / "rope.json") << scenario_to_json(s);
  Scenario lm = *make_preset("fat-cat");
  Loss next;
  next.kind = LossKind::NextToken;
  next.W_U = Matrix::Ones(2, 5);  // d_out is 4
  next.targets.assign(7, 0);
  lm.loss = next;
  std::ofstream(dir / "lm.json") << scenario_to_json(lm);
  const test::CliResult wrong_shape = test::run_cli({"trace", (dir / "lm.json").string(), "--grad"});
  const test::CliResult none = test::run_cli({"trace", (dir / "no-loss.json").string(), "--grad"});
  const test::CliResult rope = test::run_cli({"trace", (dir / "rope.json").string(), "--grad"});
  const test::CliResult other = test::run_cli({"validate", (dir / "rope.json").string(), "--grad"});
  fs::remove_all(dir);
  EXPECT_EQ(none.code, cli::kExitBadInput);
  EXPECT_NE(none.err.find("trace --grad: the scenario has no \"loss\""), std::string::npos) << none.err;
  EXPECT_EQ(rope.code, cli::kExitBadInput);
  EXPECT_NE(rope.err.find("trace --grad: RoPE with a scaling: its backward pass is not written yet"), std::string::npos) << rope.err;
  EXPECT_EQ(wrong_shape.code, cli::kExitBadInput);
  EXPECT_NE(wrong_shape.err.find("trace --grad: loss.W_U: expected 4 rows"), std::string::npos) << wrong_shape.err;
  EXPECT_NE(other.err.find("--grad is trace's"), std::string::npos) << other.err;
}
