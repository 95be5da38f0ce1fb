// The lessons shipped in assets/lessons/: every file loads, every step applies
// (through a Document too, as the app does), every lesson has prompts and a
// quiz, and the numbers the texts quote are the engine's.

#include "attention_lab/document.h"
#include "attention_lab/gradients.h"
#include "attention_lab/stage_registry.h"
#include "attention_lab/training.h"
#include "attention_lab/lesson.h"
#include "attention_lab/quiz.h"
#include "attention_lab/softmax_breakdown.h"

#include "test_support.h"
#include "unit_support.h"

#include <algorithm>

using namespace attention_lab;
using attention_lab::test::scenarios_identical;
namespace fs = std::filesystem;

namespace {

const fs::path& lessons_dir() {
  static const fs::path dir = fs::path(ATTENTION_LAB_TEST_DATA_DIR) / ".." / "assets" / "lessons";
  return dir;
}

Lesson load(const char* name) {
  const LoadedLesson l = load_lesson(lessons_dir() / name);
  if (!l.lesson) throw std::runtime_error(std::string(name) + ": " + l.error);
  return *l.lesson;
}

// The value of a cell of `stage` in the scenario of `step`.
float at_step(const Lesson& lesson, int step, const char* stage, int row, int col) {
  const Document doc(scenario_at_step(lesson, step));
  return doc.stage(*parse_stage_id(stage))(row, col);
}

// The index of the step whose title is `title`.
int step_titled(const Lesson& lesson, const std::string& title) {
  for (std::size_t i = 0; i < lesson.steps.size(); ++i)
    if (lesson.steps[i].title == title) return static_cast<int>(i);
  throw std::runtime_error("no step titled " + title);
}

}  // namespace

TEST(BuiltInLessons, TheSevenLessonsAreThereInTeachingOrder) {
  const auto files = lesson_files(lessons_dir());
  std::vector<std::string> names;
  for (const auto& f : files) names.push_back(f.filename().string());
  EXPECT_EQ(names, (std::vector<std::string>{"attention-from-scratch.json", "why-sqrt-dk.json", "causal-masking.json",
                                             "many-heads.json", "cross-attention.json", "positions.json",
                                             "how-attention-learns.json"}));
}

TEST(BuiltInLessons, EveryFileInTheFolderIsALessonThatLoads) {
  int count = 0;
  for (const auto& entry : fs::directory_iterator(lessons_dir())) {
    if (entry.path().filename() == "order.txt") continue;  // the teaching order, not a lesson
    ++count;
    EXPECT_EQ(entry.path().extension(), ".json") << entry.path();
    const LoadedLesson l = load_lesson(entry.path());
    EXPECT_TRUE(l.lesson.has_value()) << entry.path() << ": " << l.error;
    if (l.lesson) {
      EXPECT_EQ(validate_lesson(*l.lesson), "") << entry.path();
    }
  }
  EXPECT_EQ(count, 7);
}

