// Lesson files: what a good file turns into, how the steps' changes add up,
// and every kind of bad file giving one message that names the step and the
// field, never a crash.

#include "attention_lab/document.h"
#include "attention_lab/lesson.h"
#include "attention_lab/presets.h"
#include "attention_lab/scenario_io.h"

#include "temp_dir.h"
#include "test_support.h"
#include "unit_support.h"

#include <nlohmann/json.hpp>

#include <random>

using namespace attention_lab;
using attention_lab::test::preset;
using attention_lab::test::scenarios_identical;
using attention_lab::test::TempDir;
using attention_lab::test::write_text;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// A small valid lesson on fat-cat; tests change one thing in it.
json base_lesson() {
  return json::parse(R"({
    "format": "attention-lab/lesson@1",
    "title": "Test lesson",
    "preset": "fat-cat",
    "steps": [
      {"title": "First", "text": "Look at X.", "show": ["X"]},
      {"title": "Second", "text": "Look at the weights.", "show": ["weights[0]"]}
    ]
  })");
}

LoadedLesson parse(const json& j) { return parse_lesson(j.dump(), "."); }

// Parses `j`, which must fail with exactly `message`.
void expect_error(const json& j, const std::string& message) {
  const LoadedLesson l = parse(j);
  EXPECT_FALSE(l.lesson.has_value()) << j.dump();
  EXPECT_EQ(l.error, message);
}

// `base_lesson()` with steps[step][key] = value.
json with_step_field(int step, const std::string& key, const json& value) {
  json j = base_lesson();
  j["steps"][static_cast<std::size_t>(step)][key] = value;
  return j;
}

// `base_lesson()` whose step 0 applies `changes`.
json with_changes(const json& changes) { return with_step_field(0, "apply", changes); }

using attention_lab::test::head;

// The stage ids of fat-cat at every step of base_lesson(), as an error lists them.
constexpr const char* kFatCatStages =
    "X, W_q, Q, W_k, K, W_v, V, mask, Q[0], K[0], V[0], scores[0], scaled[0], masked[0], weights[0], context[0], concat, output";

}  // namespace

// [SECTION] Good files

TEST(Lesson, AStepMayShowGradientsHighlightOneAndOpenTheTrainTab) {
  json j = base_lesson();
  j.erase("preset");
  json s = json::parse(scenario_to_json(*make_preset("fat-cat")));
  s["loss"] = {{"kind", "attend"}, {"head", 0}, {"targets", {0, 0, 1, 2, 3, 4, 5}}};
  j["scenario"] = s;
  j["steps"][1] = {{"title", "Second"}, {"text", "The gradient."}, {"pipeline", "both"},
                   {"highlight", {{{"stage", "grad.W_q"}, {"row", 1}, {"col", 0}}}},
                   {"train", {{"optimizer", "adamw"}, {"learning_rate", 0.05}, {"matrices", {"W_q", "W_k"}}}}};
  const LoadedLesson l = parse(j);
  ASSERT_TRUE(l.lesson.has_value()) << l.error;
  const LessonStep& step = l.lesson->steps[1];
  EXPECT_EQ(step.pipeline, LessonPipeline::Both);
  EXPECT_EQ(l.lesson->steps[0].pipeline, LessonPipeline::Values);
  ASSERT_EQ(step.highlight.size(), 1u);
  EXPECT_EQ(step.highlight[0].stage, (StageId{StageKind::W_q, 0, 0, Role::Gradient}));
  ASSERT_TRUE(step.train.has_value());
  EXPECT_EQ(step.train->optimizer, OptimizerKind::AdamW);
  EXPECT_EQ(step.train->learning_rate, 0.05);
  EXPECT_EQ(step.train->matrices, (std::vector<StageKind>{StageKind::W_q, StageKind::W_k}));

  // what a lesson may not do with gradients, each refused by name
  json quiz = j;
  quiz["steps"][1]["quiz"] = {{"stage", "grad.W_q"}, {"row", 0}, {"col", 0}};
  EXPECT_NE(parse(quiz).error.find("steps[1].quiz.stage: expected a stage's values here, found the gradient \"grad.W_q\""),
            std::string::npos) << parse(quiz).error;
  json show = j;
  show["steps"][1]["show"] = {"grad.W_q"};
  EXPECT_NE(parse(show).error.find("a gradient is drawn in the Pipeline"), std::string::npos) << parse(show).error;
  json constant = j;
  constant["steps"][1]["highlight"] = {{{"stage", "grad.mask"}, {"row", 0}, {"col", 0}}};
  EXPECT_NE(parse(constant).error.find("grad.mask: a constant, which has no gradient"), std::string::npos) << parse(constant).error;
  json bad_view = j;
  bad_view["steps"][1]["pipeline"] = "grads";
  EXPECT_EQ(parse(bad_view).error, "steps[1].pipeline: expected \"values\", \"gradients\" or \"both\", found \"grads\"");
  json bad_rate = j;
  bad_rate["steps"][1]["train"]["learning_rate"] = 0;
  EXPECT_EQ(parse(bad_rate).error, "steps[1].train.learning_rate: expected a number greater than 0, at most 10, found 0");
  json bad_matrix = j;
  bad_matrix["steps"][1]["train"]["matrices"] = {"X"};
  EXPECT_NE(parse(bad_matrix).error.find("steps[1].train.matrices[0]: expected a weight the run can train"), std::string::npos)
      << parse(bad_matrix).error;
  // without a loss there are no gradients to show or highlight
  const json no_loss = with_step_field(1, "pipeline", "gradients");
  EXPECT_EQ(parse(no_loss).error, "steps[1].pipeline: the scenario has no \"loss\" at this step, so no gradients");
  json no_loss_cell = base_lesson();
  no_loss_cell["steps"][1]["highlight"] = {{{"stage", "grad.W_q"}, {"row", 1}, {"col", 0}}};
  EXPECT_EQ(parse(no_loss_cell).error,
            "steps[1].highlight[0].stage: grad.W_q: the scenario has no \"loss\" at this step, so no gradients");
}

