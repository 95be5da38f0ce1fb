#pragma once
// The one explicit state of the app: the open document, what the user is
// looking at, and the GPU resources that mirror the document. Every panel
// receives it; nothing lives in function statics.

#include "attention_lab/block_stages.h"
#include "attention_lab/cell_ref.h"
#include "attention_lab/document.h"
#include "attention_lab/limits.h"
#include "attention_lab/lesson.h"
#include "attention_lab/model_cache.h"
#include "attention_lab/quiz.h"
#include "attention_lab/snapshot.h"
#include "attention_lab/stage_info.h"
#include "attention_lab/sqrt_dk_experiment.h"
#include "attention_lab/sqrt_dk_training.h"
#include "autosave.h"
#include "background_job.h"
#include "gfx/gl_texture.h"
#include "gfx/heatmap_renderer.h"
#include "interp_state.h"
#include "logic/model_training_job.h"
#include "logic/training_run.h"
#include "logic/gradient_store.h"
#include "logic/animation_clock.h"
#include "logic/export_names.h"
#include "logic/frame_histogram.h"
#include "logic/colormap.h"
#include "logic/gesture.h"
#include "logic/heatmap_view.h"
#include "logic/prediction_worker.h"
#include "logic/pipeline_layout.h"
#include "logic/provenance.h"
#include "logic/what_if.h"
#include "options.h"
#include "settings.h"

#include <functional>
#include <map>
#include <set>
#include <utility>
#include <memory>
#include <optional>
#include <string>
#include <vector>

struct GLFWwindow;

