#include "attention_lab/lesson.h"

#include "attention_lab/gradients.h"

#include "attention_lab/engine.h"
#include "attention_lab/hook_names.h"
#include "attention_lab/excerpt.h"
#include "attention_lab/limits.h"
#include "attention_lab/presets.h"
#include "attention_lab/scenario_io.h"
#include "attention_lab/stage_info.h"
#include "base/nearest.h"
#include "attention_lab/edit_json.h"
#include "io/edit_json_internal.h"
#include "io/json_document.h"
#include "io/json_fields.h"
#include "io/json_stage_fields.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>

namespace attention_lab {

using nlohmann::json;

namespace {

// [SECTION] Reading JSON values with messages that name the field

// Thrown inside the parser only; parse_lesson turns it into LoadedLesson.error (json_document.h).
using io::FieldError;
using io::fail_field;

// A step's text: a string, or a list of paragraphs (joined by a blank line).
std::string read_text(const json& j, const std::string& where) {
  if (!j.is_array()) return io::read_string(j, where, true);
  if (j.empty()) fail_field(where + ": expected some text or a list of paragraphs, found an empty list");
  std::string text;
  for (std::size_t i = 0; i < j.size(); ++i)
    text += (i ? "\n\n" : "") + io::read_string(j[i], where + "[" + std::to_string(i) + "]", true);
  return text;
}

// [SECTION] Checks shared by the parser and validate_lesson

// Applies `edit` to `s`, or fails naming the step's change.
void apply_or_fail(Scenario& s, const Edit& edit, const std::string& where, const std::string& key) {
  const Applied applied = apply_edit(s, edit);
  if (applied.error.empty()) return;
  // apply_edit's messages start with the thing they are about ("d_k: expected …").
  if (applied.error.rfind(key + ":", 0) == 0)
    fail_field(where + "." + applied.error);
  fail_field(where + "." + key + ": " + applied.error);
}

// A quiz cell must hold a number the learner can type.
void check_quiz_value(const Scenario& s, const LessonQuiz& quiz, const std::string& where) {
  Engine engine;
  engine.recompute_all(s);
  const float v = engine.stage(quiz.cell.stage)(quiz.cell.row, quiz.cell.col);
  if (!std::isfinite(v))
    fail_field(where + ": expected a cell with a finite value at this step, found " + to_string(quiz.cell) + " = " +
         (std::isnan(v) ? "NaN" : v > 0 ? "+inf" : "-inf"));
}

void check_softmax_row(const Scenario& s, const LessonRow& r, const std::string& where) {
  if (r.head < 0 || r.head >= s.heads)
    fail_field(where + ".head: expected a whole number from 0 to " + std::to_string(s.heads - 1) + io::heads_note(s) +
         ", found " + std::to_string(r.head));
  if (r.row < 0 || r.row >= s.T())
    fail_field(where + ".row: expected a whole number from 0 to " + std::to_string(s.T() - 1) + " (T is " +
         std::to_string(s.T()) + " at this step), found " + std::to_string(r.row));
}

void check_experiment(int d, const std::string& where) {
  if (d < 1 || d > 1024) fail_field(where + ".d: expected a whole number from 1 to 1024, found " + std::to_string(d));
}

void check_focus(const Scenario& s, int head, const std::string& where) {
  if (head < 0 || head >= s.heads)
    fail_field(where + ": expected a whole number from 0 to " + std::to_string(s.heads - 1) + io::heads_note(s) + ", found " +
         std::to_string(head));
}

// Everything a step shows must exist once its changes are made.
void check_step_view(const Scenario& s, const LessonStep& step, const std::string& where) {
  for (std::size_t i = 0; i < step.show.size(); ++i)
    io::require_stage(s, step.show[i], where + ".show[" + std::to_string(i) + "]");
  for (std::size_t i = 0; i < step.highlight.size(); ++i)
    if (auto problem = io::any_cell_problem(s, step.highlight[i]); !problem.empty())
      fail_field(where + ".highlight[" + std::to_string(i) + "]: " + problem);
  if (step.softmax_row) check_softmax_row(s, *step.softmax_row, where + ".softmax");
  if (step.experiment_d) check_experiment(*step.experiment_d, where + ".experiment");
  if (step.quiz) {
    if (auto problem = cell_problem(s, step.quiz->cell); !problem.empty()) fail_field(where + ".quiz: " + problem);
    if (!(std::isfinite(step.quiz->tolerance) && step.quiz->tolerance > 0.0))
      fail_field(where + ".quiz.tolerance: expected a number greater than 0, found " + std::to_string(step.quiz->tolerance));
    check_quiz_value(s, *step.quiz, where + ".quiz");
  }
}

// [SECTION] The parser

const std::vector<std::string>& top_keys() {
  static const std::vector<std::string> keys = {"format", "title", "description", "scenario", "preset", "symbols",
                                                "index_base", "steps", "comment"};
  return keys;
}

const std::vector<std::string>& step_keys() {
  static const std::vector<std::string> keys = {"title", "text", "formula", "show", "highlight", "apply",
                                                "try", "quiz", "experiment", "softmax", "pipeline", "train", "comment"};
  return keys;
}

// An entry of a step's "apply": any edit, or the head to show.
const std::vector<std::string>& change_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k = edit_keys();
    k.emplace_back("focus_head");
    return k;
  }();
  return keys;
}

