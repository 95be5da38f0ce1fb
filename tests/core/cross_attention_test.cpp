// Cross-attention (seed 002): queries from X, keys and values from X_kv, so
// the scores are T × T_k. Against a direct computation, against
// self-attention when X_kv = X, edits of both inputs, and what is refused.

#include "attention_lab/document.h"
#include "attention_lab/edit.h"
#include "attention_lab/scenario_io.h"
#include "attention_lab/stage_info.h"
#include "attention_lab/stage_registry.h"
#include "random_edits.h"
#include "test_support.h"
#include "unit_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>

using namespace attention_lab;
using attention_lab::test::RandomOptions;
using attention_lab::test::random_scenario;

namespace {

using attention_lab::test::head;
using attention_lab::test::in;

// A self-attention scenario turned into cross-attention over T_k rows of d_kv.
Scenario crossed(std::uint32_t seed, RandomOptions o, int T_k, int d_kv) {
  Scenario s = random_scenario(seed, o);
  std::mt19937 rng(seed + 1);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  auto fill = [&](Eigen::Index r, Eigen::Index c) {
    Matrix m(r, c);
    for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = u(rng);
    return m;
  };
  s.X_kv = fill(T_k, d_kv);
  s.W_k = fill(d_kv, s.W_k.cols());
  s.W_v = fill(d_kv, s.W_v.cols());
  if (s.mask_kind == MaskKind::Custom) s.custom_mask = Matrix::Ones(s.T(), T_k);
  return s;
}

}  // namespace

TEST(CrossAttention, ScoresAreQueriesTimesKeysOfTheOtherSequence) {
  RandomOptions o;
  o.T = 4, o.d_model = 5, o.heads = 2, o.d_k = 3, o.d_v = 2, o.w_o = true;
  const Scenario s = crossed(1, o, 7, 3);
  ASSERT_EQ(validate(s), "");
  const Dims d = s.dims();
  EXPECT_EQ(d.T_k, 7);
  EXPECT_EQ(d.d_kv, 3);
  const Document doc(s);
  const Eigen::MatrixXd X = s.X.get().cast<double>(), Xkv = s.X_kv.get().cast<double>();
  const Eigen::MatrixXd Q = X * s.W_q.get().cast<double>(), K = Xkv * s.W_k.get().cast<double>(), V = Xkv * s.W_v.get().cast<double>();
  Eigen::MatrixXd concat(4, 2 * 2);
  for (int h = 0; h < 2; ++h) {
    const Eigen::MatrixXd S = Q.middleCols(h * 3, 3) * K.middleCols(h * 3, 3).transpose() / std::sqrt(3.0);
    Eigen::MatrixXd A = S;
    for (int i = 0; i < 4; ++i) {
      A.row(i) = (S.row(i).array() - S.row(i).maxCoeff()).exp();
      A.row(i) /= A.row(i).sum();
    }
    const MatrixView weights = doc.stage(head(StageKind::Weights, h));
    ASSERT_EQ(weights.rows(), 4);
    ASSERT_EQ(weights.cols(), 7);
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 7; ++j) EXPECT_NEAR(weights(i, j), A(i, j), 1e-6) << h << ": " << i << "," << j;
    concat.middleCols(h * 2, 2) = A * V.middleCols(h * 2, 2);
  }
  const Eigen::MatrixXd out = concat * s.W_o.get().cast<double>();
  const MatrixView O = doc.stage(in(StageKind::Output));
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < out.cols(); ++j) EXPECT_NEAR(O(i, j), out(i, j), 1e-5);
  // the registry's shapes and labels
  EXPECT_EQ(describe_stage(s, in(StageKind::K)).rows, 7);
  EXPECT_EQ(describe_stage(s, in(StageKind::K)).formula, "K = X_kv·W_k");
  EXPECT_EQ(describe_stage(s, head(StageKind::Scores, 1)).cols, 7);
  EXPECT_EQ(describe_stage(s, in(StageKind::X_kv)).rows, 7);
}

TEST(CrossAttention, OverTheSameRowsIsSelfAttention) {
  RandomOptions o;
  o.T = 6, o.heads = 2, o.w_o = true, o.bias = true, o.mask = MaskKind::Causal, o.rope = true, o.d_k = 4;
  Scenario self = random_scenario(2, o);
  Scenario cross = self;
  cross.X_kv = self.X;
  ASSERT_EQ(validate(cross), "");
  Engine a, b;
  a.recompute_all(self);
  b.recompute_all(cross);
  EXPECT_TRUE(attention_lab::test::engines_near(a, b, 1e-6));
}

