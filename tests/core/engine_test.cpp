// The engine's storage decisions (issue 4): scores computed lazily where the
// mask hides them, scaled/masked/weights materialized on demand, bytes kept,
// cancellation and progress, copies and moves.

#include "attention_lab/document.h"
#include "attention_lab/edit.h"
#include "attention_lab/engine.h"
#include "attention_lab/stage_info.h"

#include "test_support.h"
#include "unit_support.h"

#include <atomic>
#include <exception>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using namespace attention_lab;
using attention_lab::test::engines_near;
using attention_lab::test::random_scenario;
using attention_lab::test::RandomOptions;

namespace {

using attention_lab::test::head;

RandomOptions options(int T, int d_model, int heads, int d_head, MaskKind mask) {
  RandomOptions o;
  o.T = T, o.d_model = d_model, o.heads = heads, o.d_k = d_head, o.d_v = d_head, o.mask = mask;
  o.w_o = true;
  return o;
}

// scores_h = Q_h·K_hᵀ computed here, in double.
Eigen::MatrixXd reference_scores(const Engine& e, int h) {
  const Eigen::MatrixXd q = e.stage(head(StageKind::HeadQ, h)).cast<double>();
  const Eigen::MatrixXd k = e.stage(head(StageKind::HeadK, h)).cast<double>();
  return q * k.transpose();
}

}  // namespace

// [SECTION] Scores behind a causal mask

TEST(Engine, MaskedScoresStillShowTheirTrueDotProducts) {
  // T = 200: blocks of 64 cells, a partial last block; the forward pass skips
  // the blocks above the diagonal, stage() fills them in.
  const Scenario s = random_scenario(4, options(200, 16, 2, 8, MaskKind::Causal));
  Document doc(s);
  for (int round = 0; round < 2; ++round) {
    for (int h = 0; h < 2; ++h) {
      const MatrixView scores = doc.stage(head(StageKind::Scores, h));
      const Eigen::MatrixXd ref = reference_scores(doc.engine(), h);
      const double scale = ref.cwiseAbs().maxCoeff();
      for (Eigen::Index r = 0; r < ref.rows(); ++r)
        for (Eigen::Index c = 0; c < ref.cols(); ++c)
          ASSERT_NEAR(scores(r, c), ref(r, c), 1e-5 * scale) << "head " << h << " [" << r << "][" << c << "]";
    }
    // and again after a query weight recomputed head 1 and an X edit touched both
    ASSERT_EQ(doc.apply(SetCell{StageId::input(StageKind::W_q), 3, 9, 0.75f}), "");
    ASSERT_EQ(doc.apply(SetCell{StageId::input(StageKind::X), 150, 2, -1.5f}), "");
  }
}

TEST(Engine, APinInTheMaskedHalfOfScoresIsShown) {
  Scenario s = random_scenario(5, options(130, 8, 1, 4, MaskKind::Causal));
  s.pins[PinKey{head(StageKind::Scores, 0), 3, 120}] = 7.0f;
  Engine e;
  e.recompute_all(s);
  EXPECT_EQ(e.stage(head(StageKind::Scores, 0))(3, 120), 7.0f);
  EXPECT_EQ(e.stage(head(StageKind::Masked, 0))(3, 120), -std::numeric_limits<float>::infinity());
}

// [SECTION] Stages materialized on demand

TEST(Engine, DerivedStagesMatchTheirDefinitions) {
  Scenario s = random_scenario(6, options(70, 8, 2, 4, MaskKind::Custom));
  s.temperature = 0.5f;
  Engine e;
  e.recompute_all(s);
  const float factor = 1.0f / (2.0f * 0.5f);  // 1/√d_k/temperature
  for (int h = 0; h < 2; ++h) {
    const MatrixView scores = e.stage(head(StageKind::Scores, h));
    const MatrixView scaled = e.stage(head(StageKind::Scaled, h));
    const MatrixView masked = e.stage(head(StageKind::Masked, h));
    const MatrixView weights = e.stage(head(StageKind::Weights, h));
    for (Eigen::Index r = 0; r < 70; ++r) {
      RowVector expected(70);
      for (Eigen::Index c = 0; c < 70; ++c) {
        EXPECT_FLOAT_EQ(scaled(r, c), scores(r, c) * factor);
        const float m = s.custom_mask(r, c) != 0.0f ? scaled(r, c) : -std::numeric_limits<float>::infinity();
        EXPECT_EQ(masked(r, c), m);
      }
      RowVector w(70);
      softmax_row(masked.row(r), w);
      EXPECT_TRUE(attention_lab::test::matrices_near(weights.row(r), w, 1e-6, 1e-7, "weights row"));
    }
  }
}

