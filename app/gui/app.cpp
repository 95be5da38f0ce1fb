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
      if (const std::string problem = state_.selection_problem(CellRef{*id, r, c}); !problem.empty())
        return "--select: " + problem;
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
         state_.interp.patch_task.running() || state_.interp.attribution_task.running() || state_.gradients.computing();
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

namespace {

bool is_page_key(int key) { return key == GLFW_KEY_PAGE_DOWN || key == GLFW_KEY_PAGE_UP; }
bool is_font_key(int key) {
  return key == GLFW_KEY_EQUAL || key == GLFW_KEY_KP_ADD || key == GLFW_KEY_MINUS || key == GLFW_KEY_KP_SUBTRACT;
}
float font_step_of(int key) { return key == GLFW_KEY_EQUAL || key == GLFW_KEY_KP_ADD ? Settings::kFontStep : 1.0f / Settings::kFontStep; }

}  // namespace

void App::key_while_editing_text(int key, bool ctrl, bool shift) {
  // Keys belong to the text field being edited, except the font size and,
  // in the quiz's answer box, a clicker's PageDown/PageUp: a lecturer
  // typing the room's answer can still move on. (In any other field, a
  // word being renamed, turning the page would swap the scenario under
  // the edit the field applies when it loses the keyboard.)
  const bool page = is_page_key(key);
  if (ctrl && is_font_key(key)) change_font_scale(font_step_of(key));
  const bool no_popup = !ImGui::IsPopupOpen(nullptr, ImGuiPopupFlags_AnyPopupId);
  if (page && state_.quiz.answer_focused && state_.lesson.lesson && no_popup)
    key == GLFW_KEY_PAGE_DOWN ? state_.lesson_next() : state_.lesson_back();
  // A clicker that sends arrows or Space, while the room's answer is still
  // empty: the page turns (once typing has begun, they edit the answer).
  const bool clicker_key = key == GLFW_KEY_RIGHT || key == GLFW_KEY_LEFT || (key == GLFW_KEY_SPACE && !shift);
  if (clicker_key && state_.quiz.answer_focused && state_.quiz.answer[0] == 0 && state_.lesson.lesson && no_popup)
    key == GLFW_KEY_LEFT ? state_.lesson_back() : state_.lesson_next();
  // The value box: a page turn leaves it unapplied and turns the page.
  if (page && state_.typing.open && state_.lesson.lesson) {
    state_.typing.close_requested = true;
    key == GLFW_KEY_PAGE_DOWN ? state_.lesson_next() : state_.lesson_back();
  }
}

void App::key_while_a_dialog_asks(int key, bool ctrl) {
  // A dialog waits for an answer (recover unsaved work, save before
  // quitting, a problem): the document and the view stay as they are
  // behind it. Only the text size may change. The recovery question after
  // a crash in a lecture takes a clicker's keys too.
  if (!state_.recovery.offered.empty() && std::string_view(ImGui::GetTopMostPopupModal()->Name) == kRecoveryDialogTitle) {
    if (is_page_key(key) || key == GLFW_KEY_RIGHT || key == GLFW_KEY_LEFT || key == GLFW_KEY_ENTER ||
        key == GLFW_KEY_KP_ENTER || key == GLFW_KEY_ESCAPE)
      state_.recovery.key_answer =
          key == GLFW_KEY_PAGE_DOWN || key == GLFW_KEY_RIGHT || key == GLFW_KEY_ENTER || key == GLFW_KEY_KP_ENTER ? 1 : -1;
  }
  if (ctrl && is_font_key(key)) change_font_scale(font_step_of(key));
}

void App::ctrl_shortcut(int key, bool shift) {
  switch (key) {
    case GLFW_KEY_Z: shift ? state_.redo() : state_.undo(); break;
    case GLFW_KEY_Y: state_.redo(); break;
    case GLFW_KEY_S: shift ? action_save_as_dialog(state_) : action_save(state_); break;
    case GLFW_KEY_O: state_.unless_unsaved_work("open", shift ? action_open_model_dialog : action_open_dialog); break;
    case GLFW_KEY_Q: request_close(); break;
    case GLFW_KEY_T: state_.take_snapshot(); break;
    case GLFW_KEY_G: state_.cycle_gradient_view(); break;
    case GLFW_KEY_EQUAL: case GLFW_KEY_KP_ADD: change_font_scale(Settings::kFontStep); break;
    case GLFW_KEY_MINUS: case GLFW_KEY_KP_SUBTRACT: change_font_scale(1.0f / Settings::kFontStep); break;
    default: break;
  }
}

