// AppState: the document and its undo, the status line, background jobs,
// the model's session and caches, Compare. (Quizzes and lessons: app_state_teach.cpp.)

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

std::string AppState::selection_problem(const CellRef& c) {
  // a gradient cell: the cell of its stage, of a scenario (or model) whose loss has gradients
  StageId value = c.stage;
  value.role = Role::Value;
  if (std::string problem = cell_problem(doc->scenario(), CellRef{value, c.row, c.col}); !problem.empty()) return problem;
  if (c.stage.role != Role::Gradient) return {};
  if (!has_gradient(c.stage.kind)) return to_string(c.stage) + ": a constant, which has no gradient";
  sync_model_loss();
  // (a model's gradients may still be computing on their thread: the cell is there once they are in)
  if (!gradients.get(*doc) && !gradients.computing()) return to_string(c.stage) + ": no gradients: " + gradients.problem();
  return {};
}

// --select given with a model or a big scenario: the cell, once its stage is in.
void AppState::apply_deferred_select() {
  if (!deferred_select) return;
  const CellRef c = *deferred_select;
  deferred_select.reset();
  // (a head, a setting or a cell the scenario does not have: named, never read)
  if (const std::string problem = selection_problem(c); problem.empty())
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
  // Shown meanwhile: the last result, if it is of the same ModelSession (model and text) and layer, marked as updating.
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

void AppState::sync_model_loss() {
  const ModelSession* session = model.session.get();
  if (!session) return gradients.set_model(std::nullopt);
  ModelLoss loss{session->model_ptr(), session->ids(), session->layer(), ""};
  if (!session->ablations().empty())
    loss.refused = "ablations: the model's gradients with heads or layers ablated are not computed yet (clear the ablations)";
  gradients.set_model(std::move(loss));
}

void AppState::cycle_gradient_view() {
  gradient_view = next_gradient_view(gradient_view);
  const char* of = gradient_view == GradientView::Values                  ? ""
                   : doc->scenario().loss || !gradients.has_model() ? " (of the scenario's loss)"
                                                                       : " (of the model's next-token loss)";
  set_status(std::string("The Pipeline shows ") + to_string(gradient_view) + of);
}

}  // namespace attention_lab::gui
