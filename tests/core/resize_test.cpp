// Dimension changes keep every value that still fits (per head block for
// heads, d_k and d_v) and fill new cells deterministically.

#include "attention_lab/document.h"
#include "attention_lab/edit.h"
#include "attention_lab/limits.h"

#include "test_support.h"
#include "unit_support.h"

using namespace attention_lab;
using attention_lab::test::RandomOptions;
using attention_lab::test::scenarios_identical;

namespace {

// A scenario with every optional input on, so every matrix gets resized.
Scenario full() {
  RandomOptions o;
  o.T = 4, o.d_model = 5, o.heads = 2, o.d_k = 3, o.d_v = 2, o.bias = true, o.w_o = true, o.b_o = true;
  o.mask = MaskKind::Custom;
  Scenario s = attention_lab::test::random_scenario(31, o);
  s.tokens = {"a", "b", "c", "d"};
  return s;
}

Scenario resized(Scenario s, Dimension which, int value) {
  const Applied a = apply_edit(s, SetDimension{which, value});
  EXPECT_EQ(a.error, "") << to_string(which) << " = " << value;
  EXPECT_EQ(validate(s), "");
  return s;
}

// Column block `b` of width `w` (a head's columns).
Matrix block(const Matrix& m, int b, int w) { return m.middleCols(b * w, w); }

}  // namespace

TEST(Resize, GrowingTKeepsEveryTokenAndAddsNewOnes) {
  const Scenario s = full();
  const Scenario g = resized(s, Dimension::T, 6);
  EXPECT_EQ(g.T(), 6);
  EXPECT_EQ(g.X.get().topRows(4), s.X.get());
  EXPECT_EQ(g.custom_mask.get().topLeftCorner(4, 4), s.custom_mask.get());
  EXPECT_EQ(g.tokens.size(), 6u);
  EXPECT_EQ(g.tokens[3], "d");
  EXPECT_EQ(g.token_label(5), "t5");
  // weights do not depend on T
  EXPECT_EQ(g.W_q.get(), s.W_q.get());
  EXPECT_EQ(g.W_o.get(), s.W_o.get());
}

TEST(Resize, DModelKeepsTheFeatureNamesThatStillHaveAColumn) {
  Scenario s = full();  // d_model = 5
  s.features = {"a", "b", "c", "d", "e"};
  const Scenario grown = resized(s, Dimension::d_model, 7);
  EXPECT_EQ(grown.features, (std::vector<std::string>{"a", "b", "c", "d", "e", "", ""}));
  EXPECT_EQ(grown.feature_label(6), "6");
  const Scenario shrunk = resized(s, Dimension::d_model, 2);
  EXPECT_EQ(shrunk.features, (std::vector<std::string>{"a", "b"}));
  // Without names, a resize invents none.
  EXPECT_TRUE(resized(full(), Dimension::d_model, 7).features.empty());
  // Other sizes leave the names alone.
  EXPECT_EQ(resized(s, Dimension::T, 6).features, s.features);
}

TEST(Resize, ShrinkingTKeepsTheFirstTokens) {
  const Scenario s = full();
  const Scenario g = resized(s, Dimension::T, 2);
  EXPECT_EQ(g.X.get(), s.X.get().topRows(2));
  EXPECT_EQ(g.custom_mask.get(), s.custom_mask.get().topLeftCorner(2, 2));
  EXPECT_EQ(g.tokens, (std::vector<std::string>{"a", "b"}));
}

TEST(Resize, DModelKeepsTheSharedColumnsOfXAndRowsOfTheWeights) {
  const Scenario s = full();
  const Scenario g = resized(s, Dimension::d_model, 7);
  EXPECT_EQ(g.X.get().leftCols(5), s.X.get());
  EXPECT_EQ(g.W_q.get().topRows(5), s.W_q.get());
  EXPECT_EQ(g.W_k.get().topRows(5), s.W_k.get());
  EXPECT_EQ(g.W_v.get().topRows(5), s.W_v.get());
  EXPECT_EQ(g.b_q.get(), s.b_q.get());
  // W_o maps back to d_model, and follows it
  EXPECT_EQ(g.dims().d_out, 7);
  EXPECT_EQ(g.W_o.get().leftCols(5), s.W_o.get());
  EXPECT_EQ(g.b_o.get().leftCols(5), s.b_o.get());
}

