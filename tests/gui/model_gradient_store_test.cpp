// The gradients in model mode: the Pipeline's gradient stages are of the
// model's next-token loss, reaching the focused layer from the layers after
// it, and follow every edit of the layer; what is not computed is said.

#include "logic/gradient_derivation.h"
#include "logic/gradient_store.h"
#include "model_layer_support.h"

#include "attention_lab/model_session.h"
#include "attention_lab/tokenizer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

using namespace attention_lab;
using namespace attention_lab::gui;

namespace {

// A fixture's layer and the model loss the app gives its gradient store.
struct LayerOfModel : test::ModelLayer {
  ModelLoss loss() const { return ModelLoss{session->model_ptr(), session->ids(), session->layer(), ""}; }
};

LayerOfModel open_layer(const char* name, int layer) { return LayerOfModel{test::open_model_layer(name, layer)}; }

}  // namespace

TEST(ModelGradientStore, GradientsAreOfTheModelsNextTokenLossAndFollowEdits) {
  LayerOfModel f = open_layer("gpt2-conv1d", 1);
  GradientStore store;
  store.set_model(f.loss());
  const Gradients* g = store.get(*f.doc);
  ASSERT_NE(g, nullptr) << store.problem();
  EXPECT_NE(g->outside.find("next-token loss"), std::string::npos) << g->outside;
  EXPECT_NEAR(g->loss, 5.194771460097243, 1e-5);  // PyTorch's, tests/models/fixtures/gpt2-conv1d/gradients.json

  // the same as the backward pass run by hand from the document's output
  std::string error;
  const auto model_gradient = ModelGradient::make(f.session->model(), error);
  ASSERT_TRUE(model_gradient) << error;
  const Matrix output = f.doc->stage(StageId::input(StageKind::Output));
  const LayerOutputGradient want = model_gradient->at_layer(test::kModelFixtureIds, 1, &output);
  EXPECT_EQ(*g->find(StageId::input(StageKind::Output)), want.d_output);

  // its cell says where it comes from
  const GradientCell cell = derive_gradient(*f.doc, *g, StageId{StageKind::Output, 0, 0, Role::Gradient}, 2, 3);
  EXPECT_NE(cell.text.formula.find("from the rest of the model"), std::string::npos) << cell.text.formula;

  // an edit of the layer changes its output, the loss and every gradient
  const std::uint64_t version = store.version();
  const double before = g->loss;
  f.doc->apply(SetCell{StageId::input(StageKind::W_v), 0, 0, 2.5f});
  const Gradients* edited = store.get(*f.doc);
  ASSERT_NE(edited, nullptr) << store.problem();
  EXPECT_NE(store.version(), version);
  EXPECT_GT(std::abs(edited->loss - before), 1e-6);
  const Matrix edited_output = f.doc->stage(StageId::input(StageKind::Output));
  EXPECT_EQ(*edited->find(StageId::input(StageKind::Output)), model_gradient->at_layer(test::kModelFixtureIds, 1, &edited_output).d_output);

  // undone, the loss and the gradients are those before the edit (to float32
  // rounding: the engine's single-cell updates and their undo round differently
  // from a full recompute, within 1e-5: tests/core/incremental_test.cpp)
  ASSERT_TRUE(f.doc->undo());
  ASSERT_NE(store.get(*f.doc), nullptr) << store.problem();
  EXPECT_NEAR(store.get(*f.doc)->loss, before, 1e-6);
  EXPECT_TRUE(store.get(*f.doc)->find(StageId::input(StageKind::Output))->isApprox(want.d_output, 1e-4f));

  // the scenario's own loss, once set, is what the gradients are of
  Loss attend;
  attend.kind = LossKind::Attend;
  attend.targets = {0, 0, 1, 2, 3, 4, 5};
  auto with_loss = std::make_shared<Scenario>(f.doc->scenario());
  with_loss->loss = attend;
  f.doc->apply(ReplaceScenario{with_loss, "set the loss"});
  ASSERT_NE(store.get(*f.doc), nullptr) << store.problem();
  EXPECT_EQ(store.get(*f.doc)->outside, "");
}

TEST(ModelGradientStore, WhatIsNotComputedIsSaid) {
  LayerOfModel f = open_layer("gpt2-conv1d", 0);
  GradientStore store;
  ModelLoss refused = f.loss();
  refused.refused = "ablations: not computed yet";
  store.set_model(refused);
  EXPECT_EQ(store.get(*f.doc), nullptr);
  EXPECT_EQ(store.problem(), "ablations: not computed yet");
  store.set_model(f.loss());
  EXPECT_NE(store.get(*f.doc), nullptr) << store.problem();
  store.set_model(std::nullopt);
  EXPECT_EQ(store.get(*f.doc), nullptr);
  EXPECT_NE(store.problem().find("no loss"), std::string::npos) << store.problem();

  LayerOfModel untied = open_layer("mingpt-linear-bf16", 0);
  store.set_model(untied.loss());
  EXPECT_EQ(store.get(*untied.doc), nullptr);
  EXPECT_NE(store.problem().find("untied"), std::string::npos) << store.problem();
}

// A large model's part runs on its thread: nothing (and "computing") until
// the result for the document as it is now is in; an edit made meanwhile is
// computed next, and only its gradients are shown.
TEST(ModelGradientStore, OnItsThreadTheGradientsAreOfTheDocumentAsItIsNow) {
  LayerOfModel f = open_layer("gpt2-conv1d", 1);
  GradientStore sync, threaded;
  sync.set_model(f.loss());
  threaded.set_model(f.loss());
  threaded.set_thread_above(0.0);
  auto wait = [&] {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    while (std::chrono::steady_clock::now() < give_up) {
      if (const Gradients* g = threaded.get(*f.doc)) return g;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return static_cast<const Gradients*>(nullptr);
  };
  EXPECT_EQ(threaded.get(*f.doc), nullptr);
  EXPECT_TRUE(threaded.computing());
  EXPECT_NE(threaded.problem().find("computing"), std::string::npos) << threaded.problem();
  const Gradients* g = wait();
  ASSERT_NE(g, nullptr) << threaded.problem();
  EXPECT_FALSE(threaded.computing());
  EXPECT_EQ(g->loss, sync.get(*f.doc)->loss);
  EXPECT_EQ(*g->find(StageId::input(StageKind::W_q)), *sync.get(*f.doc)->find(StageId::input(StageKind::W_q)));

  // two edits while the first computes: the gradients that arrive are the last state's
  f.doc->apply(SetCell{StageId::input(StageKind::W_v), 0, 0, 2.5f});
  EXPECT_EQ(threaded.get(*f.doc), nullptr);
  f.doc->apply(SetCell{StageId::input(StageKind::W_v), 0, 1, -1.5f});
  g = wait();
  ASSERT_NE(g, nullptr) << threaded.problem();
  EXPECT_EQ(g->loss, sync.get(*f.doc)->loss);
  EXPECT_EQ(*g->find(StageId::input(StageKind::Output)), *sync.get(*f.doc)->find(StageId::input(StageKind::Output)));

  // a model without the backward pass says so once its thread has tried
  LayerOfModel untied = open_layer("mingpt-linear-bf16", 0);
  threaded.set_model(untied.loss());
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (threaded.get(*untied.doc) == nullptr && threaded.computing() && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(threaded.get(*untied.doc), nullptr);
  EXPECT_NE(threaded.problem().find("untied"), std::string::npos) << threaded.problem();
}
