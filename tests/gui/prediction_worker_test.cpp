// The Model tab's predictions on a thread of their own: a result equals the
// session's own predictions for that output; requests made while one
// computes collapse into the newest, whose result is the one that arrives.

#include "logic/prediction_worker.h"
#include "model_layer_support.h"

#include "attention_lab/document.h"
#include "attention_lab/tokenizer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

using namespace attention_lab;
using namespace attention_lab::gui;

namespace {


// The GPT-2 fixture's layer 0, whose unedited output is the document's.
test::ModelLayer open_fixture() {
  test::ModelLayer f = test::open_model_layer("gpt2-conv1d", 0);
  f.session->set_unedited_attention(Matrix(f.doc->stage(StageId::input(StageKind::Output))));
  return f;
}

Matrix output_of(const Document& doc) { return doc.stage(StageId::input(StageKind::Output)); }

// Waits (on the worker's state, up to a minute on a busy machine) for a result.
std::optional<PredictionWorker::Result> wait_for(PredictionWorker& w) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (std::chrono::steady_clock::now() < give_up) {
    if (!w.working())
      if (auto r = w.take()) return r;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return std::nullopt;
}

}  // namespace

TEST(PredictionWorker, AResultIsTheSessionsPredictionsOfThatOutput) {
  test::ModelLayer f = open_fixture();
  ASSERT_EQ(f.doc->apply(SetPin{PinKey{StageId::of_head(StageKind::Weights, 0), 6, 0}, 1.0f}), "");
  const Matrix pinned = output_of(*f.doc);
  PredictionWorker w;
  w.request({f.session, pinned, 6, 5, f.doc->revision()});
  const auto r = wait_for(w);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->session, f.session);
  EXPECT_EQ(r->revision, f.doc->revision());
  EXPECT_EQ(r->row, 6);
  EXPECT_EQ(r->layer, 0);
  const std::vector<Prediction> want = f.session->predictions(pinned, 6, 5);
  ASSERT_EQ(r->top.size(), want.size());
  bool moved = false;
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(r->top[i].id, want[i].id);
    EXPECT_EQ(r->top[i].probability, want[i].probability);
    EXPECT_EQ(r->top[i].before, want[i].before);
    moved = moved || r->top[i].probability != r->top[i].before;
  }
  EXPECT_TRUE(moved) << "the pin should change the predictions";
  EXPECT_FALSE(w.take()) << "a result is taken once";
}

TEST(PredictionWorker, RequestsMadeWhileOneComputesEndWithTheNewest) {
  test::ModelLayer f = open_fixture();
  PredictionWorker w;
  std::uint64_t last = 0;
  for (int i = 0; i < 20; ++i) {  // a drag: an edit and a request a frame
    ASSERT_EQ(f.doc->apply(SetCell{StageId::input(StageKind::W_v), 0, i % 8, 0.1f * static_cast<float>(i)}), "");
    last = f.doc->revision();
    w.request({f.session, output_of(*f.doc), 6, 3, last});
  }
  std::optional<PredictionWorker::Result> r;
  while (auto next = wait_for(w)) {  // earlier ones may arrive first; the newest comes last
    r = next;
    if (r->revision == last) break;
  }
  ASSERT_TRUE(r);
  EXPECT_EQ(r->revision, last);
  const std::vector<Prediction> want = f.session->predictions(output_of(*f.doc), 6, 3);
  ASSERT_EQ(r->top.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(r->top[i].probability, want[i].probability);
}

TEST(PredictionWorker, DestroyingItWithARequestWaitingEndsCleanly) {
  test::ModelLayer f = open_fixture();
  const long owners = f.session.use_count();
  {
    PredictionWorker w;
    for (int i = 0; i < 5; ++i) w.request({f.session, output_of(*f.doc), i, 3, static_cast<std::uint64_t>(i)});
    EXPECT_GT(f.session.use_count(), owners);  // a request waiting or computing, or a result, shares the session
  }  // joins the thread
  // nothing of the requests or results outlives the worker
  EXPECT_EQ(f.session.use_count(), owners);
}
