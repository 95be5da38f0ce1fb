#include "widgets/heatmap_widget.h"

#include "attention_lab/seeded_fill.h"
#include "attention_lab/stage_info.h"
#include "attention_lab/stage_registry.h"
#include "logic/colormap.h"
#include "logic/gesture.h"
#include "logic/label_hit.h"
#include "logic/matrix_csv.h"
#include "logic/number_format.h"
#include "panels/panels.h"
#include "widgets/heatmap_parts.h"

#include <imgui.h>
#include <imgui_internal.h>

#include <algorithm>
#include <cmath>
#include <optional>

namespace attention_lab::gui {

const MatrixView& HeatmapDrawing::values() const {
  if (!fetched_)
    fetched_.emplace(showing_difference ? MatrixView(opt.difference->difference)
                     : showing_gradient ? MatrixView(*opt.gradient)
                                        : state.doc->stage(id));
  return *fetched_;
}

int HeatmapDrawing::end_row() const { return std::min(shown_rows, static_cast<int>(std::ceil(vis[3]))); }
int HeatmapDrawing::end_col() const { return std::min(shown_cols, static_cast<int>(std::ceil(vis[2]))); }

float displayed_cell_px(float cell_px, float max_px, int rows, int cols) {
  return std::min(cell_px, max_px / static_cast<float>(std::max({rows, cols, 1})));
}

namespace {

bool pinned(const Scenario& s, StageId id, int r, int c) {
  const auto stored = storage_cell(CellRef{id, r, c}, s.dims());
  return stored && s.pins.count(PinKey{stored->stage, stored->row, stored->col}) > 0;
}

// A gradient's cells print its numbers times a power of ten when they are
// all small (0.0036 would read "0.00"): the title says "×10⁻²", the colours
// and the inspector keep the real numbers. 0 for anything else.
int print_exponent_of(const HeatmapDrawing& h) {
  if (!h.showing_gradient) return 0;
  auto& range_of = h.state.colour_ranges[h.id];
  if (range_of.first != h.opt.gradient_version)
    range_of = {h.opt.gradient_version, colour_range(ValueDomain::Signed, h.values())};
  if (range_of.second > 0.0f && range_of.second < 0.1f) return static_cast<int>(std::floor(std::log10(range_of.second)));
  return 0;
}

// Symbol and shape, e.g. "Q  7×4", and the full name and formula in the tooltip.
void draw_heatmap_title(const HeatmapDrawing& h, int print_exponent) {
  const HeatmapOptions& opt = h.opt;
  const std::string symbol = opt.title_override ? opt.title_override : h.info.symbol.c_str();
  std::string title = symbol + (opt.transposed ? "ᵀ" : "");
  if (opt.show_labels) title += "  " + std::to_string(h.shown_rows) + "×" + std::to_string(h.shown_cols);
  if (print_exponent != 0) title += "  " + power_of_ten(print_exponent);
  if (h.showing_difference) {
    // "Δ S₀: largest change [2,1] +0.31", so the eye knows where to look.
    const StageDiff& d = *opt.difference;
    const Scenario& sc = h.state.doc->scenario();
    title = "Δ " + symbol + " " + (d.largest_change > 0 ? "+" : "") + format_number(d.largest_change, 2) + " [" +
            sc.shown_index(d.largest_row) + "," + sc.shown_index(d.largest_col) + "]";
  }
  ImGui::SetCursorPosX(ImGui::GetCursorPosX() + h.label_w);
  if (opt.dim < 1.0f) ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  ImGui::TextUnformatted(title.c_str());
  if (opt.dim < 1.0f) ImGui::PopStyleColor();
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::Text("%s", h.info.name.c_str());
    ImGui::Text("%s", h.info.formula.c_str());
    ImGui::PushTextWrapPos(420.0f);
    ImGui::TextDisabled("%s", h.info.explanation.c_str());
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
}

// The right-click menu of the cells: zoom, colour scale, copy and export,
// unpin, randomize.
void draw_heatmap_menu(const HeatmapDrawing& h, ColourScale scale, HeatmapEvents& ev) {
  AppState& state = h.state;
  const StageId id = h.id;
  const Scenario& sc = state.doc->scenario();
  if (!ImGui::BeginPopupContextItem("heatmap menu")) return;
  const std::optional<CellRef> on =
      state.context_cell && state.context_cell->stage == id ? state.context_cell : std::optional<CellRef>{};
  if (ImGui::MenuItem("Reset zoom", nullptr, false, !h.view.is_reset())) h.view.reset();
  if (h.info.domain == ValueDomain::Probability && !h.signed_overlay && ImGui::BeginMenu("Colour scale")) {
    for (const ColourScale cs : kColourScales)
      if (ImGui::MenuItem(to_string(cs), nullptr, scale == cs)) state.colour_scales[id] = cs;
    ImGui::EndMenu();
  }
  if (ImGui::MenuItem("Copy matrix as CSV")) {
    ImGui::SetClipboardText(matrix_to_csv(h.values(), h.info.row_labels, h.info.col_labels).c_str());
    state.set_status("Copied " + h.info.id_text + " (" + std::to_string(h.rows) + "×" + std::to_string(h.cols) +
                     ") to the clipboard");
  }
  if (!h.signed_overlay) {
    if (ImGui::MenuItem("Export CSV…")) action_export_csv_dialog(state, id);
    state.note_item("Export CSV…");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("With the tokens as row and column headers");
    if (ImGui::MenuItem("Export PNG…")) action_export_png_dialog(state, ExportTarget{ExportKind::Stage, id});
    state.note_item("Export PNG…");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Drawn off screen at 1×, 2× or 4×, with title, labels and colour bar");
  }
  if (on && !h.signed_overlay && !is_input(id.kind) && pinned(sc, id, on->row, on->col) && ImGui::MenuItem("Unpin this cell"))
    ev.edits.push_back({SetPin{PinKey{id, on->row, on->col}, std::nullopt}, 0});
  if (!h.signed_overlay && is_input(id.kind) && id.kind != StageKind::Mask && ImGui::MenuItem("Randomize (seeded)")) {
    const int fan_in = id.kind == StageKind::W_o ? h.rows : sc.d_model();
    const auto seed = sc.seed + state.doc->engine().version(id) * 7919u;
    ev.edits.push_back({SetMatrix{id, seeded_matrix(seed, id.kind, h.rows, h.cols, fan_in), "randomize"}, 0});
  }
  ImGui::EndPopup();
}

// The pointer over the cells: hover, the wheel's zoom, a plain drag edits
// (inputs) or pins (computed stages), Ctrl+drag pans, a double-click types a
// value, a click toggles a mask cell, a right click opens the menu; and a
// double-click on a label renames it.
void take_cell_input(const HeatmapDrawing& h, ColourScale scale, HeatmapEvents& ev) {
  AppState& state = h.state;
  const HeatmapOptions& opt = h.opt;
  const StageId id = h.id;
  const Rect& rect = h.rect;
  ImGui::SetCursorScreenPos(h.p0);
  ImGui::InvisibleButton("cells", ImVec2(std::max(rect.width(), 1.0f), std::max(rect.height(), 1.0f)),
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight);
  const ImGuiIO& io = ImGui::GetIO();
  const bool hovered = ImGui::IsItemHovered();
  if (hovered && opt.interactive) {
    if (const auto cell = hit_test(rect, h.view, h.rows, h.cols, io.MousePos.x, io.MousePos.y, opt.transposed))
      ev.hovered = CellRef{id, cell->row, cell->col};
    // The wheel zooms this heatmap only when the wheel gesture began over it
    // (WheelGesture): one that slides under the pointer while the page scrolls
    // lets the page keep scrolling. When it zooms, it must not also scroll the
    // panel: ImGui decides whether to scroll before anything is drawn, from
    // the item that claimed the wheel while hovered the frame before, so the
    // claim is made on every hovered frame that a notch would zoom.
    const std::uint64_t wheel_id = ImGui::GetItemID();
    const double now = ImGui::GetTime();
    if (state.wheel.would_zoom(wheel_id, now)) ImGui::SetItemUsingMouseWheel();
    if (io.MouseWheel != 0.0f && state.wheel.wheel(wheel_id, now)) {
      h.view.zoom_at(io.MouseWheel > 0 ? 1.25f : 0.8f, (io.MousePos.x - rect.x0) / rect.width(),
                     (io.MousePos.y - rect.y0) / rect.height(), h.shown_rows, h.shown_cols);
    }
  }
  if (hovered && !opt.interactive && ImGui::IsItemClicked(ImGuiMouseButton_Left)) ev.clicked = true;
  if (!opt.interactive) return;

  // Ctrl+drag pans; a plain drag edits (inputs) or pins (computed stages).
  if (ImGui::IsItemActivated() && ev.hovered) {
    if (io.KeyCtrl) {
      state.panning = id;
    } else if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
      state.selected = ev.hovered;
      // the registry's word on it (StageInfo::editability); the mask toggles on release, concat
      // is pinned through each head's context
      const bool editable = opt.editable && !h.signed_overlay && id.kind != StageKind::Mask &&
                            id.kind != StageKind::Concat && h.info.editability != Editability::ReadOnly;
      if (editable)
        state.drag = DragState{*ev.hovered, state.doc->begin_gesture(), h.values()(ev.hovered->row, ev.hovered->col),
                               io.MousePos.y, false};
    }
  }
  if (ImGui::IsItemActive() && state.panning == id && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 0.0f)) {
    h.view.pan_by(io.MouseDelta.x, io.MouseDelta.y, rect, h.shown_rows, h.shown_cols);
  }
  if (ImGui::IsItemActive() && !h.signed_overlay && state.drag && state.drag->cell.stage == id) {
    DragState& d = *state.drag;
    // The inspector follows the cell being changed, not the one the mouse
    // passes over on its way up or down.
    ev.hovered = d.cell;
    const float up = d.start_y - io.MousePos.y;
    if (std::fabs(up) >= 3.0f || d.moved) {
      d.moved = true;
      float start = d.start_value;
      if (!std::isfinite(start)) start = 0.0f;  // dragging a −∞ cell starts from 0
      ev.edits.push_back({cell_edit(id, d.cell.row, d.cell.col, dragged_value(start, up, io.KeyShift)), d.gesture});
    }
  }
  if (ImGui::IsItemDeactivated()) {
    // Only a left click toggles a mask cell: the right click that opens the menu must not.
    if (id.kind == StageKind::Mask && opt.editable && !h.signed_overlay && ev.hovered && state.panning != id &&
        ImGui::IsMouseReleased(ImGuiMouseButton_Left))
      ev.edits.push_back({mask_toggle(ev.hovered->row, ev.hovered->col, h.values()(ev.hovered->row, ev.hovered->col)), 0});
    state.drag.reset();
    if (state.panning == id) state.panning.reset();
  }
  if (hovered && opt.editable && !h.signed_overlay && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left) && ev.hovered &&
      id.kind != StageKind::Mask && id.kind != StageKind::Concat) {
    state.drag.reset();
    state.typing.cell = *ev.hovered;
    state.typing.open_requested = true;
  }
  // The cell the menu was opened on: while the menu is open the heatmap is
  // not hovered (the menu covers it), so "Unpin this cell" asks this one.
  if (hovered && ev.hovered && ImGui::IsMouseReleased(ImGuiMouseButton_Right)) state.context_cell = ev.hovered;
  draw_heatmap_menu(h, scale, ev);

  // A token or feature label renames it on a double-click (the pointer says so on hover).
  if (opt.show_labels && !h.signed_overlay && ImGui::IsWindowHovered()) {
    const auto hit = label_at(rect, h.label_w, h.col_label_h, h.vis, h.shown_rows, h.shown_cols, io.MousePos.x, io.MousePos.y);
    if (const auto name = hit ? label_name(h.info, opt.transposed, *hit) : std::nullopt) {
      ImGui::SetMouseCursor(ImGuiMouseCursor_TextInput);
      if (ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) state.start_rename(name->kind, name->index);
    }
  }
}

}  // namespace