std::string preset_names() {
  std::string list;
  for (const auto& p : presets()) list += (list.empty() ? "" : ", ") + p.name;
  return list + " or random-T-D-H";
}

class Parser {
 public:
  explicit Parser(std::filesystem::path base_dir) : base_dir_(std::move(base_dir)) {}

  Lesson parse(const json& root) {
    if (!root.is_object()) fail_field("lesson: expected a JSON object { … }, found " + io::found(root));
    if (!root.contains("format"))
      fail_field("format: missing (a lesson file has \"format\": \"" + std::string(kLessonFormat) + "\")");
    if (!root["format"].is_string() || root["format"].get<std::string>() != kLessonFormat)
      fail_field("format: expected \"" + std::string(kLessonFormat) + "\", found " + io::found(root["format"]));
    io::check_keys(root, "", top_keys());
    if (!root.contains("title")) fail_field("title: missing (every lesson has a title)");
    lesson_.title = io::read_string(root["title"], "title", true);
    if (root.contains("description")) lesson_.description = io::read_string(root["description"], "description", false);
    if (root.contains("comment")) io::read_string(root["comment"], "comment", false);
    read_scenario(root);
    // The lesson's letters for every step (over the scenario's own).
    if (root.contains("symbols"))
      for (auto& [from, to] : io::read_symbol_names(root["symbols"], "symbols")) lesson_.scenario.symbols[from] = to;
    if (root.contains("index_base")) lesson_.scenario.index_base = io::read_index_base(root["index_base"], "index_base");
    if (!root.contains("steps")) fail_field("steps: missing (a lesson has a list of steps)");
    const json& steps = root["steps"];
    if (!steps.is_array()) fail_field("steps: expected a list of steps, found " + io::found(steps));
    if (steps.empty()) fail_field("steps: expected at least 1 step, found an empty list");
    current_ = lesson_.scenario;
    for (std::size_t i = 0; i < steps.size(); ++i)
      lesson_.steps.push_back(read_step(steps[i], "steps[" + std::to_string(i) + "]"));
    return std::move(lesson_);
  }

