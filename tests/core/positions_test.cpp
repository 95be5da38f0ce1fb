// Grouped-query heads (query heads sharing K/V heads) and RoPE (Q and K
// turned by position): the math against a direct computation, the properties
// that define them, edits and pins under them, and what is refused.

#include "attention_lab/document.h"
#include "attention_lab/edit.h"
#include "attention_lab/scenario_io.h"
#include "attention_lab/stage_info.h"
#include "attention_lab/stage_registry.h"
#include "random_edits.h"
#include "test_support.h"
#include "unit_support.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace attention_lab;
using attention_lab::test::RandomOptions;
using attention_lab::test::random_scenario;

namespace {

using attention_lab::test::head;
using attention_lab::test::in;

Scenario grouped(std::uint32_t seed, int heads, int kv_heads, bool rope = false) {
  RandomOptions o;
  o.T = 7, o.d_model = 6, o.heads = heads, o.kv_heads = kv_heads, o.d_k = 4, o.d_v = 3;
  o.w_o = true, o.bias = true, o.rope = rope;
  o.mask = MaskKind::Causal;
  return random_scenario(seed, o);
}

// The same layer as plain multi-head attention: each query head gets its own
// copy of the K/V head it reads.
Scenario ungrouped(const Scenario& g) {
  Scenario s = g;
  const Dims d = g.dims();
  s.kv_heads = 0;
  s.W_k.edit().resize(d.d_model, d.heads * d.d_k);
  s.W_v.edit().resize(d.d_model, d.heads * d.d_v);
  s.b_k.edit().resize(1, d.heads * d.d_k);
  s.b_v.edit().resize(1, d.heads * d.d_v);
  for (int h = 0; h < d.heads; ++h) {
    s.W_k.edit().middleCols(h * d.d_k, d.d_k) = g.W_k.middleCols(d.kv_head(h) * d.d_k, d.d_k);
    s.W_v.edit().middleCols(h * d.d_v, d.d_v) = g.W_v.middleCols(d.kv_head(h) * d.d_v, d.d_v);
    s.b_k.edit().middleCols(h * d.d_k, d.d_k) = g.b_k.middleCols(d.kv_head(h) * d.d_k, d.d_k);
    s.b_v.edit().middleCols(h * d.d_v, d.d_v) = g.b_v.middleCols(d.kv_head(h) * d.d_v, d.d_v);
  }
  return s;
}

}  // namespace

// [SECTION] Grouped-query heads

TEST(GroupedQuery, QueryHeadHReadsKvHeadHTimesKvOverHeads) {
  const Dims d = grouped(1, 8, 2).dims();
  EXPECT_EQ(d.kv_heads, 2);
  for (int h = 0; h < 8; ++h) EXPECT_EQ(d.kv_head(h), h / 4);
  const Dims mqa = grouped(1, 3, 1).dims();  // multi-query: one K/V head for all
  for (int h = 0; h < 3; ++h) EXPECT_EQ(mqa.kv_head(h), 0);
  const Dims mha = grouped(1, 3, 0).dims();
  for (int h = 0; h < 3; ++h) EXPECT_EQ(mha.kv_head(h), h);
}

TEST(GroupedQuery, IsMultiHeadAttentionWithTheKvHeadsCopied) {
  for (bool rope : {false, true}) {
    const Scenario g = grouped(3, 4, 2, rope);
    ASSERT_EQ(validate(g), "");
    const Scenario m = ungrouped(g);
    ASSERT_EQ(validate(m), "");
    Engine a, b;
    a.recompute_all(g);
    b.recompute_all(m);
    EXPECT_EQ(a.stage(in(StageKind::K)).cols(), 2 * 4);
    EXPECT_EQ(b.stage(in(StageKind::K)).cols(), 4 * 4);
    for (int h = 0; h < 4; ++h)
      for (auto k : {StageKind::HeadQ, StageKind::HeadK, StageKind::HeadV, StageKind::Scores, StageKind::Weights,
                     StageKind::Context})
        EXPECT_TRUE(attention_lab::test::matrices_near_stage(a.stage(head(k, h)), b.stage(head(k, h)), 1e-6,
                                                             to_string(head(k, h))))
            << "rope " << rope;
    EXPECT_TRUE(attention_lab::test::matrices_near_stage(a.stage(in(StageKind::Output)),
                                                         b.stage(in(StageKind::Output)), 1e-6, "output"));
  }
}

