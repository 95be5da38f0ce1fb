// Incremental recomputation must give exactly what a full recomputation gives,
// and must skip the work an edit does not need.

#include "attention_lab/document.h"
#include "attention_lab/edit.h"
#include "attention_lab/engine.h"

#include "random_edits.h"
#include "test_support.h"
#include "unit_support.h"

using namespace attention_lab;
using attention_lab::test::engines_identical;
using attention_lab::test::random_scenario;
using attention_lab::test::RandomEdits;
using attention_lab::test::RandomOptions;

namespace {

// The engine of `doc` against a fresh engine computing a copy of its scenario from scratch.
::testing::AssertionResult matches_full_recompute(const Document& doc) {
  const Scenario copy = doc.scenario();
  Engine fresh;
  fresh.recompute_all(copy);
  return engines_identical(doc.engine(), fresh);
}

struct Case {
  std::uint32_t seed;
  RandomOptions options;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  RandomOptions tiny;
  tiny.T = 1, tiny.d_model = 1, tiny.heads = 1, tiny.d_k = 1, tiny.d_v = 1;
  out.push_back({1, tiny});
  RandomOptions small;
  out.push_back({2, small});
  RandomOptions wide;
  wide.T = 6, wide.d_model = 8, wide.heads = 4, wide.d_k = 2, wide.d_v = 3, wide.bias = true, wide.w_o = true;
  wide.b_o = true, wide.mask = MaskKind::Causal, wide.d_out = 5;
  out.push_back({3, wide});
  RandomOptions custom;
  custom.T = 7, custom.heads = 3, custom.mask = MaskKind::Custom, custom.b_o = true;
  out.push_back({4, custom});
  return out;
}

// Applies `count` random edits (with some undo/redo mixed in) and compares
// after every one.
void run_random_edits(const Case& c, int count, bool resize) {
  Document doc(random_scenario(c.seed, c.options));
  RandomEdits edits(c.seed * 7919u + (resize ? 1u : 0u));
  int applied = 0;
  for (int i = 0; i < count; ++i) {
    const int action = edits.pick(0, 9);
    std::string what;
    if (action == 0 && doc.can_undo()) {
      what = "undo " + doc.undo_label();
      doc.undo();
    } else if (action == 1 && doc.can_redo()) {
      what = "redo " + doc.redo_label();
      doc.redo();
    } else {
      const Edit e = edits.next(doc.scenario(), resize);
      what = describe(e);
      if (doc.apply(e).empty()) ++applied;
    }
    ASSERT_EQ(validate(doc.scenario()), "") << "after step " << i << ": " << what;
    ASSERT_TRUE(matches_full_recompute(doc)) << "seed " << c.seed << ", after step " << i << ": " << what;
  }
  EXPECT_GT(applied, count / 2) << "most random edits should be valid";
}

}  // namespace

// [SECTION] Incremental equals full

TEST(Incremental, RandomEditsWithoutResizingMatchAFullRecompute) {
  for (const Case& c : cases()) run_random_edits(c, 300, false);
}

TEST(Incremental, RandomEditsWithResizingMatchAFullRecompute) {
  for (const Case& c : cases()) run_random_edits(c, 300, true);
}

TEST(Incremental, EveryPresetSurvivesRandomEdits) {
  for (const auto& p : presets()) {
    Document doc(*make_preset(p.name));
    RandomEdits edits(99);
    for (int i = 0; i < 150; ++i) {
      const Edit e = edits.next(doc.scenario());
      doc.apply(e);
      ASSERT_TRUE(matches_full_recompute(doc)) << p.name << ", step " << i << ": " << describe(e);
    }
  }
}

// [SECTION] Work that is skipped

namespace {

// An engine driven directly, the way Document drives it, so its counters can be reset.
struct Driven {
  Scenario s;
  Engine e;
  explicit Driven(Scenario scenario) : s(std::move(scenario)) {
    e.recompute_all(s);
    e.reset_counters();
  }
  void apply(const Edit& edit) {
    Applied a = apply_edit(s, edit);
    ASSERT_EQ(a.error, "");
    e.recompute(s, a.stale);
  }
  std::uint64_t version(StageKind k, int h) const { return e.version(StageId::of_head(k, h)); }
};

}  // namespace

TEST(Incremental, EditingOneValueWeightRecomputesNoScores) {
  Driven d(attention_lab::test::preset("multi-head"));
  d.apply(SetCell{StageId::input(StageKind::W_v), 3, 5, 0.25f});
  EXPECT_EQ(d.e.recompute_count(StageKind::Q), 0);
  EXPECT_EQ(d.e.recompute_count(StageKind::K), 0);
  EXPECT_EQ(d.e.recompute_count(StageKind::Scores), 0);
  EXPECT_EQ(d.e.recompute_count(StageKind::Scaled), 0);
  EXPECT_EQ(d.e.recompute_count(StageKind::Masked), 0);
  EXPECT_EQ(d.e.recompute_count(StageKind::Weights), 0);
  // column 5 with d_v = 4 belongs to head 1: only its values and context
  EXPECT_EQ(d.e.recompute_count(StageKind::V), 1);
  EXPECT_EQ(d.e.recompute_count(StageKind::Context), 1);
  EXPECT_EQ(d.e.recompute_count(StageKind::Output), 1);
}