 private:
  void read_scenario(const json& root) {
    const bool has_scenario = root.contains("scenario");
    const bool has_preset = root.contains("preset");
    if (has_scenario && has_preset)
      fail_field("preset: expected either \"scenario\" or \"preset\", found both");
    if (!has_scenario && !has_preset)
      fail_field("scenario: missing (give \"scenario\": an object or the path of a scenario file, or \"preset\": " +
           preset_names() + ")");
    if (has_preset) {
      const json& p = root["preset"];
      if (!p.is_string()) fail_field("preset: expected one of " + preset_names() + ", found " + io::found(p));
      auto s = make_preset(p.get<std::string>());
      if (!s) {
        // A random-T-D-H that is too big says why (with the bytes it needs); other names list the presets.
        const std::string problem = preset_problem(p.get<std::string>());
        if (problem.rfind("random-", 0) == 0) fail_field("preset: " + problem);
        fail_field("preset: expected one of " + preset_names() + ", found " + io::found(p));
      }
      lesson_.scenario = std::move(*s);
      lesson_.preset = p.get<std::string>();
      return;
    }
    const json& sc = root["scenario"];
    if (sc.is_object()) {
      LoadResult r = parse_scenario(sc.dump());
      if (!r.scenario) fail_field("scenario." + r.error);
      lesson_.scenario = std::move(*r.scenario);
      return;
    }
    if (!sc.is_string() || sc.get<std::string>().empty())
      fail_field("scenario: expected a scenario object { … } or the path of a scenario file, found " + io::found(sc));
    const std::filesystem::path path = base_dir_ / sc.get<std::string>();  // an absolute path replaces base_dir_
    check_inside_lesson_folder(path, sc);
    LoadResult r = load_scenario(path);
    if (!r.scenario) {
      // load_scenario starts with the path when it cannot read the file. The path came
      // partly from the lesson, so it is quoted as an excerpt.
      std::string why = r.error;
      if (why.rfind(path.string() + ": ", 0) == 0) why.erase(0, path.string().size() + 2);
      fail_field("scenario " + io::found(sc) + ": " + excerpt(path.string(), 300) + ": " + why);
    }
    lesson_.scenario = std::move(*r.scenario);
    lesson_.scenario_file = path;
  }

  // A lesson from a stranger must not make the app read files elsewhere
  // ("../../.ssh/id_rsa", "/etc/passwd", or a link inside the folder that
  // points out of it): the path, links resolved, must lead into the lesson's
  // folder or below.
  void check_inside_lesson_folder(const std::filesystem::path& path, const json& given) const {
    std::error_code ec;
    const auto folder = std::filesystem::weakly_canonical(base_dir_.empty() ? "." : base_dir_, ec);
    const std::string refused = "scenario " + io::found(given) + ": expected a file inside the lesson's folder " +
                                excerpt(folder.string(), 200);
    if (ec) fail_field(refused + ", found a folder that cannot be resolved (" + ec.message() + ")");
    const auto target = std::filesystem::weakly_canonical(path, ec);
    if (ec) fail_field(refused + ", found a path that cannot be resolved (" + ec.message() + ")");
    const auto [f, t] = std::mismatch(folder.begin(), folder.end(), target.begin(), target.end());
    if (f != folder.end() || t == target.end())
      fail_field(refused + ", found a path that leads to " + excerpt(target.string(), 200));
  }