TEST(BuiltInLessons, EveryStepAppliesThroughADocumentAsTheAppDoes) {
  for (const auto& path : lesson_files(lessons_dir())) {
    const LoadedLesson l = load_lesson(path);
    ASSERT_TRUE(l.lesson.has_value()) << path << ": " << l.error;
    const Lesson& lesson = *l.lesson;
    Document doc(lesson.scenario);
    for (std::size_t i = 0; i < lesson.steps.size(); ++i) {
      const LessonStep& step = lesson.steps[i];
      const auto gesture = doc.begin_gesture();
      for (const Edit& e : step.apply) ASSERT_EQ(doc.apply(e, gesture), "") << path << " step " << i;
      EXPECT_TRUE(scenarios_identical(doc.scenario(), scenario_at_step(lesson, static_cast<int>(i))))
          << path << " step " << i;
      for (const StageId id : step.show) EXPECT_EQ(stage_problem(doc.scenario(), id), "") << path << " step " << i;
      for (const CellRef& c : step.highlight) {
        // a highlighted gradient: its stage's cell, of a scenario whose loss has gradients
        CellRef value = c;
        value.stage.role = Role::Value;
        EXPECT_EQ(cell_problem(doc.scenario(), value), "") << path << " step " << i;
        if (c.stage.role == Role::Gradient) {
          ASSERT_TRUE(doc.scenario().loss.has_value()) << path << " step " << i;
          EXPECT_EQ(gradients_problem(doc.scenario(), *doc.scenario().loss), "") << path << " step " << i;
        }
      }
      if (step.softmax_row) {
        EXPECT_EQ(softmax_breakdown(doc, step.softmax_row->head, step.softmax_row->row).error, "") << path;
      }
      if (step.quiz) {
        EXPECT_TRUE(make_question(doc, step.quiz->cell, step.quiz->tolerance).has_value()) << path << " step " << i;
      }
    }
    // Back to the start, one step at a time.
    for (std::size_t i = lesson.steps.size(); i-- > 0;) {
      if (!lesson.steps[i].apply.empty()) {
        ASSERT_TRUE(doc.undo()) << path;
      }
    }
    EXPECT_TRUE(scenarios_identical(doc.scenario(), lesson.scenario)) << path;
  }
}

TEST(BuiltInLessons, EveryLessonHasWordsPromptsAndAQuiz) {
  for (const auto& path : lesson_files(lessons_dir())) {
    const Lesson lesson = load_lesson(path).lesson.value();
    EXPECT_FALSE(lesson.description.empty()) << path;
    EXPECT_GE(lesson.steps.size(), 7u) << path;
    const auto quizzes = std::count_if(lesson.steps.begin(), lesson.steps.end(), [](const LessonStep& s) { return s.quiz.has_value(); });
    const auto prompts = std::count_if(lesson.steps.begin(), lesson.steps.end(), [](const LessonStep& s) { return !s.try_prompt.empty(); });
    EXPECT_GE(quizzes, 1) << path;
    EXPECT_GE(prompts, 1) << path;
    for (const LessonStep& step : lesson.steps) {
      EXPECT_GT(step.text.size(), 80u) << path << ": " << step.title;
      if (step.quiz) {
        EXPECT_FALSE(step.quiz->question.empty()) << path << ": " << step.title;
      }
    }
  }
}

// [SECTION] The numbers the texts quote

TEST(BuiltInLessons, AttentionFromScratchQuotesTheEnginesNumbers) {
  const Lesson l = load("attention-from-scratch.json");
  EXPECT_EQ(l.steps.size(), 11u);
  EXPECT_NEAR(at_step(l, 1, "Q", 2, 1), 1.81, 1e-5);
  EXPECT_NEAR(at_step(l, 2, "K", 1, 1), 1.6, 1e-5);
  EXPECT_NEAR(at_step(l, 4, "scores[0]", 2, 1), 2.91, 1e-5);
  EXPECT_NEAR(at_step(l, 5, "scaled[0]", 2, 1), 1.455, 1e-5);
  EXPECT_NEAR(at_step(l, 7, "weights[0]", 2, 1), 0.614, 5e-4);
  EXPECT_EQ(at_step(l, 7, "weights[0]", 0, 0), 1.0f);
  EXPECT_NEAR(at_step(l, 8, "weights[0]", 2, 0), 0.211, 5e-4);
  EXPECT_NEAR(at_step(l, 8, "weights[0]", 2, 2), 0.175, 5e-4);
  EXPECT_NEAR(at_step(l, 8, "context[0]", 2, 1), 0.523, 5e-4);
  const int change = step_titled(l, "Change one weight, follow the change");
  EXPECT_NEAR(at_step(l, change, "Q", 2, 1), 0.01, 1e-5);
  EXPECT_NEAR(at_step(l, change, "weights[0]", 2, 1), 0.304, 5e-4);
  // "the sentence's row of 'sat' looks for a noun": its largest allowed score is 'cat'.
  const Document doc(l.scenario);
  const auto masked = doc.stage(*parse_stage_id("masked[0]"));
  Eigen::Index best = 0;
  masked.row(3).maxCoeff(&best);
  EXPECT_EQ(best, 2);
}

