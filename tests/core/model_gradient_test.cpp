// A model's language-model loss differentiated back to a layer: against
// PyTorch autograd in float64 (tests/models/generate_model_gradients.py) on
// the committed GPT-2 fixture, through the layer's scenario, and with the
// layer's attention output edited. Layouts the backward pass does not have
// are refused by name.

#include "attention_lab/gradients.h"
#include "attention_lab/engine.h"
#include "attention_lab/model_gradient.h"
#include "attention_lab/transformer_forward.h"
#include "model_fixture_paths.h"
#include "test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

namespace attention_lab {
namespace {

std::shared_ptr<const TransformerModel> open_gradient_fixture(const char* name) {
  LoadedModel m = load_model(test::kFixtures / name);
  if (!m.model) throw std::runtime_error(m.error);
  return m.model;
}

nlohmann::json reference_gradients() {
  std::ifstream in(test::kFixtures / "gpt2-conv1d" / "gradients.json");
  if (!in) throw std::runtime_error("no gradients.json: run tests/models/generate_model_gradients.py");
  return nlohmann::json::parse(in);
}

Matrix json_to_matrix(const nlohmann::json& rows) {
  Matrix m(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(rows.at(0).size()));
  for (Eigen::Index r = 0; r < m.rows(); ++r)
    for (Eigen::Index c = 0; c < m.cols(); ++c) m(r, c) = rows.at(static_cast<std::size_t>(r)).at(static_cast<std::size_t>(c)).get<float>();
  return m;
}

// The layer's scenario as model mode makes it, computed.
struct ComputedLayer {
  Scenario scenario;
  Engine engine;
};

std::unique_ptr<ComputedLayer> computed_layer(const TransformerModel& model, const std::vector<int>& ids, int layer) {
  const ModelForward forward = run_model(model, ids, 1);
  const Matrix normed = attention_input(model, layer, forward.residual[static_cast<std::size_t>(layer)]);
  LayerScenario ls = layer_scenario(model, layer, normed, std::vector<std::string>(ids.size(), "t"));
  if (!ls.error.empty()) throw std::runtime_error(ls.error);
  auto out = std::make_unique<ComputedLayer>();
  out->scenario = std::move(ls.scenario);
  out->engine.recompute_all(out->scenario);
  return out;
}

// The GPT-2 fixture, its backward pass and PyTorch's gradients of it.
struct GradientFixture {
  std::shared_ptr<const TransformerModel> model = open_gradient_fixture("gpt2-conv1d");
  nlohmann::json ref = reference_gradients();
  std::vector<int> ids = ref["ids"].get<std::vector<int>>();
  std::string error;
  std::unique_ptr<ModelGradient> grad = ModelGradient::make(*model, error);
};

TEST(ModelGradient, EachLayersOutputGradientIsAutogradsInFloat64) {
  const GradientFixture f;
  ASSERT_TRUE(f.grad) << f.error;
  const auto& [model, ref, ids, error, grad] = f;
  for (int layer = 0; layer < model->config.layers; ++layer) {
    const LayerOutputGradient g = grad->at_layer(ids, layer, nullptr);
    EXPECT_NEAR(g.loss, ref["loss"].get<double>(), 1e-5);
    EXPECT_EQ(g.positions, static_cast<int>(ids.size()) - 1);
    EXPECT_TRUE(test::near_reference(g.d_output, json_to_matrix(ref["layers"][static_cast<std::size_t>(layer)]["d_attention_out"]),
                                     "dL/d(attention output) of layer " + std::to_string(layer)));
  }
}

TEST(ModelGradient, CarriedThroughTheLayersScenarioGivesEveryStagesGradient) {
  const GradientFixture f;
  ASSERT_TRUE(f.grad) << f.error;
  const auto& [model, ref, ids, error, grad] = f;
  for (int layer = 0; layer < model->config.layers; ++layer) {
    const nlohmann::json& want = ref["layers"][static_cast<std::size_t>(layer)];
    const auto computed = computed_layer(*model, ids, layer);
    const LayerOutputGradient out = grad->at_layer(ids, layer, nullptr);
    const Gradients g = backward_from_output(computed->engine, computed->scenario, out.d_output, out.loss, "the model's loss");
    const std::string where = "layer " + std::to_string(layer) + " ";
    EXPECT_DOUBLE_EQ(g.loss, out.loss);
    ASSERT_TRUE(g.find(StageId::input(StageKind::W_q)));
    EXPECT_TRUE(test::near_reference(*g.find(StageId::input(StageKind::W_q)), json_to_matrix(want["d_W_q"]), where + "dL/dW_q"));
    EXPECT_TRUE(test::near_reference(*g.find(StageId::input(StageKind::X)), json_to_matrix(want["d_X"]), where + "dL/dX"));
    for (int h = 0; h < model->config.heads; ++h)
      EXPECT_TRUE(test::near_reference(*g.find(StageId::of_head(StageKind::Weights, h)),
                                       json_to_matrix(want["d_weights"][static_cast<std::size_t>(h)]),
                                       where + "dL/dA of head " + std::to_string(h)));
  }
}

TEST(ModelGradient, AnEditedAttentionOutputRunsTheLaterLayersFromTheEdit) {
  const GradientFixture f;
  ASSERT_TRUE(f.grad) << f.error;
  const auto& [model, ref, ids, error, grad] = f;
  const nlohmann::json& edit = ref["edited"];
  const int layer = edit["layer"].get<int>();
  const auto computed = computed_layer(*model, ids, layer);
  Matrix edited = computed->engine.stage(StageId::input(StageKind::Output));
  edited(edit["row"].get<int>(), edit["col"].get<int>()) += edit["add"].get<float>();
  const LayerOutputGradient g = grad->at_layer(ids, layer, &edited);
  EXPECT_NEAR(g.loss, edit["loss"].get<double>(), 1e-5);
  EXPECT_GT(std::abs(g.loss - ref["loss"].get<double>()), 1e-4) << "the edit should change the loss";
  EXPECT_TRUE(test::near_reference(g.d_output, json_to_matrix(edit["d_attention_out"]), "dL/d(edited attention output)"));
}

TEST(ModelGradient, LayoutsWithoutABackwardPassAreRefusedByName) {
  std::string error;
  EXPECT_FALSE(ModelGradient::make(*open_gradient_fixture("mingpt-linear-bf16"), error));
  EXPECT_NE(error.find("an lm_head of its own (untied)"), std::string::npos) << error;
  EXPECT_FALSE(ModelGradient::make(*open_gradient_fixture("llama-gqa"), error));
  EXPECT_NE(error.find("the llama family"), std::string::npos) << error;
  EXPECT_NE(model_gradient_problem(*open_gradient_fixture("qwen3-head-dim-bf16")), "");
}

// A window closing while the model's part computes: asked before each
// layer's pass, a "stop" ends the work within one layer.
TEST(ModelGradient, StopsBetweenLayersWhenAsked) {
  const GradientFixture f;
  ASSERT_TRUE(f.grad) << f.error;
  const auto& [model, ref, ids, error, grad] = f;
  int asked = 0;
  const LayerOutputGradient whole = grad->at_layer(ids, 0, nullptr, [&asked] { return ++asked > 0; });
  // Layer 0 of 2: forward through both, back through both to layer 0's output.
  EXPECT_EQ(asked, 2 * model->config.layers);
  EXPECT_EQ(whole.d_output, grad->at_layer(ids, 0, nullptr).d_output);  // asking changes nothing
  for (int stop_at = 1; stop_at <= asked; ++stop_at) {
    int calls = 0;
    EXPECT_THROW((void)grad->at_layer(ids, 0, nullptr, [&] { return ++calls < stop_at; }), Cancelled) << stop_at;
    EXPECT_EQ(calls, stop_at);
  }
}

TEST(ModelGradient, BadArgumentsAreNamed) {
  std::string error;
  const auto grad = ModelGradient::make(*open_gradient_fixture("gpt2-conv1d"), error);
  ASSERT_TRUE(grad) << error;
  EXPECT_THROW(grad->at_layer({3}, 0, nullptr), std::invalid_argument);  // one token: no next token
  EXPECT_THROW(grad->at_layer({3, 4}, 2, nullptr), std::invalid_argument);  // no layer 2
  EXPECT_THROW(grad->at_layer({3, 99}, 0, nullptr), std::invalid_argument);  // outside the vocabulary
  const Matrix wrong = Matrix::Zero(3, 32);
  EXPECT_THROW(grad->at_layer({3, 4}, 0, &wrong), std::invalid_argument);
  try {
    (void)grad->at_layer(std::vector<int>(17, 1), 0, nullptr);
    ADD_FAILURE() << "17 tokens in a context of 16";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("context is 16"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace attention_lab
