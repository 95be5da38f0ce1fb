// Properties every computation must have, checked on the presets and on
// seeded random scenarios of several shapes.

#include "attention_lab/document.h"
#include "attention_lab/engine.h"

#include "test_support.h"
#include "unit_support.h"

#include <cmath>
#include <limits>

using namespace attention_lab;
using attention_lab::test::random_scenario;
using attention_lab::test::RandomOptions;

namespace {

using attention_lab::test::computed;

MatrixView head_stage(const Engine& e, StageKind k, int h) { return e.stage(StageId::of_head(k, h)); }

// The presets and a spread of random shapes, masks and options.
std::vector<Scenario> many_scenarios() {
  std::vector<Scenario> out;
  for (const auto& p : presets()) out.push_back(*make_preset(p.name));
  std::uint32_t seed = 1;
  for (auto mask : {MaskKind::None, MaskKind::Causal, MaskKind::Custom})
    for (int heads : {1, 3}) {
      RandomOptions o;
      o.T = 5 + heads;
      o.heads = heads;
      o.d_k = 4;
      o.d_v = 3;
      o.mask = mask;
      o.bias = heads == 3;
      o.w_o = mask != MaskKind::None;
      o.b_o = mask == MaskKind::Custom;
      out.push_back(random_scenario(seed++, o));
    }
  return out;
}

// A custom mask whose row `row` allows nothing.
Scenario with_empty_mask_row(Scenario s, int row) {
  s.mask_kind = MaskKind::Custom;
  s.custom_mask = Matrix::Ones(s.T(), s.T());
  s.custom_mask.edit().row(row).setZero();
  return s;
}

}  // namespace

// [SECTION] Softmax rows

TEST(Properties, EveryWeightRowSumsToOne) {
  for (const Scenario& s : many_scenarios()) {
    const Engine e = computed(s);
    for (int h = 0; h < s.heads; ++h) {
      const auto w = head_stage(e, StageKind::Weights, h);
      for (Eigen::Index r = 0; r < w.rows(); ++r) {
        const double sum = w.row(r).cast<double>().sum();
        // custom random masks may leave a row with no key: then it is all 0
        if (w.row(r).isZero(0.0)) continue;
        // with a sink, its share is the rest of the row's attention
        const double sink = s.use_sinks ? static_cast<double>(head_stage(e, StageKind::SinkShare, h)(r, 0)) : 0.0;
        EXPECT_NEAR(sum + sink, 1.0, 1e-6) << s.title << " head " << h << " row " << r;
      }
    }
  }
}

TEST(Properties, WeightsAreProbabilities) {
  for (const Scenario& s : many_scenarios()) {
    const Engine e = computed(s);
    for (int h = 0; h < s.heads; ++h) {
      const auto w = head_stage(e, StageKind::Weights, h);
      EXPECT_TRUE((w.array() >= 0.0f).all() && (w.array() <= 1.0f).all()) << s.title << " head " << h;
    }
  }
}

TEST(Properties, RowWithNoAllowedKeyIsAllZerosWithAWarningNamingHeadAndRow) {
  RandomOptions o;
  o.heads = 2;
  const Scenario s = with_empty_mask_row(random_scenario(7, o), 2);
  const Engine e = computed(s);
  for (int h = 0; h < 2; ++h) {
    EXPECT_TRUE(head_stage(e, StageKind::Weights, h).row(2).isZero(0.0)) << h;
    EXPECT_TRUE(head_stage(e, StageKind::Context, h).row(2).isZero(0.0)) << h;
    EXPECT_NEAR(head_stage(e, StageKind::Weights, h).row(1).sum(), 1.0f, 1e-6f);
  }
  ASSERT_EQ(e.warnings().size(), 2u);
  for (int h = 0; h < 2; ++h) {
    const Warning& w = e.warnings()[static_cast<std::size_t>(h)];
    EXPECT_EQ(w.head, h);
    EXPECT_EQ(w.row, 2);
    EXPECT_NE(w.message.find("head " + std::to_string(h) + ", row 2"), std::string::npos) << w.message;
    EXPECT_NE(w.message.find("no key"), std::string::npos) << w.message;
  }
}

TEST(Properties, WarningNamesTheTokenLabel) {
  Scenario s = with_empty_mask_row(attention_lab::test::preset("book"), 1);
  const Engine e = computed(s);
  ASSERT_EQ(e.warnings().size(), 1u);
  EXPECT_NE(e.warnings()[0].message.find("'journey'"), std::string::npos) << e.warnings()[0].message;
}