TEST(GroupedQuery, HeadsOfAGroupShowTheSameKAndAPinOnItReachesThemAll) {
  Document doc(grouped(4, 4, 2));
  EXPECT_EQ(doc.stage(head(StageKind::HeadK, 0)), doc.stage(head(StageKind::HeadK, 1)));
  EXPECT_NE(doc.stage(head(StageKind::HeadK, 1)), doc.stage(head(StageKind::HeadK, 2)));
  const Matrix before2 = doc.stage(head(StageKind::Weights, 2));
  // K[1] (row 3, col 2) is K (3, 0·4 + 2): pinned, it changes heads 0 and 1 only
  ASSERT_EQ(doc.apply(SetPin{{head(StageKind::HeadK, 1), 3, 2}, 5.0f}), "");
  ASSERT_EQ(doc.scenario().pins.count(PinKey{in(StageKind::K), 3, 2}), 1u);
  EXPECT_EQ(doc.stage(head(StageKind::HeadK, 0))(3, 2), 5.0f);
  EXPECT_EQ(doc.stage(head(StageKind::HeadK, 1))(3, 2), 5.0f);
  EXPECT_EQ(Matrix(doc.stage(head(StageKind::Weights, 2))), before2);
  Engine fresh;
  fresh.recompute_all(doc.scenario());
  EXPECT_TRUE(attention_lab::test::engines_near(doc.engine(), fresh));
  const StageInfo info = describe_stage(doc.scenario(), head(StageKind::HeadK, 3));
  EXPECT_NE(info.explanation.find("shared by query heads 2 to 3"), std::string::npos) << info.explanation;
}

TEST(GroupedQuery, SizesKeepTheGroupingOrSayWhy) {
  Scenario s = grouped(5, 4, 2);
  Applied a = apply_edit(s, SetDimension{Dimension::kv_heads, 3});
  EXPECT_EQ(a.error, "kv_heads: expected a number that divides heads (4), found 3");
  a = apply_edit(s, SetDimension{Dimension::heads, 3});
  EXPECT_EQ(a.error, "heads: expected a multiple of kv_heads (2), found 3; change kv_heads first");
  ASSERT_EQ(apply_edit(s, SetDimension{Dimension::heads, 6}).error, "");
  EXPECT_EQ(s.dims().kv_heads, 2);
  EXPECT_EQ(s.W_k.cols(), 2 * 4);
  EXPECT_EQ(s.W_o.rows(), 6 * 3);
  ASSERT_EQ(apply_edit(s, SetDimension{Dimension::kv_heads, 6}).error, "");
  EXPECT_EQ(s.kv_heads, 0) << "as many K/V heads as query heads is plain multi-head attention";
  EXPECT_EQ(s.W_k.cols(), 6 * 4);
  ASSERT_EQ(apply_edit(s, SetDimension{Dimension::kv_heads, 1}).error, "");
  EXPECT_EQ(s.W_v.cols(), 3);
  EXPECT_EQ(validate(s), "");
  // without grouping, heads and K/V heads change together
  Scenario m = grouped(5, 2, 0);
  ASSERT_EQ(apply_edit(m, SetDimension{Dimension::heads, 3}).error, "");
  EXPECT_EQ(m.W_k.cols(), 3 * 4);
}

TEST(GroupedQuery, RandomEditsMatchAFullRecompute) {
  for (std::uint32_t seed : {31u, 32u, 33u, 34u}) {
    RandomOptions o;
    o.T = seed % 2 ? 9 : 70;  // 70: more than one 64-row block
    o.heads = 4, o.kv_heads = seed % 3 == 0 ? 1 : 2;
    o.w_o = seed % 2 == 0;
    o.mask = static_cast<MaskKind>(seed % 4 == 3 ? 3 : seed % 3);
    const Scenario s = random_scenario(seed, o);
    ASSERT_EQ(validate(s), "");
    EXPECT_TRUE(attention_lab::test::random_edits_match_full_recompute(s, seed, 60));
  }
}

// [SECTION] RoPE

TEST(Rope, TurnsEachPairByThePositionTimesItsFrequency) {
  for (RopePairs pairs : {RopePairs::Half, RopePairs::Interleaved}) {
    RandomOptions o;
    o.T = 6, o.heads = 2, o.d_k = 6, o.rope = true, o.pairs = pairs;
    Scenario s = random_scenario(8, o);
    s.rope.theta = 100.0f;
    const Document doc(s);
    for (int h = 0; h < 2; ++h) {
      const MatrixView pre = doc.stage(head(StageKind::HeadQUnrotated, h));
      const MatrixView q = doc.stage(head(StageKind::HeadQ, h));
      for (int p = 0; p < 6; ++p)
        for (int k = 0; k < 3; ++k) {
          const double angle = p * std::pow(100.0, -2.0 * k / 6.0);
          const int i = pairs == RopePairs::Half ? k : 2 * k, j = pairs == RopePairs::Half ? k + 3 : 2 * k + 1;
          EXPECT_NEAR(q(p, i), double(pre(p, i)) * std::cos(angle) - double(pre(p, j)) * std::sin(angle), 1e-6);
          EXPECT_NEAR(q(p, j), double(pre(p, j)) * std::cos(angle) + double(pre(p, i)) * std::sin(angle), 1e-6);
        }
      EXPECT_EQ(Matrix(pre.row(0)), Matrix(q.row(0))) << "position 0 is not turned";
    }
  }
}

