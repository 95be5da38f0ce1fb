// The edit codec (edit_json.h): every kind of edit written and read back is
// the same edit, and so is every inverse a random edit leaves, so a file of
// edits can replay a session and its undo both. Wrong JSON is refused by name.

#include "attention_lab/edit_json.h"

#include "attention_lab/edit.h"
#include "attention_lab/scenario_io.h"

#include "random_edits.h"
#include "test_support.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <set>

namespace attention_lab {
namespace {

using test::preset;

// Applies `e` to a copy of `s`: the scenario as JSON, or the error.
std::string outcome(const Scenario& s, const Edit& e) {
  Scenario copy = s;
  const Applied applied = apply_edit(copy, e);
  return applied.error.empty() ? scenario_to_json(copy) : "error: " + applied.error;
}

// `e` written, read back against `s`, written again: the same text and the same result when applied.
::testing::AssertionResult round_trips(const Scenario& s, const Edit& e) {
  const std::string text = edit_to_json(e);
  const ParsedEdit back = parse_edit(text, s);
  if (!back.edit) return ::testing::AssertionFailure() << text << " reads back as: " << back.error;
  if (back.edit->index() != e.index()) return ::testing::AssertionFailure() << text << " reads back as another kind of edit";
  if (edit_to_json(*back.edit) != text)
    return ::testing::AssertionFailure() << text << " is written again as " << edit_to_json(*back.edit);
  if (outcome(s, *back.edit) != outcome(s, e)) return ::testing::AssertionFailure() << text << " applies differently";
  return ::testing::AssertionSuccess();
}

std::vector<Edit> one_of_each_kind(const Scenario& s) {
  Matrix x = s.X.get();
  x(0, 0) = 0.1f;
  Matrix mask = Matrix::Ones(s.T(), s.T());
  mask(0, 1) = 0.0f;
  Rope rope;
  rope.on = true;
  rope.theta = 500.0f;
  rope.pairs = RopePairs::Interleaved;
  Rope rope_off = rope;
  rope_off.on = false;
  return {
      SetCell{StageId::input(StageKind::W_q), 1, 0, 0.3f},
      SetMatrix{StageId::input(StageKind::X), x, "randomize"},
      SetPin{PinKey{StageId::of_head(StageKind::Weights, 1), 2, 1}, 0.75f},
      SetPin{PinKey{StageId::of_head(StageKind::Weights, 0), 1, 0}, std::nullopt},
      SetPins{{{PinKey{StageId::of_head(StageKind::Scores, 0), 0, 1}, -2.5f}, {PinKey{StageId::input(StageKind::Q), 1, 3}, 1e-7f}}},
      SetPins{},
      SetDimension{Dimension::d_k, 3},
      SetMask{MaskKind::Causal, std::nullopt},
      SetMask{MaskKind::Window, std::nullopt, 2},
      SetMask{MaskKind::Custom, mask},
      SetMask{MaskKind::None, Matrix(0, 0), 3},  // the whole form: an inverse's
      SetToggle{Toggle::Alibi, true},
      SetTemperature{0.5f},
      SetRope{rope},
      SetRope{rope_off},
      SetQkNorm{QkNorm{QkNormScope::Whole, 0.25f}},
      SetSoftcap{30.0f},
      SetTokenLabel{1, "cat"},
      SetFeatureLabel{0, "noun"},
      SetLabels{LabelList::Tokens, {"a", "b", ""}},
      ReplaceScenario{std::make_shared<const Scenario>(preset("book")), "load book"},
  };
}

TEST(EditJson, EveryKindOfEditReadsBackAsItself) {
  const Scenario s = preset("multi-head");
  std::set<std::size_t> kinds;
  for (const Edit& e : one_of_each_kind(s)) {
    EXPECT_TRUE(round_trips(s, e)) << describe(e);
    kinds.insert(e.index());
  }
  // A new kind of edit must be added to the codec and to this list.
  EXPECT_EQ(kinds.size(), std::variant_size_v<Edit>);
}

TEST(EditJson, WritesTheShortFormsLessonsUse) {
  EXPECT_EQ(edit_to_json(SetMask{MaskKind::Causal, std::nullopt}), R"({"mask":"causal"})");
  EXPECT_EQ(edit_to_json(SetMask{MaskKind::Window, std::nullopt, 3}), R"({"mask":{"window":3}})");
  EXPECT_EQ(edit_to_json(SetTemperature{0.1f}), R"({"temperature":0.1})");  // shortest form, not 0.100000001
  EXPECT_EQ(edit_to_json(SetToggle{Toggle::Scale, false}), R"({"scale":false})");
  EXPECT_EQ(edit_to_json(SetDimension{Dimension::T, 6}), R"({"T":6})");
  EXPECT_EQ(edit_to_json(SetCell{StageId::input(StageKind::W_q), 1, 0, 0.5f}),
            R"({"set":{"col":0,"row":1,"stage":"W_q","value":0.5}})");
  EXPECT_EQ(edit_to_json(SetPins{}), R"({"clear_pins":true})");
}

TEST(EditJson, FloatsKeepEveryBit) {
  const Scenario s = preset("fat-cat");
  const float values[] = {0.1f, -0.0f, 1e-40f, std::numeric_limits<float>::max(), -std::numeric_limits<float>::min(),
                          3.14159274f, 16777217.0f, 1.0f / 3.0f};
  for (const float v : values) {
    const ParsedEdit back = parse_edit(edit_to_json(SetCell{StageId::input(StageKind::X), 0, 0, v}), s);
    ASSERT_TRUE(back.edit) << back.error;
    const float got = std::get<SetCell>(*back.edit).value;
    EXPECT_EQ(0, std::memcmp(&got, &v, sizeof v)) << v << " came back as " << got;
  }
}

// A session replayed from its JSON: each random edit, written and read against
// the scenario it met, does what it did; and its inverse, written and read
// against the scenario it left, brings the one before back exactly.
TEST(EditJson, RandomEditsAndTheirInversesReadBackAsThemselves) {
  for (const char* name : {"multi-head", "gqa", "translate", "rope", "sinks"}) {
    Scenario s = preset(name);
    test::RandomEdits edits(7);
    int applied_count = 0;
    for (int i = 0; i < 150; ++i) {
      const Edit e = edits.next(s);
      const std::string text = edit_to_json(e);
      const ParsedEdit back = parse_edit(text, s);
      const std::string before = scenario_to_json(s);
      Scenario after = s;
      const Applied applied = apply_edit(after, e);
      if (!back.edit) {  // the codec refuses only what apply_edit refuses too
        EXPECT_FALSE(applied.error.empty()) << name << ": " << text << " is valid but reads back as: " << back.error;
        continue;
      }
      ASSERT_EQ(outcome(s, *back.edit), outcome(s, e)) << name << ": " << text;
      if (!applied.error.empty()) continue;
      ++applied_count;
      const std::string inverse = edit_to_json(applied.inverse);
      const ParsedEdit undo = parse_edit(inverse, after);
      ASSERT_TRUE(undo.edit) << name << ": the inverse " << inverse << " of " << text << ": " << undo.error;
      Scenario undone = after;
      ASSERT_EQ(apply_edit(undone, *undo.edit).error, "") << inverse;
      ASSERT_EQ(scenario_to_json(undone), before) << name << ": " << text << " undone by " << inverse;
      s = std::move(after);
    }
    EXPECT_GT(applied_count, 60) << name;
  }
}

::testing::AssertionResult mentions(const std::string& message, const std::string& part) {
  if (message.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << message << "\" does not say \"" << part << "\"";
}

std::string error_of(const std::string& text, const Scenario& s) {
  const ParsedEdit p = parse_edit(text, s);
  EXPECT_FALSE(p.edit) << text;
  return p.error;
}

TEST(EditJson, WrongEditsAreRefusedByName) {
  const Scenario s = preset("multi-head");  // T = 4, 2 heads
  EXPECT_TRUE(mentions(error_of("[1]", s), "expected an object with one change"));
  EXPECT_TRUE(mentions(error_of(R"({"T": 4, "d_k": 2})", s), "an object with 2 keys"));
  EXPECT_TRUE(mentions(error_of(R"({"tempreature": 1})", s), "tempreature: unknown key (expected one of mask, temperature, scale"));
  EXPECT_TRUE(mentions(error_of(R"({"T": 0})", s), "T: expected a whole number from 1 to 4096, found 0"));
  EXPECT_TRUE(mentions(error_of(R"({"temperature": -1})", s), "temperature: expected a number greater than 0"));
  EXPECT_TRUE(mentions(error_of(R"({"set": {"stage": "scores[0]", "row": 0, "col": 0, "value": 1}})", s),
                       "computed stages are changed with \"pin\""));
  EXPECT_TRUE(mentions(error_of(R"({"set": {"stage": "W_q", "row": 999, "col": 0, "value": 1}})", s), "set.row: expected a whole number from 0 to"));
  EXPECT_TRUE(mentions(error_of(R"({"pin": {"stage": "weights[5]", "row": 0, "col": 0, "value": 1}})", s), "pin.stage"));
  EXPECT_TRUE(mentions(error_of(R"({"mask": [[1, 0], [1, 1]]})", s), "mask: expected \"none\", \"causal\""));
  EXPECT_TRUE(mentions(error_of(R"({"mask": "diagonal"})", s), "found \"diagonal\""));
  EXPECT_TRUE(mentions(error_of(R"({"matrix": {"stage": "weights[0]", "value": [[1]]}})", s), "matrix.stage: expected an input"));
  EXPECT_TRUE(mentions(error_of(R"({"matrix": {"stage": "X", "value": [[1, 2], [3]]}})", s), "matrix.value[1]: expected a row of 2 numbers"));
  EXPECT_TRUE(mentions(error_of(R"({"token_label": {"index": 0}})", s), "token_label.label: missing"));
  EXPECT_TRUE(mentions(error_of(R"({"labels": {"of": "heads", "labels": []}})", s), "labels.of: expected \"tokens\""));
  EXPECT_TRUE(mentions(error_of(R"({"qk_norm": {"scope": "rows"}})", s), "qk_norm.scope: expected \"head\", \"whole\" or \"off\""));
  EXPECT_TRUE(mentions(error_of(R"({"scenario": {"value": {"X": 1}}})", s), "scenario.value."));
  EXPECT_TRUE(mentions(error_of(R"({"set": )", s), "invalid JSON"));
}

}  // namespace
}  // namespace attention_lab