TEST(CrossAttention, CausalAndWindowNeedAsManyQueriesAsKeys) {
  RandomOptions o;
  o.T = 4;
  Scenario s = crossed(3, o, 6, 5);
  s.mask_kind = MaskKind::Causal;
  EXPECT_EQ(validate(s),
            "mask: expected \"none\" or a custom 4 x 6 mask with cross-attention over a different number of tokens (T = "
            "4, T_k = 6), found \"causal\": it is defined only when each query has a key at its own position");
  s.mask_kind = MaskKind::None;
  const Applied a = apply_edit(s, SetMask{MaskKind::Causal, std::nullopt});
  EXPECT_EQ(a.error, "mask: a causal mask needs as many queries as keys; this cross-attention has T = 4 queries and "
                     "T_k = 6 keys (choose none or custom)");
  // a custom mask is T × T_k, and one cell of it edits like any other
  Document doc(s);
  ASSERT_EQ(doc.apply(SetCell{in(StageKind::Mask), 3, 5, 0.0f}), "");
  EXPECT_EQ(doc.scenario().custom_mask.cols(), 6);
  EXPECT_EQ(doc.stage(head(StageKind::Weights, 0))(3, 5), 0.0f);
}

TEST(CrossAttention, FilesCarryXkvAndItsTokensAndRefuseWhatDoesNotFit) {
  RandomOptions o;
  o.T = 3, o.d_model = 4, o.heads = 1, o.d_k = 2, o.d_v = 2;
  Scenario s = crossed(4, o, 5, 3);
  s.tokens = {"le", "chat", "noir"};
  s.tokens_kv = {"the", "black", "cat", ".", "<s>"};
  const std::string text = scenario_to_json(s);
  const LoadResult back = parse_scenario(text);
  ASSERT_TRUE(back.scenario) << back.error;
  EXPECT_TRUE(attention_lab::test::matrices_identical(back.scenario->X_kv.get(), s.X_kv.get(), "X_kv"));
  EXPECT_EQ(back.scenario->tokens_kv, s.tokens_kv);
  EXPECT_EQ(back.scenario->key_label(2), "cat");
  EXPECT_EQ(describe_stage(*back.scenario, head(StageKind::Scores, 0)).col_labels[2], "cat");

  nlohmann::json j = nlohmann::json::parse(text);
  j["tokens_kv"] = {"a", "b"};
  EXPECT_EQ(parse_scenario(j.dump()).error, "tokens_kv: expected 5 labels (T_k, the rows of X_kv), found 2");
  j = nlohmann::json::parse(text);
  j["W_k"] = j["W_q"];  // 4 rows: X's width, not X_kv's
  EXPECT_EQ(parse_scenario(j.dump()).error, "W_k: expected 3 rows (d_kv) x 2 columns (heads*d_k, like W_q), found 4 x 2");
  j = nlohmann::json::parse(text);
  j["mask"] = "causal";
  EXPECT_NE(parse_scenario(j.dump()).error.find("mask: expected \"none\" or a custom 3 x 5 mask"), std::string::npos);
  j = nlohmann::json::parse(text);
  j.erase("X_kv");  // W_k and W_v now read X, 4 wide
  EXPECT_EQ(parse_scenario(j.dump()).error, "W_k: expected 4 rows (d_model) x 2 columns (heads*d_k, like W_q), found 3 x 2");
  j = nlohmann::json::parse(scenario_to_json(random_scenario(4, o)));
  j["tokens_kv"] = {"a", "b", "c"};
  EXPECT_EQ(parse_scenario(j.dump()).error,
            "tokens_kv: labels the rows of X_kv, but there is no \"X_kv\" (cross-attention)");
}