TEST(Rope, TheSameTokensScoreByHowFarApartTheyAre) {
  // Every token the same: without positions every score of a row is equal;
  // with RoPE a score depends on j − i alone.
  RandomOptions o;
  o.T = 9, o.heads = 2, o.d_k = 8, o.rope = true;
  Scenario s = random_scenario(9, o);
  for (Eigen::Index t = 1; t < s.X.rows(); ++t) s.X.edit().row(t) = s.X.get().row(0);
  const Document doc(s);
  for (int h = 0; h < 2; ++h) {
    const MatrixView S = doc.stage(head(StageKind::Scores, h));
    for (int i = 1; i < 9; ++i)
      for (int j = 1; j < 9; ++j) EXPECT_NEAR(S(i, j), S(i - 1, j - 1), 1e-5) << h << ": " << i << "," << j;
    EXPECT_GT(std::abs(S(4, 4) - S(4, 0)), 1e-3) << "distance changes the score";
  }
}

TEST(Rope, PinsGoOnTheRotatedQueriesAndNotBeforeRotation) {
  RandomOptions o;
  o.T = 5, o.heads = 2, o.d_k = 4, o.rope = true;
  Document doc(random_scenario(10, o));
  ASSERT_EQ(doc.apply(SetPin{{head(StageKind::HeadQ, 1), 2, 3}, 4.0f}), "");
  EXPECT_EQ(doc.stage(head(StageKind::HeadQ, 1))(2, 3), 4.0f);
  Engine fresh;
  fresh.recompute_all(doc.scenario());
  EXPECT_TRUE(attention_lab::test::engines_near(doc.engine(), fresh));
  const std::string err = doc.apply(SetPin{{head(StageKind::HeadQUnrotated, 1), 2, 3}, 4.0f});
  EXPECT_EQ(err, "pin on Q_unrotated[1]: it is Q or K before RoPE; pin the rotated Q or K that enters the "
                 "scores instead");
  EXPECT_EQ(describe_stage(doc.scenario(), head(StageKind::HeadQUnrotated, 0)).editability, Editability::ReadOnly);
}

TEST(Rope, TurnsOnAndOffWithUndoAndRefusesAnOddDk) {
  RandomOptions o;
  o.T = 5, o.heads = 2, o.d_k = 4;
  Document doc(random_scenario(11, o));
  const Matrix before = doc.stage(head(StageKind::Scores, 0));
  Rope r;
  r.on = true;
  ASSERT_EQ(doc.apply(SetRope{r}), "");
  EXPECT_NE(Matrix(doc.stage(head(StageKind::Scores, 0))), before);
  EXPECT_EQ(describe_stage(doc.scenario(), in(StageKind::Q)).formula, "Q = RoPE(Qᵤ)");
  ASSERT_TRUE(doc.undo());
  EXPECT_FALSE(doc.scenario().rope.on);
  EXPECT_EQ(Matrix(doc.stage(head(StageKind::Scores, 0))), before);
  o.d_k = 3;
  Scenario odd = random_scenario(11, o);
  EXPECT_EQ(apply_edit(odd, SetRope{r}).error,
            "rope: expected an even d_k (RoPE turns pairs of dimensions), found d_k = 3");
  odd.rope.on = true;
  EXPECT_EQ(validate(odd), "rope: expected an even d_k (RoPE turns pairs of dimensions), found d_k = 3");
  Scenario even = random_scenario(11, RandomOptions{});
  even.W_q = Matrix::Ones(even.d_model(), 8), even.W_k = Matrix::Ones(even.d_model(), 8);
  even.rope.on = true;
  ASSERT_EQ(validate(even), "");
  EXPECT_EQ(apply_edit(even, SetDimension{Dimension::d_k, 3}).error,
            "d_k: expected an even number while RoPE is on (it turns pairs of dimensions), found 3");
}