bool App::lesson_key(int key, bool shift) {
  if (key == GLFW_KEY_Q && state_.quiz.asking()) {
    state_.quiz.focus_answer = true;  // type the answer now
    return true;
  }
  if (key == GLFW_KEY_H && state_.quiz.asking() && state_.quiz.round->hint_offered()) {
    state_.quiz.hint = true;
    return true;
  }
  if (!state_.lesson.lesson) return false;
  if (key == GLFW_KEY_C) {
    if (shift) {
      state_.lesson.carry_what_ifs = !state_.lesson.carry_what_ifs;
      state_.set_status(state_.lesson.carry_what_ifs
                            ? "What-ifs are carried into the next steps (Shift+C: each step starts from the lesson's numbers)"
                            : "Each step starts from the lesson's numbers (Shift+C: carry what-ifs into the next steps)");
    } else if (!state_.lesson.set_aside.edits.empty() && !state_.lesson.carried) {
      state_.carry_what_if();
    }
    return true;
  }
  if (key == GLFW_KEY_N) {
    // The slide gets the text's room, or the text comes back (also when the slide folded it).
    if (state_.lesson_text_folded()) {
      state_.lesson.text_folded = false;
      state_.lesson.text_kept_open = true;
    } else {
      state_.lesson.text_folded = true;
    }
    return true;
  }
  // Presentation clickers send PageDown/PageUp; arrows work as well, and
  // Space / Shift+Space and Backspace as in slide software (the
  // step-through Space would play is hidden behind the lesson's slide).
  const bool space = key == GLFW_KEY_SPACE;
  if (key == GLFW_KEY_PAGE_DOWN || key == GLFW_KEY_RIGHT || (space && !shift)) {
    state_.lesson_next();
    return true;
  }
  if (key == GLFW_KEY_PAGE_UP || key == GLFW_KEY_LEFT || key == GLFW_KEY_BACKSPACE || (space && shift)) {
    state_.lesson_back();
    return true;
  }
  return false;
}

void App::view_key(int key) {
  const int last = static_cast<int>(steps().size()) - 1;
  switch (key) {
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

// Each key, by who owns it first: a blank screen, a text field, the value
// box, a dialog, Ctrl shortcuts, popups, the lesson, then the view.
void App::handle_shortcuts() {
  const std::vector<KeyPress> presses = std::move(key_presses_);
  key_presses_.clear();
  for (const KeyPress& k : presses) {
    const bool ctrl = (k.mods & GLFW_MOD_CONTROL) != 0;
    const bool shift = (k.mods & GLFW_MOD_SHIFT) != 0;
    const bool page = is_page_key(k.key);
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
    if (editing_text()) {
      key_while_editing_text(k.key, ctrl, shift);
    } else if (state_.typing.open) {
      // The value box is open without the keyboard (it was not given it, or
      // lost it): Esc, Enter and a clicker's page keys still answer it.
      if (k.key == GLFW_KEY_ESCAPE || page) state_.typing.close_requested = true;
      if (k.key == GLFW_KEY_ENTER || k.key == GLFW_KEY_KP_ENTER) state_.typing.apply_requested = true;
      if (page && state_.lesson.lesson) k.key == GLFW_KEY_PAGE_DOWN ? state_.lesson_next() : state_.lesson_back();
    } else if (ImGui::GetTopMostPopupModal()) {
      key_while_a_dialog_asks(k.key, ctrl);
    } else if (ctrl) {
      ctrl_shortcut(k.key, shift);
    } else if (ImGui::IsPopupOpen(nullptr, ImGuiPopupFlags_AnyPopupId)) {
      // popups own arrows, Enter, Esc
    } else if (blank_key) {
      state_.blank = true;
    } else if (!lesson_key(k.key, shift)) {
      view_key(k.key);
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

// What a frame settles before anything is drawn: the clock, last frame's
// lists, work that finished, the quiz and the gradients' model.
void App::start_frame() {
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
  state_.sync_model_loss();
}

namespace {

// The centre's tabs: the pipeline, the close-up views and, with a model open, its own.
void draw_centre_tabs(AppState& state) {
  if (!ImGui::BeginTabBar("centre views")) return;
  const auto tab = [&](const char* label, CentreView view) {
    // --view (or a lesson) picks the tab once; afterwards the user's clicks decide.
    const ImGuiTabItemFlags flags = state.select_centre_tab && state.centre == view ? ImGuiTabItemFlags_SetSelected : 0;
    const bool open = ImGui::BeginTabItem(label, nullptr, flags);
    state.note_item(std::string("tab ") + label);
    if (open) {
      // A requested tab takes a frame or two to become the open one; until
      // then the previously open tab must not overwrite the request.
      if (!state.select_centre_tab) state.centre = view;
      else if (state.centre == view) state.select_centre_tab = false;
      ImGui::EndTabItem();
    }
  };
  for (const CentreViewEntry& v : kCentreViews)
    if (!v.needs_model || state.model.open()) tab(v.label, v.view);
  ImGui::EndTabBar();
}

// A modal message with an OK button, shown while `text` is not empty; OK,
// Enter or Esc clear it. (Not the Enter that made it: that key is still down
// in the frame the popup appears.)
void message_popup(const char* title, std::string& text, float wrap, const char* note = nullptr) {
  if (!text.empty() && !ImGui::IsPopupOpen(title)) ImGui::OpenPopup(title);
  if (!ImGui::BeginPopupModal(title, nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return;
  ImGui::PushTextWrapPos(wrap);
  ImGui::TextUnformatted(text.c_str());
  if (note) ImGui::TextDisabled("%s", note);
  ImGui::PopTextWrapPos();
  if (ImGui::Button("OK") ||
      (!ImGui::IsWindowAppearing() && (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Enter), false) ||
                                       ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)))) {
    text.clear();
    ImGui::CloseCurrentPopup();
  }
  ImGui::EndPopup();
}

void draw_message_popups(AppState& state) {
  message_popup("Problem", state.error_popup, 520.0f);
  message_popup("Imported weights", state.import_report, 640.0f, "Edit ▸ Undo (Ctrl+Z) takes the import back.");
}

}  // namespace

void App::frame() {
  start_frame();
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
  draw_centre_tabs(state_);
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

  draw_message_popups(state_);
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
