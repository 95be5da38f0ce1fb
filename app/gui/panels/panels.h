#pragma once
// One function per panel; app.cpp's frame function calls them in order.

#include "app_state.h"
#include "gfx/fonts.h"
#include "logic/data_paths.h"  // lessons_dir(): the built-in lessons, installed or in the source tree

#include <imgui.h>

#include <filesystem>

namespace attention_lab::gui {

void draw_menu_bar(AppState& state);
void draw_controls_panel(AppState& state);
void draw_pipeline_panel(AppState& state);
void draw_head_view_panel(AppState& state);
void draw_softmax_panel(AppState& state);
void draw_sqrt_dk_panel(AppState& state);
void draw_train_panel(AppState& state);
// The Train tab's choice between this layer's matrices and a tiny
// Transformer from scratch; true when the latter is chosen.
bool draw_train_choice(AppState& state);
// The Train tab's tiny Transformer trained from scratch (model_train_panel.cpp).
void draw_model_training(AppState& state);
// One curve with its last value; hovering shows the step and the value.
// `steps`: the step of each value (empty: 1, 2, 3 …).
void draw_curve(const char* label, const std::vector<float>& v, float width, float height,
                const std::vector<int>& steps = {});
// Model mode: the model, its text, the focused layer, the predictions and
// the layers × heads overview (centre tab "Model").
void draw_model_view(AppState& state);
// Model mode: focuses head `head` of layer `layer` (the layer reruns when it
// is not the focused one; else the Head view shows it).
void focus_head(AppState& state, int layer, int head);
// Model mode: the items of a head's right-click menu — ablate it (zero or
// mean), its layer's attention or MLP, or take an ablation back.
void draw_ablation_menu(AppState& state, int layer, int head);
// Model mode: activation patching between the model's text and a corrupted
// one, and direct logit attribution (centre tab "Interpret").
void draw_interp_view(AppState& state);
// The Interpret tab's prompts file and its head detectors (interp_batch_panel.cpp).
void draw_prompts_file(AppState& state);
void draw_batch_detectors(AppState& state);
// The Interpret tab's logit lens (logit_lens_panel.cpp).
void draw_logit_lens(AppState& state);
// Reads a prompts file (one a line) with the model's tokenizer for the
// Interpret tab; "" or why not.
std::string load_prompts(AppState& state, const std::string& path);
// Runs the model again on `text` (at the focused layer, with its ablations).
void run_model_text(AppState& state, const std::string& text);
// Model mode: the next-token predictions, compact, in the controls panel.
void draw_model_predictions_section(AppState& state);
// Model mode: the focused layer's whole block — embeddings, norms, the
// attention's output, residual sums, the MLP — as heatmaps (centre tab "Block").
void draw_block_view(AppState& state);
void draw_inspector_panel(AppState& state);
void draw_step_bar(AppState& state);
void draw_lesson_panel(AppState& state);
// The height the lesson panel needs to show the whole step (header, formula,
// text, "Try this") at `width`, with this frame's font.
// The lesson panel's height at `width`, with the step's text folded or not.
float lesson_panel_height(const AppState& state, float width, bool folded);
// A lesson step with "show" is a slide (unless P switched to the whole pipeline).
bool showing_slide(const AppState& state);
// The centre view's slide of the current lesson step (export draws it too).
void draw_slide_panel(AppState& state);
// The step-through's current step as a slide (its stages of every head, as
// their equations); false, drawing nothing, when it shows every step.
bool draw_step_through_slide(AppState& state);
// Presenter mode: a ring around the mouse pointer, so a room can follow it (L).
void draw_pointer_spotlight(AppState& state);
void draw_quiz_section(AppState& state);
void draw_file_dialog(AppState& state);
// "Unsaved changes": Save and …, … without saving, Cancel (AppState::unless_unsaved_work).
void draw_unsaved_question(AppState& state);
void draw_help_windows(AppState& state);
void draw_typing_popup(AppState& state);
// The view chosen by the centre's tabs (pipeline, head view, …); exports draw it too.
void draw_centre_view(AppState& state);
void draw_blank_screen(AppState& state);
void draw_rename_popup(AppState& state);
// The controls panel's list of tokens and feature names, each a text field.
void draw_words_section(AppState& state);
// The edit that renames token or feature `index` (rename_popup.cpp).
Edit rename_edit(LabelKind kind, int index, std::string name);

// PushTextWrapPos at the right edge of what the window shows. (Wrapping at 0,
// the content edge, keeps a horizontally scrolled view as wide as its widest
// text, because that edge is last frame's content width.)
void push_wrap_at_visible_edge();
// The width from the cursor to that edge.
float visible_width_left();
// ImGui::SameLine() when an item `width` wide still ends inside that edge;
// else the next item starts a new line (a row of controls wraps instead of
// widening the view under a horizontal scroll bar).
void same_line_if_fits(float width);

// ImGui::TextColored with a theme-aware accent colour.
void text_colored(gfx::Accent accent, const char* fmt, ...) IM_FMTARGS(2);

// Actions shared by menus and shortcuts.
void action_save(AppState& state);
void action_open_dialog(AppState& state);
// File ▸ Open model…: a model folder, a .safetensors file, or a model of the Hugging Face cache.
void action_open_model_dialog(AppState& state);
// File ▸ Import weights…: a real layer's W_q, W_k, W_v, W_o (a .safetensors checkpoint or a .npy array) onto the scenario.
void action_import_weights_dialog(AppState& state);
void action_save_as_dialog(AppState& state);
// Export PNG… / Export CSV… of a stage, the current step or the whole centre view.
void action_export_png_dialog(AppState& state, ExportTarget target);
void action_export_csv_dialog(AppState& state, StageId stage);
bool load_file_into(AppState& state, const std::string& path);
// A lesson or a scenario? A lesson file says "attention-lab/lesson" near its start.
bool is_lesson_file(const std::string& path);
// A built-in lesson name ("causal-masking") or a lesson file path.
std::filesystem::path find_lesson(const std::string& name_or_path);
// The built-in lessons' names, in teaching order, for an error message.
std::string builtin_lesson_names();
void step_to(AppState& state, int step);

}  // namespace attention_lab::gui