TEST(Rope, RandomEditsMatchAFullRecompute) {
  for (std::uint32_t seed : {41u, 42u, 43u, 44u}) {
    RandomOptions o;
    o.T = seed % 2 ? 8 : 67;
    o.heads = 2, o.d_k = 4;
    o.kv_heads = seed % 4 == 0 ? 1 : 0;  // with grouped-query heads too
    o.rope = true;
    o.pairs = seed % 2 ? RopePairs::Half : RopePairs::Interleaved;
    o.w_o = seed % 3 != 0, o.bias = seed % 2 == 0;
    o.mask = static_cast<MaskKind>(seed % 3);
    const Scenario s = random_scenario(seed, o);
    ASSERT_EQ(validate(s), "");
    EXPECT_TRUE(attention_lab::test::random_edits_match_full_recompute(s, seed, 60));
  }
}

TEST(Rope, EveryEditThenACompareStaysNearAFullRecompute) {
  // The final comparison above hides a wrong step that a later recompute
  // repaired: here every edit is checked.
  RandomOptions o;
  o.T = 12, o.heads = 4, o.kv_heads = 2, o.d_k = 4, o.rope = true, o.w_o = true;
  o.mask = MaskKind::Causal;
  Document doc(random_scenario(45, o));
  attention_lab::test::RandomEdits edits(45);
  for (int i = 0; i < 120; ++i) {
    const Edit e = edits.next(doc.scenario(), false);
    doc.apply(e);
    Engine fresh;
    fresh.recompute_all(doc.scenario());
    ASSERT_TRUE(attention_lab::test::engines_near(doc.engine(), fresh)) << "after " << describe(e) << " (edit " << i << ")";
  }
}

// [SECTION] The presets say what they show

namespace {

int argmax(const MatrixView m, int row) {
  Eigen::Index best = 0;
  m.row(row).maxCoeff(&best);
  return static_cast<int>(best);
}

}  // namespace

TEST(PositionPresets, EightQueryHeadsOverTwoKvHeadsEachFindTheirToken) {
  const Document doc(attention_lab::test::preset("gqa"));
  const Dims d = doc.scenario().dims();
  ASSERT_EQ(d.heads, 8);
  ASSERT_EQ(d.kv_heads, 2);
  auto weights = [&](int h) { return doc.stage(head(StageKind::Weights, h)); };
  for (int t = 1; t < 8; ++t) {
    EXPECT_EQ(argmax(weights(0), t), t - 1) << "head 0: the previous token";
    EXPECT_EQ(argmax(weights(1), t), 0) << "head 1: the first token";
    EXPECT_EQ(argmax(weights(2), t), t) << "head 2: itself";
    if (t >= 2) {
      EXPECT_EQ(argmax(weights(3), t), t - 2) << "head 3: two back";
    }
  }
  EXPECT_EQ(argmax(weights(4), 4), 1) << "head 4: a noun ('animal')";
  EXPECT_EQ(argmax(weights(5), 7), 3) << "head 5: a verb ('cross')";
  EXPECT_EQ(argmax(weights(6), 5), 4) << "head 6: a determiner";
  EXPECT_EQ(argmax(weights(7), 7), 1) << "head 7: 'it' finds 'animal'";
  // heads 0-3 read the same keys, heads 4-7 the others
  EXPECT_EQ(Matrix(doc.stage(head(StageKind::HeadK, 0))), Matrix(doc.stage(head(StageKind::HeadK, 3))));
  EXPECT_NE(Matrix(doc.stage(head(StageKind::HeadK, 3))), Matrix(doc.stage(head(StageKind::HeadK, 4))));
}

TEST(PositionPresets, RopeScoresTheSameWordsByTheirDistance) {
  Document doc(attention_lab::test::preset("rope"));
  const Scenario& s = doc.scenario();
  ASSERT_TRUE(s.rope.on);
  ASSERT_EQ(s.token_label(0), "red");
  ASSERT_EQ(s.token_label(1), "fox");
  ASSERT_EQ(s.token_label(5), "red");
  ASSERT_EQ(s.token_label(6), "fox");
  const Matrix S = doc.stage(head(StageKind::Scores, 0));
  EXPECT_NEAR(S(1, 0), S(6, 5), 1e-5) << "'red fox' scores alike at positions 0-1 and 5-6";
  EXPECT_GT(S(6, 5), S(6, 0) + 2.0f) << "the same 'red' six positions back scores far less";
  EXPECT_EQ(argmax(doc.stage(head(StageKind::Weights, 0)), 6), 5);
  // without RoPE both reds are the same key for the same query
  Rope off;
  ASSERT_EQ(doc.apply(SetRope{off}), "");
  const Matrix plain = doc.stage(head(StageKind::Scores, 0));
  EXPECT_EQ(plain(6, 5), plain(6, 0));
}