TEST(BuiltInLessons, CausalMaskingQuotesTheEnginesNumbers) {
  const Lesson l = load("causal-masking.json");
  // Without a mask the first 'the' gives most to the second 'the'.
  Document none(scenario_at_step(l, 0));
  const auto w = none.stage(*parse_stage_id("weights[0]"));
  Eigen::Index best = 0;
  w.row(0).maxCoeff(&best);
  EXPECT_EQ(best, 5);
  EXPECT_NEAR(w(0, 5), 0.27, 5e-3);
  const int fill = step_titled(l, "The allowed weights grow to fill the row");
  EXPECT_NEAR(at_step(l, fill, "scaled[0]", 1, 0), 0.990, 5e-4);
  EXPECT_NEAR(at_step(l, fill, "scaled[0]", 1, 1), 0.382, 5e-4);
  EXPECT_NEAR(at_step(l, fill, "weights[0]", 1, 0), 0.648, 5e-4);
  // Changing 'mat' leaves rows 0 to 5 exactly as they were.
  const int later = step_titled(l, "Changing a later word cannot change an earlier row");
  const Document before(scenario_at_step(l, later - 1));
  const Document after(scenario_at_step(l, later));
  EXPECT_EQ(before.scenario().X(6, 2), 0.9f);
  for (const char* stage : {"weights[0]", "context[0]", "output"}) {
    const auto a = before.stage(*parse_stage_id(stage));
    const auto b = after.stage(*parse_stage_id(stage));
    EXPECT_TRUE(attention_lab::test::matrices_identical(a.topRows(6), b.topRows(6), stage));
    EXPECT_NE(Matrix(a.row(6)), Matrix(b.row(6))) << stage;
  }
  // The row that may look nowhere: weights and context 0, and a warning.
  const int nowhere = step_titled(l, "A row that may look nowhere");
  const Document empty_row(scenario_at_step(l, nowhere));
  EXPECT_EQ(Matrix(empty_row.stage(*parse_stage_id("weights[0]")).row(0)), Matrix(RowVector::Zero(7)));
  EXPECT_EQ(Matrix(empty_row.stage(*parse_stage_id("context[0]")).row(0)), Matrix(RowVector::Zero(4)));
  EXPECT_EQ(empty_row.engine().warnings().size(), 1u);
  // The last step brings back the causal mask and the old value of 'mat': the
  // numbers are those of the start again (a custom mask stays remembered, unused).
  const Document end(scenario_at_step(l, 99));
  const Document start(l.scenario);
  EXPECT_EQ(end.scenario().mask_kind, MaskKind::Causal);
  EXPECT_EQ(end.scenario().X.get(), start.scenario().X.get());
  EXPECT_TRUE(attention_lab::test::engines_identical(end.engine(), start.engine()));
}

