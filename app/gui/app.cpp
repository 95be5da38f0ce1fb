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

// [SECTION] AppState

const StageInfo& AppState::stage_info(StageId id) {
  auto& [revision, info] = stage_infos[id];
  if (revision != doc->revision()) {
    info = describe_stage(doc->scenario(), id);
    // A model's layer: X is not the embeddings but the layer's input after its first norm.
    if (model.open() && id.kind == StageKind::X) {
      info.name = "Layer " + std::to_string(model.session->layer()) + "'s normed input (n₁ in the Block tab)";
      info.explanation = "One row per token: the residual stream entering this layer, after its first " +
                         std::string(model.session->model().config.rms_norm ? "RMSNorm" : "LayerNorm") +
                         ". The attention computes Q, K and V from these numbers and the weights.";
    }
    revision = doc->revision();
  }
  return info;
}

void AppState::note_item(const std::string& name) {
  probe_items[name] = Rect{ImGui::GetItemRectMin().x, ImGui::GetItemRectMin().y, ImGui::GetItemRectMax().x,
                           ImGui::GetItemRectMax().y};
}

void AppState::set_status(std::string text) {
  status = std::move(text);
  status_time = clock.now();
}

bool AppState::apply(const Edit& edit, std::uint64_t gesture) {
  if (busy()) {
    set_status("Busy: " + job->what() + " (wait, or press Cancel)");
    return false;
  }
  if (is_heavy(*doc, edit)) {
    std::string error;
    auto change = doc->prepare(edit, error);
    if (!change) {
      set_status(kRefusal + error);
      return false;
    }
    job = std::make_unique<BackgroundJob>("Computing " + describe(edit), std::move(change));
    clear_refusal();
    return true;
  }
  if (auto err = doc->apply(edit, gesture); !err.empty()) {
    set_status(kRefusal + err);
    return false;
  }
  ++edits_applied;
  clear_refusal();
  return true;
}

// An edit went through: a refusal of an earlier one no longer describes the
// document (it stayed up for its 8 seconds after the value was corrected).
void AppState::clear_refusal() {
  if (status.rfind(kRefusal, 0) == 0) status.clear();
}

namespace {

std::string specs_text(const std::vector<Ablation>& list) {
  std::string s;
  for (const Ablation& a : list) s += (s.empty() ? "" : ", ") + to_spec(a);
  return s.empty() ? "none" : s;
}

}  // namespace

bool AppState::can_undo() const { return doc->can_undo() || (model.open() && !model.ablation_undo.empty()); }
bool AppState::can_redo() const { return doc->can_redo() || (model.open() && !model.ablation_redo.empty()); }
std::string AppState::undo_label() const {
  return doc->can_undo() || !model.open() || model.ablation_undo.empty()
             ? doc->undo_label()
             : "ablations (back to " + specs_text(model.ablation_undo.back()) + ")";
}
std::string AppState::redo_label() const {
  return doc->can_redo() || !model.open() || model.ablation_redo.empty()
             ? doc->redo_label()
             : "ablations (" + specs_text(model.ablation_redo.back()) + ")";
}

void AppState::set_ablations(std::vector<Ablation> ablations) {
  if (busy() || !model.open() || ablations == model.ablations()) return;
  model.ablation_history_before = {model.ablation_undo, model.ablation_redo};
  model.ablation_undo.push_back(model.ablations());
  model.ablation_redo.clear();
  open_model(model.rerun(model.text, model.session->layer(), std::move(ablations)));
}

bool AppState::step_ablations(std::vector<std::vector<Ablation>>& from, std::vector<std::vector<Ablation>>& to) {
  if (!model.open() || from.empty()) return false;
  model.ablation_history_before = {model.ablation_undo, model.ablation_redo};
  ModelRequest r = model.rerun(model.text, model.session->layer(), from.back());
  from.pop_back();
  to.push_back(model.ablations());
  open_model(std::move(r));
  return true;
}

void AppState::undo() {
  if (busy()) return;
  // The ablation change before this document, once it has nothing left to undo.
  if (!doc->can_undo() && step_ablations(model.ablation_undo, model.ablation_redo)) return;
  if (!doc->can_undo()) return;
  if (is_heavy(*doc, doc->next_undo_edits()))
    job = std::make_unique<BackgroundJob>("Undoing " + doc->undo_label(), doc->prepare_undo());
  else
    doc->undo();
}

void AppState::redo() {
  if (busy()) return;
  if (!doc->can_redo() && step_ablations(model.ablation_redo, model.ablation_undo)) return;
  if (!doc->can_redo()) return;
  if (is_heavy(*doc, doc->next_redo_edits()))
    job = std::make_unique<BackgroundJob>("Redoing " + doc->redo_label(), doc->prepare_redo());
  else
    doc->redo();
}