TEST(CrossAttention, EditsOfEitherSequenceMatchAFullRecompute) {
  for (std::uint32_t seed : {51u, 52u, 53u, 54u}) {
    RandomOptions o;
    o.T = seed % 2 ? 5 : 70;
    o.heads = 2, o.d_k = 4;
    o.kv_heads = seed % 4 == 0 ? 1 : 0;
    o.rope = seed % 3 == 0;
    o.w_o = seed % 2 == 0, o.bias = seed % 3 != 0;
    o.mask = seed % 2 ? MaskKind::None : MaskKind::Custom;
    const Scenario s = crossed(seed, o, seed % 2 ? 9 : 66, 4);
    ASSERT_EQ(validate(s), "");
    EXPECT_TRUE(attention_lab::test::random_edits_match_full_recompute(s, seed, 60));
  }
}

TEST(CrossAttention, EveryEditThenACompareStaysNearAFullRecompute) {
  RandomOptions o;
  o.T = 7, o.heads = 2, o.d_k = 4, o.w_o = true;
  Document doc(crossed(55, o, 11, 3));
  attention_lab::test::RandomEdits edits(55);
  for (int i = 0; i < 150; ++i) {
    const Edit e = edits.next(doc.scenario(), false);
    doc.apply(e);
    Engine fresh;
    fresh.recompute_all(doc.scenario());
    ASSERT_TRUE(attention_lab::test::engines_near(doc.engine(), fresh)) << "after " << describe(e) << " (edit " << i << ")";
  }
  // and an X_kv cell on its own: K and V change, Q does not
  Document d2(crossed(56, o, 11, 3));
  const Matrix q = d2.stage(in(StageKind::Q)), k = d2.stage(in(StageKind::K));
  ASSERT_EQ(d2.apply(SetCell{in(StageKind::X_kv), 4, 1, 2.5f}), "");
  EXPECT_EQ(Matrix(d2.stage(in(StageKind::Q))), q);
  EXPECT_NE(Matrix(d2.stage(in(StageKind::K))).row(4), k.row(4));
  Engine fresh;
  fresh.recompute_all(d2.scenario());
  EXPECT_TRUE(attention_lab::test::engines_near(d2.engine(), fresh));
}

TEST(CrossAttention, TheTranslatePresetAlignsEachFrenchWordWithItsEnglishWord) {
  const Scenario s = attention_lab::test::preset("translate");
  ASSERT_TRUE(s.cross());
  const Dims d = s.dims();
  EXPECT_EQ(d.T, 4);
  EXPECT_EQ(d.T_k, 5);
  const Document doc(s);
  const MatrixView w = doc.stage(head(StageKind::Weights, 0));
  ASSERT_EQ(w.cols(), 5);
  // le → the, chat → cat, noir → black (the order swapped), dort → sleeps
  const int expected[4] = {0, 2, 1, 3};
  for (int t = 0; t < 4; ++t) {
    Eigen::Index best = 0;
    w.row(t).maxCoeff(&best);
    EXPECT_EQ(best, expected[t]) << s.token_label(t) << " should find " << s.key_label(expected[t]);
    EXPECT_GT(w(t, expected[t]), 0.6f) << s.token_label(t);
  }
}