TEST(BuiltInLessons, WhySqrtDkQuotesTheEnginesNumbers) {
  const Lesson l = load("why-sqrt-dk.json");
  const int off = step_titled(l, "In a real layer: d_k = 64 without scaling");
  const Document unscaled(scenario_at_step(l, off));
  EXPECT_EQ(unscaled.scenario().dims().d_k, 64);
  EXPECT_FALSE(unscaled.scenario().scale);
  const auto w = unscaled.stage(*parse_stage_id("weights[0]"));
  for (int r : {0, 6, 7}) EXPECT_GT(w.row(r).maxCoeff(), 0.995f) << r;
  for (int r : {1, 2, 3, 4}) EXPECT_GE(w.row(r).maxCoeff(), 0.875f) << r;
  const auto s = unscaled.stage(*parse_stage_id("scores[0]"));
  EXPECT_GT(s.maxCoeff() - s.minCoeff(), 20.0f);  // "the scores now range over tens"

  const Document scaled(scenario_at_step(l, off + 1));
  const auto ws = scaled.stage(*parse_stage_id("weights[0]"));
  for (int r = 0; r < 8; ++r) {
    EXPECT_GT(ws.row(r).maxCoeff(), 0.2f) << r;
    EXPECT_LT(ws.row(r).maxCoeff(), 0.6f) << r;
  }
  const int hot = step_titled(l, "Temperature: the same knob, turned by hand");
  const Document sharp(scenario_at_step(l, hot));
  const auto wt = sharp.stage(*parse_stage_id("weights[0]"));
  for (int r : {0, 6, 7}) EXPECT_GT(wt.row(r).maxCoeff(), 0.95f) << r;
  for (int r = 0; r < 8; ++r) EXPECT_GT(wt.row(r).maxCoeff(), ws.row(r).maxCoeff()) << r;
  EXPECT_EQ(scenario_at_step(l, 99).temperature, 1.0f);
}

TEST(BuiltInLessons, ManyHeadsQuotesTheEnginesNumbers) {
  const Lesson l = load("many-heads.json");
  const Document doc(l.scenario);
  auto weights = [&](int h) { return doc.stage(StageId::of_head(StageKind::Weights, h)); };
  // Head 0: the previous word has the largest weight from row 1 on.
  for (int r = 1; r < 8; ++r) {
    Eigen::Index best = 0;
    weights(0).row(r).maxCoeff(&best);
    EXPECT_EQ(best, r - 1) << r;
  }
  EXPECT_NEAR(weights(0)(3, 2), 0.35, 5e-3);
  // Head 1: the first word, between 0.73 and 0.95.
  for (int r = 1; r < 8; ++r) {
    EXPECT_GE(weights(1)(r, 0), 0.73f) << r;
    EXPECT_LE(weights(1)(r, 0), 0.96f) << r;
  }
  // Head 2: 'it' finds 'animal', then 'street'; from 'didn't' to row 6 almost even.
  EXPECT_NEAR(weights(2)(7, 1), 0.60, 5e-3);
  EXPECT_NEAR(weights(2)(7, 5), 0.23, 5e-3);
  for (int r = 2; r < 7; ++r) {
    const RowVector row = weights(2).row(r).head(r + 1);  // a copy: the view is a temporary
    EXPECT_LT(row.maxCoeff() - row.minCoeff(), 0.05f) << r;
  }
  // Head 3: the diagonal is the largest weight of each row.
  for (int r = 0; r < 8; ++r) {
    Eigen::Index best = 0;
    weights(3).row(r).maxCoeff(&best);
    EXPECT_EQ(best, r) << r;
  }
  // concat[7][9] is context[2][7][1].
  EXPECT_EQ(doc.stage(StageId::input(StageKind::Concat))(7, 9), doc.stage(StageId::of_head(StageKind::Context, 2))(7, 1));
  // One head left: head 0 as before.
  const Document one(scenario_at_step(l, 99));
  EXPECT_EQ(one.scenario().heads, 1);
  EXPECT_TRUE(attention_lab::test::matrices_near(one.stage(StageId::of_head(StageKind::Weights, 0)), weights(0), 1e-6,
                                                 1e-7, "weights[0]"));
}