TEST(Properties, MaskedCellsGetExactlyZeroWeight) {
  for (const Scenario& s : many_scenarios()) {
    const Engine e = computed(s);
    const Matrix mask = s.effective_mask();
    EXPECT_EQ(e.stage(StageId::input(StageKind::Mask)), mask);
    for (int h = 0; h < s.heads; ++h) {
      const auto w = head_stage(e, StageKind::Weights, h);
      const auto m = head_stage(e, StageKind::Masked, h);
      for (Eigen::Index r = 0; r < w.rows(); ++r)
        for (Eigen::Index c = 0; c < w.cols(); ++c)
          if (mask(r, c) == 0.0f) {
            EXPECT_EQ(w(r, c), 0.0f) << s.title << " head " << h << " (" << r << ", " << c << ")";
            EXPECT_EQ(m(r, c), -std::numeric_limits<float>::infinity());
          } else {
            // (ALiBi adds its bias to the scaled score first)
            const float bias = s.alibi ? head_stage(e, StageKind::PositionBias, h)(r, c) : 0.0f;
            EXPECT_EQ(m(r, c), head_stage(e, StageKind::Scaled, h)(r, c) + bias) << s.title << " head " << h;
          }
    }
  }
}

TEST(Properties, CausalWeightsAreLowerTriangular) {
  for (const Scenario& s : many_scenarios()) {
    if (s.mask_kind != MaskKind::Causal) continue;
    const Engine e = computed(s);
    for (int h = 0; h < s.heads; ++h) {
      const Matrix w = head_stage(e, StageKind::Weights, h);
      EXPECT_TRUE(w.triangularView<Eigen::StrictlyUpper>().toDenseMatrix().isZero(0.0)) << s.title << " head " << h;
      // and the first token can only attend to itself (or to a sink)
      if (!s.use_sinks) {
        EXPECT_EQ(w(0, 0), 1.0f);
      }
    }
  }
}

// [SECTION] Heads are independent

// Head h of a multi-head scenario computes exactly what a one-head scenario
// built from column block h of every weight computes.
TEST(Properties, MultiHeadEqualsTheConcatenationOfSingleHeadRuns) {
  for (auto mask : {MaskKind::None, MaskKind::Causal, MaskKind::Custom}) {
    RandomOptions o;
    o.T = 6, o.d_model = 7, o.heads = 3, o.d_k = 4, o.d_v = 2, o.bias = true, o.w_o = true, o.b_o = true;
    o.mask = mask;
    const Scenario multi = random_scenario(42, o);
    const Engine whole = computed(multi);
    Matrix concat(o.T, o.heads * o.d_v);
    for (int h = 0; h < o.heads; ++h) {
      Scenario one = multi;
      one.heads = 1;
      one.W_q = multi.W_q.middleCols(h * o.d_k, o.d_k);
      one.W_k = multi.W_k.middleCols(h * o.d_k, o.d_k);
      one.W_v = multi.W_v.middleCols(h * o.d_v, o.d_v);
      one.b_q = multi.b_q.middleCols(h * o.d_k, o.d_k);
      one.b_k = multi.b_k.middleCols(h * o.d_k, o.d_k);
      one.b_v = multi.b_v.middleCols(h * o.d_v, o.d_v);
      one.use_w_o = one.use_output_bias = false;
      ASSERT_EQ(validate(one), "");
      const Engine single = computed(one);
      for (auto k : {StageKind::HeadQ, StageKind::HeadK, StageKind::HeadV, StageKind::Scores, StageKind::Scaled,
                     StageKind::Masked, StageKind::Weights, StageKind::Context})
        EXPECT_TRUE(attention_lab::test::matrices_near(head_stage(whole, k, h), head_stage(single, k, 0), 1e-6, 1e-6,
                                                       to_string(StageId::of_head(k, h))));
      concat.middleCols(h * o.d_v, o.d_v) = head_stage(single, StageKind::Context, 0);
    }
    EXPECT_TRUE(attention_lab::test::matrices_near(whole.stage(StageId::input(StageKind::Concat)), concat, 1e-6,
                                                   1e-6, "concat"));
    const Matrix output = concat * multi.W_o.get() + multi.b_o.get().replicate(o.T, 1);
    EXPECT_TRUE(attention_lab::test::matrices_near(whole.stage(StageId::input(StageKind::Output)), output, 1e-5,
                                                   1e-6, "output"));
  }
}

// [SECTION] Scaling and temperature

TEST(Properties, ScaledScoresAreScoresDividedBySquareRootOfDk) {
  for (int d_k : {1, 2, 3, 16}) {
    RandomOptions o;
    o.d_k = d_k;
    const Scenario s = random_scenario(static_cast<std::uint32_t>(d_k), o);
    const Engine e = computed(s);
    for (int h = 0; h < s.heads; ++h) {
      const Matrix expected = head_stage(e, StageKind::Scores, h) / std::sqrt(static_cast<float>(d_k));
      EXPECT_TRUE(attention_lab::test::matrices_near(head_stage(e, StageKind::Scaled, h), expected, 1e-6, 0.0,
                                                     "scaled, d_k = " + std::to_string(d_k)));
    }
  }
}