TEST(CrossAttention, TkAndDkvResizeXkvKeepingWhatFits) {
  RandomOptions o;
  o.T = 4, o.heads = 2, o.d_k = 3, o.w_o = true, o.mask = MaskKind::Custom;
  Scenario s = crossed(61, o, 6, 5);
  s.tokens_kv = {"a", "b", "c", "d", "e", "f"};
  s.pins[PinKey{head(StageKind::Scores, 1), 3, 5}] = 2.0f;  // on key 5: gone when T_k = 4
  s.pins[PinKey{head(StageKind::Scores, 0), 1, 2}] = -1.0f;
  Document doc(s);
  ASSERT_EQ(doc.apply(SetDimension{Dimension::T_k, 4}), "");
  const Scenario& g = doc.scenario();
  EXPECT_EQ(g.X_kv.get(), s.X_kv.get().topRows(4));
  EXPECT_EQ(g.custom_mask.get(), s.custom_mask.get().leftCols(4));
  EXPECT_EQ(g.tokens_kv, (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_TRUE(g.W_k.shares_buffer_with(s.W_k));  // untouched: still one buffer
  EXPECT_EQ(g.pins.size(), 1u);
  EXPECT_EQ(doc.stage(head(StageKind::Weights, 0)).cols(), 4);
  Engine fresh;
  fresh.recompute_all(g);
  EXPECT_TRUE(attention_lab::test::engines_near(doc.engine(), fresh));
  // d_kv: X_kv's columns and the rows of W_k and W_v, what fits kept
  ASSERT_EQ(doc.apply(SetDimension{Dimension::d_kv, 7}), "");
  EXPECT_EQ(doc.scenario().X_kv.cols(), 7);
  EXPECT_EQ(doc.scenario().X_kv.get().leftCols(5), s.X_kv.get().topRows(4));
  EXPECT_EQ(doc.scenario().W_k.get().topRows(5), s.W_k.get());
  EXPECT_EQ(doc.scenario().W_v.rows(), 7);
  fresh.recompute_all(doc.scenario());
  EXPECT_TRUE(attention_lab::test::engines_near(doc.engine(), fresh));
  // undo brings the first scenario back exactly
  ASSERT_TRUE(doc.undo());
  ASSERT_TRUE(doc.undo());
  EXPECT_TRUE(attention_lab::test::scenarios_identical(doc.scenario(), s));
  EXPECT_EQ(doc.scenario().tokens_kv.size(), 6u);
}

TEST(CrossAttention, TkAndDkvAreRefusedWhereTheyMeanNothingOrTooMuch) {
  RandomOptions o;
  o.T = 4;
  Scenario self = random_scenario(62, o);
  EXPECT_EQ(apply_edit(self, SetDimension{Dimension::T_k, 3}).error,
            "T_k: this is self-attention, whose keys are the tokens themselves (change T); give the scenario an X_kv for "
            "cross-attention");
  EXPECT_EQ(apply_edit(self, SetDimension{Dimension::d_kv, 3}).error,
            "d_kv: this is self-attention, whose keys are the tokens themselves (change d_model); give the scenario an "
            "X_kv for cross-attention");
  Scenario s = crossed(63, o, 4, 5);
  EXPECT_EQ(apply_edit(s, SetDimension{Dimension::T_k, 0}).error, "T_k: expected 1 to 4096, found 0");
  EXPECT_EQ(apply_edit(s, SetDimension{Dimension::d_kv, 5000}).error.rfind("d_kv: expected 1 to 2048, found 5000", 0), 0u);
  // a causal mask needs T_k = T: T_k may not leave it
  s.mask_kind = MaskKind::Causal;
  ASSERT_EQ(validate(s), "");
  EXPECT_EQ(apply_edit(s, SetDimension{Dimension::T_k, 5}).error,
            "T_k: a causal mask needs as many queries as keys (T_k = 5), found T = 4; choose mask none or custom first");
  EXPECT_EQ(s.X_kv.rows(), 4);  // nothing changed
}

TEST(CrossAttention, KeyTokensAreRenamedOneAtATimeAndUndone) {
  RandomOptions o;
  Scenario s = crossed(64, o, 3, 4);  // no tokens_kv: shown as t0, t1, t2
  Document doc(s);
  ASSERT_EQ(doc.apply(SetTokenLabel{1, "chat", true}), "");
  EXPECT_EQ(doc.scenario().tokens_kv, (std::vector<std::string>{"", "chat", ""}));
  EXPECT_EQ(doc.scenario().key_label(1), "chat");
  EXPECT_TRUE(doc.scenario().tokens.empty());  // the queries' tokens are another list
  ASSERT_EQ(doc.apply(SetTokenLabel{2, "noir", true}), "");
  EXPECT_EQ(doc.undo_label(), "key token 2 = \"noir\"");
  ASSERT_TRUE(doc.undo());
  ASSERT_TRUE(doc.undo());
  EXPECT_TRUE(doc.scenario().tokens_kv.empty());  // exactly as before: no names at all
  EXPECT_EQ(doc.apply(SetTokenLabel{3, "x", true}),
            "key token label: expected an index from 0 to 2, found 3 (T_k = 3)");
  EXPECT_EQ(doc.apply(SetLabels{LabelList::KeyTokens, {"a", "b"}}), "tokens_kv: expected 3 labels (T_k) or none, found 2");
  ASSERT_EQ(doc.apply(SetLabels{LabelList::KeyTokens, {"a", "b", "c"}}), "");
  EXPECT_EQ(doc.scenario().key_label(2), "c");
  Document self(random_scenario(65, o));
  EXPECT_EQ(self.apply(SetTokenLabel{0, "x", true}),
            "key token label: this is self-attention, whose keys are the tokens; rename the token instead");
}