TEST(Lesson, EveryFieldOfAStepIsRead) {
  const json j = json::parse(R"json({
    "format": "attention-lab/lesson@1",
    "title": "Everything",
    "description": "All the fields.",
    "comment": "for teachers",
    "preset": "fat-cat",
    "steps": [{
      "title": "Softmax",
      "text": "Scores become weights.",
      "formula": "A₀ = softmax(Ŝ₀)",
      "show": ["masked[0]", "weights[0]"],
      "highlight": [{"stage": "weights[0]", "row": 2, "col": 1}],
      "apply": [{"temperature": 0.5}, {"focus_head": 0}],
      "try": "Move the temperature.",
      "softmax": {"head": 0, "row": 2},
      "experiment": {"d": 64},
      "quiz": {"stage": "weights[0]", "row": 3, "col": 1, "tolerance": 0.02, "question": "How much?"},
      "comment": "a note"
    }]
  })json");
  const LoadedLesson l = parse(j);
  ASSERT_TRUE(l.lesson.has_value()) << l.error;
  const Lesson& lesson = *l.lesson;
  EXPECT_EQ(lesson.title, "Everything");
  EXPECT_EQ(lesson.description, "All the fields.");
  EXPECT_EQ(lesson.preset, "fat-cat");
  EXPECT_TRUE(lesson.scenario_file.empty());
  EXPECT_TRUE(scenarios_identical(lesson.scenario, preset("fat-cat")));
  ASSERT_EQ(lesson.steps.size(), 1u);
  const LessonStep& step = lesson.steps[0];
  EXPECT_EQ(step.title, "Softmax");
  EXPECT_EQ(step.text, "Scores become weights.");
  EXPECT_EQ(step.formula, "A₀ = softmax(Ŝ₀)");
  EXPECT_EQ(step.show, (std::vector<StageId>{head(StageKind::Masked), head(StageKind::Weights)}));
  EXPECT_EQ(step.highlight, (std::vector<CellRef>{CellRef{head(StageKind::Weights), 2, 1}}));
  ASSERT_EQ(step.apply.size(), 1u);  // focus_head is a view setting, not an edit
  ASSERT_TRUE(std::holds_alternative<SetTemperature>(step.apply[0]));
  EXPECT_EQ(std::get<SetTemperature>(step.apply[0]).value, 0.5f);
  EXPECT_EQ(step.focus_head, 0);
  EXPECT_EQ(step.try_prompt, "Move the temperature.");
  EXPECT_EQ(step.softmax_row, (LessonRow{0, 2}));
  EXPECT_EQ(step.experiment_d, 64);
  ASSERT_TRUE(step.quiz.has_value());
  EXPECT_EQ(step.quiz->cell, (CellRef{head(StageKind::Weights), 3, 1}));
  EXPECT_EQ(step.quiz->tolerance, 0.02);
  EXPECT_EQ(step.quiz->question, "How much?");
}

TEST(Lesson, AStepsTextMayBeAListOfParagraphs) {
  const LoadedLesson l = parse(with_step_field(0, "text", json::array({"First paragraph.", "Second one."})));
  ASSERT_TRUE(l.lesson) << l.error;
  EXPECT_EQ(l.lesson->steps[0].text, "First paragraph.\n\nSecond one.");
}

TEST(Lesson, OptionalFieldsAreEmptyWhenLeftOut) {
  const LoadedLesson l = parse(base_lesson());
  ASSERT_TRUE(l.lesson.has_value()) << l.error;
  const LessonStep& step = l.lesson->steps[0];
  EXPECT_EQ(l.lesson->description, "");
  EXPECT_EQ(step.formula, "");
  EXPECT_EQ(step.try_prompt, "");
  EXPECT_TRUE(step.highlight.empty());
  EXPECT_TRUE(step.apply.empty());
  EXPECT_FALSE(step.focus_head.has_value());
  EXPECT_FALSE(step.quiz.has_value());
  EXPECT_FALSE(step.softmax_row.has_value());
  EXPECT_FALSE(step.experiment_d.has_value());
  json no_show = base_lesson();
  no_show["steps"][0].erase("show");
  const LoadedLesson m = parse(no_show);
  ASSERT_TRUE(m.lesson.has_value()) << m.error;
  EXPECT_TRUE(m.lesson->steps[0].show.empty());  // empty: show everything
}

TEST(Lesson, AQuizWithoutToleranceUsesOneHundredth) {
  const LoadedLesson l = parse(with_step_field(1, "quiz", json::parse(R"({"stage": "scores[0]", "row": 1, "col": 1})")));
  ASSERT_TRUE(l.lesson.has_value()) << l.error;
  EXPECT_EQ(l.lesson->steps[1].quiz->tolerance, 0.01);
  EXPECT_EQ(l.lesson->steps[1].quiz->question, "");
}

TEST(Lesson, AnEmbeddedScenarioIsUsedAsIs) {
  json j = base_lesson();
  j.erase("preset");
  j["scenario"] = json::parse(scenario_to_json(preset("book")));
  const LoadedLesson l = parse(j);
  ASSERT_TRUE(l.lesson.has_value()) << l.error;
  EXPECT_TRUE(scenarios_identical(l.lesson->scenario, preset("book")));
  EXPECT_EQ(l.lesson->preset, "");
  EXPECT_TRUE(l.lesson->scenario_file.empty());
}

TEST(Lesson, AScenarioPathIsReadRelativeToTheLessonFile) {
  TempDir dir;
  fs::create_directories(dir / "scenes");
  ASSERT_EQ(save_scenario(preset("naive"), dir / "scenes" / "naive.json"), "");
  json j = base_lesson();
  j.erase("preset");
  j["scenario"] = "scenes/naive.json";
  write_text(dir / "lesson.json", j.dump(2));
  const LoadedLesson l = load_lesson(dir / "lesson.json");
  ASSERT_TRUE(l.lesson.has_value()) << l.error;
  EXPECT_TRUE(scenarios_identical(l.lesson->scenario, preset("naive")));
  EXPECT_EQ(l.lesson->scenario_file, dir.path() / "scenes" / "naive.json");
}