void AppState::poll_job() {
  if (!job || !job->done()) return;
  const auto result = job->result();
  const std::string what = job->what();
  const double seconds = job->seconds();
  job.reset();
  // --view model/block waits for the first model only (not one opened after a cancel or an error).
  const std::optional<CentreView> model_view = std::exchange(centre_when_model_opens, std::nullopt);
  // An ablation change that did not run (cancelled, or failed) leaves the history as it was.
  const auto history = std::exchange(model.ablation_history_before, std::nullopt);
  if (history && (result->cancel || !result->error.empty()))
    std::tie(model.ablation_undo, model.ablation_redo) = *history;
  if (result->cancel) return;  // the user gave up on it; keep what is shown
  if (!result->error.empty() && result->model_job) {
    error_popup = (!result->path.empty() ? "Could not open the model " + result->path + "\n\n"
                                         : std::string("Could not run the model.\n\n")) +
                  result->error + "\n\nWhat is shown is unchanged.";
    return;
  }
  if (!result->error.empty()) {
    error_popup = (!result->path.empty() ? "Could not open " + result->path + "\n\n"
                                             : std::string("Could not compute the change.\n\n")) +
                  result->error + "\n\nThe current scenario is unchanged.";
    return;
  }
  if (result->change) {
    doc->commit(std::move(result->change));
    textures.clear();  // shapes may have changed
    colour_ranges.clear();
    focused_head = std::clamp(focused_head, 0, doc->scenario().heads - 1);
    char took[32];
    std::snprintf(took, sizeof took, " (%.2f s)", seconds);
    set_status(what + ": done" + took);
  }
  if (result->session) {
    const int head = focused_head;
    const bool same_model = model.session && result->path.empty();
    std::string kept_note;
    if (!same_model) {
      model.kept_layers.clear();  // another model: its layers' edits mean nothing here
      model.ablation_undo.clear();
      model.ablation_redo.clear();
    } else if (doc->modified()) {
      // Leaving an edited layer (for another layer or another text) keeps it.
      // Without its stages (a tenth of the memory): they are computed again on
      // the way back (unless this very result brings it back).
      if (ModelState::run_key(model.text, model.ablations()) !=
              ModelState::run_key(result->model_text, result->session->ablations()) ||
          model.session->layer() != result->session->layer())
        doc->release_stages();
      model.kept_layers[{ModelState::run_key(model.text, model.ablations()), model.session->layer()}] = {std::move(doc),
                                                                                                       ++model.kept_clock};
      kept_note = "; layer " + std::to_string(model.session->layer()) + "'s edits are kept for when you come back";
      if (model.kept_layers.size() > ModelState::kKeptLayers) {
        auto oldest = std::min_element(model.kept_layers.begin(), model.kept_layers.end(),
                                       [](const auto& a, const auto& b) { return a.second.order < b.second.order; });
        kept_note += "; layer " + std::to_string(oldest->first.second) + "'s, the oldest kept, are let go";
        model.kept_layers.erase(oldest);
      }
    }
    // Back on a kept layer: its edited document (the session's "before" is still the unedited model's).
    const auto back =
        same_model ? model.kept_layers.find({ModelState::run_key(result->model_text, result->session->ablations()),
                                             result->session->layer()})
                   : model.kept_layers.end();
    if (back != model.kept_layers.end()) {
      result->document = std::move(back->second.doc);
      if (result->document->stages_released()) {
        if (result->kept_engine) result->document->restore_stages(std::move(*result->kept_engine));
        else result->document->restore_stages();  // (not asked for when the job began: computed here)
      }
      model.kept_layers.erase(back);
      kept_note += "; this layer's edits are back (Ctrl+Z undoes them)";
    }
    open_document_with(std::move(result->document), "");
    model.session = std::move(result->session);
    if (!result->path.empty()) model.path = result->path;
    model.text = result->model_text;
    model.text_field = model.text;
    model.predictions = {};
    model.asked = {};
    model.block = {};
    scroll_to_step = step >= 0;  // the layer's pipeline replaced the preset's: show the step again
    if (model_view) {
      centre = *model_view;
      select_centre_tab = true;
    }
    if (same_model) focused_head = std::clamp(head, 0, doc->scenario().heads - 1);
    if (deferred_head >= 0) focused_head = std::min(deferred_head, doc->scenario().heads - 1), deferred_head = -1;
    apply_deferred_select();
    if (!result->path.empty()) {
      settings.add_recent(result->path);
      settings.save();
    }
    char took[32];
    std::snprintf(took, sizeof took, " (%.2f s)", seconds);
    if (!result->dropped_ablations.empty())
      kept_note += "; left out: " + specs_text(result->dropped_ablations) + " (positions this text does not have)";
    if (const int reused = model.session->reused_layers(); reused > 0)
      kept_note += reused == 1 ? "; layer 0 as it was" : "; layers 0 to " + std::to_string(reused - 1) + " as they were";
    set_status(what + ": done" + took + kept_note);
    return;
  }
  if (result->document) {
    const std::string path = result->path;
    model.kept_layers.clear();  // a scenario file: model mode is over
    open_document_with(std::move(result->document), path);
    if (deferred_head >= 0) focused_head = std::min(deferred_head, doc->scenario().heads - 1), deferred_head = -1;
    apply_deferred_select();
    scroll_to_step = step >= 0;
    if (!path.empty()) {
      settings.add_recent(path);
      settings.save();
    }
    char took[32];
    std::snprintf(took, sizeof took, " (%.2f s)", seconds);
    set_status(what + ": done" + took);
  }
}

// --select given with a model or a big scenario: the cell, once its stage is in.
void AppState::apply_deferred_select() {
  if (!deferred_select) return;
  const CellRef c = *deferred_select;
  deferred_select.reset();
  // (a head, a setting or a cell the scenario does not have: named, never read)
  if (const std::string problem = cell_problem(doc->scenario(), c); problem.empty())
    selected = c;
  else
    error_popup = "--select: " + problem + ".";
}

void AppState::open_model(ModelRequest request) {
  if (job) return;
  const bool reuse = request.model != nullptr;
  // Back to a kept layer: the worker computes its stages too.
  if (reuse)
    if (const auto kept = model.kept_layers.find({ModelState::run_key(request.text, request.ablations), request.layer});
        kept != model.kept_layers.end())
      request.kept = std::make_shared<const Scenario>(kept->second.doc->scenario());  // shares its matrices
  const std::string what = reuse ? "Running " + model_display_name(model.path) + ", layer " +
                                       std::to_string(request.layer)
                                 : "Opening " + request.path;
  job = std::make_unique<BackgroundJob>(what, std::move(request));
}

namespace {

// Why the focused layer's document can no longer feed the model (its size or
// W_o was changed), "" when it can: predictions and the Block tab need the
// output as T × d_model after W_o.
std::string layer_output_problem(const Document& doc, const ModelSession& s, const char* who, const char* what) {
  const MatrixView out = doc.stage(StageId::input(StageKind::Output));
  const bool w_o = doc.scenario().use_w_o;
  if (out.rows() == s.T() && out.cols() == s.model().config.d_model && w_o) return {};
  return "The layer's output is " + std::to_string(out.rows()) + " × " + std::to_string(out.cols()) +
         (w_o ? "" : " (W_o is off)") + "; " + who + " needs " + std::to_string(s.T()) + " × " +
         std::to_string(s.model().config.d_model) + " after W_o. Undo the size change to see " + what + ".";
}

}  // namespace

const ModelState::Cached& AppState::model_predictions() {
  ModelState::Cached& c = model.predictions;
  const ModelSession* s = model.session.get();
  if (!s) return c;
  const int row = model.predicted_row();
  const ModelState::PredictionKey now = model.prediction_key(doc->revision());
  if (model.prediction_worker) {
    if (auto r = model.prediction_worker->take(); r && r->session.get() == s) {
      c.key = {s, r->revision, r->row, r->layer};
      c.top = std::move(r->top);
      c.ms = r->ms;
      c.problem.clear();
      c.updating = false;
    }
  }
  // (a problem is never left updating: it is found here, on this thread)
  if (c.key == now && !c.updating) return c;
  const MatrixView out = doc->stage(StageId::input(StageKind::Output));
  std::string problem = layer_output_problem(*doc, *s, "the model", "predictions");
  if (!problem.empty()) {
    c = {};
    c.key = now, c.problem = std::move(problem);
    return c;
  }
  if (model.predictions_in_place) {  // a picture made from the command line: complete in its one frame
    const auto start = std::chrono::steady_clock::now();
    c = {};
    c.key = now;
    c.top = s->predictions(Matrix(out), row, model.top_k);
    c.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return c;
  }
  // Shown meanwhile: the last result, if it is of this session and layer, marked as updating.
  if (c.key.session != s || c.key.layer != s->layer()) c = {};
  c.key.session = s;
  c.key.layer = s->layer();
  c.problem.clear();
  c.updating = true;
  if (model.asked != now) {
    if (!model.prediction_worker) model.prediction_worker = std::make_unique<PredictionWorker>();
    model.prediction_worker->request({model.session, Matrix(out), row, model.top_k, now.revision});
    model.asked = now;
  }
  return c;
}