TEST(BuiltInLessons, PositionsQuotesTheEnginesNumbers) {
  const Lesson l = load("positions.json");
  const int no_order = step_titled(l, "Attention cannot see word order");
  EXPECT_NEAR(at_step(l, no_order, "scores[0]", 6, 0), 2.16, 0.005);
  EXPECT_NEAR(at_step(l, no_order, "scores[0]", 6, 5), 2.16, 0.005);
  EXPECT_NEAR(at_step(l, no_order, "weights[0]", 6, 5), 0.24, 0.005);
  const int turn = step_titled(l, "RoPE turns each query and key by its position");
  EXPECT_NEAR(at_step(l, turn, "Q_unrotated", 1, 0), 2.16, 0.005);
  EXPECT_NEAR(at_step(l, turn, "Q_unrotated", 1, 2), -3.37, 0.005);
  EXPECT_NEAR(at_step(l, turn, "Q", 1, 0), 4.0, 1e-4);
  EXPECT_NEAR(at_step(l, turn, "Q", 1, 2), 0.0, 1e-4);
  const int keys = step_titled(l, "Keys turn too, and only the difference counts");
  EXPECT_NEAR(at_step(l, keys, "K", 5, 0), 0.28, 0.005);
  EXPECT_NEAR(at_step(l, keys, "K", 5, 2), -0.96, 0.005);
  const int distance = step_titled(l, "Now the score depends on how far apart they are");
  EXPECT_NEAR(at_step(l, distance, "scores[0]", 1, 0), 4.0, 1e-4);
  EXPECT_NEAR(at_step(l, distance, "scores[0]", 6, 5), 4.0, 1e-4);
  EXPECT_NEAR(at_step(l, distance, "scores[0]", 6, 0), 1.13, 0.01);
  EXPECT_NEAR(at_step(l, distance, "weights[0]", 6, 5), 0.48, 0.01);
  EXPECT_NEAR(at_step(l, distance, "weights[0]", 6, 0), 0.11, 0.01);
  const int pairing = step_titled(l, "The pairing is part of the model");
  EXPECT_NEAR(at_step(l, pairing, "weights[0]", 6, 0), 0.31, 0.01);
  EXPECT_NEAR(at_step(l, pairing, "weights[0]", 6, 5), 0.20, 0.01);
  const int alibi = step_titled(l, "ALiBi: a penalty for distance instead");
  EXPECT_NEAR(at_step(l, alibi, "weights[0]", 6, 5), 0.242, 0.001);
  EXPECT_NEAR(at_step(l, alibi, "weights[0]", 6, 0), 0.237, 0.001);
  EXPECT_NEAR(at_step(l, alibi, "position_bias[0]", 6, 0), -6.0 / 256, 1e-6);
}

TEST(BuiltInLessons, CrossAttentionQuotesTheEnginesNumbers) {
  const Lesson l = load("cross-attention.json");
  EXPECT_EQ(l.scenario.dims().T, 4);
  EXPECT_EQ(l.scenario.dims().T_k, 5);
  EXPECT_NEAR(at_step(l, 1, "Q", 2, 2), 4.93, 0.005);
  EXPECT_NEAR(at_step(l, 2, "K", 1, 2), 1.09, 0.005);
  EXPECT_NEAR(at_step(l, 3, "scores[0]", 2, 1), 5.40, 0.005);
  for (int c : {0, 2, 3, 4}) EXPECT_LT(at_step(l, 3, "scores[0]", 2, c), 0.6f) << c;
  const int alignment = step_titled(l, "The alignment");
  EXPECT_NEAR(at_step(l, alignment, "weights[0]", 0, 0), 0.80, 0.005);
  EXPECT_NEAR(at_step(l, alignment, "weights[0]", 1, 2), 0.72, 0.005);
  EXPECT_NEAR(at_step(l, alignment, "weights[0]", 2, 1), 0.76, 0.005);
  EXPECT_NEAR(at_step(l, alignment, "weights[0]", 3, 3), 0.73, 0.005);
  for (int r = 0; r < 4; ++r) EXPECT_LT(at_step(l, alignment, "weights[0]", r, 4), 0.06f) << "nobody reads the full stop";
  EXPECT_NEAR(at_step(l, alignment + 1, "context[0]", 2, 2), 0.84, 0.005);
}