TEST(Lesson, AnAbsoluteScenarioPathInsideTheLessonFolderIsUsed) {
  TempDir dir;
  ASSERT_EQ(save_scenario(preset("book"), dir / "book.json"), "");
  json j = base_lesson();
  j.erase("preset");
  j["scenario"] = (dir / "book.json").string();
  const LoadedLesson l = parse_lesson(j.dump(), dir.path());
  ASSERT_TRUE(l.lesson.has_value()) << l.error;
  EXPECT_TRUE(scenarios_identical(l.lesson->scenario, preset("book")));
}

// Cross-attention's two sizes of its own, the source's length and width.
TEST(Lesson, CrossAttentionSizesAreChangesToo) {
  json j = base_lesson();
  j["preset"] = "translate";
  j["steps"][0]["apply"] = json::parse(R"([{"T_k": 6}, {"d_kv": 3}])");
  const LoadedLesson l = parse(j);
  ASSERT_TRUE(l.lesson.has_value()) << l.error;
  const auto& edits = l.lesson->steps[0].apply;
  ASSERT_EQ(edits.size(), 2u);
  EXPECT_EQ(std::get<SetDimension>(edits[0]).which, Dimension::T_k);
  EXPECT_EQ(std::get<SetDimension>(edits[0]).value, 6);
  EXPECT_EQ(std::get<SetDimension>(edits[1]).which, Dimension::d_kv);
  EXPECT_EQ(std::get<SetDimension>(edits[1]).value, 3);
}

TEST(Lesson, EveryKindOfChangeBecomesTheMatchingEdit) {
  const json changes = json::parse(R"([
    {"mask": "none"}, {"mask": "causal"},
    {"temperature": 0.3}, {"scale": false}, {"bias": true}, {"W_o": true}, {"b_o": true},
    {"set": {"stage": "W_q", "row": 0, "col": 1, "value": 0.5}},
    {"pin": {"stage": "scores[0]", "row": 2, "col": 1, "value": 5}},
    {"pin": {"stage": "scores[0]", "row": 2, "col": 1, "value": null}},
    {"clear_pins": true},
    {"T": 5}, {"d_model": 6}, {"heads": 2}, {"d_k": 3}, {"d_v": 2}, {"d_out": 4}
  ])");
  const LoadedLesson l = parse(with_changes(changes));
  ASSERT_TRUE(l.lesson.has_value()) << l.error;
  const auto& edits = l.lesson->steps[0].apply;
  ASSERT_EQ(edits.size(), changes.size());
  EXPECT_EQ(std::get<SetMask>(edits[0]).kind, MaskKind::None);
  EXPECT_EQ(std::get<SetMask>(edits[1]).kind, MaskKind::Causal);
  EXPECT_EQ(std::get<SetTemperature>(edits[2]).value, 0.3f);
  EXPECT_EQ(std::get<SetToggle>(edits[3]).which, Toggle::Scale);
  EXPECT_FALSE(std::get<SetToggle>(edits[3]).on);
  EXPECT_EQ(std::get<SetToggle>(edits[4]).which, Toggle::Bias);
  EXPECT_EQ(std::get<SetToggle>(edits[5]).which, Toggle::OutputProjection);
  EXPECT_EQ(std::get<SetToggle>(edits[6]).which, Toggle::OutputBias);
  const auto& set = std::get<SetCell>(edits[7]);
  EXPECT_EQ(set.target, StageId::input(StageKind::W_q));
  EXPECT_EQ(set.row, 0);
  EXPECT_EQ(set.col, 1);
  EXPECT_EQ(set.value, 0.5f);
  const auto& pin = std::get<SetPin>(edits[8]);
  EXPECT_EQ(pin.key, (PinKey{head(StageKind::Scores), 2, 1}));
  EXPECT_EQ(pin.value, 5.0f);
  EXPECT_FALSE(std::get<SetPin>(edits[9]).value.has_value());
  EXPECT_TRUE(std::get<SetPins>(edits[10]).pins.empty());
  const Dimension dims[] = {Dimension::T, Dimension::d_model, Dimension::heads, Dimension::d_k, Dimension::d_v,
                            Dimension::d_out};
  const int values[] = {5, 6, 2, 3, 2, 4};
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(std::get<SetDimension>(edits[11 + i]).which, dims[i]);
    EXPECT_EQ(std::get<SetDimension>(edits[11 + i]).value, values[i]);
  }
  const Dims d = scenario_at_step(*l.lesson, 0).dims();
  EXPECT_EQ(d, (Dims{5, 6, 2, 3, 2, 4, 2, 5, 6}));
}

TEST(Lesson, ACustomMaskIsAListOfRowsOfZerosAndOnes) {
  json rows = json::array();
  for (int r = 0; r < 7; ++r) {
    json row = json::array();
    for (int c = 0; c < 7; ++c) row.push_back(c == r ? 1 : 0);
    rows.push_back(row);
  }
  const LoadedLesson l = parse(with_changes(json::array({json{{"mask", rows}}})));
  ASSERT_TRUE(l.lesson.has_value()) << l.error;
  const Scenario s = scenario_at_step(*l.lesson, 0);
  EXPECT_EQ(s.mask_kind, MaskKind::Custom);
  EXPECT_EQ(s.effective_mask(), Matrix(Matrix::Identity(7, 7)));
}