const BlockTrace* AppState::model_block() {
  ModelState::Block& b = model.block;
  const ModelSession* s = model.session.get();
  if (!s) return nullptr;
  if (b.session != s || !b.trace || b.trace->layer() != s->layer()) {
    b = {};
    b.session = s;
    b.trace = std::make_unique<BlockTrace>(s->model_ptr(), s->ids(), s->layer(), s->layer_input());
  }
  if (b.revision == doc->revision() && b.trace->version(BlockStage::Output) != 0) return b.problem.empty() ? b.trace.get() : nullptr;
  b.revision = doc->revision();
  const MatrixView out = doc->stage(StageId::input(StageKind::Output));
  b.problem = layer_output_problem(*doc, *s, "the block", "it");
  for (const Ablation& a : s->ablations())  // the block computes its sums and MLP itself, without ablations
    if (b.problem.empty() && a.layer == s->layer() && a.target != AblationTarget::Head)
      b.problem = "Layer " + std::to_string(a.layer) + "'s " + (a.target == AblationTarget::Mlp ? "MLP" : "attention output") +
                  " is ablated (" + to_spec(a) + "): the Block view draws a layer's block without ablations. Take it back "
                  "(the × in the Model tab, or Ctrl+Z) or focus another layer to see this block.";
  if (!b.problem.empty()) return nullptr;
  const auto start = std::chrono::steady_clock::now();
  b.rows_recomputed = b.trace->update(Matrix(out));
  b.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return b.trace.get();
}

void AppState::unless_unsaved_work(std::string verb, std::function<void(AppState&)> then) {
  if (!has_unsaved_work()) return then(*this);
  unsaved_question = UnsavedQuestion{std::move(verb), std::move(then)};
}

void AppState::open_document(Scenario scenario, std::string path) {
  model.kept_layers.clear();  // not a model's layer: model mode is over
  open_document_with(std::make_unique<Document>(std::move(scenario)), std::move(path));
}

void AppState::open_document_with(std::unique_ptr<Document> document, std::string path) {
  doc = std::move(document);
  model.session.reset();  // another document leaves model mode (a model job sets it again)
  model.predictions = {};
  model.asked = {};
  file_path = std::move(path);
  textures.clear();
  colour_ranges.clear();
  views.clear();
  hovered.reset();
  selected.reset();
  drag.reset();
  lit.clear();
  focused_head = std::clamp(focused_head, 0, doc->scenario().heads - 1);
}

std::string AppState::window_title() const {
  std::string name = file_path.empty() ? doc->scenario().title : std::filesystem::path(file_path).filename().string();
  return (doc->modified() ? "• " : "") + name + " — Attention Lab";
}

void AppState::take_snapshot() {
  if (busy()) {
    set_status("Busy: " + job->what() + " (wait, or press Cancel)");
    return;
  }
  // A snapshot keeps about what the engine keeps: refuse sizes where that would hurt.
  const std::uint64_t need = limits::estimated_bytes(doc->scenario().dims());
  if (need > kSnapshotLimitBytes) {
    error_popup = "A snapshot of this scenario would take about " + limits::format_bytes(need) +
                  ".\n\nCompare works up to about " + limits::format_bytes(kSnapshotLimitBytes) +
                  "; make T or d_model smaller to use it.";
    return;
  }
  // A read-only copy of the engine: no recompute, so it is taken at once (a
  // few milliseconds at T=1024); it projects a head's Q, K and V again when
  // that head is compared (same values to within rounding).
  const auto start = std::chrono::steady_clock::now();
  compare.snapshot = attention_lab::take_snapshot(*doc);
  compare.ids = model.open() ? model.session->ids() : std::vector<int>{};
  compare.layer = model.open() ? model.session->layer() : -1;
  compare.of_text.clear();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  compare.diffs.clear();
  ++compare.taken;
  compare.show = true;
  char took[96];
  std::snprintf(took, sizeof took, " (%s kept, %.0f ms)", limits::format_bytes(compare.snapshot->bytes()).c_str(), ms);
  set_status(std::string("Snapshot taken") + took + ": every stage now shows its change since this moment");
}

void AppState::restore_snapshot() {
  if (!compare.snapshot) return;
  // A snapshot of another text or layer: its layer input is not this run's.
  if (model.open() && (compare.ids != model.session->ids() || compare.layer != model.session->layer())) {
    error_popup = "The snapshot is of " +
                  (!compare.of_text.empty() ? compare.of_text
                   : compare.ids != model.session->ids() ? std::string("another text")
                                                         : "layer " + std::to_string(compare.layer)) +
                  ", not of this text at layer " + std::to_string(model.session->layer()) +
                  ": restoring it would put its layer input into this run.\n\nIts differences are still shown; take a "
                  "snapshot of this text to restore one.";
    return;
  }
  if (apply(restore_edit(*compare.snapshot)))
    set_status(busy() ? "Restoring the snapshot…" : "Restored the snapshot (Ctrl+Z goes back to before)");
}

const StageDiff* AppState::difference(StageId stage, std::uint64_t& version, bool on_screen) {
  if (!compare.snapshot || !compare.show || !doc->engine().not_held(stage).empty()) return nullptr;
  auto& cached = compare.diffs[stage];
  const std::uint64_t now = doc->engine().version(stage) * 1024u + compare.taken;
  const bool computed = cached.version != 0 && (cached.diff.difference.size() != 0 || cached.diff.shape_changed);
  if (!on_screen && computed) {
    version = cached.version;
    return cached.diff.shape_changed ? nullptr : &cached.diff;
  }
  if (cached.version != now || !computed) {
    cached.diff = diff(*compare.snapshot, *doc, stage);
    cached.version = now;
  }
  version = now;
  return cached.diff.shape_changed ? nullptr : &cached.diff;
}

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

// [SECTION] App

App::App(Options options) { state_.options = std::move(options); }