  // {"optimizer": "sgd", "learning_rate": 0.5, "matrices": ["W_q", "W_k", "W_v"]}, every key optional.
  LessonTraining read_training(const json& v, const std::string& w) {
    if (!v.is_object()) fail_field(w + ": expected {\"optimizer\": \"sgd\", \"learning_rate\": 0.5, \"matrices\": [\"W_q\", …]}, found " + io::found(v));
    io::check_keys(v, w, {"optimizer", "learning_rate", "matrices"});
    LessonTraining t;
    if (v.contains("optimizer")) {
      const std::string name = io::read_string(v["optimizer"], w + ".optimizer", true);
      const auto kind = parse_optimizer(name);
      if (!kind) fail_field(w + ".optimizer: expected \"sgd\", \"momentum\", \"adam\" or \"adamw\", found " + io::found(v["optimizer"]));
      t.optimizer = *kind;
    }
    if (v.contains("learning_rate")) {
      const json& lr = v["learning_rate"];
      if (!lr.is_number() || !(lr.get<double>() > 0.0) || !(lr.get<double>() <= 10.0))
        fail_field(w + ".learning_rate: expected a number greater than 0, at most 10, found " + io::found(lr));
      t.learning_rate = lr.get<double>();
    }
    if (v.contains("matrices")) {
      const json& list = v["matrices"];
      if (!list.is_array() || list.empty()) fail_field(w + ".matrices: expected a list of input matrices such as [\"W_q\", \"W_k\"], found " + io::found(list));
      t.matrices.clear();
      for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string wi = w + ".matrices[" + std::to_string(i) + "]";
        const StageId id = io::read_stage(list[i], wi, current_);
        if (!is_input(id.kind) || id.kind == StageKind::X || id.kind == StageKind::X_kv || id.kind == StageKind::Mask ||
            id.role != Role::Value)
          fail_field(wi + ": expected a weight the run can train (W_q, W_k, W_v, W_o, a bias, sinks or a q/k norm), found " + io::found(list[i]));
        io::require_stage(current_, id, wi);
        t.matrices.push_back(id.kind);
      }
    }
    return t;
  }

  LessonStep read_step(const json& j, const std::string& where) {
    if (!j.is_object()) fail_field(where + ": expected a step object {\"title\": …, \"text\": …}, found " + io::found(j));
    io::check_keys(j, where, step_keys());
    LessonStep step;
    step.title = io::read_string(io::require_key(j, "title", where, " (every step has a title)"), where + ".title", true);
    step.text = read_text(io::require_key(j, "text", where, " (every step explains something)"), where + ".text");
    if (j.contains("formula")) step.formula = io::read_string(j["formula"], where + ".formula", false);
    if (j.contains("try")) step.try_prompt = io::read_string(j["try"], where + ".try", false);
    if (j.contains("comment")) io::read_string(j["comment"], where + ".comment", false);

    // The changes come first: what the step shows is checked against the scenario they leave.
    if (j.contains("apply")) {
      const json& list = j["apply"];
      if (!list.is_array()) fail_field(where + ".apply: expected a list of changes such as [{\"mask\": \"causal\"}], found " + io::found(list));
      for (std::size_t i = 0; i < list.size(); ++i) read_change(list[i], where + ".apply[" + std::to_string(i) + "]", step);
    }
    if (step.focus_head) check_focus(current_, *step.focus_head, focus_where_);

    if (j.contains("show")) {
      const json& list = j["show"];
      if (!list.is_array()) fail_field(where + ".show: expected a list of stage ids such as [\"X\", \"scores[0]\"], found " + io::found(list));
      for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string w = where + ".show[" + std::to_string(i) + "]";
        const StageId id = io::read_stage(list[i], w, current_);
        io::require_stage(current_, id, w);
        step.show.push_back(id);
      }
    }
    if (j.contains("highlight")) {
      const json& list = j["highlight"];
      if (!list.is_array())
        fail_field(where + ".highlight: expected a list of cells such as [{\"stage\": \"weights[0]\", \"row\": 2, \"col\": 1}], found " +
             io::found(list));
      for (std::size_t i = 0; i < list.size(); ++i)
        step.highlight.push_back(io::read_cell(list[i], where + ".highlight[" + std::to_string(i) + "]", current_,
                                           {"stage", "row", "col"}, nullptr, "", true));
    }
    if (j.contains("pipeline")) {
      const std::string w = where + ".pipeline";
      const std::string v = io::read_string(j["pipeline"], w, true);
      if (v == "values") step.pipeline = LessonPipeline::Values;
      else if (v == "gradients") step.pipeline = LessonPipeline::Gradients;
      else if (v == "both") step.pipeline = LessonPipeline::Both;
      else fail_field(w + ": expected \"values\", \"gradients\" or \"both\", found " + io::found(j["pipeline"]));
      if (step.pipeline != LessonPipeline::Values)
        if (auto problem = io::gradient_problem(current_, StageId::input(StageKind::Output)); !problem.empty())
          fail_field(w + ": " + problem.substr(problem.find(": ") + 2));
    }
    if (j.contains("train")) step.train = read_training(j["train"], where + ".train");
    if (j.contains("softmax")) {
      const std::string w = where + ".softmax";
      const json& v = j["softmax"];
      if (!v.is_object()) fail_field(w + ": expected {\"head\": h, \"row\": r}, found " + io::found(v));
      io::check_keys(v, w, {"head", "row"});
      const std::string hint = " (expected {\"head\": h, \"row\": r})";
      LessonRow r;
      r.head = io::read_int(io::require_key(v, "head", w, hint), w + ".head", 0, current_.heads - 1, io::heads_note(current_));
      r.row = io::read_int(io::require_key(v, "row", w, hint), w + ".row", 0, current_.T() - 1,
                       " (T is " + std::to_string(current_.T()) + " at this step)");
      step.softmax_row = r;
    }
    if (j.contains("experiment")) {
      const std::string w = where + ".experiment";
      const json& v = j["experiment"];
      if (!v.is_object()) fail_field(w + ": expected {\"d\": n}, found " + io::found(v));
      io::check_keys(v, w, {"d"});
      step.experiment_d = io::read_int(io::require_key(v, "d", w, " (expected {\"d\": n})"), w + ".d", 1, 1024);
    }
    if (j.contains("quiz")) {
      const std::string w = where + ".quiz";
      LessonQuiz quiz;
      quiz.cell = io::read_cell(j["quiz"], w, current_, {"stage", "row", "col", "tolerance", "question"}, nullptr, "");
      if (j["quiz"].contains("question")) quiz.question = io::read_string(j["quiz"]["question"], w + ".question", false);
      if (j["quiz"].contains("tolerance")) {
        const json& t = j["quiz"]["tolerance"];
        const double v = io::read_number(t, w + ".tolerance");
        if (!(v > 0.0)) fail_field(w + ".tolerance: expected a number greater than 0, found " + t.dump());
        quiz.tolerance = v;
      }
      check_quiz_value(current_, quiz, w);
      step.quiz = quiz;
    }
    return step;
  }

  // One entry of "apply": an object with exactly one key naming the change
  // (an edit, edit_json.h), or "focus_head".
  void read_change(const json& j, const std::string& where, LessonStep& step) {
    const std::string example = "an object with one change such as {\"mask\": \"causal\"} or {\"temperature\": 0.5}";
    if (!j.is_object()) fail_field(where + ": expected " + example + ", found " + io::found(j));
    if (j.size() != 1)
      fail_field(where + ": expected " + example + ", found an object with " + std::to_string(j.size()) + " keys");
    io::check_keys(j, where, change_keys());
    const std::string key = j.begin().key();
    const json& v = j.begin().value();
    const std::string w = where + "." + key;
    if (key != "focus_head") return apply(io::read_edit_value(key, v, w, current_), where, key, step);
    // focus_head: a view setting, checked once the step's changes are made.
    step.focus_head = io::read_int(v, w, 0, limits::kMaxHeads - 1);
    focus_where_ = w;
  }

  void apply(const Edit& edit, const std::string& where, const std::string& key, LessonStep& step) {
    apply_or_fail(current_, edit, where, key);
    step.apply.push_back(edit);
  }

  std::filesystem::path base_dir_;
  Lesson lesson_;
  Scenario current_;         // the scenario at the step being read
  std::string focus_where_;  // where the step's focus_head was given
};