TEST(Lesson, ScenarioAtAStepHasTheChangesOfThatStepAndEveryEarlierOne) {
  json j = base_lesson();
  j["steps"][0]["apply"] = json::parse(R"([{"temperature": 0.5}])");
  j["steps"][1]["apply"] = json::parse(R"([{"mask": "none"}, {"set": {"stage": "X", "row": 0, "col": 0, "value": 2}}])");
  const LoadedLesson l = parse(j);
  ASSERT_TRUE(l.lesson.has_value()) << l.error;
  const Scenario start = preset("fat-cat");
  EXPECT_TRUE(scenarios_identical(scenario_at_step(*l.lesson, -1), start));
  Scenario expected = start;
  expected.temperature = 0.5f;
  EXPECT_TRUE(scenarios_identical(scenario_at_step(*l.lesson, 0), expected));
  Scenario at1 = scenario_at_step(*l.lesson, 1);
  EXPECT_EQ(at1.temperature, 0.5f);
  EXPECT_EQ(at1.mask_kind, MaskKind::None);
  EXPECT_EQ(at1.X(0, 0), 2.0f);
  // Going back to an earlier step gives that step's scenario again.
  EXPECT_TRUE(scenarios_identical(scenario_at_step(*l.lesson, 0), expected));
}

TEST(Lesson, StepsOutsideTheLessonAreClamped) {
  json j = base_lesson();
  j["steps"][1]["apply"] = json::parse(R"([{"temperature": 2}])");
  const LoadedLesson l = parse(j);
  ASSERT_TRUE(l.lesson.has_value()) << l.error;
  EXPECT_TRUE(scenarios_identical(scenario_at_step(*l.lesson, -5), preset("fat-cat")));
  EXPECT_EQ(scenario_at_step(*l.lesson, 99).temperature, 2.0f);
}

TEST(Lesson, ApplyingTheStepsThroughADocumentGivesTheSameScenarioAndUndoesStepByStep) {
  json j = base_lesson();
  j["steps"][0]["apply"] = json::parse(R"([{"heads": 2}, {"pin": {"stage": "weights[1]", "row": 1, "col": 0, "value": 0.9}}])");
  j["steps"][1]["apply"] = json::parse(R"([{"d_k": 3}, {"scale": false}])");
  const LoadedLesson l = parse(j);
  ASSERT_TRUE(l.lesson.has_value()) << l.error;
  Document doc(l.lesson->scenario);
  for (std::size_t i = 0; i < l.lesson->steps.size(); ++i) {
    const auto gesture = doc.begin_gesture();  // one undo entry per step
    for (const Edit& e : l.lesson->steps[i].apply) ASSERT_EQ(doc.apply(e, gesture), "");
    EXPECT_TRUE(scenarios_identical(doc.scenario(), scenario_at_step(*l.lesson, static_cast<int>(i))));
  }
  ASSERT_TRUE(doc.undo());
  EXPECT_TRUE(scenarios_identical(doc.scenario(), scenario_at_step(*l.lesson, 0)));
  ASSERT_TRUE(doc.undo());
  EXPECT_TRUE(scenarios_identical(doc.scenario(), l.lesson->scenario));
}

TEST(Lesson, WhatAStepShowsIsCheckedAfterItsChanges) {
  json j = base_lesson();
  j["steps"][1]["apply"] = json::parse(R"([{"heads": 2}, {"focus_head": 1}])");
  j["steps"][1]["show"] = json::parse(R"(["weights[1]", "Q[1]"])");
  j["steps"][1]["highlight"] = json::parse(R"([{"stage": "context[1]", "row": 6, "col": 3}])");
  const LoadedLesson l = parse(j);
  ASSERT_TRUE(l.lesson.has_value()) << l.error;
  EXPECT_EQ(l.lesson->steps[1].focus_head, 1);
}

TEST(Lesson, ValidateAcceptsEveryParsedLesson) {
  const LoadedLesson l = parse(with_changes(json::parse(R"([{"T": 4}, {"heads": 3}])")));
  ASSERT_TRUE(l.lesson.has_value()) << l.error;
  EXPECT_EQ(validate_lesson(*l.lesson), "");
}

TEST(Lesson, ValidateNamesTheStepOfALessonChangedInMemory) {
  const LoadedLesson l = parse(base_lesson());
  ASSERT_TRUE(l.lesson.has_value()) << l.error;
  Lesson lesson = *l.lesson;
  lesson.steps[1].apply.push_back(SetTemperature{-1.0f});
  EXPECT_EQ(validate_lesson(lesson),
            "steps[1].apply[0]: temperature = -1: temperature: expected a finite number greater than 0, found -1");
  lesson = *l.lesson;
  lesson.steps[0].apply.push_back(SetDimension{Dimension::T, 3});
  lesson.steps[1].highlight.push_back(CellRef{head(StageKind::Weights), 5, 0});
  EXPECT_EQ(validate_lesson(lesson),
            "steps[1].highlight[0]: weights[0][5][0]: expected a cell within 3 x 3, found row 5, column 0");
  lesson = *l.lesson;
  lesson.steps[0].focus_head = 2;
  EXPECT_EQ(validate_lesson(lesson),
            "steps[0].focus_head: expected a whole number from 0 to 0 (the scenario has 1 head at this step), found 2");
  lesson = *l.lesson;
  lesson.steps.clear();
  EXPECT_EQ(validate_lesson(lesson), "steps: expected at least 1 step, found none");
}

TEST(Lesson, ScenarioAtStepStopsAtAChangeThatNoLongerApplies) {
  const LoadedLesson l = parse(base_lesson());
  ASSERT_TRUE(l.lesson.has_value()) << l.error;
  Lesson lesson = *l.lesson;
  lesson.steps[0].apply = {SetTemperature{0.5f}, SetTemperature{-1.0f}, SetTemperature{3.0f}};
  EXPECT_EQ(scenario_at_step(lesson, 1).temperature, 0.5f);
}

// [SECTION] Telling lessons from scenarios