TEST(Engine, RowsOfAStageAreThoseOfTheWholeStage) {
  // Rows of derived stages are computed without the whole matrix, with a
  // current cached copy and without one, after incremental edits and with
  // pins and a row that may attend to nothing; ranges are clamped.
  Scenario s = random_scenario(12, options(150, 12, 3, 4, MaskKind::Custom));
  s.custom_mask.edit().row(7).setZero();
  s.pins[PinKey{head(StageKind::Scaled, 1), 20, 3}] = 2.5f;
  s.pins[PinKey{head(StageKind::Weights, 2), 90, 10}] = 0.5f;
  Document doc(s);
  for (int round = 0; round < 3; ++round) {
    for (int h = 0; h < 3; ++h)
      for (const StageKind k : {StageKind::Scores, StageKind::Scaled, StageKind::Masked, StageKind::Weights,
                                StageKind::Context}) {
        const StageId id = head(k, h);
        for (const auto& [first, count] : std::vector<std::pair<int, int>>{{0, 150}, {5, 25}, {140, 25}, {88, 4}}) {
          const Matrix part = doc.engine().rows(id, first, count);
          const Eigen::Index n = std::min(count, 150 - first);
          ASSERT_EQ(part.rows(), n);
          ASSERT_TRUE(attention_lab::test::matrices_identical(part, doc.stage(id).middleRows(first, n), to_string(id)))
              << "rows " << first << "+" << count << ", round " << round;
        }
      }
    EXPECT_EQ(doc.engine().rows(head(StageKind::Weights, 0), 200, 5).rows(), 0);
    EXPECT_EQ(doc.engine().rows(StageId::input(StageKind::X), -3, 2).rows(), 2);
    ASSERT_EQ(doc.apply(SetCell{StageId::input(StageKind::X), 30 + round, 2, 1.5f}), "");
    ASSERT_EQ(doc.apply(SetCell{StageId::input(StageKind::W_k), 1, 5, -0.25f}), "");
  }
}

TEST(Engine, ViewsOfDerivedStagesStayValidWhileFewOthersAreRequested) {
  const Scenario s = random_scenario(7, options(40, 8, 3, 4, MaskKind::Causal));
  Engine e;
  e.recompute_all(s);
  const MatrixView first = e.stage(head(StageKind::Weights, 0));
  const Matrix copy = first;
  // kDerivedCacheSize - 1 other derived stages
  int requested = 0;
  for (int h = 0; h < 3 && requested < static_cast<int>(Engine::kDerivedCacheSize) - 1; ++h)
    for (auto k : {StageKind::Scaled, StageKind::Masked, StageKind::Weights})
      if (!(h == 0 && k == StageKind::Weights) && requested < static_cast<int>(Engine::kDerivedCacheSize) - 1) {
        (void)e.stage(head(k, h));
        ++requested;
      }
  EXPECT_EQ(Matrix(first), copy);
  EXPECT_EQ(e.stage(head(StageKind::Weights, 0)).data(), first.data());  // the same storage, not a new copy
}

TEST(Engine, BytesKeptCountEveryMatrix) {
  const Scenario s = random_scenario(8, options(256, 32, 4, 8, MaskKind::Causal));
  Engine e;
  e.recompute_all(s);
  const std::size_t scores = 4u * 256u * 256u * sizeof(float);
  const std::size_t before = e.bytes_kept();
  EXPECT_GT(before, scores);
  // one T×T scores matrix per head, the mask, the rows (Q, K, V, U, the
  // values packed for the head pass…); scaled, masked and weights (a T×T
  // per head each) are not stored
  EXPECT_LT(before, scores + 3u * 256u * 256u * sizeof(float));
  (void)e.stage(head(StageKind::Weights, 1));
  // the copy, and the exponentials it keeps with their offsets and lengths (KeptExps)
  EXPECT_EQ(e.bytes_kept(), before + 2u * 256u * 256u * sizeof(float) + 256u * (sizeof(float) + sizeof(Eigen::Index)));
  (void)e.stage(head(StageKind::Masked, 1));  // other copies keep none
  EXPECT_EQ(e.bytes_kept(), before + 3u * 256u * 256u * sizeof(float) + 256u * (sizeof(float) + sizeof(Eigen::Index)));
}