namespace attention_lab::gui {

// One cell of one stage: the core's address, shared with lessons and quizzes.
using CellRef = attention_lab::CellRef;

// A drag on a cell, turned into edits that share one undo entry.
struct DragState {
  CellRef cell;
  std::uint64_t gesture = 0;
  float start_value = 0.0f;
  float start_y = 0.0f;
  bool moved = false;
};

// The "type a number" popup.
struct TypingState {
  CellRef cell;
  char buffer[64] = {};
  bool open_requested = false;
  bool open = false;  // the "Set value" popup was drawn this frame (for the probe)
  // Keys that reach the app while the box has no keyboard (a clicker after a
  // double-click): Esc or a page turn closes it unapplied, Enter applies it.
  bool close_requested = false, apply_requested = false;
  std::string error;
};

// The "rename a token or feature" popup (double-click on a label).
struct RenameState {
  LabelKind kind = LabelKind::Token;
  int index = 0;
  char buffer[limits::kMaxTokenLabelLength + 1] = {};  // ImGui stops typing at the limit
  bool open_requested = false;
  bool open = false;     // the popup was drawn this frame (for the probe)
  bool editing = false;  // its text field has the keyboard (for the probe: typing goes there)
  std::string error;
};

// The text field of the Words section being typed in: what it holds so far.
// (Its name is applied as one edit when the field is left, not per keystroke.)
struct WordsField {
  LabelKind kind = LabelKind::Token;
  int index = 0;
  char buffer[limits::kMaxTokenLabelLength + 1] = {};
};

enum class FileDialogMode { Closed, Open, OpenModel, ImportWeights, SaveAs, ExportCsv, ExportPng, OpenPrompts, OpenTrainingText };

struct FileDialogState {
  FileDialogMode mode = FileDialogMode::Closed;
  std::string directory;
  char name[256] = {};
  std::string error;
  bool just_opened = false;
  std::string suggested_name;  // pre-filled when the dialog opens ("weights-head0.csv")
  ExportTarget export_target;  // what Export PNG/CSV writes
  int export_scale = 2;        // Export PNG: 1×, 2× or 4× the on-screen size
  bool export_highlights = false;  // Export PNG: keep the selection, lit cells, highlight outlines and the quiz's "?"
  bool focus_name = false;  // put the keyboard in the name field next frame (opened, or Enter failed)
  std::vector<CachedModel> cached_models;  // Open model: the Hugging Face cache, read when the dialog opens
  // Import weights: where a .npy goes, whether it is stored [out, in], which layer of a checkpoint.
  int import_target = 1;  // index into kImportTargets (panels/file_dialog.cpp): X, W_q, W_k, W_v, W_o
  bool import_transposed = false;
  int import_layer = -1;  // -1: the only layer in the file
};

// Screen rectangles of this frame's heatmaps, for hit-testing overlays and
// for the test probe.
struct DrawnHeatmap {
  StageId stage;
  Rect rect;
  int rows = 0, cols = 0;
  bool transposed = false;
  float cell_px = 0.0f;     // one cell's width on screen (the probe's readability check)
  int values_printed = 0;   // cells whose number is printed in full
  int values_cut = 0;       // cells that had room for "…" only
  int labels_cut = 0;       // row and column labels drawn cut or left out (whole on hover only)
};

struct HeadViewState {
  bool all_heads = false;
  int first_token = 0;  // long sequences scroll
  int hovered_query = -1;  // last frame's hovered query token (the note above the lines uses it)
  // What the last frame drew, for the probe: the x where lines start (the
  // queries' side) and end (the keys'), and each drawn token's label and y.
  struct DrawnToken {
    int index;
    std::string label;
    float y;
  };
  float left_x = 0.0f, right_x = 0.0f;
  std::vector<DrawnToken> drawn_queries, drawn_keys;
};

// "Why √d_k": the experiment's options and last result (recomputed when they change).
struct SqrtDkState {
  SqrtDkOptions options;
  SqrtDkResult result;
  Histogram scaled_own_axis;  // the same scaled products on their own ±4 axis
  bool same_axis = true;
  // The same question as two training runs, with and without the scaling.
  bool training = false;
  SqrtDkTrainingOptions train_options;
  SqrtDkTrainingResult train_result;  // recomputed when the options change
};

// Softmax up close: which row, and the temperature being previewed.
struct SoftmaxCloseUp {
  int row = 0;
  bool follow_selection = true;
  float preview_temperature = 0.0f;  // 0: start at the scenario's
};

// Compare: a snapshot of every stage, and each stage's difference to it.
struct CompareState {
  std::optional<Snapshot> snapshot;
  // In model mode, what the snapshot is of: the text's ids and the focused
  // layer (a snapshot of another text or layer is compared with, never
  // restored), and, for another text, how it is named ("the corrupted text").
  std::vector<int> ids;
  int layer = -1;
  std::string of_text;
  bool show = true;  // draw the difference heatmaps under the values
  std::uint64_t taken = 0;  // bumps with each snapshot, so cached differences are redone
  struct Cached {
    std::uint64_t version = 0;  // engine version of the stage the difference was made for
    StageDiff diff;
  };
  std::map<StageId, Cached> diffs;
};

// A quiz: a hidden cell, the learner's answers, the hint, the tally. The
// answer box takes the keyboard only when asked (Q or a click), so a
// presentation clicker keeps working on a quiz step.
struct QuizState {
  std::optional<QuizRound> round;
  char answer[64] = {};
  std::string message;          // what the last check said (right, not right, not a number)
  std::string message_in_view;  // the message the panel last scrolled to (a new one is brought into view)
  bool hint = false;            // the learner asked for the hint: its cells light up
  bool focus_answer = false;    // Q was pressed: the answer box takes the keyboard
  bool answer_focused = false;  // the answer box had the keyboard this frame (for the probe)
  Rect answer_box, hint_button, show_button;  // where they were drawn this frame (for the probe; empty: not drawn)
  QuizTally tally;
  std::uint64_t picks = 0;  // seeds the random choice of cells
  std::uint64_t synced_revision = 0;  // the document revision the round's value is of (AppState::sync_quiz)
  // A question is open and its value still hidden.
  bool asking() const { return round && !round->over(); }
};

// An open lesson and where the learner is in it.
struct LessonState {
  std::optional<Lesson> lesson;
  std::string path;
  int step = 0;
  bool whole_pipeline = false;  // P: explore the scrolling pipeline instead of the step's slide
  bool text_folded = false;     // N: the step's text folded to its title, so the slide gets the room (a small projector)
  bool text_kept_open = false;  // N on a step whose slide folded the text: shown anyway (until the next step)
  bool folded_this_frame = false;  // lesson_text_folded() when the frame laid out its panels
  // A live "what if" the step change set aside (logic/what_if.h): C carries
  // it into this step; Shift+C carries every what-if on into the next steps.
  SetAside set_aside;
  bool carried = false;         // this step's set-aside what-if was carried into it
  bool carry_what_ifs = false;  // Shift+C: every step change carries the what-if along
  bool text_clipped = false;    // the step's text did not fit its panel this frame (for the probe)
  float measured_text_h = 0.0f; // the panel's content height last frame (it sizes the panel)
};

// A lesson step's slide (slide_panel.cpp): its equations, cached per document
// revision and step, and how much each heatmap's labels and colour bar took
// last frame beyond what the layout expected (so the next frame fits exactly).
struct SlideState {
  std::uint64_t revision = 0;
  int step = -1;
  std::string lesson_path;
  std::vector<EquationLine> lines;
  // (stage, transposed) at a font size and with or without labels → what it
  // took beyond its box: more width, more above its cells (a band of token
  // labels written upwards), more below (a colour bar's stacked labels).
  struct Chrome {
    float width = 0.0f, above = 0.0f, below = 0.0f;
  };
  std::map<std::pair<std::pair<StageId, bool>, int>, Chrome> chrome_correction;
  bool overflows = false;  // last frame's slide did not fit: the view may scroll
  // A slide too big to read on this screen pages its equations: PageDown
  // shows the next page before the next step.
  int page = 0, pages = 1;
  bool land_on_last_page = false;  // Back from the next step shows this step's last page (until a page turns)
  // Room the slide may take from the rest of the window, decided each frame
  // by the slide (it asks for the least it needs to be readable) and applied
  // by the frame's layout the next frame: the step's text folded to one line,
  // the inspector hidden (presenter mode, steps without a quiz). The gains
  // are what each would add to the slide's area (the frame measures them).
  bool want_fold = false, want_no_inspector = false;
  bool fold_applied = false, inspector_hidden = false;
  float fold_gain = 0.0f, inspector_gain = 0.0f;
  std::string room;  // which of these the slide uses (the probe)
  Rect content;      // what this frame's slide drew (equations and what is under them): an export crops to it
  // Within one step (and window and font size) a slide never asks for less
  // room than it has asked for: the text shown, the slide smaller, the text
  // folded again would flicker. The first room it may choose:
  int least_room = 0;
  std::pair<float, float> room_for{0.0f, 0.0f};  // the window width and font size least_room holds for
};

// Model mode (--model, File ▸ Open model…): a checkpoint, its input, the
// focused layer (the document is its attention) and the next-token
// predictions, cached per document revision.
struct ModelState {
  std::shared_ptr<ModelSession> session;  // null: not in model mode (shared with the prediction worker)
  std::string path;
  std::string text;           // the text the session ran
  std::string text_field;     // what is typed (Enter or Run applies it)
  int row = -1;               // predictions after this token (-1: the last)
  int top_k = 10;
  bool show_all_tokens = false;  // the Model tab lists every token, not the first ones
  int layer_slider = 0;         // the focused-layer slider's value while it is dragged
  bool layer_slider_active = false;
  // The documents of layers edited and then left for another layer, with
  // their undo history, keyed by the text they ran and the layer: focusing
  // that layer of that text again brings them back (the other layers still
  // see the unedited model). At most kKeptLayers, the oldest let go first.
  struct Kept {
    std::unique_ptr<Document> doc;
    std::uint64_t order = 0;
  };
  std::map<std::pair<std::string, int>, Kept> kept_layers;
  std::uint64_t kept_clock = 0;
  static constexpr std::size_t kKeptLayers = 8;
  // What a set of predictions is of: the session, the document's revision,
  // the predicted row and the focused layer.
  struct PredictionKey {
    const ModelSession* session = nullptr;
    std::uint64_t revision = 0;
    int row = -1;
    int layer = -1;
    bool operator==(const PredictionKey&) const = default;
  };
  struct Cached {
    PredictionKey key;
    std::vector<Prediction> top;
    std::string problem;  // why there are none (the layer's shape was changed)
    double ms = 0.0;      // how long the update took
    bool updating = false;  // `top` is of an earlier state: the worker computes the current one
    bool current(const PredictionKey& now) const { return now.session && key == now && !updating; }
  } predictions;
  // Computes the predictions off the UI thread (see prediction_worker.h);
  // made when first needed. `asked` is what it was last asked for.
  std::unique_ptr<PredictionWorker> prediction_worker;
  PredictionKey asked;
  // Command-line pictures (--screenshot, --export) compute them here, at once.
  bool predictions_in_place = false;
  // The Block tab: the focused layer's block around the attention, following
  // the document's output; a cell of it hovered or selected (the inspector's).
  struct BlockCell {
    BlockStage stage;
    int row = 0, col = 0;
  };
  struct Block {
    std::unique_ptr<BlockTrace> trace;
    const ModelSession* session = nullptr;
    std::uint64_t revision = 0;
    int rows_recomputed = 0;  // by the last update (for the probe)
    double ms = 0.0;          // how long it took
    std::string problem;      // why there is none (the layer's shape was changed)
    std::optional<BlockCell> hovered, selected;
  } block;
  // Ablation changes, for Ctrl+Z and Ctrl+Shift+Z: the lists before each
  // change (undo) and after each undone one (redo). A change makes a new
  // focused-layer document, so one is undone once its document has nothing
  // left to undo.
  std::vector<std::vector<Ablation>> ablation_undo, ablation_redo;
  // The two lists before the change whose rerun is running: put back if it is
  // cancelled or fails (what is shown did not change).
  std::optional<std::pair<std::vector<std::vector<Ablation>>, std::vector<std::vector<Ablation>>>> ablation_history_before;
  std::string ablation_field;  // a spec typed into the Model tab ("L3H1@5:mean")
  std::string ablation_error;  // why the typed spec was refused
  // The session's ablations (none without a model).
  const std::vector<Ablation>& ablations() const {
    static const std::vector<Ablation> none;
    return session ? session->ablations() : none;
  }
  // What a kept layer's document is of: the text and the ablations it ran with.
  static std::string run_key(const std::string& text, const std::vector<Ablation>& ablations) {
    std::string key = text;
    for (const Ablation& a : ablations) key += "\x1f" + to_spec(a);
    return key;
  }
  // The open model run again: `input` at `layer` with `ablated`.
  ModelRequest rerun(std::string input, int layer, std::vector<Ablation> ablated) const {
    return ModelRequest{path,    session->model_ptr(), session->tokenizer_ptr(), std::move(input), layer, nullptr,
                        std::move(ablated), session};
  }
  bool open() const { return session != nullptr; }
  int predicted_row() const { return session ? (row < 0 || row >= session->T() ? session->T() - 1 : row) : 0; }
  // The key of the predictions the window should show now (session null without a model).
  PredictionKey prediction_key(std::uint64_t doc_revision) const {
    if (!session) return {};
    return {session.get(), doc_revision, predicted_row(), session->layer()};
  }
};

// Which view fills the centre of the window.
// (the probe writes a view as its number: a new one goes last)
enum class CentreView { Pipeline, HeadView, SoftmaxUpClose, SqrtDkExperiment, Model, Block, Interpret, Train };

// The centre's views as the tabs and the View menu list them, in that order;
// `needs_model`: listed only while a model is open.
struct CentreViewEntry {
  const char* label;
  CentreView view;
  bool needs_model;
};
inline constexpr CentreViewEntry kCentreViews[] = {
    {"Pipeline", CentreView::Pipeline, false},
    {"Head view", CentreView::HeadView, false},
    {"Softmax up close", CentreView::SoftmaxUpClose, false},
    {"Why √d_k", CentreView::SqrtDkExperiment, false},
    {"Train", CentreView::Train, false},
    {"Model", CentreView::Model, true},
    {"Block", CentreView::Block, true},
    {"Interpret", CentreView::Interpret, true},
};

// The Train tab: the run, and what a Reset goes back to.
struct TrainState {
  // The tab trains this layer's matrices, or a tiny Transformer from scratch.
  bool whole_model = false;
  TinyTrainConfig model_config;                  // the next tiny model's run
  std::unique_ptr<ModelTrainingJob> model_job;   // the tiny model's run (null: none yet)
  std::string model_message;                     // where it was saved, or why not
  TrainingRun run;
  std::uint64_t gesture = 0;  // the run's undo entry (0: none yet)
  std::shared_ptr<const Scenario> before_run;  // the scenario when the run began
  int loss_head = 0;          // the head a new "attend" loss judges
};

struct AppState {
  Options options;
  Settings settings;
  std::unique_ptr<Document> doc;
  std::string file_path;  // empty: not saved yet
  GLFWwindow* window = nullptr;