std::string App::init(GLFWwindow* window) {
  state_.window = window;
  if (auto err = state_.renderer.init(); !err.empty()) return "shader error:\n" + err;
  state_.settings.load();
  const Options& o = state_.options;
  if (!o.hold_jobs_while.empty()) BackgroundJob::hold_while_file_exists(o.hold_jobs_while);
  // A big scenario computes on a worker thread behind the default preset, so
  // the window is responsive from the first frame.
  int opened_heads = 1;
  std::vector<StageId> stages;  // of the scenario opened (a big one is still computing)
  auto open = [&](Scenario s, const std::string& path) {
    opened_heads = s.heads;
    stages = pipeline(s);
    if (is_heavy(s.dims())) {
      state_.open_document(*make_preset(kDefaultPreset), "");
      state_.job = std::make_unique<BackgroundJob>("Computing " + (path.empty() ? s.title : path), std::move(s), path);
    } else {
      state_.open_document(std::move(s), path);
    }
  };
  // The file given on the command line (what the desktop entry's %f passes) may be a lesson too.
  const bool positional_lesson = o.lesson.empty() && !o.scenario_path.empty() && is_lesson_file(o.scenario_path);
  const std::string& lesson_arg = positional_lesson ? o.scenario_path : o.lesson;
  if (!lesson_arg.empty()) {
    const auto path = find_lesson(lesson_arg);
    LoadedLesson l = load_lesson(path);
    if (!l.lesson) {
      if (positional_lesson) return lesson_arg + ": " + l.error;
      std::error_code ec;
      if (!std::filesystem::exists(path, ec))  // neither a file nor a built-in name: say which names there are
        return "--lesson: expected a lesson file or one of " + builtin_lesson_names() + ", found '" + o.lesson + "'";
      return "--lesson " + o.lesson + ": " + path.string() + ": " + l.error;
    }
    const int count = static_cast<int>(l.lesson->steps.size());
    if (o.lesson_step >= count)
      return "--lesson-step: expected 1 to " + std::to_string(count) + ", found " + std::to_string(o.lesson_step + 1);
    state_.open_lesson(std::move(*l.lesson), path.string(), o.lesson_step);
    stages = pipeline(state_.doc->scenario());
  } else if (!o.model.empty()) {
    // The default preset shows until the model is in (loading runs in the background, with Cancel).
    state_.open_document(*make_preset(kDefaultPreset), "");
    opened_heads = limits::kMaxHeads;  // not known yet: --head is checked when the model is in
    state_.open_model(ModelRequest::open(o.model, o.text, o.layer));
  } else if (!o.scenario_path.empty()) {
    LoadResult r = load_scenario(o.scenario_path);
    if (!r.scenario)
      return o.scenario_path + ": " + r.error +
             " (attention-lab opens a scenario, a JSON object with X, W_q, W_k, W_v and heads, or a lesson, whose "
             "\"format\" is \"attention-lab/lesson@1\")";
    open(std::move(*r.scenario), o.scenario_path);
  } else {
    const std::string name = o.preset.empty() ? std::string(kDefaultPreset) : o.preset;
    auto s = make_preset(name);
    if (!s) return "--preset: " + preset_problem(name);  // a random-T-D-H too big for memory says what it needs
    open(std::move(*s), "");
  }
  const int heads = state_.job ? opened_heads : state_.doc->scenario().heads;
  if (o.head >= heads) return "--head: expected 0 to " + std::to_string(heads - 1) + ", found " + std::to_string(o.head);
  if (!state_.lesson.lesson || o.head > 0) state_.focused_head = o.head;  // a lesson step may choose the head
  state_.deferred_head = state_.job ? o.head : -1;  // applied when the big scenario is in
  if (o.step >= static_cast<int>(steps().size()))
    return "--step: expected 1 to " + std::to_string(steps().size()) + ", found " + std::to_string(o.step + 1);
  state_.step = o.step;
  state_.scroll_to_step = state_.scroll_to_step || o.step >= 0;  // a lesson may have asked already
  if (!o.export_target.empty() && !parse_export_target(o.export_target, stages))
    return "--export: unknown stage '" + o.export_target + "'; expected step, view or a stage of this scenario: " +
           stage_names_list(stages);
  // A picture made from the command line is the same every time: animations finished, time counted in frames.
  const bool picture = !o.screenshot.empty() || !o.export_target.empty() || o.check_slides;
  state_.clock.set_finished(picture);
  state_.model.predictions_in_place = picture;
  if (o.presenter) toggle_presenter(!o.size_given);  // --size: a window of that size, to rehearse a projector
  if (o.show == "gradients") state_.gradient_view = GradientView::Gradients;
  if (o.show == "both") state_.gradient_view = GradientView::Both;
  if (o.view == "heads") state_.centre = CentreView::HeadView;
  if (o.view == "softmax") state_.centre = CentreView::SoftmaxUpClose;
  if (o.view == "sqrt-dk") state_.centre = CentreView::SqrtDkExperiment;
  if (o.view == "train") state_.centre = CentreView::Train;
  // The model's own views open once it is in (it loads in the background).
  if (o.view == "model") state_.centre_when_model_opens = CentreView::Model;
  if (o.view == "block") state_.centre_when_model_opens = CentreView::Block;
  if (o.view == "interp") state_.centre_when_model_opens = CentreView::Interpret;
  // A model opens on its layers × heads (the Model tab), unless a step, a
  // cell or a lesson asks for the pipeline.
  if (!o.model.empty() && o.view.empty() && o.step < 0 && o.select.empty() && o.lesson.empty())
    state_.centre_when_model_opens = CentreView::Model;
  state_.select_centre_tab = true;
  if (!o.select.empty()) {
    // STAGE:ROW:COL
    const auto a = o.select.rfind(':'), b = a == std::string::npos ? a : o.select.rfind(':', a - 1);
    auto id = b == std::string::npos ? std::nullopt : parse_stage_id(o.select.substr(0, b));
    // A model's layer L is shown as a scenario, layer 0: "blocks.L.…" names it when L is --layer.
    if (id && !o.model.empty() && id->layer == o.layer) id->layer = 0;
    if (!id) {
      const auto hook = b == std::string::npos ? std::nullopt : read_hook_name(o.select.substr(0, b));
      if (hook && !hook->id) return "--select: " + hook->problem;
      return "--select: expected STAGE:ROW:COL such as scores[0]:2:1, found '" + o.select + "'";
    }
    const int r = std::atoi(o.select.substr(b + 1, a - b - 1).c_str()), c = std::atoi(o.select.substr(a + 1).c_str());
    if (r < 0 || c < 0) return "--select: expected a row and a column from 0, found '" + o.select + "'";
    if (state_.job) {
      state_.deferred_select = CellRef{*id, r, c};  // a model or a big scenario: checked when it is in
    } else {
      // a gradient cell: the cell of its stage, of a scenario whose loss has gradients
      StageId value = *id;
      value.role = Role::Value;
      const Scenario& sc = state_.doc->scenario();
      if (const std::string problem = cell_problem(sc, CellRef{value, r, c}); !problem.empty()) return "--select: " + problem;
      if (id->role == Role::Gradient) {
        if (!sc.loss) return "--select: " + to_string(*id) + ": the scenario has no loss, so no gradients";
        if (const std::string problem = gradients_problem(sc, *sc.loss); !problem.empty()) return "--select: " + problem;
        if (!has_gradient(id->kind)) return "--select: " + to_string(*id) + ": a constant, which has no gradient";
      }
      state_.selected = CellRef{*id, r, c};
    }
  }
  if (o.check_slides) {
    if (!state_.lesson.lesson) return "--check-slides: expected a lesson (--lesson NAME|FILE, or a lesson file)";
    state_.go_to_lesson_step(0);
    slide_checker_.emplace(static_cast<int>(state_.lesson.lesson->steps.size()));
  }
  start_recovery(state_);
  return {};
}

bool App::waiting_on_work() const {
  return state_.busy() || (state_.model.prediction_worker && state_.model.prediction_worker->working()) ||
         state_.interp.patch_task.running() || state_.interp.attribution_task.running();
}

bool App::animating() const {
  if (state_.playing || state_.train.run.playing) return true;
  if (state_.step < 0) return false;
  const auto& step = steps()[static_cast<std::size_t>(state_.step)];
  return step.animation != StepAnimation::None && state_.clock.animation_elapsed(state_.step_started) < 6.0;
}

void App::request_close() {
  state_.unless_unsaved_work("quit", [](AppState& s) { s.quit = true; });
}

