#include "widgets/head_score_grids.h"

#include "gfx/fonts.h"
#include "panels/panels.h"
#include "widgets/score_grid.h"

#include <imgui.h>

#include <cstdio>

namespace attention_lab::gui {

namespace {

const char* title(HeadKind kind) {
  switch (kind) {
    case HeadKind::PreviousToken: return "previous token";
    case HeadKind::DuplicateToken: return "duplicate token";
    case HeadKind::Induction: return "induction";
  }
  return "";
}

// Where each kind of head looks, in the words of the tooltip.
const char* meaning(HeadKind kind) {
  switch (kind) {
    case HeadKind::PreviousToken: return "on the token just before";
    case HeadKind::DuplicateToken: return "on earlier copies of the same token";
    case HeadKind::Induction: return "on the token after an earlier copy of the current one";
  }
  return "";
}

}  // namespace

std::string draw_head_score_grids(AppState& state, const HeadScores& scores, const std::string& id,
                                  const std::function<std::string(HeadKind kind, int layer, int head)>& more) {
  const ModelSession& s = *state.model.session;
  std::string hovered_id;
  for (const HeadKind kind : kHeadKinds) {
    const Matrix& m = scores.of(kind);
    Eigen::Index bl = 0, bh = 0;
    const float best = m.size() ? m.maxCoeff(&bl, &bh) : 0.0f;
    ImGui::Text("%s", title(kind));
    ImGui::SameLine();
    ImGui::TextDisabled("(highest: layer %d, head %d, %.2f)", static_cast<int>(bl), static_cast<int>(bh), static_cast<double>(best));
    ScoreGrid grid;
    grid.id = id + " " + to_string(kind);
    grid.values = m.cast<double>();
    for (Eigen::Index l = 0; l < m.rows(); ++l) grid.row_labels.push_back("L" + std::to_string(l));
    for (Eigen::Index h = 0; h < m.cols(); ++h) grid.col_labels.push_back(std::to_string(h));
    grid.tooltip = [&m, kind, &more](int l, int h) {
      char text[320];
      const double v = static_cast<double>(m(l, h));
      std::snprintf(text, sizeof text, "layer %d, head %d: %s score %.4f\n%.1f %% of its attention falls %s.", l, h, title(kind), v,
                    100.0 * v, meaning(kind));
      return std::string(text) + (more ? more(kind, l, h) : std::string()) + "\nclick: focus it; right-click: ablate it";
    };
    grid.outlined = [&](int l, int h) { return l == s.layer() && h == state.focused_head; };
    grid.context_menu = [&state](int l, int h) { draw_ablation_menu(state, l, h); };
    GridCell hovered;
    const GridCell hit = draw_score_grid(state, grid, &hovered);
    if (hovered.valid()) hovered_id = grid.id + " " + std::to_string(hovered.row) + " " + std::to_string(hovered.col);
    if (hit.valid() && !state.busy()) focus_head(state, hit.row, hit.col);
    ImGui::Dummy(ImVec2(1.0f, 2.0f * gfx::em()));
  }
  return hovered_id;
}

}  // namespace attention_lab::gui