namespace {

// A number as a heatmap prints it with one decimal.
double printed(float v) { return std::round(static_cast<double>(v) * 10.0) / 10.0; }

// The quiz cell worked out by hand from its inputs as printed with one
// decimal: a dot product, a scaled score, a softmax of the printed row, a copy.
double from_printed_numbers(const Document& doc, const CellRef& q) {
  const Scenario& s = doc.scenario();
  const int h = q.stage.head, r = q.row, c = q.col;
  const auto m = [&](StageKind k, int head = 0) { return doc.stage(is_per_head(k) ? StageId::of_head(k, head) : StageId::input(k)); };
  double v = 0.0;
  switch (q.stage.kind) {
    case StageKind::Q:
      for (Eigen::Index k = 0; k < m(StageKind::X).cols(); ++k) v += printed(m(StageKind::X)(r, k)) * printed(s.W_q(k, c));
      return v;
    case StageKind::Scores:
      for (Eigen::Index k = 0; k < m(StageKind::HeadQ, h).cols(); ++k)
        v += printed(m(StageKind::HeadQ, h)(r, k)) * printed(m(StageKind::HeadK, h)(c, k));
      return v;
    case StageKind::Scaled:
      return printed(m(StageKind::Scores, h)(r, c)) / (std::sqrt(static_cast<double>(s.dims().d_k)) * static_cast<double>(s.temperature));
    case StageKind::Weights: {
      const MatrixView masked = m(StageKind::Masked, h);  // (a row of a temporary view would dangle)
      const auto row = masked.row(r);
      double sum = 0.0;
      for (Eigen::Index k = 0; k < row.size(); ++k)
        if (std::isfinite(row(k))) sum += std::exp(printed(row(k)));
      return std::exp(printed(row(c))) / sum;
    }
    case StageKind::Context:
      for (Eigen::Index k = 0; k < m(StageKind::Weights, h).cols(); ++k)
        v += printed(m(StageKind::Weights, h)(r, k)) * printed(m(StageKind::HeadV, h)(k, c));
      return v;
    case StageKind::Concat: {
      const int d_v = s.dims().d_v;
      return printed(m(StageKind::Context, c / d_v)(r, c % d_v));
    }
    default:
      ADD_FAILURE() << "no hand computation for " << to_string(q.stage);
      return 0.0;
  }
}

}  // namespace