TEST(LessonFiles, LessonTextIsToldFromScenarioText) {
  EXPECT_TRUE(is_lesson_text(base_lesson().dump()));
  EXPECT_TRUE(is_lesson_text(R"({"title": "x", "steps": [], "format": "attention-lab/lesson@1"})"));
  EXPECT_TRUE(is_lesson_text(R"({"format": "attention-lab/lesson@2"})"));  // a newer version: still a lesson
  EXPECT_FALSE(is_lesson_text(scenario_to_json(preset("book"))));
  EXPECT_FALSE(is_lesson_text(R"({"nested": {"format": "attention-lab/lesson@1"}})"));
  EXPECT_FALSE(is_lesson_text(R"({"format": 1})"));
  EXPECT_FALSE(is_lesson_text(R"(["format", "attention-lab/lesson@1"])"));
  EXPECT_FALSE(is_lesson_text("not json"));
  EXPECT_FALSE(is_lesson_text(""));
}

TEST(LessonFiles, TheLessonsOfAFolderAreListedByName) {
  TempDir dir;
  write_text(dir / "b.json", base_lesson().dump());
  write_text(dir / "a.json", base_lesson().dump());
  write_text(dir / "scenario.json", scenario_to_json(preset("book")));
  write_text(dir / "notes.txt", base_lesson().dump());
  write_text(dir / "broken.json", "{\"format\": ");
  fs::create_directories(dir / "folder.json");
  EXPECT_EQ(lesson_files(dir.path()), (std::vector<fs::path>{dir / "a.json", dir / "b.json"}));
  EXPECT_TRUE(lesson_files(dir / "missing").empty());
}

TEST(LessonFiles, OrderTxtPutsTheTeachersOrderFirst) {
  TempDir dir;
  for (const char* name : {"a", "b", "c", "d"}) write_text(dir / (std::string(name) + ".json"), base_lesson().dump());
  // Comments, blank lines, stray spaces and a name with no file are all fine.
  write_text(dir / "order.txt", "# teaching order\n  c \n\nmissing\na\r\n");
  EXPECT_EQ(lesson_files(dir.path()),
            (std::vector<fs::path>{dir / "c.json", dir / "a.json", dir / "b.json", dir / "d.json"}));
}

// [SECTION] Bad files: one message naming the step and the field

TEST(LessonBadInput, TheMessagesOfTheFormatDescription) {
  expect_error(with_changes(json::parse(R"([{"temperature": -1}])")),
               "steps[0].apply[0].temperature: expected a number greater than 0, found -1");
  json j = base_lesson();
  j["steps"][1]["show"] = json::parse(R"(["X", "scorez"])");
  // A mistyped id names the nearest and lists the scenario's ids (heads folded).
  expect_error(j, R"(steps[1].show[1]: expected a stage id such as "scores[0]", found "scorez": did you mean )"
                  R"("scores[0]"? The stages at this step: )" + std::string(kFatCatStages));
}

TEST(LessonBadInput, SyntaxErrorsSayInvalidJson) {
  const LoadedLesson l = parse_lesson("{\"format\": ", ".");
  EXPECT_FALSE(l.lesson.has_value());
  EXPECT_EQ(l.error.rfind("invalid JSON: ", 0), 0u) << l.error;
}

TEST(LessonBadInput, TheFileMustBeALessonObject) {
  expect_error(json::array(), "lesson: expected a JSON object { … }, found a list of 0");
  json j = base_lesson();
  j.erase("format");
  expect_error(j, R"(format: missing (a lesson file has "format": "attention-lab/lesson@1"))");
  j["format"] = "attention-lab/lesson@2";
  expect_error(j, R"(format: expected "attention-lab/lesson@1", found "attention-lab/lesson@2")");
}

TEST(LessonBadInput, TopLevelFieldsAreChecked) {
  json j = base_lesson();
  j.erase("title");
  expect_error(j, "title: missing (every lesson has a title)");
  j = base_lesson();
  j["title"] = "";
  expect_error(j, "title: expected some text, found an empty string");
  j = base_lesson();
  j["description"] = 3;
  expect_error(j, "description: expected a string, found 3");
  j = base_lesson();
  j["stepz"] = json::array();
  expect_error(j, "stepz: unknown key (expected one of format, title, description, scenario, preset, symbols, index_base, steps, comment)");
}

TEST(LessonBadInput, TheScenarioMustBeGivenOnceAndExist) {
  json j = base_lesson();
  j.erase("preset");
  expect_error(j, "scenario: missing (give \"scenario\": an object or the path of a scenario file, or \"preset\": "
                  "fat-cat, book, naive, multi-head, gqa, rope, translate, alibi, window, sinks or random-T-D-H)");
  j["scenario"] = "x.json";
  j["preset"] = "book";
  expect_error(j, R"(preset: expected either "scenario" or "preset", found both)");
  j = base_lesson();
  j["preset"] = "fatcat";
  expect_error(j, R"(preset: expected one of fat-cat, book, naive, multi-head, gqa, rope, translate, alibi, window, sinks or random-T-D-H, found "fatcat")");
  j = base_lesson();
  j.erase("preset");
  j["scenario"] = 5;
  expect_error(j, "scenario: expected a scenario object { … } or the path of a scenario file, found 5");
}

TEST(LessonBadInput, AnEmbeddedScenarioReportsItsFieldUnderScenario) {
  json j = base_lesson();
  j.erase("preset");
  j["scenario"] = json::parse(scenario_to_json(preset("book")));
  j["scenario"]["X"][2][1] = "nan";
  expect_error(j, R"(scenario.X[2][1]: expected a number, found string "nan")");
}

TEST(LessonBadInput, AMissingScenarioFileIsNamedWithItsPath) {
  TempDir dir;
  json j = base_lesson();
  j.erase("preset");
  j["scenario"] = "missing.json";
  const LoadedLesson l = parse_lesson(j.dump(), dir.path());
  EXPECT_FALSE(l.lesson.has_value());
  EXPECT_EQ(l.error.rfind("scenario \"missing.json\": " + (dir / "missing.json").string() + ": cannot read", 0), 0u)
      << l.error;
}

