// The stage registry walked entry by entry: every stage kind is named,
// computed in the shape the table says, described, traced where the table
// says, part of the pipeline when its setting is on, and every cell of a view
// reaches its storage and back.

#include "attention_lab/cell_ref.h"
#include "attention_lab/engine.h"
#include "attention_lab/seeded_fill.h"
#include "attention_lab/stage_info.h"
#include "attention_lab/edit.h"
#include "attention_lab/stage_registry.h"
#include "attention_lab/trace_io.h"
#include "test_support.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>

using namespace attention_lab;
using attention_lab::test::preset;

namespace {

// Two heads with d_k ≠ d_v ≠ d_out and every optional stage on, so no two
// extents coincide by accident.
Scenario everything_on() {
  Scenario s = preset("multi-head");
  s.use_bias = true;
  s.use_w_o = true;
  s.use_output_bias = true;
  s.alibi = true;
  s.rope.on = true;
  // cross-attention over as many tokens (so the causal mask still applies) of another sequence
  s.X_kv = seeded_matrix(5, StageKind::X, s.T(), s.d_model(), s.d_model());
  // two query heads per K/V head
  if (const auto a = apply_edit(s, SetDimension{Dimension::kv_heads, s.heads / 2}); !a.error.empty()) std::abort();
  const Dims d = s.dims();
  s.use_sinks = true;
  s.sinks = Matrix::Constant(1, d.heads, 0.5f);
  s.b_q = Matrix::Constant(1, d.heads * d.d_k, 0.1f);
  s.b_k = Matrix::Constant(1, d.kv_heads * d.d_k, -0.1f);
  s.b_v = Matrix::Constant(1, d.kv_heads * d.d_v, 0.2f);
  s.W_o = seeded_matrix(7, StageKind::W_o, d.heads * d.d_v, 5, d.heads * d.d_v);
  s.b_o = Matrix::Constant(1, 5, 0.3f);
  // Q and K normed per head before RoPE, with gains that are not all 1
  QkNorm norm;
  norm.scope = QkNormScope::PerHead;
  if (const auto a = apply_edit(s, SetQkNorm{norm}); !a.error.empty()) std::abort();
  s.q_norm = seeded_matrix(11, StageKind::QNorm, 1, d.d_k, 1);
  s.k_norm = seeded_matrix(12, StageKind::KNorm, 1, d.d_k, 1);
  s.softcap = 4.0f;  // Gemma 2's soft-cap of the scaled scores
  return s;
}

const Scenario& everything_on_cached() {
  static const Scenario s = everything_on();
  return s;
}

std::vector<StageId> ids_of(const StageSpec& sp, const Dims& d) {
  std::vector<StageId> out;
  if (!sp.per_head) return {StageId::input(sp.kind)};
  for (int h = 0; h < d.heads; ++h) out.push_back(StageId::of_head(sp.kind, h));
  return out;
}

}  // namespace

TEST(Registry, IsInStageKindOrderAndNamesAreUnique) {
  std::set<std::pair<std::string, bool>> names;
  ASSERT_EQ(all_stages().size(), static_cast<std::size_t>(kStageKindCount));
  for (int k = 0; k < kStageKindCount; ++k) {
    const StageSpec& sp = all_stages()[static_cast<std::size_t>(k)];
    EXPECT_EQ(sp.kind, static_cast<StageKind>(k));
    EXPECT_TRUE(names.insert({sp.id_name, sp.per_head}).second) << sp.id_name;
    EXPECT_EQ(&spec(sp.kind), &sp);
  }
}

TEST(Registry, EveryStageIsComputedInTheShapeTheTableGives) {
  const Scenario s = everything_on();
  ASSERT_EQ(validate(s), "");
  Engine engine;
  engine.recompute_all(s);
  const Dims d = s.dims();
  for (const StageSpec& sp : all_stages())
    for (const StageId id : ids_of(sp, d)) {
      const MatrixView m = engine.stage(id);
      EXPECT_EQ(m.rows(), stage_rows(sp.kind, d)) << to_string(id);
      EXPECT_EQ(m.cols(), stage_cols(sp.kind, d)) << to_string(id);
      EXPECT_GT(m.size(), 0) << to_string(id);
      EXPECT_NE(engine.version(id), 0u) << to_string(id) << " was never computed";
    }
}

TEST(Registry, EveryStageIsDescribedFromItsEntry) {
  const Scenario s = everything_on();
  const Dims d = s.dims();
  for (const StageSpec& sp : all_stages())
    for (const StageId id : ids_of(sp, d)) {
      const StageInfo info = describe_stage(s, id);
      const std::string what = to_string(id);
      EXPECT_FALSE(info.name.empty()) << what;
      EXPECT_FALSE(info.symbol.empty()) << what;
      EXPECT_NE(info.formula.find(info.symbol), std::string::npos) << what << ": " << info.formula;
      EXPECT_FALSE(info.explanation.empty()) << what;
      EXPECT_EQ(info.rows, stage_rows(sp.kind, d)) << what;
      EXPECT_EQ(info.cols, stage_cols(sp.kind, d)) << what;
      EXPECT_EQ(info.row_labels.size(), static_cast<std::size_t>(info.rows)) << what;
      EXPECT_EQ(info.col_labels.size(), static_cast<std::size_t>(info.cols)) << what;
      EXPECT_EQ(info.editability == Editability::EditCells, sp.input) << what;
      EXPECT_EQ(info.inputs.empty(), sp.input || sp.positional)
          << what << ": inputs and positional stages are made of no stage, computed stages of some";
      for (const StageId in : info.inputs) EXPECT_EQ(stage_problem(s, in), "") << what << " reads " << to_string(in);
    }
}