TEST(BuiltInLessons, HowAttentionLearnsQuotesTheEnginesNumbers) {
  const Lesson l = load("how-attention-learns.json");
  ASSERT_EQ(l.steps.size(), 7u);
  // the gradient of `stage`'s cell at `step`, and the loss there
  const auto grad_at = [&](int step, const char* stage, int row, int col) {
    const Scenario s = scenario_at_step(l, step);
    Engine engine;
    engine.recompute_all(s);
    const Gradients g = backward(engine, s, *s.loss);
    return std::pair<float, double>{(*g.find(*parse_stage_id(stage)))(row, col), g.loss};
  };
  const auto quotes = [&](int step, const std::string& text) {
    std::string all;
    for (const LessonStep& st = l.steps[static_cast<std::size_t>(step)]; const std::string& part : {st.text, st.formula}) all += part;
    return all.find(text) != std::string::npos;
  };
  EXPECT_NEAR(at_step(l, 0, "weights[0]", 2, 1), 0.614, 5e-4);
  EXPECT_NEAR(grad_at(0, "weights[0]", 2, 1).second, 1.148, 5e-4);
  EXPECT_TRUE(quotes(0, "0.614") && quotes(0, "L = 1.148"));
  EXPECT_NEAR(grad_at(1, "weights[0]", 2, 1).first, -0.233, 5e-4);
  EXPECT_TRUE(quotes(1, "−1/(7 × 0.614) = −0.233"));
  EXPECT_NEAR(grad_at(2, "masked[0]", 2, 1).first, -0.0551, 5e-5);
  EXPECT_NEAR(grad_at(2, "scores[0]", 2, 1).first, -0.0276, 5e-5);
  EXPECT_TRUE(quotes(2, "= −0.0551") && quotes(2, "−0.0276"));
  {  // the row's average gradient Σₖ A·∂L/∂A, which the text gives as −0.143
    const Scenario s = scenario_at_step(l, 2);
    Engine engine;
    engine.recompute_all(s);
    const Gradients g = backward(engine, s, *s.loss);
    const RowVector a = engine.stage(*parse_stage_id("weights[0]")).row(2);
    const RowVector da = g.find(*parse_stage_id("weights[0]"))->row(2);
    EXPECT_NEAR(a.dot(da), -0.143, 5e-4);
    EXPECT_TRUE(quotes(2, "(−0.233 − (−0.143))") && quotes(2, "−0.143 = Σₖ A·∂L/∂A"));
  }
  EXPECT_NEAR(grad_at(3, "W_q", 1, 0).first, -0.0472, 5e-5);
  EXPECT_NEAR(grad_at(3, "Q", 1, 0).first, -0.0335, 5e-5);
  EXPECT_TRUE(quotes(3, "= −0.0472") && quotes(3, "−0.0335"));
  // the step by hand: W_q[1,0] − 1 × its gradient, and the loss after it
  const float stepped = at_step(l, 4, "W_q", 1, 0);
  EXPECT_NEAR(stepped, 1.4f - grad_at(3, "W_q", 1, 0).first, 1e-4);
  EXPECT_NEAR(grad_at(4, "W_q", 1, 0).second, 1.146, 5e-4);
  EXPECT_TRUE(quotes(4, "= 1.447") && quotes(4, "from 1.148 to 1.146"));
  EXPECT_NEAR(at_step(l, 5, "Q", 1, 0), 1.447, 5e-4);
  // "about 0.59 after 50 steps" of SGD with η = 1 on W_q, W_k and W_v, as the Train tab runs it
  const LessonStep& play = l.steps[6];
  ASSERT_TRUE(play.train.has_value());
  TrainSettings settings;
  settings.optimizer = play.train->optimizer;
  settings.learning_rate = play.train->learning_rate;
  settings.trained = play.train->matrices;
  Trainer trainer(settings);
  Scenario s = scenario_at_step(l, 6);
  double loss = 0.0;
  for (int i = 0; i <= 50; ++i) {
    Engine engine;
    engine.recompute_all(s);
    const TrainStep t = trainer.step(engine, s, *s.loss);
    ASSERT_EQ(t.error, "");
    loss = t.loss;  // before step i + 1: after 50 steps at i = 50
    for (const auto& [kind, m] : t.updated) s.*spec(kind).member = m;
  }
  EXPECT_NEAR(loss, 0.59, 0.01);
  EXPECT_TRUE(quotes(6, "about 0.59 after 50 steps"));
}

TEST(BuiltInLessons, EveryQuizAcceptsTheAnswerWorkedOutFromThePrintedNumbers) {
  int quizzes = 0;
  for (const fs::path& file : fs::directory_iterator(lessons_dir())) {
    if (file.extension() != ".json") continue;
    const Lesson l = load(file.filename().string().c_str());
    for (std::size_t i = 0; i < l.steps.size(); ++i) {
      if (!l.steps[i].quiz) continue;
      const LessonQuiz& quiz = *l.steps[i].quiz;
      const Document doc(scenario_at_step(l, static_cast<int>(i)));
      const auto q = make_question(doc, quiz.cell, quiz.tolerance);
      ASSERT_TRUE(q) << file << " step " << i + 1;
      const double by_hand = from_printed_numbers(doc, quiz.cell);
      char typed[32];
      std::snprintf(typed, sizeof typed, "%.3f", by_hand);
      const AnswerCheck check = check_answer(*q, typed);
      EXPECT_TRUE(check.correct) << file.filename() << " step " << i + 1 << ": " << typed << " (truth " << q->truth
                                 << "): " << check.message;
      ++quizzes;
    }
  }
  EXPECT_GE(quizzes, 10);
}
