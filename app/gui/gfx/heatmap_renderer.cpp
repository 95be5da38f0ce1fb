#include "gfx/heatmap_renderer.h"

#include "gfx/fonts.h"

namespace attention_lab::gfx {

HeatmapRenderer::~HeatmapRenderer() {
  if (vao_) glDeleteVertexArrays(1, &vao_);
}

std::string HeatmapRenderer::init() {
  if (auto err = program_.build("heatmap.vert", "heatmap.frag"); !err.empty()) return err;
  glGenVertexArrays(1, &vao_);  // core profile: a VAO must be bound even without attributes
  const auto u = [&](const char* n) { return program_.uniform(n); };
  loc_ = {u("u_rect"), u("u_values"), u("u_size"), u("u_view"), u("u_range"), u("u_colormap"), u("u_cell_px"),
          u("u_lit_row"), u("u_lit_col"), u("u_hover"), u("u_selected"), u("u_reveal"), u("u_dim"), u("u_fade_to"), u("u_transpose")};
  return {};
}

void HeatmapRenderer::draw(ImDrawList* list, const HeatmapDraw& params) {
  pending_.push_back({this, params});
  list->AddCallback(&HeatmapRenderer::render_callback, &pending_.back());
  list->AddCallback(ImDrawCallback_ResetRenderState, nullptr);
}

void HeatmapRenderer::render_callback(const ImDrawList*, const ImDrawCmd* cmd) {
  const auto* p = static_cast<const Pending*>(cmd->UserCallbackData);
  p->self->render(p->params, cmd);
}

void HeatmapRenderer::render(const HeatmapDraw& p, const ImDrawCmd* cmd) {
  const ImDrawData* dd = ImGui::GetDrawData();
  const ImVec2 pos = dd->DisplayPos, size = dd->DisplaySize, scale = dd->FramebufferScale;
  const float fb_h = size.y * scale.y;
  // Clip to the window that holds the heatmap, exactly as ImGui clips its own geometry.
  const ImVec4 clip = cmd->ClipRect;
  glEnable(GL_SCISSOR_TEST);
  glScissor(static_cast<GLint>((clip.x - pos.x) * scale.x), static_cast<GLint>(fb_h - (clip.w - pos.y) * scale.y),
            static_cast<GLsizei>((clip.z - clip.x) * scale.x), static_cast<GLsizei>((clip.w - clip.y) * scale.y));
  const auto ndc_x = [&](float x) { return (x - pos.x) / size.x * 2.0f - 1.0f; };
  const auto ndc_y = [&](float y) { return 1.0f - (y - pos.y) / size.y * 2.0f; };

  glUseProgram(program_.id());
  glUniform4f(loc_.rect, ndc_x(p.min.x), ndc_y(p.min.y), ndc_x(p.max.x), ndc_y(p.max.y));
  glActiveTexture(GL_TEXTURE0);
  glBindTexture(GL_TEXTURE_2D, p.texture);
  glUniform1i(loc_.values, 0);
  glUniform2i(loc_.size, p.cols, p.rows);
  glUniform4f(loc_.view, p.view[0], p.view[1], p.view[2], p.view[3]);
  glUniform1f(loc_.range, p.range);
  glUniform1i(loc_.colormap, p.colormap);
  glUniform1f(loc_.cell_px, p.cell_px * scale.x);  // framebuffer pixels: an export at K× draws K× the grid
  glUniform1i(loc_.lit_row, p.lit_row);
  glUniform1i(loc_.lit_col, p.lit_col);
  glUniform2i(loc_.hover, p.hover_col, p.hover_row);
  glUniform2i(loc_.selected, p.selected_col, p.selected_row);
  glUniform1i(loc_.reveal, p.reveal);
  glUniform1f(loc_.dim, p.dim);
  // Faded stages sink into the background: on the light theme (presenter
  // mode, exported slides) dark grey blocks would shout instead of recede.
  const float fade = theme_is_light() ? 1.0f : 0.0f;
  glUniform3f(loc_.fade_to, fade, fade, fade);
  glUniform1i(loc_.transpose, p.transposed ? 1 : 0);
  glBindVertexArray(vao_);
  glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
}

}  // namespace attention_lab::gfx