TEST(Resize, DkKeepsEachHeadsBlock) {
  const Scenario s = full();  // heads 2, d_k 3
  for (int d_k : {1, 2, 5}) {
    const Scenario g = resized(s, Dimension::d_k, d_k);
    EXPECT_EQ(g.dims().d_k, d_k);
    const int w = std::min(3, d_k);
    for (int h = 0; h < 2; ++h) {
      EXPECT_EQ(block(g.W_q.get(), h, d_k).leftCols(w), block(s.W_q.get(), h, 3).leftCols(w)) << "d_k " << d_k << " head " << h;
      EXPECT_EQ(block(g.W_k.get(), h, d_k).leftCols(w), block(s.W_k.get(), h, 3).leftCols(w));
      EXPECT_EQ(block(g.b_q.get(), h, d_k).leftCols(w), block(s.b_q.get(), h, 3).leftCols(w));
    }
    EXPECT_EQ(g.W_v.get(), s.W_v.get());  // d_v is untouched
  }
}

TEST(Resize, DvKeepsEachHeadsBlockInWvAndTheRowsOfWo) {
  const Scenario s = full();  // heads 2, d_v 2
  const Scenario g = resized(s, Dimension::d_v, 3);
  for (int h = 0; h < 2; ++h) {
    EXPECT_EQ(block(g.W_v.get(), h, 3).leftCols(2), block(s.W_v.get(), h, 2));
    EXPECT_EQ(block(g.b_v.get(), h, 3).leftCols(2), block(s.b_v.get(), h, 2));
    // W_o's rows are head blocks
    EXPECT_EQ(g.W_o.get().middleRows(h * 3, 2), s.W_o.get().middleRows(h * 2, 2)) << h;
  }
  EXPECT_EQ(g.W_q.get(), s.W_q.get());
}

TEST(Resize, HeadsKeepsTheSurvivingHeadsBlocks) {
  const Scenario s = full();
  const Scenario more = resized(s, Dimension::heads, 3);
  EXPECT_EQ(more.W_q.get().leftCols(6), s.W_q.get());
  EXPECT_EQ(more.W_v.get().leftCols(4), s.W_v.get());
  EXPECT_EQ(more.W_o.get().topRows(4), s.W_o.get());
  EXPECT_EQ(more.dims().d_k, 3);
  const Scenario fewer = resized(s, Dimension::heads, 1);
  EXPECT_EQ(fewer.W_q.get(), s.W_q.get().leftCols(3));
  EXPECT_EQ(fewer.W_o.get(), s.W_o.get().topRows(2));
  EXPECT_EQ(fewer.b_v.get(), s.b_v.get().leftCols(2));
}

TEST(Resize, DOutResizesTheOutputProjection) {
  const Scenario s = full();
  const Scenario g = resized(s, Dimension::d_out, 8);
  EXPECT_EQ(g.W_o.get().leftCols(5), s.W_o.get());
  EXPECT_EQ(g.b_o.get().leftCols(5), s.b_o.get());
  EXPECT_EQ(g.X.get(), s.X.get());  // d_model stays
}

TEST(Resize, DOutNeedsTheOutputProjection) {
  Scenario s = attention_lab::test::preset("book");
  const Applied a = apply_edit(s, SetDimension{Dimension::d_out, 4});
  EXPECT_NE(a.error.find("d_out: it is h*d_v while W_o is off"), std::string::npos) << a.error;
}

TEST(Resize, GrowShrinkGrowGivesTheSameValues) {
  const Scenario s = full();
  const Dims d = s.dims();
  const std::pair<Dimension, int> sizes[] = {{Dimension::T, d.T},         {Dimension::d_model, d.d_model},
                                             {Dimension::heads, d.heads}, {Dimension::d_k, d.d_k},
                                             {Dimension::d_v, d.d_v},     {Dimension::d_out, d.d_out}};
  for (const auto& [which, size] : sizes) {
    const Scenario once = resized(s, which, size + 2);
    const Scenario back = resized(once, which, size);
    EXPECT_TRUE(scenarios_identical(back, s)) << to_string(which) << ": shrinking back restores the original";
    EXPECT_TRUE(scenarios_identical(resized(back, which, size + 2), once)) << to_string(which);
  }
}

TEST(Resize, NewCellsDependOnlyOnTheSeed) {
  Scenario a = full(), b = full();
  b.X.edit().setZero();  // different existing values, same seed
  const Scenario ga = resized(a, Dimension::T, 6), gb = resized(b, Dimension::T, 6);
  EXPECT_EQ(ga.X.get().bottomRows(2), gb.X.get().bottomRows(2));
  Scenario c = full();
  c.seed += 1;
  const Scenario gc = resized(c, Dimension::T, 6);
  EXPECT_NE(ga.X.get().bottomRows(2), gc.X.get().bottomRows(2));
}