  // What the user is looking at
  int focused_head = 0;
  int deferred_head = -1;  // --head for a scenario still computing in the background
  std::optional<CellRef> deferred_select;  // --select for it, checked when it is in
  void apply_deferred_select();
  int step = -1;          // index into steps(); -1 shows everything
  bool playing = false;
  bool presenter = false;  // F5: full screen, no controls, large fonts, light theme
  bool blank = false;      // B or '.' (a clicker's "blank screen"): the window is black
  bool toggle_presenter_requested = false;  // View menu: the app switches at the next frame
  bool scroll_to_step = false;  // scroll the pipeline to the current step once
  int scroll_retries = 0;       // frames spent bringing a quiz's "?" on screen (layout settles in a few)
  AnimationClock clock;       // animation time: the wall clock, or finished for --screenshot/--export
  double step_started = 0.0;  // clock.now() when the current step began (animations)
  float cell_px = 34.0f;      // base cell size of the pipeline view
  std::optional<CellRef> hovered;
  // Last frame's hovered cell: this frame's is known only once its heatmap is
  // drawn, so the ring that marks the cell under the pointer uses this one.
  std::optional<CellRef> hovered_last_frame;
  std::optional<CellRef> selected;
  std::vector<Lit> lit;       // provenance of the hovered (or selected) cell
  std::map<StageId, HeatmapView> views;
  // Attention weights' colour scale: one for all (controls panel), and a
  // heatmap's own choice from its context menu, which wins over it.
  ColourScale weights_scale = ColourScale::Linear;
  std::map<StageId, ColourScale> colour_scales;
  ColourScale colour_scale(StageId id) const {
    const auto it = colour_scales.find(id);
    return it != colour_scales.end() ? it->second : weights_scale;
  }
  WheelGesture wheel;  // who the mouse wheel belongs to: the page or a heatmap
  std::optional<CellRef> context_cell;  // the cell a heatmap's context menu was opened on
  std::vector<DrawnHeatmap> drawn;
  HeadViewState head_view;
  SqrtDkState sqrt_dk;
  TrainState train;
  // The Pipeline's values, the loss's gradient of each stage, or both (Ctrl+G).
  GradientView gradient_view = GradientView::Values;
  GradientStore gradients;
  SoftmaxCloseUp softmax;
  CompareState compare;
  QuizState quiz;
  LessonState lesson;
  ModelState model;
  CentreView centre = CentreView::Pipeline;
  bool select_centre_tab = false;  // make the tab bar show `centre` on the next frame
  SlideState slide;
  Rect centre_rect;                // the visible centre view this frame, in screen pixels (for the probe)
  Rect inspector_rect;  // what the inspector panel shows of itself (for the probe: is the quiz's Hint in view?)
  float centre_overflow_x = 0;  // how far the centre view scrolls sideways (0: its content fits its width)
  bool exporting_plain = false;  // a plain export is being drawn: no highlight outlines (slide_export.cpp)
  float centre_overflow_y = 0;  // how far it scrolls down (a lesson view asks for room while it is above 0)
  bool pointer_spotlight = true;   // L: the ring around the pointer in presenter mode
  bool pointer_moved = false;      // no ring until the mouse moves (a screenshot has no pointer)
  float slide_cell = 0.0f;         // the cell size of this frame's slide (for the probe)

