#pragma once
// Lessons: a scenario and a sequence of steps a teacher writes as a JSON file.
// Each step explains one idea, chooses which stages are shown and which cells
// are highlighted, may change the scenario (as Edits, so the app can apply and
// undo them) and may ask a quiz question. The format is "attention-lab/lesson@1";
// docs/formats.md ("Lesson files") documents it.

#include "attention_lab/cell_ref.h"
#include "attention_lab/edit.h"
#include "attention_lab/scenario.h"
#include "attention_lab/training.h"
#include "attention_lab/stage_id.h"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attention_lab {

inline constexpr std::string_view kLessonFormat = "attention-lab/lesson@1";

// Lesson files larger than this are refused before parsing (an embedded
// scenario makes them as large as a scenario file).
inline constexpr std::uintmax_t kMaxLessonFileBytes = 512ull * 1024 * 1024;

// One row of one head, for the "softmax up close" view.
struct LessonRow {
  int head = 0;
  int row = 0;
  friend bool operator==(const LessonRow&, const LessonRow&) = default;
};

// A cell the learner is asked for, and how close an answer must be.
struct LessonQuiz {
  CellRef cell;
  double tolerance = 0.01;  // as in quiz.h: absolute up to 1, relative above
  std::string question;     // what to ask; may be empty (then the app names the cell)
};

// What the Pipeline shows at a step: each stage's values, the loss's
// gradient of it (∂L/∂stage), or both.
enum class LessonPipeline { Values, Gradients, Both };

// A step that opens the Train tab, set up for the learner to press Play.
struct LessonTraining {
  OptimizerKind optimizer = OptimizerKind::Sgd;
  double learning_rate = 0.1;
  std::vector<StageKind> matrices = {StageKind::W_q, StageKind::W_k, StageKind::W_v};
};

struct LessonStep {
  std::string title;
  std::string text;     // plain words; may contain line breaks
  std::string formula;  // Unicode text such as "A = softmax(S / √d_k)"; may be empty
  // Stages to show, in the order given; empty means every stage.
  std::vector<StageId> show;
  std::vector<CellRef> highlight;
  // Changes made when the step is entered, in order (after those of every
  // earlier step): SetMask, SetTemperature, SetToggle, SetRope, SetCell, SetPin,
  // SetPins (clear pins) and SetDimension.
  std::vector<Edit> apply;
  // The head the app should focus on from this step on (a view setting; the
  // scenario does not change). nullopt: leave the focus as it is.
  std::optional<int> focus_head;
  // View-only panels the step opens: the "why √d_k" experiment at this d, and
  // "softmax up close" on this row. nullopt: the step does not ask for them.
  std::optional<int> experiment_d;
  std::optional<LessonRow> softmax_row;
  // "pipeline": what the Pipeline shows (a gradient is highlighted there).
  LessonPipeline pipeline = LessonPipeline::Values;
  std::optional<LessonTraining> train;  // "train": open the Train tab, set up to Play
  std::string try_prompt;  // "try": something for the learner to do; may be empty
  std::optional<LessonQuiz> quiz;
};

struct Lesson {
  std::string title;
  std::string description;
  // The scenario before the first step. Where it came from, for the app's title
  // and "open the scenario": the preset name, or the file it was read from;
  // both empty when it was embedded in the lesson.
  Scenario scenario;
  std::string preset;
  std::filesystem::path scenario_file;
  std::vector<LessonStep> steps;  // at least one
};

struct LoadedLesson {
  std::optional<Lesson> lesson;  // set on success
  std::string error;             // the first problem, naming the step and the field
};

// Parses and validates a lesson. A scenario given by path is read relative to
// `base_dir` (the lesson file's folder). Every step's changes are applied in
// order to a copy of the scenario, and every shown stage, highlighted cell,
// focused head, softmax row and quiz cell must exist at that point (a quiz
// cell must hold a finite number).
LoadedLesson parse_lesson(const std::string& json_text, const std::filesystem::path& base_dir);
LoadedLesson load_lesson(const std::filesystem::path& path);

// Whether `json_text` is meant to be a lesson (an object whose "format" starts
// with "attention-lab/lesson"), so "open" can tell lessons from scenarios
// before parsing either in full.
bool is_lesson_text(std::string_view json_text);
// The same for a file, read only up to its "format" (false if it cannot be read).
bool is_lesson_file(const std::filesystem::path& path);

// The checks parse_lesson makes, for a lesson built or changed in memory:
// the first problem, or an empty string.
std::string validate_lesson(const Lesson& lesson);

// The lesson's scenario with the changes of steps 0…step applied, so the app
// can jump to any step and back. `step` is clamped to −1…steps−1 (−1: the
// scenario before the first step). The lesson must be valid (parse_lesson and
// validate_lesson guarantee it); a change that fails anyway stops there.
Scenario scenario_at_step(const Lesson& lesson, int step);

// The .json files in `dir` that are lessons, in teaching order: first those
// named in the folder's `order.txt` (one name without ".json" a line; blank
// lines and lines starting with # are skipped), in its order, then the rest by
// file name. Empty when the folder is missing.
std::vector<std::filesystem::path> lesson_files(const std::filesystem::path& dir);

}  // namespace attention_lab