TEST(LessonBadInput, ABadScenarioFileNamesTheFileAndTheField) {
  TempDir dir;
  write_text(dir / "bad.json", R"({"X": [[1]], "W_q": [[1]], "W_k": [[1]], "W_v": [[1]], "heads": 0})");
  json j = base_lesson();
  j.erase("preset");
  j["scenario"] = "bad.json";
  const LoadedLesson l = parse_lesson(j.dump(), dir.path());
  EXPECT_EQ(l.error, "scenario \"bad.json\": " + (dir / "bad.json").string() +
                         ": heads: expected a whole number from 1 to 32, found 0");
}

TEST(LessonBadInput, StepsMustBeAListOfStepObjects) {
  json j = base_lesson();
  j.erase("steps");
  expect_error(j, "steps: missing (a lesson has a list of steps)");
  j["steps"] = json::object();
  expect_error(j, "steps: expected a list of steps, found an object");
  j["steps"] = json::array();
  expect_error(j, "steps: expected at least 1 step, found an empty list");
  j["steps"] = json::array({"step"});
  expect_error(j, R"(steps[0]: expected a step object {"title": …, "text": …}, found "step")");
}

TEST(LessonBadInput, EveryStepNeedsATitleAndText) {
  json j = base_lesson();
  j["steps"][1].erase("title");
  expect_error(j, "steps[1].title: missing (every step has a title)");
  j = base_lesson();
  j["steps"][1].erase("text");
  expect_error(j, "steps[1].text: missing (every step explains something)");
  expect_error(with_step_field(0, "text", json::array()),
               "steps[0].text: expected some text or a list of paragraphs, found an empty list");
  expect_error(with_step_field(0, "text", json::array({"One.", 2})), "steps[0].text[1]: expected a string, found 2");
  expect_error(with_step_field(0, "formula", 1), "steps[0].formula: expected a string, found 1");
  expect_error(with_step_field(0, "try", nullptr), "steps[0].try: expected a string, found null");
}

TEST(LessonBadInput, AMisspelledStepKeyIsReported) {
  expect_error(with_step_field(1, "hightlight", json::array()),
               "steps[1].hightlight: unknown key (expected one of title, text, formula, show, highlight, apply, try, "
               "quiz, experiment, softmax, pipeline, train, comment)");
}

TEST(LessonBadInput, ShownStagesMustExistAtThatStep) {
  expect_error(with_step_field(1, "show", "X"),
               R"(steps[1].show: expected a list of stage ids such as ["X", "scores[0]"], found "X")");
  expect_error(with_step_field(1, "show", json::array({3})),
               R"(steps[1].show[0]: expected a stage id such as "scores[0]", found 3)");
  expect_error(with_step_field(1, "show", json::array({"weights[1]"})),
               R"(steps[1].show[0]: expected a stage of the scenario at this step, found "weights[1]" )"
               R"((the scenario has 1 head, so the only head is 0): did you mean "weights[0]"? The stages at this step: )" +
                   std::string(kFatCatStages));
  expect_error(with_step_field(0, "show", json::array({"W_o"})),
               R"(steps[0].show[0]: expected a stage of the scenario at this step, found "W_o" )"
               "(the output projection W_o is off in this scenario)");
}

TEST(LessonBadInput, HighlightedCellsMustBeInsideTheirStage) {
  auto cell = [](const char* stage, json row, json col) {
    return json::array({json{{"stage", stage}, {"row", row}, {"col", col}}});
  };
  expect_error(with_step_field(0, "highlight", cell("weights[0]", 9, 0)),
               "steps[0].highlight[0].row: expected a whole number from 0 to 6 (weights[0] is 7 x 7 at this step), "
               "found 9");
  expect_error(with_step_field(0, "highlight", cell("X", 0, 4)),
               "steps[0].highlight[0].col: expected a whole number from 0 to 3 (X is 7 x 4 at this step), found 4");
  expect_error(with_step_field(0, "highlight", cell("X", 0, 1.5)),
               "steps[0].highlight[0].col: expected a whole number from 0 to 3 (X is 7 x 4 at this step), found 1.5");
  expect_error(with_step_field(0, "highlight", cell("weightz", 0, 0)),
               R"(steps[0].highlight[0].stage: expected a stage id such as "scores[0]", found "weightz": did you mean )"
               R"("weights[0]"? The stages at this step: )" + std::string(kFatCatStages));
  expect_error(with_step_field(0, "highlight", json::array({json{{"stage", "X"}, {"row", 0}}})),
               R"(steps[0].highlight[0].col: missing (expected {"stage": …, "row": …, "col": …}))");
  expect_error(with_step_field(0, "highlight", json::array({json{{"stage", "X"}, {"row", 0}, {"col", 0}, {"value", 1}}})),
               "steps[0].highlight[0].value: unknown key (expected one of stage, row, col)");
  expect_error(with_step_field(0, "highlight", json::array({"X"})),
               R"(steps[0].highlight[0]: expected {"stage": "weights[0]", "row": r, "col": c}, found "X")");
}

TEST(LessonBadInput, AChangeIsAnObjectWithOneKnownKey) {
  expect_error(with_changes(json::object()),
               R"(steps[0].apply: expected a list of changes such as [{"mask": "causal"}], found an object)");
  expect_error(with_changes(json::array({"causal"})),
               R"(steps[0].apply[0]: expected an object with one change such as {"mask": "causal"} or {"temperature": 0.5}, found "causal")");
  expect_error(with_changes(json::parse(R"([{"mask": "causal", "temperature": 2}])")),
               R"(steps[0].apply[0]: expected an object with one change such as {"mask": "causal"} or {"temperature": 0.5}, found an object with 2 keys)");
  expect_error(with_changes(json::parse(R"([{"tempreature": 2}])")),
               "steps[0].apply[0].tempreature: unknown key (expected one of mask, temperature, scale, bias, W_o, b_o, "
               "alibi, sinks, rope, qk_norm, softcap, set, matrix, pin, pins, clear_pins, T, d_model, heads, kv_heads, "
               "d_k, d_v, d_out, T_k, d_kv, token_label, feature_label, labels, scenario, focus_head)");
}