TEST(Incremental, EditingOneValueWeightThroughADocumentRecomputesNoScores) {
  Document doc(attention_lab::test::preset("book"));
  const int scores_before = doc.engine().recompute_count(StageKind::Scores);
  const int context_before = doc.engine().recompute_count(StageKind::Context);
  ASSERT_EQ(doc.apply(SetCell{StageId::input(StageKind::W_v), 0, 0, 0.5f}), "");
  EXPECT_EQ(doc.engine().recompute_count(StageKind::Scores), scores_before);
  EXPECT_EQ(doc.engine().recompute_count(StageKind::Context), context_before + 1);
}

TEST(Incremental, EditingAQueryColumnOfHeadOneRecomputesOnlyHeadOne) {
  Driven d(attention_lab::test::preset("multi-head"));  // 4 heads, d_k = 4
  std::uint64_t before[4];
  for (int h = 0; h < 4; ++h) before[h] = d.version(StageKind::Scores, h);
  d.apply(SetCell{StageId::input(StageKind::W_q), 2, 4 + 1, -0.5f});  // column 5: head 1
  EXPECT_EQ(d.e.recompute_count(StageKind::Q), 1);
  EXPECT_EQ(d.e.recompute_count(StageKind::K), 0);
  EXPECT_EQ(d.e.recompute_count(StageKind::V), 0);
  for (auto k : {StageKind::Scores, StageKind::Scaled, StageKind::Masked, StageKind::Weights, StageKind::Context})
    EXPECT_EQ(d.e.recompute_count(k), 1) << kind_name(k);
  for (int h = 0; h < 4; ++h) {
    if (h == 1)
      EXPECT_NE(d.version(StageKind::Scores, h), before[h]);
    else
      EXPECT_EQ(d.version(StageKind::Scores, h), before[h]) << "head " << h;
  }
  // the head's view of Q changed, the other heads' views did not
  EXPECT_NE(d.e.version(StageId::of_head(StageKind::HeadQ, 1)), 0u);
}

TEST(Incremental, EditingTheOutputProjectionRecomputesOnlyTheOutput) {
  Driven d(attention_lab::test::preset("multi-head"));
  d.apply(SetCell{StageId::input(StageKind::W_o), 0, 0, 1.5f});
  for (int k = static_cast<int>(StageKind::Q); k < static_cast<int>(StageKind::Output); ++k)
    EXPECT_EQ(d.e.recompute_count(static_cast<StageKind>(k)), 0) << kind_name(static_cast<StageKind>(k));
  EXPECT_EQ(d.e.recompute_count(StageKind::Output), 1);
}

TEST(Incremental, TemperatureRecomputesFromScaledOnward) {
  Driven d(attention_lab::test::preset("multi-head"));
  d.apply(SetTemperature{2.0f});
  EXPECT_EQ(d.e.recompute_count(StageKind::Q), 0);
  EXPECT_EQ(d.e.recompute_count(StageKind::Scores), 0);
  EXPECT_EQ(d.e.recompute_count(StageKind::Scaled), 4);
  EXPECT_EQ(d.e.recompute_count(StageKind::Weights), 4);
}

TEST(Incremental, MaskChangeRecomputesNoScores) {
  Driven d(attention_lab::test::preset("multi-head"));
  d.apply(SetMask{MaskKind::None, std::nullopt});
  EXPECT_EQ(d.e.recompute_count(StageKind::Scores), 0);
  EXPECT_EQ(d.e.recompute_count(StageKind::Scaled), 0);
  EXPECT_EQ(d.e.recompute_count(StageKind::Masked), 4);
}

TEST(Incremental, PinningOneHeadsWeightRecomputesOnlyThatHead) {
  Driven d(attention_lab::test::preset("multi-head"));
  d.apply(SetPin{{StageId::of_head(StageKind::Weights, 2), 3, 1}, 0.5f});
  EXPECT_EQ(d.e.recompute_count(StageKind::Scores), 0);
  EXPECT_EQ(d.e.recompute_count(StageKind::Masked), 0);
  EXPECT_EQ(d.e.recompute_count(StageKind::Weights), 1);
  EXPECT_EQ(d.e.recompute_count(StageKind::Context), 1);
  EXPECT_EQ(d.e.recompute_count(StageKind::Output), 1);
}

TEST(Incremental, RenamingATokenRecomputesNoProjection) {
  Driven d(attention_lab::test::preset("multi-head"));
  d.apply(SetTokenLabel{0, "a"});
  EXPECT_EQ(d.e.recompute_count(StageKind::Q), 0);
  EXPECT_EQ(d.e.recompute_count(StageKind::Scores), 0);
}

TEST(Incremental, VersionsChangeOnlyForRewrittenStages) {
  Driven d(attention_lab::test::preset("multi-head"));
  const auto scores0 = d.version(StageKind::Scores, 0);
  const auto output = d.e.version(StageId::input(StageKind::Output));
  d.apply(SetCell{StageId::input(StageKind::W_v), 0, 0, 0.75f});  // head 0's values
  EXPECT_EQ(d.version(StageKind::Scores, 0), scores0);
  EXPECT_NE(d.e.version(StageId::input(StageKind::Output)), output);
  EXPECT_NE(d.e.version(StageId::input(StageKind::W_v)), 0u);
}
