// Model mode's Block tab: the Transformer block around the focused layer's
// attention, every stage a heatmap — the embeddings that start the residual
// stream, then norm → attention → residual sum → norm → MLP → residual sum.
// Edits in the pipeline flow through it live; hovering a cell explains it in
// the inspector and lights the cells it was made from.

#include "panels/panels.h"

#include "widgets/matrix_heatmap.h"

#include <imgui.h>

#include <algorithm>

namespace attention_lab::gui {

namespace {

// How `stage` feeds the hovered cell, per the block's table: one cell of it
// (outlined), its whole row (lit), or nothing shown (the attention reads
// every row it may see, a range the heatmap cannot light).
void mark_inputs(const BlockTrace& t, const std::optional<ModelState::BlockCell>& hovered, BlockStage stage,
                 MatrixHeatmap& h) {
  if (!hovered) return;
  for (const BlockInput& in : t.info(hovered->stage)->inputs) {
    if (in.stage != stage) continue;
    if (in.feed == BlockFeed::Row) h.lit_row = hovered->row;
    if (in.feed == BlockFeed::Cell)
      h.hovered = Cell{hovered->row, t.values(stage).cols() > 1 ? hovered->col : 0};
  }
}

// Cells at most 18 px (at the base font), a statistic's single column wide
// enough for its value, no heatmap taller than 220 px: a 7-token block fits
// a laptop screen, a 1024-token one pools its rows.
constexpr float kCellPx = 18.0f, kStatisticPx = 56.0f, kMaxHeight = 220.0f;

std::string shape(const Matrix& m) { return std::to_string(m.rows()) + "×" + std::to_string(m.cols()); }

void draw_stage(AppState& state, const BlockTrace& t, const BlockStageInfo& info, const std::vector<std::string>& tokens,
                float max_w, std::optional<ModelState::BlockCell>& hovered_now) {
  ModelState::Block& b = state.model.block;
  MatrixHeatmap h;
  h.key = info.key;
  h.title = info.symbol + "  " + shape(t.values(info.stage));
  h.tooltip = info.name + "\n" + info.symbol + "[r,c] = " + info.formula + "\n\n" + info.explanation;
  h.values = &t.values(info.stage);
  h.version = t.version(info.stage);
  h.non_negative = info.non_negative;
  h.row_labels = &tokens;
  const bool one = info.width == BlockWidth::One;
  h.max_cell_w = one ? kStatisticPx : kCellPx;
  h.max_cell_h = kCellPx;
  h.max_w = one ? kStatisticPx * gfx::em() : max_w;
  h.max_h = kMaxHeight * gfx::em();
  mark_inputs(t, b.hovered ? b.hovered : b.selected, info.stage, h);
  if (b.hovered && b.hovered->stage == info.stage) h.hovered = Cell{b.hovered->row, b.hovered->col};
  if (b.selected && b.selected->stage == info.stage) h.selected = Cell{b.selected->row, b.selected->col};
  const MatrixHeatmapEvents ev = draw_matrix_heatmap(state, h);
  state.probe_items["block " + info.key] = ev.cells;
  if (ev.hovered) hovered_now = ModelState::BlockCell{info.stage, ev.hovered->row, ev.hovered->col};
  if (ev.clicked && ev.hovered) b.selected = ModelState::BlockCell{info.stage, ev.hovered->row, ev.hovered->col};
}

// Heatmaps left to right, wrapping to a new line when the next would not fit.
class Flow {
 public:
  explicit Flow(float width) : width_(width), start_x_(ImGui::GetCursorPosX()) {}
  void before(float item_w) {
    if (!first_) {
      ImGui::SameLine(0.0f, 18.0f * gfx::em());
      if (ImGui::GetCursorPosX() - start_x_ + item_w > width_) ImGui::NewLine();
    }
    first_ = false;
  }