TEST(LessonBadInput, EachChangeChecksItsValue) {
  const std::pair<const char*, const char*> cases[] = {
      {R"([{"mask": "casual"}])",
       R"(steps[0].apply[0].mask: expected "none", "causal", {"window": W} or 7 rows of 7 zeros and ones (T x T), found "casual")"},
      {R"([{"mask": [[1]]}])",
       R"(steps[0].apply[0].mask: expected "none", "causal", {"window": W} or 7 rows of 7 zeros and ones (T x T), found 1 rows)"},
      {R"([{"mask": [[1,0,0,0,0,0,0],[1,2,0,0,0,0,0],[1,1,1,0,0,0,0],[1,1,1,1,0,0,0],[1,1,1,1,1,0,0],[1,1,1,1,1,1,0],[1,1,1,1,1,1,1]]}])",
       "steps[0].apply[0].mask[1][1]: expected 0 or 1, found 2"},
      {R"([{"mask": {"window": 0}}])", "steps[0].apply[0].mask.window: expected a whole number from 1 to 4096, found 0"},
      {R"([{"mask": {"window": 2, "size": 3}}])",
       R"(steps[0].apply[0].mask: expected "none", "causal", {"window": W} or 7 rows of 7 zeros and ones (T x T), found )"},
      {R"([{"temperature": "hot"}])", R"(steps[0].apply[0].temperature: expected a number, found "hot")"},
      {R"([{"temperature": 0}])", "steps[0].apply[0].temperature: expected a number greater than 0, found 0"},
      {R"([{"temperature": 1e-60}])",
       "steps[0].apply[0].temperature: expected a finite number greater than 0, found 0"},
      {R"([{"scale": "yes"}])", R"(steps[0].apply[0].scale: expected true or false, found "yes")"},
      {R"([{"W_o": 1}])", "steps[0].apply[0].W_o: expected true or false, found 1"},
      {R"([{"clear_pins": false}])", "steps[0].apply[0].clear_pins: expected true, found false"},
      {R"([{"heads": 0}])", "steps[0].apply[0].heads: expected a whole number from 1 to 32, found 0"},
      {R"([{"T": 2.5}])", "steps[0].apply[0].T: expected a whole number from 1 to 4096, found 2.5"},
      {R"([{"d_k": 5000}])", "steps[0].apply[0].d_k: expected a whole number from 1 to 1024, found 5000"},
      {R"([{"heads": 32}, {"d_k": 1024}])",
       "steps[0].apply[1].d_k: heads*d_k and heads*d_v: expected at most 4096, found 32768 (size limit; that size "
       "would need about"},
      {R"([{"d_out": 3}])", "steps[0].apply[0].d_out: it is h*d_v while W_o is off; turn W_o on to choose it"},
      {R"([{"focus_head": 1}])",
       "steps[0].apply[0].focus_head: expected a whole number from 0 to 0 (the scenario has 1 head at this step), "
       "found 1"},
      {R"([{"focus_head": -1}])", "steps[0].apply[0].focus_head: expected a whole number from 0 to 31, found -1"},
  };
  for (const auto& [changes, message] : cases) {
    const LoadedLesson l = parse(with_changes(json::parse(changes)));
    EXPECT_FALSE(l.lesson.has_value()) << changes;
    EXPECT_EQ(l.error.substr(0, std::string(message).size()), message) << changes;
  }
}

TEST(LessonBadInput, SetAndPinNameTheirStageRowAndColumn) {
  const std::pair<const char*, const char*> cases[] = {
      {R"([{"set": {"stage": "scores[0]", "row": 0, "col": 0, "value": 1}}])",
       R"(steps[0].apply[0].set.stage: expected an input such as "X", "W_q" or "mask" (computed stages are changed with "pin"), found "scores[0]")"},
      {R"([{"pin": {"stage": "X", "row": 0, "col": 0, "value": 1}}])",
       R"(steps[0].apply[0].pin.stage: expected a computed stage such as "scores[0]" (inputs are changed with "set"), found "X")"},
      {R"([{"set": {"stage": "W_q", "row": 4, "col": 0, "value": 1}}])",
       "steps[0].apply[0].set.row: expected a whole number from 0 to 3 (W_q is 4 x 4 at this step), found 4"},
      {R"([{"set": {"stage": "W_q", "row": 0, "col": 0}}])",
       "steps[0].apply[0].set.value: missing (the new value of the cell)"},
      {R"([{"set": {"stage": "W_q", "row": 0, "col": 0, "value": "big"}}])",
       R"(steps[0].apply[0].set.value: expected a number, found "big")"},
      {R"([{"set": {"stage": "mask", "row": 0, "col": 0, "value": 0.5}}])",
       "steps[0].apply[0].set: mask[0][0]: expected 0 or 1, found 0.5"},
      {R"([{"set": {"stage": "b_q", "row": 0, "col": 0, "value": 1}}])",
       R"(steps[0].apply[0].set.stage: expected a stage of the scenario at this step, found "b_q" (the biases are off in this scenario))"},
      {R"([{"pin": {"stage": "weights[0]", "row": 0, "col": 7, "value": 1}}])",
       "steps[0].apply[0].pin.col: expected a whole number from 0 to 6 (weights[0] is 7 x 7 at this step), found 7"},
      {R"([{"pin": {"stage": "weights[0]", "row": 0, "col": 0}}])",
       "steps[0].apply[0].pin.value: missing (a number, or null to unpin)"},
      {R"([{"pin": {"stage": "weights[0]", "row": 0, "col": 0, "value": 1e39}}])",
       "steps[0].apply[0].pin.value: expected a finite float32 number, found 1e+39"},
  };
  for (const auto& [changes, message] : cases) {
    const LoadedLesson l = parse(with_changes(json::parse(changes)));
    EXPECT_FALSE(l.lesson.has_value()) << changes;
    EXPECT_EQ(l.error, message) << changes;
  }
}