TEST(Registry, EveryStageIsInThePipelineExactlyWhenItsSettingIsOn) {
  const Scenario on = everything_on();
  Scenario off = on;
  off.use_bias = off.use_w_o = off.use_output_bias = off.alibi = off.use_sinks = false;
  off.qk_norm.scope = QkNormScope::Off;
  off.softcap = 0.0f;
  for (const Scenario* s : std::initializer_list<const Scenario*>{&on, &off}) {
    const auto stages = pipeline(*s);
    for (const StageSpec& sp : all_stages())
      for (const StageId id : ids_of(sp, s->dims())) {
        const auto n = std::count(stages.begin(), stages.end(), id);
        EXPECT_EQ(n, setting_on(*s, sp.requires_setting) ? 1 : 0) << to_string(id);
      }
  }
}

TEST(Registry, TheTraceHoldsExactlyTheStagesTheTableMarks) {
  const Scenario s = everything_on();
  Engine engine;
  engine.recompute_all(s);
  std::ostringstream out;
  write_trace(out, engine, s);
  const auto trace = nlohmann::json::parse(out.str());
  for (const StageSpec& sp : all_stages()) {
    // "Q" names both the whole matrix (top level) and a head's block (in a head).
    const bool written = sp.per_head ? trace["heads"][0].contains(sp.id_name) : trace.contains(sp.id_name);
    const bool marked = sp.per_head ? sp.trace == Trace::InHead : sp.trace == Trace::Top || sp.trace == Trace::AfterHeads;
    EXPECT_EQ(written, marked) << sp.id_name;
    if (sp.trace == Trace::InHead) {
      EXPECT_EQ(trace["heads"][1][sp.id_name].size(), static_cast<std::size_t>(stage_rows(sp.kind, s.dims())));
    }
  }
}

TEST(Registry, EveryCellOfAViewReachesItsStorageAndBack) {
  const Scenario s = everything_on();
  const Dims d = s.dims();
  Engine engine;
  engine.recompute_all(s);
  for (const StageSpec& sp : all_stages())
    for (const StageId id : ids_of(sp, d))
      for (int r = 0; r < stage_rows(sp.kind, d); ++r)
        for (int c = 0; c < stage_cols(sp.kind, d); ++c) {
          const CellRef cell{id, r, c};
          const auto stored = storage_cell(cell, d);
          ASSERT_TRUE(stored) << to_string(cell);
          EXPECT_EQ(spec(stored->stage.kind).view, ViewKind::Stored) << to_string(cell);
          EXPECT_EQ(engine.stage(stored->stage)(stored->row, stored->col), engine.stage(id)(r, c)) << to_string(cell);
          const auto back = view_cell(*stored, id, d);
          ASSERT_TRUE(back) << to_string(cell);
          EXPECT_EQ(*back, cell);
        }
}

TEST(Registry, HeadOfAColumnFollowsTheHeadBlocks) {
  const Scenario s = everything_on();
  const Dims d = s.dims();
  for (const StageSpec& sp : all_stages()) {
    if (sp.per_head) continue;
    for (int c = 0; c < stage_cols(sp.kind, d); ++c) {
      const int h = head_of_column(sp.kind, c, d);
      const int expected = sp.cols == Extent::QWidth || sp.cols == Extent::KWidth       ? c / d.d_k
                           : sp.cols == Extent::VWidth || sp.cols == Extent::ContextWidth ? c / d.d_v
                           : sp.cols == Extent::Heads  ? c
                                                       : -1;
      EXPECT_EQ(h, expected) << sp.id_name << " column " << c;
    }
  }
}

// Provenance agrees with the inputs: every cell's sources lie in a stage it is
// computed from (a view's also in its storage's), inside that stage's shape,
// in the pipeline; computed stages have some, inputs none.
TEST(Registry, EveryCellsSourcesLieInItsInputsAndInsideTheirShapes) {
  Scenario rope_off = everything_on();
  rope_off.rope.on = false;
  for (const Scenario* s : std::initializer_list<const Scenario*>{&everything_on_cached(), &rope_off}) {
    const Dims d = s->dims();
    const auto stages = pipeline(*s);
    for (const StageId id : stages) {
      const StageSpec& sp = spec(id.kind);
      std::set<StageId> allowed;
      for (const StageId in : sp.inputs(*s, id.head)) {
        allowed.insert(in);
        for (const StageId up : spec(in.kind).inputs(*s, in.head)) allowed.insert(up);
      }
      const int rows = stage_rows(id.kind, d), cols = stage_cols(id.kind, d);
      for (const auto& [r, c] : {std::pair{0, 0}, std::pair{rows - 1, cols - 1}, std::pair{rows / 2, cols / 3}}) {
        const std::vector<CellSource> sources = cell_sources(*s, id, r, c);
        EXPECT_EQ(sources.empty(), sp.input || sp.positional) << to_string(id);
        for (const CellSource& src : sources) {
          const std::string what = to_string(id) + " (" + std::to_string(r) + "," + std::to_string(c) + ") ← " +
                                   to_string(src.stage);
          EXPECT_TRUE(allowed.count(src.stage)) << what << " is not among its inputs";
          EXPECT_EQ(std::count(stages.begin(), stages.end(), src.stage), 1) << what << " is not in the pipeline";
          const int sr = stage_rows(src.stage.kind, d), sc = stage_cols(src.stage.kind, d);
          EXPECT_LT(src.row, sr) << what;
          EXPECT_LT(src.col, sc) << what;
          EXPECT_LT(src.cell_row, sr) << what;
          EXPECT_LT(src.cell_col, sc) << what;
          EXPECT_TRUE(src.row >= 0 || src.col >= 0 || (src.cell_row >= 0 && src.cell_col >= 0)) << what << " lights nothing";
        }
      }
    }
  }
}
