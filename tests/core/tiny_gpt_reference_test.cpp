// The tiny GPT against PyTorch: tests/golden/fixtures/tiny-gpt.train.json
// (tests/golden/generate_tiny_gpt.py) is fifty AdamW steps of a 2-layer GPT-2
// in float64 from given weights and batches. Loaded into TinyGpt, the first
// step's gradients and the loss before every step must match: the losses
// within 1e-4 (ours are float32 between steps).

#include "attention_lab/tiny_gpt.h"

#include "golden_support.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

using namespace attention_lab;

namespace {

Matrix matrix_of(const nlohmann::json& j) {
  if (!j.at(0).is_array()) {  // a vector
    Matrix m(1, static_cast<Eigen::Index>(j.size()));
    for (std::size_t c = 0; c < j.size(); ++c) m(0, static_cast<Eigen::Index>(c)) = j[c].get<float>();
    return m;
  }
  Matrix m(static_cast<Eigen::Index>(j.size()), static_cast<Eigen::Index>(j[0].size()));
  for (std::size_t r = 0; r < j.size(); ++r)
    for (std::size_t c = 0; c < j[r].size(); ++c) m(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(c)) = j[r][c].get<float>();
  return m;
}

TokenBatch batch_of(const nlohmann::json& j) {
  TokenBatch b;
  b.rows = static_cast<int>(j.at("ids").size());
  b.length = static_cast<int>(j.at("ids")[0].size());
  for (std::size_t r = 0; r < j.at("ids").size(); ++r)
    for (std::size_t t = 0; t < j["ids"][r].size(); ++t) {
      b.ids.push_back(j["ids"][r][t].get<int>());
      b.targets.push_back(j["targets"][r][t].get<int>());
    }
  return b;
}

struct Reference {
  nlohmann::json doc = test::read_golden_json(test::golden_dir() / "tiny-gpt.train.json");
  TinyGpt model = make_model();

  TinyGpt make_model() const {
    const nlohmann::json& s = doc.at("shape");
    TinyGptShape shape;
    shape.layers = s.at("layers");
    shape.heads = s.at("heads");
    shape.d_model = s.at("d_model");
    shape.d_ff = s.at("d_ff");
    shape.vocab = s.at("vocab");
    shape.context = s.at("context");
    TinyGpt m(shape, 1);
    for (TinyParam& p : m.params()) {
      const Matrix value = matrix_of(doc.at("initial").at(p.name));
      EXPECT_EQ(value.rows(), p.value.rows()) << p.name;
      EXPECT_EQ(value.cols(), p.value.cols()) << p.name;
      p.value = value;
    }
    EXPECT_EQ(doc.at("initial").size(), m.params().size()) << "a tensor of the reference the model does not have";
    return m;
  }
};

}  // namespace

TEST(TinyGptReference, FirstGradientsEqualAutograds) {
  Reference ref;
  ref.model.run(batch_of(ref.doc.at("batches").at(0)), true);
  for (const TinyParam& p : ref.model.params()) {
    const Matrix expected = matrix_of(ref.doc.at("first_gradients").at(p.name));
    const float scale = std::max(1e-3f, expected.cwiseAbs().maxCoeff());
    EXPECT_LT((p.grad - expected).cwiseAbs().maxCoeff() / scale, 1e-4f) << p.name;
  }
}

TEST(TinyGptReference, FiftyAdamWStepsLossesWithin1e4OfPyTorch) {
  Reference ref;
  const nlohmann::json& o = ref.doc.at("optimizer");
  AdamW optimizer({o.at("learning_rate"), o.at("beta1"), o.at("beta2"), o.at("eps"), o.at("weight_decay")});
  const nlohmann::json& losses = ref.doc.at("losses");
  ASSERT_EQ(losses.size(), 50u);
  for (std::size_t step = 0; step < losses.size(); ++step) {
    const TinyGptPass pass = ref.model.run(batch_of(ref.doc.at("batches").at(step)), true);
    EXPECT_NEAR(pass.loss, losses[step].get<double>(), 1e-4) << "step " << step + 1;
    optimizer.step(ref.model.params());
  }
}
