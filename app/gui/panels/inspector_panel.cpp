#include "panels/panels.h"

#include "gfx/fonts.h"

#include "attention_lab/stage_info.h"
#include "logic/block_derivation.h"
#include "logic/derivation.h"
#include "logic/gradient_derivation.h"
#include "logic/number_format.h"
#include "logic/text_fit.h"

#include <algorithm>
#include <optional>

#include <imgui.h>

namespace attention_lab::gui {

namespace {

// A formula wrapped between its terms (never inside "1.51" or "[2,3]", which
// ImGui's own wrapping would break after the '.' or ','), to the panel's width.
void text_between_terms(const std::string& text, std::optional<gfx::Accent> colour = std::nullopt, bool disabled = false) {
  const TextMeasure measure = [](std::string_view t) { return ImGui::CalcTextSize(t.data(), t.data() + t.size()).x; };
  const float width = std::max(ImGui::GetContentRegionAvail().x, 40.0f);
  for (const std::string& line : wrap_tokens(formula_tokens(text), width, measure)) {
    if (colour) text_colored(*colour, "%s", line.c_str());
    else if (disabled) ImGui::TextDisabled("%s", line.c_str());
    else ImGui::TextUnformatted(line.c_str());
  }
}

// A derivation as the inspector writes it: the cell, the stage's name, the
// rule, its numbers (or, when `numbers_withheld` is given, why not), a note,
// and a closing paragraph in grey.
void draw_derivation(const Derivation& d, const std::string& name, const std::string& closing,
                     const char* numbers_withheld = nullptr) {
  text_between_terms(d.title, gfx::Accent::Highlight);
  text_between_terms(name, std::nullopt, true);
  text_between_terms("= " + d.formula);
  if (numbers_withheld)
    text_between_terms(numbers_withheld, std::nullopt, true);
  else
    text_between_terms("= " + d.numbers);
  if (!d.note.empty()) text_between_terms(d.note, gfx::Accent::Pin);
  ImGui::Spacing();
  text_between_terms(closing, std::nullopt, true);
}

// A cell of the Block tab (embeddings, norms, residual sums, the MLP).
void draw_block_cell(AppState& state, const ModelState::BlockCell& cell) {
  const BlockTrace* t = state.model_block();
  if (!t || !t->info(cell.stage)) return;
  Derivation d = derive_block(*t, cell.stage, cell.row, cell.col, state.model.session->token_labels(),
                              state.model.session->unedited_attention());
  // n₁ is the Pipeline's X as the model computed it; an edited X is what the attention used.
  const Matrix& X = state.doc->scenario().X;
  if (cell.stage == BlockStage::Norm1 && cell.row < X.rows() && cell.col < X.cols() &&
      X(cell.row, cell.col) != t->values(BlockStage::Norm1)(cell.row, cell.col))
    d.note = "X[" + std::to_string(cell.row) + "," + std::to_string(cell.col) + "] of the Pipeline was edited to " +
             format_number(X(cell.row, cell.col), 3) + ": the attention used that value.";
  const BlockStageInfo& info = *t->info(cell.stage);
  draw_derivation(d, info.name, info.explanation);
}

}  // namespace

void draw_inspector_panel(AppState& state) {
  const Document& doc = *state.doc;
  const std::optional<CellRef> cell = state.hovered ? state.hovered : state.selected;
  draw_quiz_section(state);
  if (state.quiz.round) ImGui::Separator();
  ImGui::TextDisabled("Inspector");
  const auto& block = state.model.block;
  const auto block_cell = block.hovered ? block.hovered : block.selected;
  if (state.centre == CentreView::Block && state.model.open() && block_cell) {
    draw_block_cell(state, *block_cell);
  } else if (state.centre == CentreView::Block && state.model.open() && !cell) {
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted("Hover a cell to see how it was made from the cells before it. Click to keep it (Esc clears).");
    ImGui::TextDisabled("The block is read-only: edit or pin the attention in the Pipeline, and the stages after it follow.");
    ImGui::PopTextWrapPos();
  } else if (cell && state.quiz_hides(cell->stage, cell->row, cell->col)) {
    ImGui::TextUnformatted("This cell is the quiz: its value and derivation stay hidden until you answer.");
  } else if (!cell) {
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted("Hover a cell to see where its number comes from. Click to keep it selected (Esc clears).");
    ImGui::TextDisabled("Drag a cell up or down to change it; double-click or Enter to type a value.");
    ImGui::PopTextWrapPos();
  } else if (cell->stage.role == Role::Gradient) {
    const Gradients* g = state.gradients.get(doc);
    const Derivation d = g ? derive_gradient(doc, *g, cell->stage, cell->row, cell->col).text : Derivation{};
    const StageInfo& info = state.stage_info(cell->stage);
    draw_derivation(d, info.name, info.formula);
  } else {
    const Derivation d = derive(doc, cell->stage, cell->row, cell->col);
    const StageInfo& info = state.stage_info(cell->stage);
    draw_derivation(d, info.name, info.explanation,
                    state.quiz_feeds(cell->stage, cell->row, cell->col)
                        ? "Its numbers include the quiz's answer: they show once it is answered."
                        : nullptr);
  }

  ImGui::Separator();
  const auto& pins = doc.scenario().pins;
  ImGui::TextDisabled("Pins (%zu)", pins.size());
  if (pins.empty()) {
    text_between_terms("Drag a computed cell to pin it.", std::nullopt, true);
  } else {
    for (const auto& [key, value] : pins) {
      const std::string label =
          cell_symbol(state.doc->scenario(), key.stage, key.row, key.col) + " = " + format_number(value, 3);
      ImGui::PushID(label.c_str());
      if (ImGui::SmallButton("x")) {
        state.apply(SetPin{key, std::nullopt});
        ImGui::PopID();
        break;  // the map changed under the loop
      }
      ImGui::SameLine();
      if (ImGui::Selectable(label.c_str())) state.selected = CellRef{key.stage, key.row, key.col};
      ImGui::PopID();
    }
    if (ImGui::Button("Clear pins")) state.apply(SetPins{});
  }

  const auto& warnings = doc.engine().warnings();
  if (!warnings.empty()) {
    ImGui::Separator();
    text_colored(gfx::Accent::Warning, "Warnings (%zu)", warnings.size());
    push_wrap_at_visible_edge();
    for (std::size_t i = 0; i < warnings.size() && i < 20; ++i) ImGui::BulletText("%s", warnings[i].message.c_str());
    ImGui::PopTextWrapPos();
  }
}

}  // namespace attention_lab::gui