void App::drop_files(int count, const char** paths) {
  for (int i = 0; i < count; ++i) {
    const std::string p = paths[i];
    const std::string ext = std::filesystem::path(p).extension().string();
    if (ext == ".json" || ext == ".safetensors") {
      state_.unless_unsaved_work("open", [p](AppState& s) { load_file_into(s, p); });
      return;
    }
  }
  if (count > 0) state_.error_popup = std::string("Drop a .json scenario or lesson file, or a .safetensors model; got ") + paths[0];
}

void App::on_key(int key, int mods) { key_presses_.push_back({key, mods}); }

float App::wanted_font_size() const {
  const Settings& s = state_.settings;
  return gfx::kBaseFontSize * (state_.presenter ? s.presenter_font_scale : s.font_scale);
}

void App::change_font_scale(float factor) {
  Settings& s = state_.settings;
  float& scale = state_.presenter ? s.presenter_font_scale : s.font_scale;
  scale = std::clamp(scale * factor, Settings::kMinFontScale, Settings::kMaxFontScale);
  s.save();  // remembered between runs
  char text[48];
  std::snprintf(text, sizeof text, "Font scale %.0f %%", static_cast<double>(scale * 100.0f));
  state_.set_status(text);
}

void App::toggle_presenter(bool full_screen) {
  state_.presenter = !state_.presenter;
  gfx::apply_theme(state_.presenter);
  GLFWwindow* w = state_.window;
  if (!w) return;  // drawn off screen (a picture with no display): its size is --size
  if (state_.presenter) {
    glfwGetWindowPos(w, &windowed_[0], &windowed_[1]);
    glfwGetWindowSize(w, &windowed_[2], &windowed_[3]);
    if (GLFWmonitor* monitor = full_screen ? glfwGetPrimaryMonitor() : nullptr) {
      const GLFWvidmode* mode = glfwGetVideoMode(monitor);
      glfwSetWindowMonitor(w, monitor, 0, 0, mode->width, mode->height, mode->refreshRate);
    }
    state_.set_status("Presenter mode: F5 to leave, Ctrl+plus/minus for the font size, L for the pointer ring");
  } else if (glfwGetWindowMonitor(w)) {
    glfwSetWindowMonitor(w, nullptr, windowed_[0], windowed_[1], windowed_[2], windowed_[3], GLFW_DONT_CARE);
  }
}

namespace {
// A text field is being edited right now. (io.WantTextInput tells whether one
// was active last frame: for a frame after Enter closes the quiz's answer
// field it is still true, and a clicker's PageDown in that frame was lost.)
bool editing_text() {
  const ImGuiID active = ImGui::GetActiveID();
  return active != 0 && ImGui::GetInputTextState(active) != nullptr;
}
}  // namespace