  // Interaction in progress
  std::optional<DragState> drag;
  std::optional<StageId> panning;
  TypingState typing;
  RenameState rename;
  std::optional<WordsField> words_field;
  // Opens the rename popup for a token or feature, pre-filled with its name.
  void start_rename(LabelKind kind, int index);
  std::uint64_t temperature_gesture = 0;  // one undo entry per slider drag
  FileDialogState file_dialog;

  // Windows and messages
  bool show_help = false;
  bool show_about = false;
  // Quitting, or opening something in place of unsaved work (a file, a
  // model, a lesson; closing the model), asks first: "Save and open", "Open
  // without saving", "Cancel". Nothing is dropped before the user says so.
  struct UnsavedQuestion {
    std::string verb;                    // "quit", "open", "close the model": the buttons' words
    std::function<void(AppState&)> then;  // what waits: runs once the work is saved or given up
  };
  std::optional<UnsavedQuestion> unsaved_question;
  // Runs `then` at once when nothing unsaved would be lost, else asks first.
  void unless_unsaved_work(std::string verb, std::function<void(AppState&)> then);
  bool quit = false;
  // "Save and …" of a scenario with no file yet: Save as… opens, and this
  // runs once it has saved (next frame, after the dialog has closed).
  std::function<void(AppState&)> after_save;
  std::function<void(AppState&)> next_frame;
  std::string error_popup;   // a modal message (bad file…)
  std::string import_report; // what Import weights put where (a modal message until OK)
  std::string status;        // the status bar
  double status_time = 0.0;
  static constexpr const char* kRefusal = "Not applied: ";  // how a refused edit's status begins
  void clear_refusal();