TEST(LessonBadInput, AChangeThatNoLongerFitsAfterAnEarlierStepNamesItsStep) {
  json j = base_lesson();
  j["steps"][0]["apply"] = json::parse(R"([{"T": 5}])");
  j["steps"][1]["apply"] = json::parse(R"([{"set": {"stage": "X", "row": 6, "col": 0, "value": 1}}])");
  expect_error(j, "steps[1].apply[0].set.row: expected a whole number from 0 to 4 (X is 5 x 4 at this step), found 6");
  j["steps"][1]["apply"] = json::array();
  j["steps"][1]["show"] = json::array({"weights[0]"});
  j["steps"][1]["highlight"] = json::parse(R"([{"stage": "weights[0]", "row": 6, "col": 0}])");
  expect_error(j, "steps[1].highlight[0].row: expected a whole number from 0 to 4 (weights[0] is 5 x 5 at this step), "
                  "found 6");
}

TEST(LessonBadInput, QuizCellsMustHoldANumber) {
  auto quiz = [](const char* stage, int row, int col) { return json{{"stage", stage}, {"row", row}, {"col", col}}; };
  expect_error(with_step_field(0, "quiz", quiz("masked[0]", 0, 1)),
               "steps[0].quiz: expected a cell with a finite value at this step, found masked[0][0][1] = -inf");
  expect_error(with_step_field(0, "quiz", quiz("weights[0]", 0, 7)),
               "steps[0].quiz.col: expected a whole number from 0 to 6 (weights[0] is 7 x 7 at this step), found 7");
  json q = quiz("weights[0]", 0, 0);
  q["tolerance"] = 0;
  expect_error(with_step_field(0, "quiz", q), "steps[0].quiz.tolerance: expected a number greater than 0, found 0");
  q["tolerance"] = "small";
  expect_error(with_step_field(0, "quiz", q), R"(steps[0].quiz.tolerance: expected a number, found "small")");
  q = quiz("weights[0]", 0, 0);
  q["question"] = 1;
  expect_error(with_step_field(0, "quiz", q), "steps[0].quiz.question: expected a string, found 1");
}

TEST(LessonBadInput, SoftmaxRowsAndExperimentsAreChecked) {
  expect_error(with_step_field(0, "softmax", json{{"head", 1}, {"row", 0}}),
               "steps[0].softmax.head: expected a whole number from 0 to 0 (the scenario has 1 head at this step), "
               "found 1");
  expect_error(with_step_field(0, "softmax", json{{"head", 0}, {"row", 7}}),
               "steps[0].softmax.row: expected a whole number from 0 to 6 (T is 7 at this step), found 7");
  expect_error(with_step_field(0, "softmax", json{{"head", 0}}),
               R"(steps[0].softmax.row: missing (expected {"head": h, "row": r}))");
  expect_error(with_step_field(0, "experiment", json{{"d", 2048}}),
               "steps[0].experiment.d: expected a whole number from 1 to 1024, found 2048");
  expect_error(with_step_field(0, "experiment", 64), R"(steps[0].experiment: expected {"d": n}, found 64)");
  expect_error(with_step_field(0, "experiment", json{{"d", 8}, {"seed", 1}}),
               "steps[0].experiment.seed: unknown key (expected one of d)");
}

TEST(LessonBadInput, DeepNestingIsRefusedWithoutRecursing) {
  std::string deep = R"({"format": "attention-lab/lesson@1", "comment": )";
  for (int i = 0; i < 100000; ++i) deep += '[';
  for (int i = 0; i < 100000; ++i) deep += ']';
  deep += '}';
  const LoadedLesson l = parse_lesson(deep, ".");
  EXPECT_EQ(l.error, "lesson: expected lists and objects nested at most 256 deep, found 100001");
}

TEST(LessonBadInput, AMissingLessonFileIsNamed) {
  TempDir dir;
  const LoadedLesson l = load_lesson(dir / "nope.json");
  EXPECT_FALSE(l.lesson.has_value());
  EXPECT_EQ(l.error.rfind((dir / "nope.json").string() + ": cannot read", 0), 0u) << l.error;
}

TEST(LessonBadInput, RandomCorruptionsGiveAnErrorOrALessonNeverACrash) {
  json j = base_lesson();
  j["steps"][0]["apply"] = json::parse(R"([{"temperature": 0.5}, {"heads": 2}, {"focus_head": 1}])");
  j["steps"][0]["highlight"] = json::parse(R"([{"stage": "weights[1]", "row": 2, "col": 1}])");
  j["steps"][1]["quiz"] = json::parse(R"({"stage": "weights[0]", "row": 3, "col": 1, "tolerance": 0.01})");
  const std::string good = j.dump(1);
  std::mt19937 rng(5);
  const std::string alphabet = "{}[]\":,0123456789-.eE truefalsnl";
  int errors = 0;
  for (int i = 0; i < 400; ++i) {
    std::string text = good;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const std::size_t at = rng() % text.size();
      switch (rng() % 3) {
        case 0: text[at] = alphabet[rng() % alphabet.size()]; break;
        case 1: text.erase(at, 1 + rng() % 8); break;
        default: text.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
      }
    }
    const LoadedLesson l = parse_lesson(text, ".");
    EXPECT_NE(l.lesson.has_value(), !l.error.empty());
    if (!l.lesson) {
      ++errors;
      EXPECT_EQ(l.error.find('\n'), std::string::npos) << l.error;
    } else {
      EXPECT_EQ(validate_lesson(*l.lesson), "");
    }
  }
  EXPECT_GT(errors, 300);
}