TEST(Properties, ScalingOffLeavesScoresUnchanged) {
  RandomOptions o;
  o.d_k = 9;
  Scenario s = random_scenario(3, o);
  s.scale = false;
  const Engine e = computed(s);
  for (int h = 0; h < s.heads; ++h)
    EXPECT_EQ(head_stage(e, StageKind::Scaled, h), head_stage(e, StageKind::Scores, h));
}

TEST(Properties, TemperatureDividesTheScaledScores) {
  RandomOptions o;
  o.d_k = 4;  // √4 = 2 exactly
  Scenario s = random_scenario(5, o);
  s.temperature = 0.5f;
  const Engine e = computed(s);
  for (int h = 0; h < s.heads; ++h) {
    // ÷ (2 · 0.5) = ÷ 1: exact
    EXPECT_EQ(head_stage(e, StageKind::Scaled, h), head_stage(e, StageKind::Scores, h));
  }
  s.temperature = 3.0f;
  s.scale = false;
  const Engine hot = computed(s);
  for (int h = 0; h < s.heads; ++h)
    EXPECT_TRUE(attention_lab::test::matrices_near(head_stage(hot, StageKind::Scaled, h),
                                                   head_stage(hot, StageKind::Scores, h) / 3.0f, 1e-6, 0.0, "τ = 3"));
}

TEST(Properties, HigherTemperatureFlattensTheWeights) {
  Scenario s = attention_lab::test::preset("book");
  const Engine base = computed(s);
  s.temperature = 10.0f;
  const Engine hot = computed(s);
  const auto max_of = [](const Engine& e) { return e.stage(StageId::of_head(StageKind::Weights, 0)).maxCoeff(); };
  EXPECT_LT(max_of(hot), max_of(base));
}

// A temperature just above 0 is valid; the weights must approach argmax, not turn into NaN.
TEST(Properties, TinyTemperatureNeverProducesNaN) {
  Scenario s;
  s.X = attention_lab::test::rows_of({{0.0f}, {1.0f}});  // scores [[0, 0], [0, 1]]: zeros included
  s.W_q = s.W_k = s.W_v = attention_lab::test::rows_of({{1.0f}});
  s.heads = 1;
  s.temperature = 1e-40f;  // subnormal, but greater than 0
  ASSERT_EQ(validate(s), "");
  const Engine e = computed(s);
  const auto w = head_stage(e, StageKind::Weights, 0);
  EXPECT_FALSE(w.array().isNaN().any()) << w;
  EXPECT_FLOAT_EQ(w(0, 0), 0.5f);  // a tie stays a tie
  EXPECT_FLOAT_EQ(w(1, 1), 1.0f);  // the larger score takes everything
}

// [SECTION] Edge sizes and extreme values

TEST(Properties, SingleTokenAttendsFullyToItself) {
  RandomOptions o;
  o.T = 1;
  for (auto mask : {MaskKind::None, MaskKind::Causal}) {
    o.mask = mask;
    const Scenario s = random_scenario(11, o);
    const Engine e = computed(s);
    for (int h = 0; h < s.heads; ++h) {
      EXPECT_EQ(head_stage(e, StageKind::Weights, h), Matrix::Ones(1, 1));
      EXPECT_EQ(head_stage(e, StageKind::Context, h), head_stage(e, StageKind::HeadV, h));
    }
    EXPECT_TRUE(e.warnings().empty());
  }
}

TEST(Properties, HugePinnedScoresGiveFiniteWeights) {
  Scenario s = attention_lab::test::preset("book");
  s.pins[{StageId::of_head(StageKind::Scores, 0), 1, 2}] = 1e30f;
  s.pins[{StageId::of_head(StageKind::Scores, 0), 1, 3}] = -1e30f;
  s.pins[{StageId::of_head(StageKind::Scores, 0), 2, 0}] = -1e30f;
  const Engine e = computed(s);
  const auto w = head_stage(e, StageKind::Weights, 0);
  EXPECT_TRUE(w.allFinite()) << w;
  EXPECT_FLOAT_EQ(w(1, 2), 1.0f);
  EXPECT_EQ(w(1, 3), 0.0f);
  EXPECT_EQ(w(2, 0), 0.0f);
  EXPECT_NEAR(w.row(2).sum(), 1.0f, 1e-6f);
  EXPECT_TRUE(head_stage(e, StageKind::Context, 0).allFinite());
  EXPECT_TRUE(e.warnings().empty());
}

TEST(Properties, PermutingTokensPermutesTheOutputWithoutAMask) {
  RandomOptions o;
  o.T = 5, o.w_o = true;
  const Scenario s = random_scenario(21, o);
  Scenario swapped = s;
  swapped.X.edit().row(0) = s.X.row(3);
  swapped.X.edit().row(3) = s.X.row(0);
  const Engine a = computed(s), b = computed(swapped);
  Matrix out_b = b.stage(StageId::input(StageKind::Output));
  out_b.row(0).swap(out_b.row(3));
  EXPECT_TRUE(attention_lab::test::matrices_near(a.stage(StageId::input(StageKind::Output)), out_b, 1e-5, 1e-6,
                                                 "output"));
}