  // GPU mirrors of the document's matrices
  gfx::HeatmapRenderer renderer;
  // One texture per stage and pooling factor: a thumbnail and the pipeline may
  // show the same stage at different zooms without re-uploading every frame.
  std::map<std::pair<StageId, int>, gfx::FloatTexture> textures;
  // Matrices that are not engine stages (the block around the attention), by name.
  struct MatrixTexture {
    gfx::FloatTexture texture;
    float range = 1.0f;  // largest finite |v| when uploaded
  };
  std::map<std::string, MatrixTexture> matrix_textures;
  std::uint64_t texture_uploads = 0;
  std::uint64_t edits_applied = 0;  // edits applied directly (for the probe: one per frame of a drag)
  // The stages whose Δ heatmap (Compare) was drawn this frame and the last.
  struct DrawnThisAndLastFrame {
    std::set<StageId> now, last;
    void next_frame() { last = std::move(now), now.clear(); }
    void drawn(StageId id) { now.insert(id); }
    bool drawn_last_frame(StageId id) const { return last.count(id) > 0; }
  } difference_heatmaps;
  // Drawings of each stage so far this frame, values and Δ heatmaps counted
  // apart: a Δ heatmap appearing mid-drag must not renumber the value copies.
  std::map<std::pair<StageId, bool>, int> heatmap_instances;
  std::map<StageId, std::pair<std::uint64_t, float>> colour_ranges;  // (version, range): not rescanned each frame
  // describe_stage() per document revision: at T=1024 each description
  // spells out 1024 token labels, and a frame draws some twenty stages.
  const StageInfo& stage_info(StageId id);
  std::map<StageId, std::pair<std::uint64_t, StageInfo>> stage_infos;
  // The pipeline's equations for (revision, head), for the same reason.
  std::uint64_t equations_revision = 0;
  int equations_head = -1;
  std::vector<EquationLine> equations;