// Reads the top-level "format" string and stops there, without building the document.
class FormatSniffer : public nlohmann::json_sax<json> {
 public:
  std::string format;

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t& s) override {
    if (depth_ == 1 && key_is_format_) {
      format = s;
      return false;  // found: stop
    }
    return value();
  }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override { return open(true); }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    key_is_format_ = depth_ == 1 && k == "format";
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  bool value() {
    key_is_format_ = false;
    return depth_ > 0;  // a top level that is not an object is not a lesson
  }
  bool open(bool object) {
    if (depth_ == 0 && !object) return false;
    key_is_format_ = false;
    ++depth_;
    return true;
  }
  bool close() {
    --depth_;
    return depth_ > 0;  // the top-level object ended without a format: stop
  }

  int depth_ = 0;
  bool key_is_format_ = false;
};

bool is_lesson_format(const std::string& format) { return format.rfind("attention-lab/lesson", 0) == 0; }

}  // namespace

LoadedLesson parse_lesson(const std::string& text, const std::filesystem::path& base_dir) {
  LoadedLesson result;
  io::JsonDocument doc = io::parse_json_document(text, "lesson");
  if (!doc.error.empty()) {
    result.error = std::move(doc.error);
    return result;
  }
  try {
    result.lesson = Parser(base_dir).parse(doc.root);
  } catch (const FieldError& e) {
    result.error = cap_message(e.message);
  } catch (const std::exception& e) {  // e.g. out of memory: report, never crash
    result.error = cap_message(std::string("could not load the lesson: ") + e.what());
  }
  return result;
}