void App::handle_shortcuts() {
  const std::vector<KeyPress> presses = std::move(key_presses_);
  key_presses_.clear();
  const int last = static_cast<int>(steps().size()) - 1;
  for (const KeyPress& k : presses) {
    const bool ctrl = (k.mods & GLFW_MOD_CONTROL) != 0;
    const bool shift = (k.mods & GLFW_MOD_SHIFT) != 0;
    const bool page = k.key == GLFW_KEY_PAGE_DOWN || k.key == GLFW_KEY_PAGE_UP;
    const bool blank_key = !ctrl && (k.key == GLFW_KEY_B || k.key == GLFW_KEY_PERIOD || k.key == GLFW_KEY_KP_DECIMAL);
    if (state_.blank) {
      // A blank screen waits for its own key again, or for the clicker's
      // next/back, which bring back the slide that was blanked.
      if (blank_key || page) state_.blank = false;
      if (ctrl && k.key == GLFW_KEY_Q) request_close();
      continue;
    }
    if (k.key == GLFW_KEY_F1) state_.show_help = !state_.show_help;
    if (k.key == GLFW_KEY_F5) toggle_presenter();
    const bool font_key = ctrl && (k.key == GLFW_KEY_EQUAL || k.key == GLFW_KEY_KP_ADD || k.key == GLFW_KEY_MINUS ||
                                   k.key == GLFW_KEY_KP_SUBTRACT);
    if (editing_text()) {
      // Keys belong to the text field being edited, except the font size and,
      // in the quiz's answer box, a clicker's PageDown/PageUp: a lecturer
      // typing the room's answer can still move on. (In any other field, a
      // word being renamed, turning the page would swap the scenario under
      // the edit the field applies when it loses the keyboard.)
      if (font_key) change_font_scale(k.key == GLFW_KEY_EQUAL || k.key == GLFW_KEY_KP_ADD ? Settings::kFontStep : 1.0f / Settings::kFontStep);
      if (page && state_.quiz.answer_focused && state_.lesson.lesson &&
          !ImGui::IsPopupOpen(nullptr, ImGuiPopupFlags_AnyPopupId))
        k.key == GLFW_KEY_PAGE_DOWN ? state_.lesson_next() : state_.lesson_back();
      // A clicker that sends arrows or Space, while the room's answer is still
      // empty: the page turns (once typing has begun, they edit the answer).
      const bool clicker_key = k.key == GLFW_KEY_RIGHT || k.key == GLFW_KEY_LEFT || (k.key == GLFW_KEY_SPACE && !shift);
      if (clicker_key && state_.quiz.answer_focused && state_.quiz.answer[0] == 0 && state_.lesson.lesson &&
          !ImGui::IsPopupOpen(nullptr, ImGuiPopupFlags_AnyPopupId))
        k.key == GLFW_KEY_LEFT ? state_.lesson_back() : state_.lesson_next();
      // The value box: a page turn leaves it unapplied and turns the page.
      if (page && state_.typing.open && state_.lesson.lesson) {
        state_.typing.close_requested = true;
        k.key == GLFW_KEY_PAGE_DOWN ? state_.lesson_next() : state_.lesson_back();
      }
      continue;
    }
    if (state_.typing.open) {
      // The value box is open without the keyboard (it was not given it, or
      // lost it): Esc, Enter and a clicker's page keys still answer it.
      if (k.key == GLFW_KEY_ESCAPE || page) state_.typing.close_requested = true;
      if (k.key == GLFW_KEY_ENTER || k.key == GLFW_KEY_KP_ENTER) state_.typing.apply_requested = true;
      if (page && state_.lesson.lesson) k.key == GLFW_KEY_PAGE_DOWN ? state_.lesson_next() : state_.lesson_back();
      continue;
    }
    if (ImGui::GetTopMostPopupModal()) {
      // A dialog waits for an answer (recover unsaved work, save before
      // quitting, a problem): the document and the view stay as they are
      // behind it. Only the text size may change. The recovery question after
      // a crash in a lecture takes a clicker's keys too.
      if (!state_.recovery.offered.empty() && std::string_view(ImGui::GetTopMostPopupModal()->Name) == kRecoveryDialogTitle) {
        if (page || k.key == GLFW_KEY_RIGHT || k.key == GLFW_KEY_LEFT || k.key == GLFW_KEY_ENTER ||
            k.key == GLFW_KEY_KP_ENTER || k.key == GLFW_KEY_ESCAPE)
          state_.recovery.key_answer =
              k.key == GLFW_KEY_PAGE_DOWN || k.key == GLFW_KEY_RIGHT || k.key == GLFW_KEY_ENTER || k.key == GLFW_KEY_KP_ENTER ? 1 : -1;
      }
      if (font_key) change_font_scale(k.key == GLFW_KEY_EQUAL || k.key == GLFW_KEY_KP_ADD ? Settings::kFontStep : 1.0f / Settings::kFontStep);
      continue;
    }
    if (ctrl) {
      switch (k.key) {
        case GLFW_KEY_Z: shift ? state_.redo() : state_.undo(); break;
        case GLFW_KEY_Y: state_.redo(); break;
        case GLFW_KEY_S: shift ? action_save_as_dialog(state_) : action_save(state_); break;
        case GLFW_KEY_O: state_.unless_unsaved_work("open", shift ? action_open_model_dialog : action_open_dialog); break;
        case GLFW_KEY_Q: request_close(); break;
        case GLFW_KEY_T: state_.take_snapshot(); break;
        case GLFW_KEY_G:
          state_.gradient_view = next_gradient_view(state_.gradient_view);
          state_.set_status(std::string("The Pipeline shows ") + to_string(state_.gradient_view) +
                            (state_.gradient_view == GradientView::Values ? "" : " (of the scenario's loss)"));
          break;
        case GLFW_KEY_EQUAL: case GLFW_KEY_KP_ADD: change_font_scale(Settings::kFontStep); break;
        case GLFW_KEY_MINUS: case GLFW_KEY_KP_SUBTRACT: change_font_scale(1.0f / Settings::kFontStep); break;
        default: break;
      }
      continue;
    }
    if (ImGui::IsPopupOpen(nullptr, ImGuiPopupFlags_AnyPopupId)) continue;  // popups own arrows, Enter, Esc
    if (blank_key) {
      state_.blank = true;
      continue;
    }
    if (k.key == GLFW_KEY_Q && state_.quiz.asking()) {
      state_.quiz.focus_answer = true;  // type the answer now
      continue;
    }
    if (k.key == GLFW_KEY_H && state_.quiz.asking() && state_.quiz.round->hint_offered()) {
      state_.quiz.hint = true;
      continue;
    }
    if (state_.lesson.lesson && k.key == GLFW_KEY_C) {
      if (shift) {
        state_.lesson.carry_what_ifs = !state_.lesson.carry_what_ifs;
        state_.set_status(state_.lesson.carry_what_ifs
                              ? "What-ifs are carried into the next steps (Shift+C: each step starts from the lesson's numbers)"
                              : "Each step starts from the lesson's numbers (Shift+C: carry what-ifs into the next steps)");
      } else if (!state_.lesson.set_aside.edits.empty() && !state_.lesson.carried) {
        state_.carry_what_if();
      }
      continue;
    }
    if (state_.lesson.lesson && k.key == GLFW_KEY_N) {
      // The slide gets the text's room, or the text comes back (also when the slide folded it).
      if (state_.lesson_text_folded()) {
        state_.lesson.text_folded = false;
        state_.lesson.text_kept_open = true;
      } else {
        state_.lesson.text_folded = true;
      }
      continue;
    }
    if (state_.lesson.lesson) {
      // Presentation clickers send PageDown/PageUp; arrows work as well, and
      // Space / Shift+Space and Backspace as in slide software (the
      // step-through Space would play is hidden behind the lesson's slide).
      const bool space = k.key == GLFW_KEY_SPACE;
      if (k.key == GLFW_KEY_PAGE_DOWN || k.key == GLFW_KEY_RIGHT || (space && !shift)) {
        state_.lesson_next();
        continue;
      }
      if (k.key == GLFW_KEY_PAGE_UP || k.key == GLFW_KEY_LEFT || k.key == GLFW_KEY_BACKSPACE || (space && shift)) {
        state_.lesson_back();
        continue;
      }
    }
    switch (k.key) {
      // (a clicker's PageDown/PageUp step as the arrows do: a lecturer
      // presents the step-through without a lesson too)
      case GLFW_KEY_RIGHT: case GLFW_KEY_PAGE_DOWN: step_to(state_, state_.step >= last ? -1 : state_.step + 1); break;
      case GLFW_KEY_LEFT: case GLFW_KEY_PAGE_UP: step_to(state_, state_.step < 0 ? last : state_.step - 1); break;
      case GLFW_KEY_SPACE:
        state_.playing = !state_.playing;
        if (state_.playing && (state_.step < 0 || state_.step == last)) step_to(state_, 0);
        break;
      case GLFW_KEY_ESCAPE: state_.selected.reset(), state_.model.block.selected.reset(); break;
      case GLFW_KEY_P:  // a lesson step: its slide or the whole pipeline
        if (state_.lesson.lesson) {
          state_.lesson.whole_pipeline = !state_.lesson.whole_pipeline;
          state_.scroll_to_step = state_.lesson.whole_pipeline;
          state_.set_status(state_.lesson.whole_pipeline ? "Whole pipeline (P: back to the slide)" : "Slide of this step (P: the whole pipeline)");
        }
        break;
      case GLFW_KEY_L:
        state_.pointer_spotlight = !state_.pointer_spotlight;
        state_.set_status(state_.pointer_spotlight ? "Pointer ring on (presenter mode)" : "Pointer ring off");
        break;
      case GLFW_KEY_ENTER: case GLFW_KEY_KP_ENTER:
        if (state_.selected && state_.selected->stage.kind != StageKind::Mask && state_.selected->stage.role == Role::Value) {
          state_.typing.cell = *state_.selected;
          state_.typing.open_requested = true;
        }
        break;
      default: break;
    }
  }
}

void App::update_provenance() {
  // A quiz's hint lights what the hidden cell is made from, unless the pointer is elsewhere.
  const bool hint = state_.quiz.asking() && state_.quiz.hint;
  std::optional<CellRef> source = state_.hovered ? state_.hovered
                                  : hint         ? std::optional<CellRef>(state_.quiz.round->question.cell)
                                                 : state_.selected;
  // During a product animation the sweeping cell shows its sources.
  if (!source && state_.step >= 0 && animating()) {
    const auto& step = steps()[static_cast<std::size_t>(state_.step)];
    const StageKind k = step.focus;
    const StageId id = is_per_head(k) ? StageId::of_head(k, state_.focused_head) : StageId::input(k);
    const MatrixView m = state_.doc->stage(id);
    const double elapsed = state_.clock.animation_elapsed(state_.step_started);
    const int total = static_cast<int>(m.rows() * m.cols());
    const int done = static_cast<int>(elapsed * std::max(4.0, total / 4.0));
    if (step.animation == StepAnimation::Product && done < total && m.cols() > 0)
      source = CellRef{id, done / static_cast<int>(m.cols()), done % static_cast<int>(m.cols())};
    if (step.animation == StepAnimation::Softmax) {
      const int row = static_cast<int>(elapsed * std::max(1.5, static_cast<double>(m.rows()) / 4.0));
      if (row < m.rows()) source = CellRef{id, row, 0};
    }
  }
  if (source && source->stage.role == Role::Gradient) {
    // a gradient is made of later gradients (and the values they multiply): provenance going backwards
    const Gradients* g = state_.gradients.get(*state_.doc);
    state_.lit = g ? derive_gradient(*state_.doc, *g, source->stage, source->row, source->col).sources : std::vector<Lit>{};
    return;
  }
  state_.lit = source ? provenance(state_.doc->scenario(), source->stage, source->row, source->col) : std::vector<Lit>{};
}

