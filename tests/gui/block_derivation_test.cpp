// The inspector's text for the block around the attention: every stage of
// both families explained with its own numbers, ending in the cell's value.

#include "logic/block_derivation.h"
#include "gui_test_support.h"
#include "logic/number_format.h"

#include "attention_lab/transformer_forward.h"

#include <gtest/gtest.h>

#include <filesystem>

using namespace attention_lab;
using namespace attention_lab::gui;
using namespace attention_lab::gui_test;

namespace {

const std::filesystem::path kFixtures = ATTENTION_LAB_MODEL_FIXTURES_DIR;
const std::vector<int> kIds = {3, 14, 15, 9, 2, 6, 53};
const std::vector<std::string> kTokens = {"a", "b", "c", "d", "e", "f", "g"};

struct Opened {
  std::shared_ptr<const TransformerModel> model;
  std::unique_ptr<BlockTrace> trace;
  Matrix attention;
};

Opened open(const char* name, int layer) {
  LoadedModel m = load_model(kFixtures / name);
  if (!m.model) throw std::runtime_error(m.error);
  Matrix x = embed(*m.model, kIds);
  for (int l = 0; l < layer; ++l) x = run_layer(*m.model, l, x);
  Opened o{m.model, nullptr, attention(*m.model, layer, normalize(m.model->layers[static_cast<std::size_t>(layer)].norm1, x))};
  o.trace = std::make_unique<BlockTrace>(m.model, kIds, layer, x);
  o.trace->update(o.attention);
  return o;
}

}  // namespace

TEST(BlockDerivation, EveryStageOfBothFamiliesIsExplainedEndingInItsValue) {
  for (const char* name : {"gpt2-conv1d", "llama-gqa"}) {
    SCOPED_TRACE(name);
    const Opened o = open(name, 1);
    for (const BlockStageInfo& i : o.trace->stages()) {
      const int col = i.width == BlockWidth::One ? 0 : 5;
      const Derivation d = derive_block(*o.trace, i.stage, 2, col, kTokens, o.attention);
      const std::string symbol = i.symbol.find(' ') != std::string::npos ? "(" + i.symbol + ")" : i.symbol;
      EXPECT_EQ(d.title.rfind(symbol + "[2," + std::to_string(col) + "]", 0), 0u) << i.key << ": " << d.title;
      EXPECT_NE(d.title.find("'c'"), std::string::npos) << i.key << ": the row's token";
      EXPECT_FALSE(d.formula.empty()) << i.key;
      const std::string value = block_number(o.trace->values(i.stage)(2, col));
      if (i.stage == BlockStage::Attention || i.stage == BlockStage::Input) EXPECT_EQ(d.numbers.rfind(value, 0), 0u) << d.numbers;
      else EXPECT_TRUE(ends_with(d.numbers, "= " + value)) << i.key << ": " << d.numbers;
    }
  }
}

TEST(BlockDerivation, NumbersKeepFourSignificantDigitsAndATrueMinus) {
  EXPECT_EQ(block_number(0.0017f), "0.001700");
  EXPECT_EQ(block_number(-0.3861f), "−0.3861");
  EXPECT_EQ(block_number(2.305f), "2.305");
  EXPECT_EQ(block_number(123.456f), "123.456");
  EXPECT_EQ(block_number(1e-5f), "1.000e−05");
  EXPECT_EQ(block_number(0.0f), "0.000");
}

TEST(BlockDerivation, ASumShowsItsOperandsAndAProductItsLargestTerms) {
  const Opened o = open("gpt2-conv1d", 0);
  const BlockTrace& t = *o.trace;
  const Derivation h = derive_block(t, BlockStage::Residual, 4, 7, kTokens, o.attention);
  EXPECT_EQ(h.numbers.rfind(block_number(t.values(BlockStage::Input)(4, 7)) + " + ", 0), 0u) << h.numbers;
  const Derivation u = derive_block(t, BlockStage::Up, 4, 7, kTokens, o.attention);
  EXPECT_NE(u.numbers.find("(the other 28)"), std::string::npos) << u.numbers;  // 32 products, 4 listed
  EXPECT_NE(u.numbers.find("(bias)"), std::string::npos) << u.numbers;
  // An unedited attention cell has no "before"; an edited one says what it was.
  EXPECT_EQ(derive_block(t, BlockStage::Attention, 4, 7, kTokens, o.attention).note, "");
  Matrix before = o.attention;
  before(4, 7) -= 0.5f;
  EXPECT_EQ(derive_block(t, BlockStage::Attention, 4, 7, kTokens, before).note.rfind("Before the edits: ", 0), 0u);
  // Out of range: nothing, no crash.
  EXPECT_EQ(derive_block(t, BlockStage::Output, 7, 0, kTokens, o.attention).title, "");
  EXPECT_EQ(derive_block(t, BlockStage::Output, 0, 32, kTokens, o.attention).title, "");
}