HeatmapEvents draw_heatmap(AppState& state, StageId id, const HeatmapOptions& opt) {
  HeatmapEvents ev;
  const Document& doc = *state.doc;
  // (a head the scenario no longer has, for the frame a change of heads takes to reach the layout)
  StageId value_id = id;
  value_id.role = Role::Value;
  if (!doc.engine().not_held(value_id).empty()) return ev;
  HeatmapDrawing h(state, id, opt, state.stage_info(id), state.views[id]);
  h.showing_difference = opt.difference != nullptr;
  h.showing_gradient = opt.gradient != nullptr && id.role == Role::Gradient;
  h.signed_overlay = h.showing_difference || h.showing_gradient;
  h.rows = h.showing_difference ? static_cast<int>(opt.difference->difference.rows())
           : h.showing_gradient ? static_cast<int>(opt.gradient->rows())
                                : h.info.rows;
  h.cols = h.showing_difference ? static_cast<int>(opt.difference->difference.cols())
           : h.showing_gradient ? static_cast<int>(opt.gradient->cols())
                                : h.info.cols;
  h.shown_rows = opt.transposed ? h.cols : h.rows;
  h.shown_cols = opt.transposed ? h.rows : h.cols;
  if (h.rows == 0 || h.cols == 0) return ev;

  // X appears in three equations (X·W_q, X·W_k, X·W_v): each drawing of a
  // stage gets its own ImGui ID, so only the one under the mouse is active
  // and a drag applies one edit a frame, not one per copy. Δ heatmaps (Compare)
  // have IDs of their own, so one appearing after the first edit of a drag
  // leaves the IDs of the value copies, and the drag, where they were.
  ImGui::PushID(to_string(id).c_str());
  ImGui::PushID(h.showing_difference ? "difference" : h.showing_gradient ? "gradient" : "value");
  ImGui::PushID(state.heatmap_instances[{id, h.showing_difference}]++);
  ImGui::BeginGroup();
  h.dl = ImGui::GetWindowDrawList();
  h.label_w = opt.show_labels ? row_label_width(h.info, doc.scenario(), opt.transposed, opt.whole_labels) : 0.0f;
  // A 1024×1024 stage cannot have 30 px cells: shrink to max_px; zoom brings cells back.
  const float cell_size = displayed_cell_px(opt.cell_px, opt.max_px, h.shown_rows, h.shown_cols);
  h.view.visible(h.shown_rows, h.shown_cols, h.vis);
  h.px_per_cell = cell_size * static_cast<float>(h.shown_cols) / (h.vis[2] - h.vis[0]);
  const auto& col_labels = opt.transposed ? h.info.row_labels : h.info.col_labels;
  const TurnedLabels turned =
      opt.show_labels && opt.whole_labels ? turned_labels(col_labels, h.px_per_cell) : TurnedLabels{};
  h.col_label_h = !opt.show_labels ? 0.0f : std::max(turned.on ? turned.band : ImGui::GetTextLineHeight(), opt.column_band);

  const int print_exponent = print_exponent_of(h);
  const float print_scale = print_exponent == 0 ? 1.0f : std::pow(10.0f, static_cast<float>(-print_exponent));
  draw_heatmap_title(h, print_exponent);

  h.origin = ImGui::GetCursorScreenPos();
  h.p0 = ImVec2(h.origin.x + h.label_w, h.origin.y + h.col_label_h);
  h.p1 = ImVec2(h.p0.x + cell_size * static_cast<float>(h.shown_cols), h.p0.y + cell_size * static_cast<float>(h.shown_rows));
  h.rect = Rect{h.p0.x, h.p0.y, h.p1.x, h.p1.y};
  // Off screen (scrolled away in a tall pipeline): no texture upload and no
  // colour range, which at T=1024 would pool a million cells per changed
  // stage every frame of a drag. Both catch up once it scrolls into view.
  // (The legend under the cells counts as part of it.)
  h.on_screen = ImGui::IsRectVisible(h.origin, ImVec2(h.p1.x, h.p1.y + 3.0f * ImGui::GetTextLineHeightWithSpacing()));

  const int labels_cut = opt.show_labels ? draw_heatmap_labels(h, turned) : 0;
  const HeatmapColours colours = draw_heatmap_cells(h);
  DrawnHeatmap* drawn = nullptr;
  if (!h.showing_difference) {
    state.drawn.push_back({id, h.rect, h.rows, h.cols, opt.transposed, h.px_per_cell});
    drawn = &state.drawn.back();
    drawn->labels_cut = labels_cut;
  }
  std::vector<Rect> hidden;  // cells printing the quiz's answer (output = concat = context without W_o)
  draw_cell_values(h, colours, print_scale, drawn, hidden);
  draw_cell_marks(h, hidden);
  take_cell_input(h, colours.scale, ev);
  draw_heatmap_legend(h, colours);
  ImGui::EndGroup();
  ImGui::PopID();
  ImGui::PopID();
  ImGui::PopID();
  return ev;
}

void draw_difference_heatmap(AppState& state, StageId id, const HeatmapOptions& value_opt, const StageDiff& d,
                             std::uint64_t version) {
  state.difference_heatmaps.drawn(id);
  HeatmapOptions opt = value_opt;
  opt.difference = &d;
  opt.difference_version = version;
  opt.reveal = -1;
  if (const HeatmapEvents ev = apply_heatmap_edits(state, draw_heatmap(state, id, opt)); ev.hovered) state.hovered = ev.hovered;
}

void draw_gradient_heatmap(AppState& state, StageId value_id, const HeatmapOptions& value_opt, const Matrix& g,
                           std::uint64_t version) {
  HeatmapOptions opt = value_opt;
  opt.gradient = &g;
  opt.gradient_version = version;
  opt.reveal = -1;
  opt.editable = false;
  StageId id = value_id;
  id.role = Role::Gradient;
  if (const HeatmapEvents ev = draw_heatmap(state, id, opt); ev.hovered) state.hovered = ev.hovered;
}

HeatmapEvents apply_heatmap_edits(AppState& state, HeatmapEvents events) {
  for (const auto& r : events.edits) state.apply(r.edit, r.gesture);
  return events;
}

}  // namespace attention_lab::gui