LoadedLesson load_lesson(const std::filesystem::path& path) {
  io::TextFile file = io::read_text_file(path, kMaxLessonFileBytes);
  if (!file.error.empty()) {
    LoadedLesson result;
    result.error = std::move(file.error);
    return result;
  }
  const auto base = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  return parse_lesson(file.text, base);
}

bool is_lesson_text(std::string_view text) {
  FormatSniffer sniffer;
  try {
    json::sax_parse(text.begin(), text.end(), &sniffer);
  } catch (const std::exception&) {
    return false;
  }
  return is_lesson_format(sniffer.format);
}

std::string validate_lesson(const Lesson& lesson) {
  try {
    if (auto err = validate(lesson.scenario); !err.empty()) fail_field("scenario." + err);
    if (lesson.steps.empty()) fail_field("steps: expected at least 1 step, found none");
    Scenario s = lesson.scenario;
    for (std::size_t i = 0; i < lesson.steps.size(); ++i) {
      const LessonStep& step = lesson.steps[i];
      const std::string where = "steps[" + std::to_string(i) + "]";
      if (step.title.empty()) fail_field(where + ".title: expected some text, found an empty string");
      for (std::size_t e = 0; e < step.apply.size(); ++e) {
        const Applied applied = apply_edit(s, step.apply[e]);
        if (!applied.error.empty())
          fail_field(where + ".apply[" + std::to_string(e) + "]: " + describe(step.apply[e]) + ": " + applied.error);
      }
      if (step.focus_head) check_focus(s, *step.focus_head, where + ".focus_head");
      check_step_view(s, step, where);
    }
  } catch (const FieldError& e) {
    return e.message;
  }
  return {};
}

Scenario scenario_at_step(const Lesson& lesson, int step) {
  Scenario s = lesson.scenario;
  const int last = std::min(step, static_cast<int>(lesson.steps.size()) - 1);
  for (int i = 0; i <= last; ++i)
    for (const Edit& edit : lesson.steps[static_cast<std::size_t>(i)].apply)
      if (!apply_edit(s, edit).error.empty()) return s;  // a refused edit changes nothing
  return s;
}

bool is_lesson_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  FormatSniffer sniffer;
  try {
    json::sax_parse(in, &sniffer);
  } catch (const std::exception&) {
    return false;
  }
  return is_lesson_format(sniffer.format);
}

std::vector<std::filesystem::path> lesson_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.is_regular_file(ec) && entry.path().extension() == ".json" && is_lesson_file(entry.path()))
      out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  // A teacher's order (order.txt) goes first: lessons build on each other,
  // and names sort "why-sqrt-dk" after "many-heads".
  std::vector<std::string> order;
  std::ifstream order_file(dir / "order.txt");
  for (std::string line; std::getline(order_file, line);) {
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    line.erase(0, line.find_first_not_of(" \t"));
    if (!line.empty() && line.front() != '#') order.push_back(line);
  }
  const auto rank = [&](const std::filesystem::path& p) {
    const auto at = std::find(order.begin(), order.end(), p.stem().string());
    return static_cast<std::size_t>(at - order.begin());  // unlisted: order.size(), after all listed
  };
  std::stable_sort(out.begin(), out.end(), [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
  return out;
}

}  // namespace attention_lab