TEST(Resize, NewCellsHaveSensibleMagnitudes) {
  const Scenario g = resized(full(), Dimension::d_model, 64);
  EXPECT_TRUE(g.X.get().allFinite());
  EXPECT_LE(g.X.get().cwiseAbs().maxCoeff(), 1.0f);
  EXPECT_GT(g.X.get().rightCols(59).cwiseAbs().maxCoeff(), 0.0f);
  // weights scale like 1/√fan_in so projections stay O(1)
  EXPECT_LE(g.W_q.get().bottomRows(59).cwiseAbs().maxCoeff(), std::sqrt(3.0f / 64.0f) + 1e-6f);
  EXPECT_LE(g.b_q.get().cwiseAbs().maxCoeff(), 1.0f);
}

TEST(Resize, NewMaskRowsAreCausal) {
  Scenario s = full();
  const Scenario g = resized(s, Dimension::T, 6);
  EXPECT_EQ(g.custom_mask(5, 0), 1.0f);
  EXPECT_EQ(g.custom_mask(4, 5), 0.0f);
  EXPECT_EQ(g.custom_mask(5, 5), 1.0f);
}

TEST(Resize, SizesOutsideTheLimitsAreRefusedWithTheRange) {
  using namespace limits;
  const Scenario s = full();
  const auto range = [](const char* name, int max, int found) {
    return std::string(name) + ": expected 1 to " + std::to_string(max) + ", found " + std::to_string(found);
  };
  const std::vector<std::tuple<Dimension, int, std::string>> cases = {
      {Dimension::T, 0, range("T", kMaxTokens, 0)},
      {Dimension::d_model, -3, range("d_model", kMaxModelDim, -3)},
      {Dimension::d_k, 0, range("d_k", kMaxHeadDim, 0)},
      {Dimension::d_out, 0, range("d_out", kMaxModelDim, 0)},
  };
  for (const auto& [which, value, message] : cases) {
    Scenario t = s;
    EXPECT_EQ(apply_edit(t, SetDimension{which, value}).error, message);
    EXPECT_TRUE(scenarios_identical(t, s));
  }
  // Above the limit, the message also says what the size would cost.
  const std::vector<std::tuple<Dimension, int, std::string>> too_big = {
      {Dimension::T, kMaxTokens + 1, range("T", kMaxTokens, kMaxTokens + 1)},
      {Dimension::heads, kMaxHeads + 1, range("heads", kMaxHeads, kMaxHeads + 1)},
      {Dimension::d_v, kMaxHeadDim + 1, range("d_v", kMaxHeadDim, kMaxHeadDim + 1)},
  };
  for (const auto& [which, value, message] : too_big) {
    Scenario t = s;
    const std::string err = apply_edit(t, SetDimension{which, value}).error;
    EXPECT_EQ(err.rfind(message + " (size limit; that size would need about ", 0), 0u) << err;
    EXPECT_NE(err.find("iB)"), std::string::npos) << err;
    EXPECT_TRUE(scenarios_identical(t, s));
  }
  // heads·d_k is limited too
  Scenario wide = s;
  ASSERT_EQ(apply_edit(wide, SetDimension{Dimension::d_k, kMaxHeadDim}).error, "");
  const int heads = kMaxProjectionWidth / kMaxHeadDim + 1;
  const Applied a = apply_edit(wide, SetDimension{Dimension::heads, heads});
  EXPECT_EQ(a.error.rfind("heads*d_k and heads*d_v: expected at most " + std::to_string(kMaxProjectionWidth) +
                              ", found " + std::to_string(heads * kMaxHeadDim) + " (size limit; ",
                          0),
            0u)
      << a.error;
}

TEST(Resize, TheDocumentRecomputesAtTheNewSize) {
  Document doc(attention_lab::test::preset("multi-head"));
  ASSERT_EQ(doc.apply(SetDimension{Dimension::heads, 2}), "");
  ASSERT_EQ(doc.apply(SetDimension{Dimension::T, 3}), "");
  const Dims d = doc.engine().dims();
  EXPECT_EQ(d.heads, 2);
  EXPECT_EQ(d.T, 3);
  EXPECT_EQ(doc.stage(StageId::of_head(StageKind::Weights, 1)).rows(), 3);
  EXPECT_EQ(doc.stage(StageId::input(StageKind::Concat)).cols(), 8);
  EXPECT_EQ(doc.scenario().tokens.size(), 3u);
}

TEST(Resize, WithoutOutputProjectionDOutFollowsTheHeads) {
  Scenario s = attention_lab::test::preset("book");
  s = resized(s, Dimension::heads, 3);
  EXPECT_EQ(s.dims().d_out, 6);
  s = resized(s, Dimension::d_v, 1);
  EXPECT_EQ(s.dims().d_out, 3);
}