 private:
  float width_, start_x_;
  bool first_ = true;
};

}  // namespace

void draw_block_view(AppState& state) {
  if (!state.model.open()) return;
  const ModelSession& s = *state.model.session;
  const BlockTrace* t = state.model_block();
  ModelState::Block& b = state.model.block;
  const ModelConfig& c = s.model().config;
  ImGui::Text("Layer %d's block around the attention", s.layer());
  push_wrap_at_visible_edge();
  ImGui::TextDisabled("Every stage of the Transformer block with the model's real numbers. Edits and pins in the "
                      "Pipeline flow through here; hover a cell to see in the inspector how it was made "
                      "(its inputs light up), click to keep it.");
  ImGui::PopTextWrapPos();
  if (!t) {
    push_wrap_at_visible_edge();
    text_colored(gfx::Accent::Warning, "%s", b.problem.c_str());
    ImGui::PopTextWrapPos();
    return;
  }
  ImGui::TextDisabled("last update: %d of %d rows recomputed in %.1f ms", b.rows_recomputed, s.T(), b.ms);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Everything after the attention works on each token's row alone,\n"
                      "so only the rows whose attention output changed are recomputed.");

  const std::vector<std::string> tokens = s.token_labels();
  const float width = ImGui::GetContentRegionAvail().x - 8.0f * gfx::em();  // a margin: no sideways scrolling
  const float label_w = 52.0f * gfx::em();
  // Three wide matrices to a line when there is room, else fewer.
  const float max_w = std::clamp((width - 3.0f * label_w) / 3.0f - 24.0f * gfx::em(), 120.0f * gfx::em(), 440.0f * gfx::em());
  std::optional<ModelState::BlockCell> hovered_now;
  const auto item_w = [&](const BlockStageInfo& i) {
    const Matrix& m = t->values(i.stage);
    const bool one = i.width == BlockWidth::One;
    const ImVec2 cell = matrix_cell_size(static_cast<int>(m.rows()), static_cast<int>(m.cols()),
                                         ImVec2((one ? kStatisticPx : kCellPx) * gfx::em(), kCellPx * gfx::em()),
                                         one ? kStatisticPx * gfx::em() : max_w, kMaxHeight * gfx::em());
    return label_w + cell.x * static_cast<float>(m.cols());
  };
  const auto section = [&](const char* heading, auto&& wanted) {
    ImGui::Spacing();
    ImGui::Separator();
    ImGui::TextUnformatted(heading);
    Flow flow(width);
    for (const BlockStageInfo& i : t->stages()) {
      if (!wanted(i)) continue;
      flow.before(item_w(i));
      draw_stage(state, *t, i, tokens, max_w, hovered_now);
    }
  };
  section("Embeddings: the start of the residual stream", [](const BlockStageInfo& i) { return i.embeddings; });
  if (s.layer() > 0) {
    if (s.layer() == 1) ImGui::TextDisabled("⋮  layer 0 adds its attention and MLP to it  ⋮");
    else ImGui::TextDisabled("⋮  layers 0 to %d add their attention and MLP to it  ⋮", s.layer() - 1);
  }
  // the attention's half: its input (and norm), the attention, its post-norm (if any) and the residual sum
  const auto attention_part = [](const BlockStageInfo& i) {
    return !i.embeddings && (!i.follows_attention || i.stage == BlockStage::Attention || i.stage == BlockStage::Residual ||
                             i.stage == BlockStage::PostAttnSpread || i.stage == BlockStage::PostAttn);
  };
  const bool post = c.post_norms;
  const std::string attention_half = "Layer " + std::to_string(s.layer()) +
                                     (post ? ": attention, norm, residual sum" : ": norm, attention, residual sum");
  section(attention_half.c_str(), attention_part);
  const std::string mlp_half =
      "Layer " + std::to_string(s.layer()) + (post ? ": MLP, norm, residual sum" : ": norm, MLP, residual sum");
  section(mlp_half.c_str(), [&](const BlockStageInfo& i) { return i.follows_attention && !attention_part(i); });
  ImGui::Spacing();
  ImGui::TextDisabled(s.layer() + 1 < c.layers ? "⋮  y is the input of layer %d  ⋮" : "⋮  y goes through the final norm and lm_head to the logits (layer %d is the last)  ⋮",
                      s.layer() + 1 < c.layers ? s.layer() + 1 : s.layer());
  b.hovered = hovered_now;
}

}  // namespace attention_lab::gui