// [SECTION] Cancellation and progress

TEST(Engine, ProgressEndsAtOne) {
  const Scenario s = random_scenario(9, options(100, 16, 2, 8, MaskKind::Causal));
  ComputeControl control;
  Engine e;
  e.set_control(&control);
  e.recompute_all(s);
  EXPECT_EQ(control.progress.load(), 1.0f);
}

TEST(Engine, ACancelledRecomputeThrowsAndAFreshOneWorks) {
  const Scenario s = random_scenario(10, options(100, 16, 2, 8, MaskKind::Causal));
  ComputeControl control;
  control.cancel = true;
  Engine e;
  e.set_control(&control);
  EXPECT_THROW(e.recompute_all(s), Cancelled);
  control.cancel = false;
  e.recompute_all(s);
  Engine fresh;
  fresh.recompute_all(s);
  EXPECT_TRUE(engines_near(e, fresh, 0.0));
}

TEST(Engine, AnEngineComputedInTheBackgroundNeverRepeatsAnEarlierVersion) {
  // Undoing a change at a large size moves in an engine computed elsewhere;
  // caches keyed by version (textures, Compare's differences) must see every
  // stage as new. Before versions were unique, the fresh engine counted from 1
  // again and could hand out exactly the versions cached for other values.
  Document doc(random_scenario(13, options(20, 8, 2, 4, MaskKind::Causal)));
  std::map<StageId, std::uint64_t> seen;
  for (const StageId id : pipeline(doc.scenario())) seen[id] = doc.engine().version(id);
  std::string error;
  auto change = doc.prepare(SetToggle{Toggle::Scale, false}, error);
  ASSERT_TRUE(change) << error;
  change->compute();
  doc.commit(std::move(change));
  auto undo = doc.prepare_undo();
  ASSERT_TRUE(undo);
  undo->compute();
  doc.commit(std::move(undo));
  std::set<std::uint64_t> before;
  for (const auto& [id, v] : seen) before.insert(v);
  for (const StageId id : pipeline(doc.scenario())) {
    const std::uint64_t now = doc.engine().version(id);
    EXPECT_EQ(before.count(now), 0u) << to_string(id) << " has version " << now << " again";
    EXPECT_GT(now, seen.at(id)) << to_string(id);
  }
  Engine a, b;
  a.recompute_all(doc.scenario());
  b.recompute_all(doc.scenario());
  for (const StageId id : pipeline(doc.scenario())) EXPECT_NE(a.version(id), b.version(id)) << to_string(id);
}

TEST(Engine, CancellingFromAnotherThreadStopsALongRecompute) {
  // Big enough to take far longer than noticing the cancel (checks come
  // between row blocks of every product).
  const Scenario s = random_scenario(11, options(2048, 256, 4, 64, MaskKind::None));
  ComputeControl control;
  Engine e;
  e.set_control(&control);
  std::exception_ptr error;
  std::thread worker([&] {
    try {
      e.recompute_all(s);
    } catch (...) {
      error = std::current_exception();
    }
  });
  while (control.progress.load() < 0.02f && !error) std::this_thread::yield();
  const float progress_at_cancel = control.progress.load();
  control.cancel = true;
  worker.join();
  ASSERT_TRUE(error) << "finished before the cancel was noticed (progress " << progress_at_cancel << ")";
  EXPECT_THROW(std::rethrow_exception(error), Cancelled);
  EXPECT_LT(control.progress.load(), 1.0f);
}

// [SECTION] Copies and moves

