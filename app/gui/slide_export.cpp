#include "slide_export.h"

#include "gfx/fonts.h"
#include "gfx/offscreen_target.h"
#include "gfx/screenshot.h"
#include "logic/provenance.h"
#include "panels/panels.h"
#include "widgets/heatmap_widget.h"

#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>

namespace attention_lab::gui {

namespace {

// The per-frame state the panels write while drawing: an export draws them a
// second time and must leave the window's frame exactly as it was.
struct SavedFrameState {
  explicit SavedFrameState(AppState& s)
      : state(s), hovered(s.hovered), hovered_last_frame(s.hovered_last_frame), selected(s.selected), lit(s.lit),
        drawn(s.drawn), instances(s.heatmap_instances), differences(s.difference_heatmaps),
        scroll_to_step(s.scroll_to_step), select_centre_tab(s.select_centre_tab), quiz_round(s.quiz.round),
        slide(s.slide) {}
  ~SavedFrameState() {
    state.hovered = hovered, state.hovered_last_frame = hovered_last_frame, state.selected = selected;
    state.lit = lit, state.drawn = drawn, state.heatmap_instances = instances;
    state.difference_heatmaps = differences, state.scroll_to_step = scroll_to_step;
    state.select_centre_tab = select_centre_tab;
    state.quiz.round = quiz_round;
    state.slide = slide;  // the export's own layout (its room, its pages) is not the screen's
    state.exporting_plain = false;
  }
  AppState& state;
  std::optional<CellRef> hovered, hovered_last_frame, selected;
  std::vector<Lit> lit;
  std::vector<DrawnHeatmap> drawn;
  std::map<std::pair<StageId, bool>, int> instances;
  AppState::DrawnThisAndLastFrame differences;
  bool scroll_to_step, select_centre_tab;
  std::optional<QuizRound> quiz_round;
  SlideState slide;
};

// A Dear ImGui context of its own for one export, current while it lives:
// fonts rasterized at `scale` × the screen's size and drawn at 1/scale, so
// the layout is the screen's, in logical pixels, and text is sharp at K×.
class ExportContext {
 public:
  ExportContext(int scale) : screen_(ImGui::GetCurrentContext()), screen_light_(gfx::theme_is_light()) {
    context_ = ImGui::CreateContext();
    ImGui::SetCurrentContext(context_);
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.LogFilename = nullptr;
    io.DeltaTime = 1.0f / 60.0f;
    io.DisplayFramebufferScale = ImVec2(static_cast<float>(scale), static_cast<float>(scale));
    gfx::add_font(io.Fonts, gfx::current_font_size() * static_cast<float>(scale));
    io.FontGlobalScale = 1.0f / static_cast<float>(scale);
    // Slides: black on white, whatever the screen's theme.
    gfx::apply_theme(true);
    ImGuiStyle& style = ImGui::GetStyle();
    style.WindowBorderSize = 0.0f;
    style.WindowPadding = ImVec2(16.0f, 16.0f);
    ImGui_ImplOpenGL3_Init("#version 330 core");
  }
  ~ExportContext() {
    ImGui_ImplOpenGL3_Shutdown();
    ImGui::DestroyContext(context_);
    ImGui::SetCurrentContext(screen_);
    gfx::set_accents(screen_light_);
  }
  ExportContext(const ExportContext&) = delete;
  ExportContext& operator=(const ExportContext&) = delete;

