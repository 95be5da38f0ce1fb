#include "panels/panels.h"

#include "attention_lab/stage_info.h"
#include "logic/number_format.h"
#include "logic/pipeline_layout.h"
#include "logic/steps.h"
#include "widgets/heatmap_widget.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>

namespace attention_lab::gui {

namespace {

// Cells grow with the font (presenter mode, Ctrl+plus), so values stay legible.
float cell_px(const AppState& state) { return state.cell_px * gfx::em(); }
// Big stages shrink to this many pixels; zoom brings their cells back.
float max_px() { return 440.0f * gfx::em(); }

// In presenter mode the stage a step is about fits the view's height whole
// (a projector at 1280×720 showed six of seven rows of the scores), so its
// cells, and every stage's with them, shrink down to half their size; below
// that the view scrolls as elsewhere.
float fitted_cell_px(AppState& state, float view_height) {
  const float base = cell_px(state);
  if (!state.presenter || state.step < 0 || state.lesson.lesson) return base;
  const StageKind focus = shown_focus(state.doc->scenario(), steps()[static_cast<std::size_t>(state.step)].focus);
  const int head = is_per_head(focus) ? std::clamp(state.focused_head, 0, state.doc->scenario().heads - 1) : 0;
  const StageInfo& info = state.stage_info(StageId{focus, head});
  const int rows = std::max(1, info.rows);
  // besides its rows: its name, column labels, colour bar and the margins
  const float chrome = 4.0f * ImGui::GetTextLineHeightWithSpacing();
  const float fit = (view_height * 0.95f - chrome) / static_cast<float>(rows);
  return std::clamp(fit, 0.5f * base, base);
}

// Cells revealed so far by the current step's animation (−1: all).
int reveal_for(const AppState& state, StageKind kind, int rows, int cols) {
  if (state.step < 0) return -1;
  const auto& step = steps()[static_cast<std::size_t>(state.step)];
  if (std::find(step.kinds.begin(), step.kinds.end(), kind) == step.kinds.end()) return -1;
  if (step.animation == StepAnimation::None) return -1;
  const double elapsed = state.clock.animation_elapsed(state.step_started);
  const int total = rows * cols;
  // The whole matrix in about 4 seconds, at least 4 cells per second.
  const double per_second = std::max(4.0, total / 4.0);
  if (step.animation == StepAnimation::Softmax) {
    const double rows_per_second = std::max(1.5, rows / 4.0);
    const int done = static_cast<int>(elapsed * rows_per_second);
    return done >= rows ? -1 : (done + 1) * cols;
  }
  const int done = static_cast<int>(elapsed * per_second);
  return done >= total ? -1 : done + 1;
}

float estimated_width(AppState& state, StageId id, bool transposed, float cell) {
  const StageInfo& info = state.stage_info(id);
  const int cols = transposed ? info.rows : info.cols;
  const int rows = transposed ? info.cols : info.rows;
  const float label_w = row_label_width(info, state.doc->scenario(), transposed, true);
  return label_w + static_cast<float>(cols) * displayed_cell_px(cell, max_px(), rows, cols) + 8.0f;
}

// Scrolls the pipeline so a cell of a heatmap just drawn is on screen (a
// quiz's "?" on the far right of a wide stage or low in a tall one). Returns
// whether it is on screen already: the first frames after a step lay out
// with last frame's widths, so the caller asks again until it is.
bool scroll_to_cell(const AppState& state, const CellRef& cell) {
  for (auto it = state.drawn.rbegin(); it != state.drawn.rend(); ++it) {
    if (it->stage != cell.stage || it->rows <= 0 || it->cols <= 0) continue;
    const int r = it->transposed ? cell.col : cell.row, c = it->transposed ? cell.row : cell.col;
    const int rows = it->transposed ? it->cols : it->rows, cols = it->transposed ? it->rows : it->cols;
    const float x = it->rect.x0 + (static_cast<float>(c) + 0.5f) * it->rect.width() / static_cast<float>(cols);
    const float y = it->rect.y0 + (static_cast<float>(r) + 0.5f) * it->rect.height() / static_cast<float>(rows);
    const ImVec2 win = ImGui::GetWindowPos(), size = ImGui::GetWindowSize();
    const bool y_ok = y > win.y + size.y * 0.1f && y < win.y + size.y * 0.9f;
    const bool x_ok = x > win.x + size.x * 0.05f && x < win.x + size.x * 0.95f;
    // Positions are relative to the window as it is scrolled now.
    if (!y_ok) ImGui::SetScrollFromPosY(y - win.y, 0.4f);
    if (!x_ok) ImGui::SetScrollFromPosX(x - win.x, 0.5f);
    return x_ok && y_ok;
  }
  return false;
}

// Values, gradients or both, with the loss they are the gradients of. Shown
// when the scenario has a loss or gradients were asked for.
void draw_gradient_bar(AppState& state) {
  const Scenario& s = state.doc->scenario();
  if (!s.loss && !state.gradients.has_model() && state.gradient_view == GradientView::Values) return;
  ImGui::TextDisabled("Show:");
  static const struct {
    GradientView view;
    const char* label;
    const char* tip;
  } kViews[] = {{GradientView::Values, "values", "Every stage's numbers (Ctrl+G: values, gradients, both)"},
                {GradientView::Gradients, "gradients", "∂L/∂(each stage): how the loss changes as each number goes up"},
                {GradientView::Both, "both", "Each stage's values, with its gradient under them"}};
  for (const auto& v : kViews) {
    ImGui::SameLine();
    if (ImGui::RadioButton(v.label, state.gradient_view == v.view)) state.gradient_view = v.view;
    state.note_item(std::string("show ") + v.label);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", v.tip);
  }
  if (state.gradient_view == GradientView::Values) return;
  const Gradients* g = state.gradients.get(*state.doc);
  if (g) {
    // (each part beside the last where the view is wide enough, else on a line of its own)
    const std::string loss = "loss L = " + format_number(static_cast<float>(g->loss), 4) + " (" +
                             (s.loss ? to_string(s.loss->kind) : "the model's next-token loss") + ")";
    same_line_if_fits(ImGui::CalcTextSize(loss.c_str()).x + 18.0f);
    ImGui::TextUnformatted(loss.c_str());
    if (ImGui::IsItemHovered() && !g->outside.empty())
      ImGui::SetTooltip("%s, differentiated back through the layers after this one to its output", g->outside.c_str());
    // (on its own line, wrapped, when the view is too narrow for it beside the loss)
    const char* key = "red: the loss rises as the number grows; blue: it falls";
    same_line_if_fits(ImGui::CalcTextSize(key).x + 18.0f);
    push_wrap_at_visible_edge();
    ImGui::TextDisabled("%s", key);
    ImGui::PopTextWrapPos();
  } else {
    ImGui::SameLine(0, 18);
    push_wrap_at_visible_edge();
    if (state.gradients.computing())
      ImGui::TextDisabled("Gradients: %s", state.gradients.problem().c_str());
    else
      text_colored(gfx::Accent::Warning, "No gradients: %s", state.gradients.problem().c_str());
    ImGui::PopTextWrapPos();
  }
}

// Stage `id` as the view asks: its values, the loss's gradient of it in
// their place, or both, the gradient under the values; a constant (the
// mask, RoPE's angles) has no gradient and fades back. Returns where the
// gradient heatmap starts (−1: none drawn), for a lesson to scroll to.
float draw_values_or_gradient(AppState& state, StageId id, const HeatmapOptions& opt, const Gradients* grads) {
  const Matrix* grad = grads ? grads->find(id) : nullptr;
  if (state.gradient_view == GradientView::Gradients && grad) {
    const float top = ImGui::GetCursorScreenPos().y;
    draw_gradient_heatmap(state, id, opt, *grad, state.gradients.version());
    return top;
  }
  HeatmapOptions value_opt = opt;
  if (state.gradient_view == GradientView::Gradients && grads) value_opt.dim = std::min(opt.dim, 0.35f);
  const HeatmapEvents ev = apply_heatmap_edits(state, draw_heatmap(state, id, value_opt));
  if (ev.hovered) state.hovered = ev.hovered;
  if (state.gradient_view != GradientView::Both || !grad) return -1.0f;
  const float top = ImGui::GetCursorScreenPos().y;
  draw_gradient_heatmap(state, id, opt, *grad, state.gradients.version());
  return top;
}

}  // namespace

namespace {

// What every matrix of this frame's pipeline shares.
struct PipelineDrawing {
  AppState& state;
  const Gradients* grads = nullptr;  // shown beside or instead of the values, or null
  float cell = 0.0f;
  int current_step = -1;
  StageKind focus = StageKind::X;  // the stage the current step is about, as the equations show it
  bool step_seen = false;          // a stage of the current step was drawn this frame
  float step_top = 0.0f;           // the first one's top, relative to the window
};

// Where the view should scroll to this frame, if to this stage.
struct ScrollRequest {
  bool here = false;
  bool to_gradient = false;  // the subject is the stage's gradient (drawn with or instead of its values)
};

HeatmapOptions pipeline_matrix_options(const PipelineDrawing& p, StageId id, bool transposed, float column_band,
                                       ScrollRequest& scroll) {
  AppState& state = p.state;
  const StageInfo& info = state.stage_info(id);
  HeatmapOptions opt;
  opt.cell_px = p.cell;
  opt.max_px = max_px();
  opt.transposed = transposed;
  // Token labels whole: rows as wide as the longest word, column words too
  // wide for their cells upwards, in a band every matrix of the equation keeps.
  opt.whole_labels = true;
  opt.column_band = column_band;
  if (p.current_step >= 0 && step_of(id.kind) > p.current_step) opt.dim = 0.18f;
  // A lesson step names the stages it is about; the others fade back.
  if (state.lesson.lesson) {
    const auto& lesson_step = state.lesson.lesson->steps[static_cast<std::size_t>(state.lesson.step)];
    const auto& shown = lesson_step.show;
    if (!shown.empty() && std::find(shown.begin(), shown.end(), id) == shown.end()) opt.dim = 0.3f;
    // Bring the step's subject into view: its quiz's "?", else its
    // highlighted cell's stage, else its last shown stage.
    StageId subject = state.quiz.asking()            ? state.quiz.round->question.cell.stage
                      : !lesson_step.highlight.empty() ? lesson_step.highlight.front().stage
                      : !shown.empty()                 ? shown.back()
                                                       : StageId::input(StageKind::X);
    // a highlighted gradient is drawn with its stage's values (or in their place)
    scroll.to_gradient = subject.role == Role::Gradient;
    subject.role = Role::Value;
    scroll.here = state.scroll_to_step && id == subject;
  } else if (state.quiz.asking()) {
    // "Quiz me" on the pipeline: bring its "?" into view
    scroll.here = state.scroll_to_step && id == state.quiz.round->question.cell.stage;
  }
  opt.reveal = reveal_for(state, id.kind, transposed ? info.cols : info.rows, transposed ? info.rows : info.cols);
  return opt;
}

// Compare: the change since the snapshot, right under the value. Off screen
// it keeps its last difference: at T=1024 diffing every changed stage each
// frame of a drag made Compare crawl.
void draw_compare_under(AppState& state, StageId id, const HeatmapOptions& opt) {
  std::uint64_t version = 0;
  const ImVec2 below = ImGui::GetCursorScreenPos(), value_size = ImGui::GetItemRectSize();
  const bool on_screen = ImGui::IsRectVisible(below, ImVec2(below.x + value_size.x, below.y + value_size.y));
  const std::string& symbol = state.stage_info(id).symbol;
  if (const StageDiff* d = state.difference(id, version, on_screen); d && !d->changed) {
    ImGui::TextDisabled("Δ %s: no change", symbol.c_str());
  } else if (d && state.drag && !state.difference_heatmaps.drawn_last_frame(id)) {
    // A Δ heatmap appearing mid-drag would push everything below it, and
    // the cell being dragged, down the screen: it waits for the release.
    // As short as "no change", so it never widens the column either.
    ImGui::TextDisabled("Δ %s: changing", symbol.c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("The difference heatmap appears when the drag ends.");
  } else if (d) {
    draw_difference_heatmap(state, id, opt, *d, version);
  }
}

void scroll_to_subject(AppState& state, StageId id, const ScrollRequest& scroll, float gradient_top) {
  if (state.quiz.asking() && state.quiz.round->question.cell.stage == id) {
    // Asked again next frame until the "?" is on screen (a few frames at most).
    const bool shown = scroll_to_cell(state, state.quiz.round->question.cell);
    if (shown || ++state.scroll_retries > 30) state.scroll_to_step = false, state.scroll_retries = 0;
  } else if (scroll.to_gradient && gradient_top >= 0.0f) {
    // the highlighted gradient's heatmap near the top of the view
    ImGui::SetScrollFromPosY(gradient_top - ImGui::GetWindowPos().y, 0.05f);
    state.scroll_to_step = false;
  } else {
    ImGui::SetScrollHereY(0.3f);
    state.scroll_to_step = false;
  }
}

// A stage of the step being explained, just drawn from `before`: outlined,
// and brought into view (the stage it is about whole, and its first stage,
// ALiBi's bias before the masked scores, from its top when both fit). Asked
// again each frame until it is there: the first frames after a step lay out
// with last frame's widths, and rows move as they settle.
void mark_current_step(PipelineDrawing& p, StageId id, ImVec2 before) {
  AppState& state = p.state;
  const float window_y = ImGui::GetWindowPos().y;
  if (!p.step_seen) p.step_top = before.y - window_y;
  p.step_seen = true;
  if (state.scroll_to_step && id.kind == p.focus) {
    const float view_h = ImGui::GetWindowHeight(), bottom = ImGui::GetItemRectMax().y - window_y;
    // How far the view's top should move: at least enough to show the
    // stage's bottom, at most what keeps the step's first top (or, when
    // the two do not fit together, the stage's own top) in view; no move
    // when that range allows it.
    const float show_bottom = bottom - view_h * 0.95f, keep_first = p.step_top - view_h * 0.05f;
    const float keep_top = before.y - window_y - view_h * 0.05f;
    const float shift = show_bottom <= keep_first ? std::clamp(0.0f, show_bottom, keep_first)
                                                  : std::clamp(0.0f, std::min(show_bottom, keep_top), keep_top);
    const float target = std::clamp(ImGui::GetScrollY() + shift, 0.0f, std::max(0.0f, ImGui::GetScrollMaxY()));
    // (How far the content can scroll is last frame's: a target at its end is trusted after a few frames.)
    const bool placed = std::fabs(target - ImGui::GetScrollY()) < 2.0f && state.scroll_retries >= 2;
    ImGui::SetScrollY(target);
    if (placed || ++state.scroll_retries > 30) state.scroll_to_step = false, state.scroll_retries = 0;
  }
  const ImVec2 after = ImGui::GetItemRectMax();
  const auto hl = gfx::accent(gfx::Accent::Highlight);
  ImGui::GetWindowDrawList()->AddRect(ImVec2(before.x - 3, before.y - 2), ImVec2(after.x + 3, after.y + 1),
                                      ImGui::GetColorU32(ImVec4(hl.r, hl.g, hl.b, 1.0f)), 4.0f, 0, 2.0f);
}

void draw_pipeline_matrix(PipelineDrawing& p, StageId id, bool transposed, float column_band) {
  AppState& state = p.state;
  ScrollRequest scroll;
  const HeatmapOptions opt = pipeline_matrix_options(p, id, transposed, column_band, scroll);
  const bool is_current = p.current_step >= 0 && (step_of(id.kind) == p.current_step || id.kind == p.focus);
  const ImVec2 before = ImGui::GetCursorScreenPos();
  ImGui::BeginGroup();
  const float gradient_top = draw_values_or_gradient(state, id, opt, p.grads);
  draw_compare_under(state, id, opt);
  ImGui::EndGroup();
  if (scroll.here) scroll_to_subject(state, id, scroll, gradient_top);
  if (is_current) mark_current_step(p, id, before);
}

}  // namespace

void draw_pipeline_panel(AppState& state) {
  const Scenario& s = state.doc->scenario();
  const int head = std::clamp(state.focused_head, 0, s.heads - 1);
  if (state.equations_revision != state.doc->revision() || state.equations_head != head) {
    state.equations = pipeline_equations(s, head);
    state.equations_revision = state.doc->revision();
    state.equations_head = head;
  }
  const std::vector<EquationLine>& lines = state.equations;
  draw_gradient_bar(state);
  PipelineDrawing p{state};
  p.grads = state.gradient_view != GradientView::Values ? state.gradients.get(*state.doc) : nullptr;
  p.cell = fitted_cell_px(state, ImGui::GetWindowHeight());
  const float cell = p.cell;
  const float right_edge = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  p.current_step = state.step;
  if (p.current_step >= 0) p.focus = shown_focus(s, steps()[static_cast<std::size_t>(p.current_step)].focus);

  // Gradients alone do not obey the forward equations (∂Q·∂Kᵀ is not ∂S):
  // their operators give way to an arrow where "=" was, the way the
  // gradient flows, from the result back to what made it.
  const bool backward_only = state.gradient_view == GradientView::Gradients && p.grads;
  auto draw_operator = [&](const std::string& text, float height) {
    const ImVec2 size = ImGui::CalcTextSize(text.c_str());
    const ImVec2 at = ImGui::GetCursorScreenPos();
    ImGui::Dummy(ImVec2(size.x + 10, height));
    const bool equals = text.find('=') != std::string::npos || text.find("→") != std::string::npos;
    if (backward_only && !equals) return;
    const char* shown = backward_only ? "←" : text.c_str();
    const float shown_w = ImGui::CalcTextSize(shown).x;
    ImGui::GetWindowDrawList()->AddText(ImVec2(at.x + 5 + (size.x - shown_w) * 0.5f, at.y + std::max(0.0f, (height - size.y) * 0.5f)),
                                        ImGui::GetColorU32(backward_only ? ImGuiCol_TextDisabled : ImGuiCol_Text), shown);
  };

  // Equations flow like text: a short one shares the row with the previous
  // one when the whole equation fits; a long one wraps between its terms.
  bool first_line = true;
  const float row_start_x = ImGui::GetCursorScreenPos().x;
  for (const auto& line : lines) {
    float line_width = 0;
    std::vector<float> widths;
    for (const Term& t : line.terms) {
      widths.push_back((t.kind == Term::Kind::Matrix ? estimated_width(state, t.stage, t.transposed, cell)
                                                     : ImGui::CalcTextSize(t.text.c_str()).x + 12) + 4);
      line_width += widths.back();
    }
    // Rows break only before an operator: a continuation never reads as a new equation.
    const std::vector<std::size_t> row_starts = equation_rows(line, widths, right_edge - row_start_x);
    if (!first_line) {
      ImGui::SameLine(0, 36);
      if (ImGui::GetCursorScreenPos().x + line_width > right_edge) ImGui::NewLine();
    }
    first_line = false;
    bool first = true;
    float line_height = 0.0f, column_band = 0.0f;
    for (const Term& t : line.terms) {
      if (t.kind == Term::Kind::Matrix) {
        const StageInfo& info = state.stage_info(t.stage);
        const int rows = t.transposed ? info.cols : info.rows, cols = t.transposed ? info.rows : info.cols;
        const float px = displayed_cell_px(cell, max_px(), rows, cols);
        line_height = std::max(line_height, static_cast<float>(rows) * px);
        // the widget's rule (column_words): words wider than their cells are turned
        const ColumnWords words = column_words(t.transposed ? info.row_labels : info.col_labels);
        if (px < words.turn_below) column_band = std::max(column_band, words.band);
      }
    }
    // the operators stay level with the cells, below the band
    const float band_drop = std::max(0.0f, column_band - ImGui::GetTextLineHeight());
    for (std::size_t i = 0; i < line.terms.size(); ++i) {
      const Term& t = line.terms[i];
      if (!first && std::find(row_starts.begin(), row_starts.end(), i) == row_starts.end()) ImGui::SameLine(0, 4);
      first = false;
      if (t.kind == Term::Kind::Matrix)
        draw_pipeline_matrix(p, t.stage, t.transposed, column_band);
      else
        draw_operator(t.text, line_height * 0.5f + ImGui::GetTextLineHeight() * 2 + 2.0f * band_drop);
    }
  }
}

}  // namespace attention_lab::gui