  // Export PNG, served after the frame was rendered (off screen, at its scale)
  std::optional<ExportRequest> pending_export;
  struct LastExport {
    std::string path;
    int width = 0, height = 0;
  } last_export;       // for the probe
  Rect centre_area;    // where the centre view was drawn this frame (exports lay out at its width)
  // Rectangles of named items drawn this frame (menu entries, buttons), so
  // the GUI tests can click them with real input; written by the probe.
  std::map<std::string, Rect> probe_items;
  void note_item(const std::string& name);  // the last item's rectangle

  InterpState interp;  // the Interpret tab (model mode)

  FrameHistogram frame_times;  // every frame's work time, for the probe (scripts/soak)
  RecoveryState recovery;  // autosave to the recovery folder, and what crashed sessions left

  // Long work in progress (nullptr: none). While it runs the window shows the
  // last finished result and refuses edits.
  std::unique_ptr<BackgroundJob> job;
  Rect cancel_button;  // where the progress overlay's Cancel is (for the test probe)
  bool busy() const { return job != nullptr; }
  // Called every frame: takes over a finished job's result.
  void poll_job();

  void set_status(std::string text);
  // Undo and redo, in the background when the step recomputes everything at a
  // large size; in model mode an ablation change once the document has none left.
  void undo();
  void redo();
  bool can_undo() const;
  bool can_redo() const;
  std::string undo_label() const;
  std::string redo_label() const;
  // Model mode: reruns the model with these ablations (an undoable change).
  void set_ablations(std::vector<Ablation> ablations);
  // Undo or redo of one ablation change: moves it from `from` to `to` and
  // reruns the model with it; false when `from` is empty.
  bool step_ablations(std::vector<std::vector<Ablation>>& from, std::vector<std::vector<Ablation>>& to);
  // Applies an edit from a widget; reports a refused edit in the status bar.
  bool apply(const Edit& edit, std::uint64_t gesture = 0);
  // Opens a model, or refocuses the open one (other text, another layer), in the background.
  void open_model(ModelRequest request);
  // The predictions for the current document (recomputed when it changed).
  std::optional<CentreView> centre_when_model_opens;  // --view model/block: applied when the model is in
  const ModelState::Cached& model_predictions();
  // The focused layer's block (embeddings, norms, residual sums, MLP), brought
  // up to date with the document's output; null (block.problem says why)
  // when the layer's shape no longer fits the model.
  const BlockTrace* model_block();
  // Replaces the document (file loaded, preset chosen); keeps view state that still fits.
  void open_document(Scenario scenario, std::string path);
  void open_document_with(std::unique_ptr<Document> document, std::string path);
  // Edits that quitting would lose: the document's, or those of a model's layers kept aside.
  bool has_unsaved_work() const { return doc->modified() || !model.kept_layers.empty(); }
  std::string window_title() const;
  // Quizzes: ask for a cell (nullopt: a random one of the current step) in
  // the teacher's words (empty: "What is A₀[2,1]?"), check the typed answer,
  // show the answer.
  void start_quiz(std::optional<CellRef> cell, double tolerance = kDefaultQuizTolerance, std::string text = {});
  void restore_snapshot();  // an undoable edit back to Compare's snapshot
  void sync_quiz();
  // Tells the gradients which model (if any) the document is a layer of: in
  // model mode they are of the model's next-token loss. Once a frame.
  void sync_model_loss();
  // Ctrl+G: values → gradients → both, said in the status line.
  void cycle_gradient_view();
  // Why cell `c` cannot be selected (a stage, head or cell the scenario does
  // not have; a gradient cell with no gradients, or of a constant), or "".
  std::string selection_problem(const CellRef& c);
  void check_quiz_answer();
  void show_quiz_answer();
  bool quiz_hides(StageId stage, int row, int col) const;
  // A cell computed from one the quiz hides: its inspector shows the rule
  // without numbers, which would print the answer as an operand.
  bool quiz_feeds(StageId stage, int row, int col) const;
  // Lessons: open one (the scenario of its first step), move to a step.
  void open_lesson(Lesson lesson, std::string path, int step);
  void go_to_lesson_step(int step);
  // A clicker's next and back: the slide's next page, else the next step
  // (back lands on the previous step's last page).
  void lesson_next();
  void lesson_back();
  // C: the what-if the step change set aside, applied to this step's numbers (one undo entry).
  void carry_what_if();
  // The step's text is folded: by N, or by its slide for room (unless N kept it open).
  bool lesson_text_folded() const;
  // A lesson step's own view is in the centre (its slide, or the experiment
  // or close-up it opens), not the whole pipeline the learner explores.
  bool lesson_view_shown() const;
  // Compare: remember every stage now / the difference of a stage to it (cached).
  void take_snapshot();
  static constexpr std::uint64_t kSnapshotLimitBytes = 1ull << 30;
  // Off screen a stage keeps its last difference (when it has one) instead of
  // recomputing it.
  const StageDiff* difference(StageId stage, std::uint64_t& version, bool on_screen = true);
};

}  // namespace attention_lab::gui