 private:
  ImGuiContext* screen_;
  bool screen_light_;
  ImGuiContext* context_ = nullptr;
};

// How a target is laid out: a fixed width (the centre's, so equations wrap
// as on screen) or its natural width; a fixed height or its content's.
struct Layout {
  float width = 0.0f;   // 0: as wide as the content
  float height = 0.0f;  // 0: as tall as the content
};

// "Export step" in the pipeline outside a lesson slide: the step's own stages.
bool exports_step_through_slide(const AppState& state, const ExportTarget& target) {
  return target.kind == ExportKind::Step && state.centre == CentreView::Pipeline && !showing_slide(state) &&
         state.step >= 0;
}

Layout layout_of(const AppState& state, const ExportTarget& target) {
  const float centre_w = std::max(state.centre_area.width(), 320.0f);
  const float centre_h = std::max(state.centre_area.height(), 240.0f);
  switch (target.kind) {
    case ExportKind::Stage: return {};
    case ExportKind::View:
    case ExportKind::Step:
      // The pipeline grows downwards without limit; the close-up views fill the area they are given.
      // (A lesson step's slide fills its area, like the close-ups.)
      if (state.centre == CentreView::Pipeline && !showing_slide(state) && !exports_step_through_slide(state, target))
        return {centre_w, 0.0f};
      return {centre_w, centre_h};
  }
  return {};
}

void draw_target(AppState& state, const ExportTarget& target) {
  if (target.kind == ExportKind::Stage) {
    const StageInfo& info = state.stage_info(target.stage);
    ImGui::TextUnformatted(info.name.c_str());
    const float em = gfx::em();
    HeatmapOptions opt;
    opt.cell_px = state.cell_px * em;
    opt.max_px = 440.0f * em;
    opt.interactive = false;
    opt.whole_labels = true;  // a handout has room for whole words
    draw_heatmap(state, target.stage, opt);
    return;
  }
  // A step outside a lesson: the step-through's step as a slide, not the view.
  if (exports_step_through_slide(state, target) && draw_step_through_slide(state)) return;
  draw_centre_view(state);
}

// Crops an RGBA image (top row first) to the pixels that differ from its
// top-left corner's (the background), plus `margin` on every side, as far as
// the image reaches: the same margin all round whatever the layout left.
void crop_to_content(std::vector<unsigned char>& rgba, int& width, int& height, int margin) {
  const auto at = [&](int x, int y) { return rgba.data() + (static_cast<std::ptrdiff_t>(y) * width + x) * 4; };
  const unsigned char* bg = at(0, 0);
  const unsigned char background[4] = {bg[0], bg[1], bg[2], bg[3]};
  int x0 = width, y0 = height, x1 = -1, y1 = -1;
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      if (std::memcmp(at(x, y), background, 4) != 0) x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
  if (x1 < 0) return;  // blank: nothing to crop to
  x0 = std::max(0, x0 - margin), y0 = std::max(0, y0 - margin);
  x1 = std::min(width - 1, x1 + margin), y1 = std::min(height - 1, y1 + margin);
  const int w = x1 - x0 + 1, h = y1 - y0 + 1;
  std::vector<unsigned char> out(static_cast<std::size_t>(w) * static_cast<std::size_t>(h) * 4u);
  for (int y = 0; y < h; ++y) std::memcpy(out.data() + static_cast<std::ptrdiff_t>(y) * w * 4, at(x0, y0 + y), static_cast<std::size_t>(w) * 4u);
  rgba = std::move(out);
  width = w, height = h;
}

}  // namespace

std::string suggested_export_name(const AppState& state, const ExportTarget& target) {
  switch (target.kind) {
    case ExportKind::Stage: return stage_file_name(target.stage);
    case ExportKind::View: return "view.png";
    case ExportKind::Step:
      if (state.lesson.lesson)
        return step_file_name(std::filesystem::path(state.lesson.path).stem().string(), state.lesson.step + 1);
      return step_file_name("", state.step + 1);
  }
  return "attention.png";
}

ExportResult render_export(AppState& state, const ExportRequest& request) {
  ExportResult result;
  if (!is_export_scale(request.scale)) {
    result.error = "export scale: expected 1, 2 or 4, found " + std::to_string(request.scale);
    return result;
  }
  const Layout layout = layout_of(state, request.target);
  SavedFrameState saved(state);
  // Whatever the pointer hovers on screen is never exported. A plain export
  // is a clean picture for a handout: no selection, no lit cells, no
  // highlight outlines, and the quiz's cell printed instead of its "?".
  state.hovered.reset();
  state.hovered_last_frame.reset();
  if (request.with_highlights) {
    state.lit = state.selected && state.selected->stage.role == Role::Value ? provenance(state.doc->scenario(), state.selected->stage, state.selected->row,
                                            state.selected->col)
                               : std::vector<Lit>{};
  } else {
    state.selected.reset();
    state.lit.clear();
    state.quiz.round.reset();
    state.exporting_plain = true;
  }
  state.slide.content = Rect{};
  ExportContext context(request.scale);
  ImGuiIO& io = ImGui::GetIO();

  // Three passes: measure at a generous size, lay out at the measured size,
  // and draw that layout again (a new window settles in its second frame).
  const float kUnbounded = 16384.0f;
  ImVec2 size(layout.width > 0 ? layout.width : kUnbounded, layout.height > 0 ? layout.height : kUnbounded);
  ImDrawData* draw_data = nullptr;
  for (int pass = 0; pass < 3; ++pass) {
    io.DisplaySize = size;
    ImGui_ImplOpenGL3_NewFrame();
    ImGui::NewFrame();
    state.heatmap_instances.clear();
    state.drawn.clear();
    state.renderer.begin_frame();
    ImGui::SetNextWindowPos(ImVec2(0, 0));
    ImGui::SetNextWindowSize(size);
    ImGui::Begin("export", nullptr,
                 ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoMove |
                     ImGuiWindowFlags_NoScrollWithMouse | ImGuiWindowFlags_NoFocusOnAppearing);
    ImGui::BeginGroup();
    draw_target(state, request.target);
    ImGui::EndGroup();
    const ImVec2 used = ImGui::GetItemRectMax();
    const ImVec2 padding = ImGui::GetStyle().WindowPadding;
    ImGui::End();
    ImGui::Render();
    draw_data = ImGui::GetDrawData();
    // Whole logical pixels, rounded (not ceiled), so float noise in text
    // widths cannot make a 2× export one pixel off twice the 1×.
    if (pass < 2)
      size = ImVec2(layout.width > 0 ? layout.width : std::round(used.x + padding.x),
                    layout.height > 0 ? layout.height : std::round(used.y + padding.y));
  }

  // A step's slide is cropped to what it draws, with an even margin, not the
  // whole centre area it is centred in (see crop_to_content below).
  const bool crop_slide = request.target.kind == ExportKind::Step && state.slide.content.width() > 0.0f;
  const int full_width = static_cast<int>(size.x) * request.scale, full_height = static_cast<int>(size.y) * request.scale;
  gfx::OffscreenTarget target;
  if (auto err = target.create(full_width, full_height); !err.empty()) {
    result.error = "Could not export " + request.path + ": " + err;
    return result;
  }
  {
    gfx::OffscreenTarget::Binding bound(target);
    const ImVec4 bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
    glClearColor(bg.x, bg.y, bg.z, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(draw_data);
  }
  std::vector<unsigned char> pixels = target.read_rgba();
  int width = full_width, height = full_height;
  if (crop_slide) crop_to_content(pixels, width, height, 16 * request.scale);
  state.renderer.begin_frame();  // its draws pointed into this context's frame
  if (auto err = gfx::write_rgba_png(request.path, width, height, pixels.data()); !err.empty()) {
    result.error = err;
    return result;
  }
  result.width = width, result.height = height;
  return result;
}

}  // namespace attention_lab::gui