void draw_centre_view(AppState& state) {
  switch (state.centre) {
    case CentreView::Pipeline: showing_slide(state) ? draw_slide_panel(state) : draw_pipeline_panel(state); break;
    case CentreView::HeadView: draw_head_view_panel(state); break;
    case CentreView::SoftmaxUpClose: draw_softmax_panel(state); break;
    case CentreView::SqrtDkExperiment: draw_sqrt_dk_panel(state); break;
    case CentreView::Train: draw_train_panel(state); break;
    case CentreView::Model: draw_model_view(state); break;
    case CentreView::Block: draw_block_view(state); break;
    case CentreView::Interpret: draw_interp_view(state); break;
  }
}

// A small window over everything while long work runs: what, how long, Cancel.
void draw_busy_overlay(AppState& state) {
  if (!state.job) return;
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.4f),
                          ImGuiCond_Always, ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowBgAlpha(0.95f);
  ImGui::Begin("##busy", nullptr, ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize |
                                      ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoMove);
  ImGui::Text("%s…", state.job->what().c_str());
  // The engine's fraction when it reports one; a moving indeterminate bar otherwise.
  const float t = static_cast<float>(state.job->seconds());
  const float fraction = state.job->progress();
  ImGui::ProgressBar(fraction >= 0.0f ? fraction : -1.0f * t, ImVec2(320, 0), fraction >= 0.0f ? nullptr : "");
  ImGui::TextDisabled("%.1f s — the window shows the last finished result meanwhile", static_cast<double>(t));
  const bool cancel = ImGui::Button("Cancel");
  state.cancel_button = Rect{ImGui::GetItemRectMin().x, ImGui::GetItemRectMin().y, ImGui::GetItemRectMax().x,
                             ImGui::GetItemRectMax().y};
  ImGui::End();
  if (cancel) {
    // Drop the job now: the window is back at once; its thread, if still
    // running, finishes on its own and its result is thrown away.
    state.job->cancel();
    state.set_status("Cancelled: " + state.job->what());
    state.job.reset();
  }
}

