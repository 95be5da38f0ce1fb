// AppState's teaching: quizzes (a hidden cell and its answer) and lessons
// (their steps, what a step opens, what-ifs carried between steps).

#include "app.h"

#include "attention_lab/cell_ref.h"
#include "attention_lab/hook_names.h"
#include "attention_lab/limits.h"
#include "attention_lab/model_cache.h"
#include "attention_lab/presets.h"
#include "attention_lab/stage_info.h"
#include "gfx/fonts.h"
#include "gfx/screenshot.h"
#include "logic/steps.h"
#include "logic/block_derivation.h"
#include "logic/derivation.h"
#include "logic/gradient_derivation.h"
#include "logic/provenance.h"
#include "attention_lab/scenario_io.h"
#include "panels/panels.h"
#include "probe_writer.h"
#include "slide_export.h"

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_internal.h>

#include <string_view>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <tuple>
#include <utility>

namespace attention_lab::gui {

// [SECTION] Quizzes

void AppState::start_quiz(std::optional<CellRef> cell, double tolerance, std::string text) {
  const std::uint64_t pick = ++quiz.picks;  // also names the round's answer box
  if (!cell) {
    // A random cell of what is shown now: the lesson step's stages, the
    // step-through's step, or everything.
    std::vector<StageId> stages;
    if (lesson.lesson && lesson.step >= 0) {
      for (StageId id : lesson.lesson->steps[static_cast<std::size_t>(lesson.step)].show)
        if (!is_input(id.kind)) stages.push_back(id);
    } else if (step >= 0) {
      for (StageKind k : steps()[static_cast<std::size_t>(step)].kinds)
        if (!is_input(k)) stages.push_back(is_per_head(k) ? StageId::of_head(k, focused_head) : StageId::input(k));
    }
    cell = pick_random_cell(*doc, stages, doc->scenario().seed + pick);
  }
  if (!cell) {
    set_status("No cell here makes a fair question (each one is an input, −∞, forced by the mask, or a copy of a number on screen)");
    return;
  }
  auto q = make_question(*doc, *cell, tolerance);
  if (!q) {
    set_status("That cell cannot be asked: its value is not a finite number");
    return;
  }
  q->text = std::move(text);
  quiz.round.emplace(std::move(*q));
  quiz.synced_revision = doc->revision();
  scroll_to_step = true;  // the view brings the asked cell on screen
  quiz.answer[0] = '\0';
  quiz.message.clear();
  quiz.hint = false;
  quiz.focus_answer = false;  // the keyboard stays with the clicker until Q or a click
  selected.reset();  // the selection would show the derivation of the answer
}

// The open question's value as the document has it now: a live edit (a
// teacher's "what if") changes the number on screen, and the answer must
// follow it. A cell that no longer exists, or is no longer a finite number,
// ends the round.
void AppState::sync_quiz() {
  if (!quiz.asking() || quiz.synced_revision == doc->revision()) return;
  quiz.synced_revision = doc->revision();
  Question& q = quiz.round->question;
  auto now = make_question(*doc, q.cell, q.tolerance);
  if (!now) {
    quiz.round.reset();
    quiz.message.clear();
    set_status("The quiz's cell is gone or no longer a finite number after that change: press Q for a new question");
    return;
  }
  q.truth = now->truth;
  q.from_screen = now->from_screen;  // what the printed numbers give now
}

void AppState::check_quiz_answer() {
  sync_quiz();
  if (!quiz.asking()) return;
  const AnswerCheck check = quiz.round->answer(quiz.answer, quiz.tally);
  quiz.message = check.message;
  if (quiz.round->over()) selected = quiz.round->question.cell;  // now the derivation may show
}

void AppState::show_quiz_answer() {
  sync_quiz();
  if (!quiz.asking()) return;
  quiz.round->reveal(quiz.tally);
  quiz.message = quiz.round->solution();
  selected = quiz.round->question.cell;
}

bool AppState::quiz_hides(StageId stage, int row, int col) const {
  if (!quiz.asking()) return false;
  return gives_away(doc->scenario(), quiz.round->question.cell, CellRef{stage, row, col});
}

bool AppState::quiz_feeds(StageId stage, int row, int col) const {
  if (!quiz.asking()) return false;
  const Scenario& s = doc->scenario();
  for (const Lit& l : provenance(s, stage, row, col)) {
    const StageInfo info = describe_stage(s, l.stage);
    if (l.cell_row >= 0 && quiz_hides(l.stage, l.cell_row, l.cell_col)) return true;
    for (int c = 0; l.row >= 0 && c < info.cols; ++c)
      if (quiz_hides(l.stage, l.row, c)) return true;
    for (int r = 0; l.col >= 0 && r < info.rows; ++r)
      if (quiz_hides(l.stage, r, l.col)) return true;
  }
  return false;
}

// [SECTION] Lessons

void AppState::open_lesson(Lesson l, std::string path, int first_step) {
  lesson.lesson = std::move(l);
  lesson.path = std::move(path);
  lesson.step = -1;
  const int last = static_cast<int>(lesson.lesson->steps.size()) - 1;
  open_document(scenario_at_step(*lesson.lesson, std::clamp(first_step, 0, last)), "");
  go_to_lesson_step(std::clamp(first_step, 0, last));
}

void AppState::carry_what_if() {
  if (lesson.set_aside.edits.empty() || lesson.carried) return;
  const std::uint64_t gesture = doc->begin_gesture();
  int refused = 0;
  for (const Edit& e : lesson.set_aside.edits)
    if (!apply(e, gesture)) ++refused;  // a cell this step's sizes no longer have
  lesson.carried = true;
  set_status("Carried into this step: " + lesson.set_aside.summary +
             (refused ? " (" + std::to_string(refused) + " of the changes do not fit this step's sizes)" : "") +
             ". Ctrl+Z takes it out again");
}

void AppState::lesson_next() {
  if (showing_slide(*this) && slide.page + 1 < slide.pages) {
    ++slide.page;
    slide.land_on_last_page = false;
    return;
  }
  go_to_lesson_step(lesson.step + 1);
}

void AppState::lesson_back() {
  if (showing_slide(*this) && slide.page > 0) {
    --slide.page;
    slide.land_on_last_page = false;
    return;
  }
  const int before = lesson.step;
  go_to_lesson_step(lesson.step - 1);
  if (lesson.step != before) slide.land_on_last_page = true;
}

bool AppState::lesson_view_shown() const {
  if (!lesson.lesson || lesson.whole_pipeline) return false;
  return showing_slide(*this) || centre == CentreView::SqrtDkExperiment || centre == CentreView::SoftmaxUpClose;
}

bool AppState::lesson_text_folded() const {
  if (lesson.text_folded) return true;
  return slide.want_fold && !lesson.text_kept_open && lesson_view_shown();
}

void AppState::go_to_lesson_step(int target) {
  if (!lesson.lesson) return;
  const auto& steps_list = lesson.lesson->steps;
  target = std::clamp(target, 0, static_cast<int>(steps_list.size()) - 1);
  if (target != lesson.step) {
    // Each step starts from the lesson's own state, so Back always shows what
    // the teacher wrote, whatever the learner tried in between.
    auto scenario = std::make_shared<const Scenario>(scenario_at_step(*lesson.lesson, target));
    // What the learner (or a teacher's live "what if") changed in this step,
    // against the step's own numbers: set aside, and said so on the slide.
    SetAside what_if = doc->modified() ? set_aside(scenario_at_step(*lesson.lesson, lesson.step), doc->scenario()) : SetAside{};
    if (!apply(ReplaceScenario{scenario, "lesson step " + std::to_string(target + 1)})) return;
    lesson.set_aside = std::move(what_if);
    lesson.carried = false;
    if (!lesson.set_aside.summary.empty())
      set_status("Step " + std::to_string(target + 1) + " starts from the lesson's numbers: your change (" +
                 lesson.set_aside.summary + ") is set aside. C carries it into this step, Ctrl+Z goes back to it");
    // Moving through a lesson is not an unsaved change; what the learner edits is.
    if (!busy()) doc->mark_saved();
    lesson.step = target;
    lesson.measured_text_h = 0.0f;  // the new text is measured afresh
    lesson.text_kept_open = false;
    // The new step's slide asks afresh for the room it needs.
    slide.least_room = 0;
    slide.want_fold = slide.want_no_inspector = false;
    slide.page = 0;
    slide.land_on_last_page = false;
    if (lesson.carry_what_ifs && !lesson.set_aside.edits.empty()) carry_what_if();
  }
  const LessonStep& st = steps_list[static_cast<std::size_t>(target)];
  if (st.focus_head) focused_head = *st.focus_head;
  selected = st.highlight.empty() ? std::nullopt : std::optional<CellRef>(st.highlight.front());
  quiz.round.reset();
  if (st.quiz) start_quiz(st.quiz->cell, st.quiz->tolerance, st.quiz->question);
  CentreView wanted = CentreView::Pipeline;
  gradient_view = st.pipeline == LessonPipeline::Gradients ? GradientView::Gradients
                  : st.pipeline == LessonPipeline::Both    ? GradientView::Both
                                                           : GradientView::Values;
  if (st.train) {
    // the Train tab, set up for the learner to press Play (a run of this step's numbers)
    TrainSettings& o = train.run.settings;
    o.optimizer = st.train->optimizer;
    o.learning_rate = st.train->learning_rate;
    o.trained = st.train->matrices;
    train.run.restart();
    train.run.playing = false;
    train.gesture = 0;
    train.before_run.reset();
    wanted = CentreView::Train;
  }
  if (st.experiment_d) {
    sqrt_dk.options.d = *st.experiment_d;
    sqrt_dk.result = {};
    // A step that also lists stages is their slide; the experiment is a tab away.
    if (st.show.empty() || lesson.whole_pipeline) wanted = CentreView::SqrtDkExperiment;
  }
  if (st.softmax_row) {
    focused_head = st.softmax_row->head;
    softmax.row = st.softmax_row->row;
    softmax.follow_selection = false;
    // A slide shows the row beside the weights; the whole pipeline opens the close-up.
    if (st.show.empty() || lesson.whole_pipeline) wanted = CentreView::SoftmaxUpClose;
    // The quiz's "?" must be on screen: its row (and head) when it has one there.
    const StageKind k = st.quiz ? st.quiz->cell.stage.kind : StageKind::X;
    const bool in_softmax = k == StageKind::Scores || k == StageKind::Scaled || k == StageKind::Masked || k == StageKind::Weights;
    if (st.quiz && quiz.round && in_softmax) {
      softmax.row = st.quiz->cell.row;
      focused_head = st.quiz->cell.stage.head;
    }
  }
  centre = wanted;
  select_centre_tab = true;
  step = -1;  // the lesson, not the step bar, decides what is shown
  scroll_to_step = true;
}

}  // namespace attention_lab::gui
