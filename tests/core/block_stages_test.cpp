// The block around the focused attention: one table of stages, values that
// follow the attention output row by row, as a full recompute.

#include "attention_lab/block_stages.h"
#include "attention_lab/transformer_forward.h"
#include "test_support.h"
#include "model_fixture_paths.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>

namespace attention_lab {
namespace {

using attention_lab::test::kFixtures;

std::shared_ptr<const TransformerModel> open(const char* name) {
  LoadedModel m = load_model(kFixtures / name);
  if (!m.model) throw std::runtime_error(m.error);
  return m.model;
}

struct Layer {
  Matrix input, attention;
};

Layer layer_of(const TransformerModel& m, int layer) {
  Matrix x = embed(m, test::kFixtureIds);
  for (int l = 0; l < layer; ++l) x = run_layer(m, l, x);
  return {x, attention(m, layer, normalize(m.layers[static_cast<std::size_t>(layer)].norm1, x))};
}

int columns(const ModelConfig& c, BlockWidth w) {
  return w == BlockWidth::Model ? c.d_model : w == BlockWidth::FeedForward ? c.d_ff : 1;
}

TEST(BlockStages, TheTableNamesEveryStageOnceWithInputsComputedBeforeIt) {
  for (const char* name : {"gpt2-conv1d", "llama-gqa"}) {
    SCOPED_TRACE(name);
    const auto m = open(name);
    const std::vector<BlockStageInfo> table = block_stage_table(m->config);
    std::set<std::string> keys;
    std::set<BlockStage> seen;
    for (const BlockStageInfo& i : table) {
      EXPECT_TRUE(keys.insert(i.key).second) << i.key;
      EXPECT_FALSE(i.symbol.empty() || i.name.empty() || i.formula.empty() || i.explanation.empty()) << i.key;
      for (const BlockInput& in : i.inputs) EXPECT_TRUE(seen.count(in.stage)) << i.key << " reads a stage computed after it";
      seen.insert(i.stage);
    }
    const bool gpt2 = m->config.family == ModelFamily::Gpt2;
    EXPECT_EQ(seen.count(BlockStage::Position), gpt2 ? 1u : 0u);
    EXPECT_EQ(seen.count(BlockStage::Embedded), gpt2 ? 1u : 0u);
    EXPECT_EQ(seen.count(BlockStage::Norm1Mean), gpt2 ? 1u : 0u);  // RMSNorm has no mean
    EXPECT_EQ(seen.count(BlockStage::Gate), gpt2 ? 0u : 1u);
  }
}

TEST(BlockStages, EveryStageIsComputedWithItsShapeAndMatchesTheForward) {
  for (const char* name : {"gpt2-conv1d", "mingpt-linear-bf16", "llama-gqa", "qwen2-bias-tied-bf16"}) {
    SCOPED_TRACE(name);
    const auto m = open(name);
    const ModelConfig& c = m->config;
    for (int layer = 0; layer < c.layers; ++layer) {
      const Layer l = layer_of(*m, layer);
      BlockTrace trace(m, test::kFixtureIds, layer, l.input);
      EXPECT_EQ(trace.update(l.attention), static_cast<int>(test::kFixtureIds.size()));
      for (const BlockStageInfo& i : trace.stages()) {
        const Matrix& v = trace.values(i.stage);
        EXPECT_EQ(v.rows(), static_cast<Eigen::Index>(test::kFixtureIds.size())) << i.key;
        EXPECT_EQ(v.cols(), columns(c, i.width)) << i.key;
        EXPECT_GT(trace.version(i.stage), 0u) << i.key;
        EXPECT_TRUE(v.allFinite()) << i.key;
        if (i.non_negative) {
          EXPECT_GE(v.minCoeff(), 0.0f) << i.key;
        }
      }
      // E + P for learned positions; the Llama family starts from E alone (RoPE turns Q and K instead).
      EXPECT_TRUE(test::matrices_near(trace.values(trace.info(BlockStage::Embedded) ? BlockStage::Embedded : BlockStage::TokenEmbedding),
                                      embed(*m, test::kFixtureIds), 0.0, 0.0, "embedded"));
      EXPECT_TRUE(test::matrices_near(trace.values(BlockStage::Norm1),
                                      normalize(m->layers[static_cast<std::size_t>(layer)].norm1, l.input), 0.0, 0.0, "n1"));
      // The forward adds the down projection to the residual inside the
      // product (sgemm with beta 1); the block view adds its Down stage
      // after it, as it shows them: the same sum rounded in another order.
      EXPECT_TRUE(test::matrices_near(trace.values(BlockStage::Output), finish_layer(*m, layer, l.input, l.attention), 1e-6,
                                      1e-6, "output"));
      Matrix act;
      const Matrix h = l.input + l.attention;
      const Matrix down = mlp(*m, layer, normalize(m->layers[static_cast<std::size_t>(layer)].norm2, h), &act);
      EXPECT_TRUE(test::matrices_near(trace.values(BlockStage::Hidden), act, 0.0, 1e-6, "hidden"));
      EXPECT_TRUE(test::matrices_near(trace.values(BlockStage::Down), down, 0.0, 1e-6, "down"));
      // The statistics are the norm's: n = (x − μ)/√(σ² + ε)·γ + β, cell by cell.
      const Norm& n2 = m->layers[static_cast<std::size_t>(layer)].norm2;
      const Matrix& normed = trace.values(BlockStage::Norm2);
      const Matrix& spread = trace.values(BlockStage::Norm2Spread);
      for (Eigen::Index r = 0; r < h.rows(); ++r) {
        const float mean = n2.rms ? 0.0f : trace.values(BlockStage::Norm2Mean)(r, 0);
        const float beta = n2.rms ? 0.0f : n2.bias(3);
        const double want =
            static_cast<double>(h(r, 3) - mean) / std::sqrt(static_cast<double>(spread(r, 0)) + n2.eps) * static_cast<double>(n2.weight(3)) + static_cast<double>(beta);
        EXPECT_NEAR(normed(r, 3), want, 1e-5) << "row " << r;
      }
    }
  }
}

TEST(BlockStages, AnEditRecomputesOnlyTheRowsItChangedAndMatchesAFreshTrace) {
  for (const char* name : {"gpt2-conv1d", "llama-gqa"}) {
    SCOPED_TRACE(name);
    const auto m = open(name);
    const Layer l = layer_of(*m, 1);
    BlockTrace trace(m, test::kFixtureIds, 1, l.input);
    trace.update(l.attention);
    const std::uint64_t before = trace.version(BlockStage::Output);
    const std::uint64_t input_version = trace.version(BlockStage::Input);
    EXPECT_EQ(trace.update(l.attention), 0);  // nothing changed
    EXPECT_EQ(trace.version(BlockStage::Output), before);
    Matrix edited = l.attention;
    edited(4, 2) += 0.5f;  // what a pin of one weight row does: one row changes
    EXPECT_EQ(trace.update(edited), 1);
    EXPECT_NE(trace.version(BlockStage::Output), before);
    EXPECT_EQ(trace.version(BlockStage::Input), input_version);
    edited.row(0).array() -= 0.25f;
    edited.row(6).array() *= 2.0f;
    EXPECT_EQ(trace.update(edited), 2);
    BlockTrace fresh(m, test::kFixtureIds, 1, l.input);
    fresh.update(edited);
    // (within rounding: one row's product takes another path than seven rows')
    for (const BlockStageInfo& i : trace.stages())
      EXPECT_TRUE(test::matrices_near(trace.values(i.stage), fresh.values(i.stage), 1e-5, 1e-5, i.key)) << i.key;
  }
}

}  // namespace
}  // namespace attention_lab