TEST(Engine, AnEngineComputedElsewhereCanBeMovedInAndRebound) {
  const Scenario s = random_scenario(12, options(90, 12, 3, 4, MaskKind::Causal));
  Engine reference;
  reference.recompute_all(s);

  // The GUI computes into a separate engine on a worker, then moves it in.
  auto owned = std::make_unique<Scenario>(s);
  Engine worker_result;
  {
    ComputeControl job;  // the worker's: gone once the job is done
    worker_result.set_control(&job);
    std::thread worker([&] { worker_result.recompute_all(*owned); });
    worker.join();
    EXPECT_EQ(job.progress.load(), 1.0f);
  }
  Engine in_place = std::move(worker_result);  // starts without a control
  EXPECT_TRUE(engines_near(in_place, reference, 0.0));
  in_place.recompute_all(*owned);  // would write to the destroyed control if the move kept it

  // The scenario moves too: rebind, then keep editing incrementally.
  Scenario moved = std::move(*owned);
  owned.reset();
  in_place.rebind(moved);
  Applied a = apply_edit(moved, SetCell{StageId::input(StageKind::X), 40, 3, 0.5f});
  ASSERT_EQ(a.error, "");
  in_place.recompute(moved, a.stale);
  Engine fresh;
  fresh.recompute_all(moved);
  EXPECT_TRUE(engines_near(in_place, fresh, 1e-5));

  const Engine copy = in_place;
  EXPECT_TRUE(engines_near(copy, in_place, 0.0));
}

// [SECTION] The generated mask is kept across full recomputes

// A full recompute of the same size keeps the causal mask it built; a mask
// cell edited since (the scenario's mask made custom) is not kept for a
// causal scenario recomputed afterwards.
TEST(Engine, ARecomputeAfterAMaskCellEditBuildsTheCausalMaskAgain) {
  Scenario s = random_scenario(21, options(80, 8, 2, 4, MaskKind::Causal));
  const Scenario causal = s;
  Engine e;
  e.recompute_all(s);
  const Matrix lower = e.stage(StageId::input(StageKind::Mask));
  e.recompute_all(causal);  // the same size: the mask it built is reused
  EXPECT_EQ(Matrix(e.stage(StageId::input(StageKind::Mask))), lower);
  const Applied a = apply_edit(s, SetCell{StageId::input(StageKind::Mask), 3, 70, 1.0f});
  ASSERT_EQ(a.error, "");
  ASSERT_EQ(s.mask_kind, MaskKind::Custom);
  e.recompute(s, a.stale);
  EXPECT_EQ(e.stage(StageId::input(StageKind::Mask))(3, 70), 1.0f);
  e.recompute_all(causal);
  EXPECT_EQ(Matrix(e.stage(StageId::input(StageKind::Mask))), lower);
  EXPECT_EQ(e.stage(head(StageKind::Weights, 1))(3, 70), 0.0f);
  const Engine fresh = [&] {
    Engine f;
    f.recompute_all(causal);
    return f;
  }();
  for (int h = 0; h < 2; ++h) EXPECT_EQ(Matrix(e.stage(head(StageKind::Weights, h))), Matrix(fresh.stage(head(StageKind::Weights, h))));
}

TEST(Engine, RefusesAStageItDoesNotHoldByName) {
  const Scenario s = random_scenario(3, options(5, 4, 1, 4, MaskKind::Causal));
  Engine e;
  e.recompute_all(s);
  const StageId weights = StageId::of_head(StageKind::Weights, 0);
  EXPECT_EQ(e.not_held(weights), "");
  StageId grad = weights;
  grad.role = Role::Gradient;
  StageId later = weights;
  later.layer = 5;
  const StageId head3 = StageId::of_head(StageKind::Weights, 3);
  EXPECT_EQ(e.not_held(grad), "grad.weights[0]: the engine holds the values of one layer; gradients come from the backward pass of a loss");
  EXPECT_EQ(e.not_held(later), "L5.weights[0]: the engine computes one layer (layer 0), not layer 5");
  EXPECT_EQ(e.not_held(head3), "weights[3]: expected a head from 0 to 0, found 3");
  // Never the values of some other stage: a gradient id is not the values.
  for (const StageId id : {grad, later, head3}) {
    EXPECT_THROW(e.stage(id), StageNotHeld) << to_string(id);
    EXPECT_THROW(e.version(id), StageNotHeld) << to_string(id);
    EXPECT_THROW(e.rows(id, 0, 1), StageNotHeld) << to_string(id);
  }
  try {
    e.stage(grad);
  } catch (const StageNotHeld& refused) {
    EXPECT_STREQ(refused.what(), e.not_held(grad).c_str());
  }
}
