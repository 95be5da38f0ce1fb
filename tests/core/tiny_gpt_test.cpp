// The tiny GPT's backward pass against finite differences of its own loss,
// its batches, its refusals and the AdamW step.

#include "attention_lab/tiny_gpt.h"
#include "attention_lab/tiny_training.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

using namespace attention_lab;

namespace {

TinyGptShape small_shape() {
  TinyGptShape s;
  s.layers = 2;
  s.heads = 2;
  s.d_model = 8;
  s.d_ff = 12;
  s.vocab = 7;
  s.context = 6;
  return s;
}

TokenBatch small_batch() {
  TokenBatch b;
  b.rows = 2;
  b.length = 5;
  b.ids = {1, 4, 2, 6, 0, 3, 3, 5, 1, 2};
  b.targets = {4, 2, 6, 0, -1, 3, 5, -1, 2, 6};
  return b;
}

// A model whose norm gains and biases are not 1 and 0, so their gradients are not special.
TinyGpt perturbed_model() {
  TinyGpt m(small_shape(), 7);
  int k = 0;
  for (TinyParam& p : m.params()) {
    for (Eigen::Index i = 0; i < p.value.size(); ++i) p.value.data()[i] += 0.05f * std::sin(static_cast<float>(++k));
    p.value *= p.name.find("c_attn.weight") != std::string::npos ? 20.0f : 1.0f;  // attention far from uniform
  }
  return m;
}

}  // namespace

TEST(TinyGpt, BackwardMatchesFiniteDifferencesOfEveryParameter) {
  TinyGpt model = perturbed_model();
  const TokenBatch batch = small_batch();
  model.run(batch, true);
  const double h = 1e-3;
  for (TinyParam& p : model.params()) {
    const Matrix grad = p.grad;
    // a few cells of each parameter, spread over it
    for (Eigen::Index i = 0; i < p.value.size(); i += std::max<Eigen::Index>(1, p.value.size() / 5)) {
      float& w = p.value.data()[i];
      const float kept = w;
      w = kept + static_cast<float>(h);
      const double up = model.run(batch, false).loss;
      w = kept - static_cast<float>(h);
      const double down = model.run(batch, false).loss;
      w = kept;
      const double numeric = (up - down) / (2 * h);
      const double analytic = static_cast<double>(grad.data()[i]);
      EXPECT_NEAR(analytic, numeric, 2e-4 + 2e-2 * std::abs(numeric)) << p.name << " cell " << i;
    }
  }
}

TEST(TinyGpt, GradientIsZeroWhereNoPositionHasATarget) {
  TinyGpt model = perturbed_model();
  TokenBatch batch = small_batch();
  batch.targets.assign(batch.targets.size(), -1);
  const TinyGptPass pass = model.run(batch, true);
  EXPECT_EQ(pass.loss, 0.0);
  for (const TinyParam& p : model.params()) EXPECT_EQ(p.grad.norm(), 0.0f) << p.name;
}

TEST(TinyGpt, LaterPositionsDoNotChangeEarlierLosses) {
  TinyGpt model = perturbed_model();
  TokenBatch a = small_batch(), b = small_batch();
  b.ids[4] = 5;  // the last token of the first row
  const TinyGptPass pa = model.evaluate(a), pb = model.evaluate(b);
  EXPECT_EQ(pa.loss, model.run(a, false).loss) << "evaluate is run without gradients";
  for (int t = 0; t < 4; ++t) EXPECT_EQ(pa.position_loss[static_cast<std::size_t>(t)], pb.position_loss[static_cast<std::size_t>(t)]) << t;
}

TEST(TinyGpt, RefusesABatchThatDoesNotFitByName) {
  TinyGpt model(small_shape(), 1);
  TokenBatch b = small_batch();
  b.ids[3] = 7;
  EXPECT_EQ(model.check_batch(b), "batch: token id 7 is outside the vocabulary (0 to 6)");
  b = small_batch();
  b.targets[0] = -2;
  EXPECT_NE(model.check_batch(b).find("target -2"), std::string::npos);
  b = small_batch();
  b.length = 7;
  EXPECT_EQ(model.check_batch(b), "batch: sequences of 7 tokens; the model's context is 6");
  b = small_batch();
  b.ids.pop_back();
  EXPECT_NE(model.check_batch(b).find("expected 10 ids and targets, found 9 and 10"), std::string::npos);
  EXPECT_THROW(model.run(b, true), std::invalid_argument);
}

TEST(TinyGpt, RefusesAShapeItCannotBuild) {
  TinyGptShape s = small_shape();
  s.heads = 3;
  EXPECT_EQ(tiny_gpt_shape_problem(s), "heads: expected a number that divides d_model (8), found 3");
  s = small_shape();
  s.vocab = 0;
  EXPECT_EQ(tiny_gpt_shape_problem(s), "vocab: expected a positive number, found 0");
  EXPECT_THROW(TinyGpt(s, 1), std::invalid_argument);
}

TEST(TinyGpt, SameSeedSameWeightsOtherSeedOtherWeights) {
  const TinyGpt a(small_shape(), 3), b(small_shape(), 3), c(small_shape(), 4);
  ASSERT_EQ(a.params().size(), 2u + 12u * 2u + 2u);
  for (std::size_t i = 0; i < a.params().size(); ++i) EXPECT_EQ(a.params()[i].value, b.params()[i].value);
  EXPECT_NE(a.params()[0].value, c.params()[0].value);
  // GPT-2's initialisation: σ 0.02 for the embeddings.
  const Matrix& wte = a.params()[0].value;
  EXPECT_NEAR(std::sqrt(wte.squaredNorm() / static_cast<float>(wte.size())), 0.02, 0.008);
}