void App::frame() {
  state_.clock.advance(ImGui::GetTime());
  state_.probe_items.clear();
  state_.heatmap_instances.clear();
  state_.difference_heatmaps.next_frame();
  // A drag whose heatmap is no longer drawn (a lesson step changed the view)
  // never sees its release: forget it once the button is up.
  if (state_.drag && !ImGui::IsMouseDown(ImGuiMouseButton_Left)) state_.drag.reset();
  if (auto run = std::exchange(state_.next_frame, nullptr)) run(state_);
  state_.poll_job();
  state_.sync_quiz();  // after a job that changed the document, before anything checks an answer
  autosave_frame(state_);
  handle_shortcuts();
  if (state_.toggle_presenter_requested) state_.toggle_presenter_requested = false, toggle_presenter();
  if (state_.playing) {
    // Each step plays for 5 seconds.
    if (state_.clock.animation_elapsed(state_.step_started) > 5.0) {
      const int last = static_cast<int>(steps().size()) - 1;
      if (state_.step >= last) state_.playing = false;
      else step_to(state_, state_.step + 1);
    }
  }
  update_provenance();
  state_.hovered_last_frame = state_.hovered;
  state_.hovered.reset();
  state_.drawn.clear();
  state_.renderer.begin_frame();

  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(vp->WorkPos);
  ImGui::SetNextWindowSize(vp->WorkSize);
  ImGui::PushStyleVar(ImGuiStyleVar_WindowRounding, 0.0f);
  ImGui::Begin("Attention Lab", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_MenuBar |
                   ImGuiWindowFlags_NoBringToFrontOnFocus | ImGuiWindowFlags_NoSavedSettings);
  ImGui::PopStyleVar();
  draw_menu_bar(state_);

  // A lesson's panel is as tall as its text (the slide shrinks instead), up to
  // 72 % of the window; beyond that the text scrolls and the probe says so.
  const float avail_h = ImGui::GetContentRegionAvail().y, avail_w = ImGui::GetContentRegionAvail().x;
  const auto lesson_bar_h = [&](bool folded) {
    return std::min(lesson_panel_height(state_, avail_w, folded) + ImGui::GetStyle().ItemSpacing.y, avail_h * 0.72f);
  };
  const bool folded = state_.lesson.lesson && state_.lesson_text_folded();
  state_.lesson.folded_this_frame = folded;
  const float step_bar_h = state_.lesson.lesson ? lesson_bar_h(folded) : ImGui::GetTextLineHeightWithSpacing() * 5.2f;
  const float em = gfx::em();  // panels grow with the font
  const float side_w = std::clamp(vp->WorkSize.x * 0.18f, 230.0f * em, 320.0f * em);
  float inspector_w = std::clamp(vp->WorkSize.x * 0.24f, 280.0f * em, 440.0f * em);
  if (state_.presenter) inspector_w = std::min(inspector_w, vp->WorkSize.x * 0.28f);  // the math gets the room
  // What a slide would gain from the text folded and from the inspector
  // hidden, and whether they are (the slide asks for them: slide_panel.cpp).
  SlideState& slide_room = state_.slide;
  slide_room.fold_applied = folded && !state_.lesson.text_folded;
  slide_room.fold_gain = state_.lesson.lesson && !state_.lesson.text_folded ? lesson_bar_h(false) - lesson_bar_h(true) : 0.0f;
  slide_room.inspector_gain = state_.presenter ? inspector_w + ImGui::GetStyle().ItemSpacing.x : 0.0f;
  slide_room.inspector_hidden = state_.presenter && slide_room.want_no_inspector && state_.lesson_view_shown() && !state_.quiz.round;
  if (slide_room.inspector_hidden) inspector_w = 0.0f;
  const float body_h = avail_h - step_bar_h;

  if (!state_.presenter) {  // presenter mode hides the controls: the math gets the room
    ImGui::BeginChild("controls", ImVec2(side_w, body_h), true);
    draw_controls_panel(state_);
    ImGui::EndChild();
    ImGui::SameLine();
  }
  // The centre: the pipeline, or one of the close-up views, chosen by tabs.
  const float centre_w = ImGui::GetContentRegionAvail().x - (inspector_w > 0.0f ? inspector_w + 8 : 0.0f);
  ImGui::BeginChild("centre", ImVec2(centre_w, body_h), false);
  if (ImGui::BeginTabBar("centre views")) {
    const auto tab = [&](const char* label, CentreView view) {
      // --view (or a lesson) picks the tab once; afterwards the user's clicks decide.
      const ImGuiTabItemFlags flags =
          state_.select_centre_tab && state_.centre == view ? ImGuiTabItemFlags_SetSelected : 0;
      const bool open = ImGui::BeginTabItem(label, nullptr, flags);
      state_.note_item(std::string("tab ") + label);
      if (open) {
        // A requested tab takes a frame or two to become the open one; until
        // then the previously open tab must not overwrite the request.
        if (!state_.select_centre_tab) state_.centre = view;
        else if (state_.centre == view) state_.select_centre_tab = false;
        ImGui::EndTabItem();
      }
    };
    tab("Pipeline", CentreView::Pipeline);
    tab("Head view", CentreView::HeadView);
    tab("Softmax up close", CentreView::SoftmaxUpClose);
    tab("Why √d_k", CentreView::SqrtDkExperiment);
    tab("Train", CentreView::Train);
    if (state_.model.open()) {
      tab("Model", CentreView::Model);
      tab("Block", CentreView::Block);
      tab("Interpret", CentreView::Interpret);
    }
    ImGui::EndTabBar();
  }
  // A child window per view: each keeps its own scroll position, and wrapped
  // text in one view does not wrap at the width of the wide pipeline (a
  // window's content width is last frame's, so it would stay that wide).
  static constexpr const char* kViewChild[] = {"pipeline", "head view", "softmax up close", "why sqrt dk", "model", "block",
                                               "interpret", "train"};
  static_assert(std::size(kViewChild) == static_cast<std::size_t>(CentreView::Train) + 1, "a child name for every view");
  if ((state_.centre == CentreView::Model || state_.centre == CentreView::Block || state_.centre == CentreView::Interpret) &&
      !state_.model.open())
    state_.centre = CentreView::Pipeline;
  const bool slide = showing_slide(state_);
  // A slide fits its view: no scroll bars (they would take room and shift it), unless it cannot fit.
  const ImGuiWindowFlags view_flags = slide && !state_.slide.overflows ? ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse
                                                                       : ImGuiWindowFlags_HorizontalScrollbar;
  ImGui::BeginChild(slide ? "slide" : kViewChild[static_cast<int>(state_.centre)], ImVec2(0, 0), true, view_flags);
  {
    const ImVec2 at = ImGui::GetWindowPos(), size = ImGui::GetWindowSize();
    state_.centre_area = Rect{at.x, at.y, at.x + size.x, at.y + size.y};
    const ImRect inner = ImGui::GetCurrentWindow()->InnerRect;  // less border and scroll bars: what is visible
    state_.centre_rect = Rect{inner.Min.x, inner.Min.y, inner.Max.x, inner.Max.y};
  }
  draw_centre_view(state_);
  state_.centre_overflow_x = ImGui::GetScrollMaxX();  // > 0: wider than it shows (a horizontal scroll bar)
  // A lesson step's own view that is not a slide (the √d_k experiment,
  // Softmax up close): when it is taller than it shows, what the step's text
  // talks about (a histogram, a table) would be below the fold, so it asks
  // for the text's room and then the inspector's, as a slide does.
  if (!slide && state_.lesson_view_shown() && ImGui::GetScrollMaxY() > 0.5f) {
    if (!slide_room.want_fold && slide_room.fold_gain > 0.0f && !state_.lesson.text_kept_open) slide_room.want_fold = true;
    else if (state_.presenter && !state_.quiz.round) slide_room.want_no_inspector = true;
  }
  state_.centre_overflow_y = ImGui::GetScrollMaxY();
  ImGui::EndChild();
  ImGui::EndChild();
  if (inspector_w > 0.0f) {
    ImGui::SameLine();
    ImGui::BeginChild("inspector", ImVec2(0, body_h), true);
    const ImRect inner = ImGui::GetCurrentWindow()->InnerRect;
    state_.inspector_rect = Rect{inner.Min.x, inner.Min.y, inner.Max.x, inner.Max.y};
    draw_inspector_panel(state_);
    ImGui::EndChild();
  } else {
    state_.inspector_rect = Rect{};  // a slide that needs the room hides it (presenter mode)
  }
  ImGui::BeginChild("steps", ImVec2(0, 0), true);
  if (state_.lesson.lesson)
    draw_lesson_panel(state_);
  else
    draw_step_bar(state_);
  ImGui::EndChild();

  draw_file_dialog(state_);
  draw_help_windows(state_);
  draw_busy_overlay(state_);
  draw_typing_popup(state_);
  draw_blank_screen(state_);
  draw_pointer_spotlight(state_);
  draw_rename_popup(state_);
  draw_recovery_dialog(state_);

  if (!state_.error_popup.empty()) ImGui::OpenPopup("Problem");
  if (ImGui::BeginPopupModal("Problem", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    ImGui::PushTextWrapPos(520.0f);
    ImGui::TextUnformatted(state_.error_popup.c_str());
    ImGui::PopTextWrapPos();
    // (not the Enter that made the error: it is still down in the frame the popup appears)
    if (ImGui::Button("OK") ||
        (!ImGui::IsWindowAppearing() && (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Enter), false) ||
                                         ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)))) {
      state_.error_popup.clear();
      ImGui::CloseCurrentPopup();
    }
    ImGui::EndPopup();
  }
  if (!state_.import_report.empty() && !ImGui::IsPopupOpen("Imported weights")) ImGui::OpenPopup("Imported weights");
  if (ImGui::BeginPopupModal("Imported weights", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    ImGui::PushTextWrapPos(640.0f);
    ImGui::TextUnformatted(state_.import_report.c_str());
    ImGui::TextDisabled("Edit ▸ Undo (Ctrl+Z) takes the import back.");
    ImGui::PopTextWrapPos();
    if (ImGui::Button("OK") ||
        (!ImGui::IsWindowAppearing() && (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Enter), false) ||
                                         ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)))) {
      state_.import_report.clear();
      ImGui::CloseCurrentPopup();
    }
    ImGui::EndPopup();
  }
  draw_unsaved_question(state_);
  ImGui::End();
  // A notch no heatmap took (or one it took: the same notch counts once) keeps the wheel gesture going.
  if (ImGui::GetIO().MouseWheel != 0.0f) state_.wheel.wheel(WheelGesture::kPage, ImGui::GetTime());
  write_probe();
  if (slide_checker_) slide_checker_->after_frame(state_);
}

void App::after_render(int, int) {
  if (!state_.pending_export) return;
  const ExportRequest request = std::move(*state_.pending_export);
  state_.pending_export.reset();
  const ExportResult r = render_export(state_, request);
  if (!r.error.empty()) {
    state_.error_popup = r.error;
    return;
  }
  state_.last_export = {request.path, r.width, r.height};
  state_.set_status("Wrote " + request.path + " (" + std::to_string(r.width) + "×" + std::to_string(r.height) + " px)");
}

std::string App::export_now() {
  const Options& o = state_.options;
  const auto target = parse_export_target(o.export_target, pipeline(state_.doc->scenario()));
  if (!target) return "--export: unknown target '" + o.export_target + "'";  // checked in init()
  const ExportResult r = render_export(state_, ExportRequest{*target, o.export_path, o.export_scale, o.export_with_highlights});
  return r.error;
}

void App::write_probe() const {
  if (!state_.options.probe.empty()) write_probe_file(state_, state_.options.probe);
}

}  // namespace attention_lab::gui
