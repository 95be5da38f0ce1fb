#include "slide_checker.h"

#include "app_state.h"
#include "logic/slide_layout.h"
#include "panels/panels.h"

#include "attention_lab/quiz.h"
#include "attention_lab/stage_registry.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

namespace attention_lab::gui {
namespace {

// A stage's cells must be this large for its numbers to print at the
// presenter's text size.
constexpr float kReadableCell = kReadableCellPx;

bool inside(const Rect& r, const Rect& area) {
  return r.x0 >= area.x0 - 1 && r.y0 >= area.y0 - 1 && r.x1 <= area.x1 + 1 && r.y1 <= area.y1 + 1;
}

std::string px(float v) { return std::to_string(static_cast<int>(std::floor(v))) + " px"; }

std::string name(const Scenario& s, StageId id) {
  const std::string symbol = describe_stage(s, id).symbol, written = to_string(id);
  return symbol == written ? written : symbol + " (" + written + ")";
}

}  // namespace

void SlideChecker::after_frame(AppState& state) {
  if (!state.lesson.lesson) return;
  const bool slide = showing_slide(state);
  SlideFrame f;
  f.step = state.lesson.step;
  f.page = slide ? state.slide.page : 0;
  f.pages = slide ? state.slide.pages : 1;
  f.room = slide ? state.slide.room : std::string();
  f.busy = state.busy();
  const SlideWalk::Decision d = walk_.observe(f);
  if (d.action != SlideWalk::Action::Look) return;
  if (d.unsettled) notes_.push_back("its slide did not settle on one layout (page " + std::to_string(f.page + 1) + ")");
  look(state);
  const bool last = walk_.last_page();
  if (walk_.step_done()) finish_step(state);
  if (!last) {
    state.lesson_next();
    return;
  }
  const int steps = static_cast<int>(state.lesson.lesson->steps.size());
  const ImVec2 size = ImGui::GetMainViewport()->Size;
  std::printf("%d %s checked as slides at %dx%d in presenter mode: %d %s\n", steps, steps == 1 ? "step" : "steps",
              static_cast<int>(size.x), static_cast<int>(size.y), warnings_, warnings_ == 1 ? "warning" : "warnings");
  std::fflush(stdout);
  state.quit = true;
}

void SlideChecker::look(const AppState& state) {
  const Scenario& s = state.doc->scenario();
  for (const DrawnHeatmap& h : state.drawn) {
    if (!inside(h.rect, state.centre_rect)) continue;
    const StageId id = whole_matrix(s, h.stage);
    drawn_cell_[id] = std::max(drawn_cell_[id], h.cell_px);
    float& best = printed_cell_[id];
    if (h.values_printed > 0) best = std::max(best, h.cell_px);
    // Its labels: whole on some drawing of it (a slide has room for words).
    const auto [cut, fresh] = labels_cut_.try_emplace(id, h.labels_cut);
    if (!fresh) cut->second = std::min(cut->second, h.labels_cut);
  }
  // The softmax row beside a slide prints the masked scores and weights of its row.
  if (showing_slide(state) && state.lesson.lesson) {
    const LessonStep& step = state.lesson.lesson->steps[static_cast<std::size_t>(state.lesson.step)];
    if (step.softmax_row) {
      for (const StageKind k : {StageKind::Masked, StageKind::Weights}) {
        const StageId id = whole_matrix(s, StageId::of_head(k, step.softmax_row->head));
        drawn_cell_[id] = std::max(drawn_cell_[id], kReadableCell);
        printed_cell_[id] = std::max(printed_cell_[id], kReadableCell);
      }
    }
  }
}

void SlideChecker::finish_step(AppState& state) {
  const Scenario& s = state.doc->scenario();
  const LessonStep& step = state.lesson.lesson->steps[static_cast<std::size_t>(state.lesson.step)];
  const auto printed = [&](StageId id) {
    const auto it = printed_cell_.find(whole_matrix(s, id));
    return it != printed_cell_.end() && it->second >= kReadableCell;
  };
  const auto why_not = [&](StageId id) {
    const auto drawn = drawn_cell_.find(whole_matrix(s, id));
    if (drawn == drawn_cell_.end()) return std::string("is not on the slide");
    return "is drawn with cells of " + px(std::max(printed_cell_[whole_matrix(s, id)], drawn->second)) +
           " (its numbers need " + px(kReadableCell) + ")";
  };
  for (const StageId id : step.show) {
    if (!printed(id)) notes_.push_back(name(s, id) + " " + why_not(id));
    else if (const int cut = labels_cut_[whole_matrix(s, id)]; cut > 0)
      notes_.push_back(name(s, id) + " has " + std::to_string(cut) + (cut == 1 ? " label" : " labels") +
                       " cut short (the whole word only on hover)");
  }
  if (step.quiz) {
    const CellRef& asked = step.quiz->cell;
    const std::string quiz = "the quiz on " + to_string(asked);
    // Its inputs: what a learner computes the answer from.
    const auto sources = cell_sources(s, asked.stage, asked.row, asked.col);
    if (sources.empty()) notes_.push_back(quiz + " asks for an input, which nothing on the screen computes");
    std::set<StageId> inputs;
    for (const CellSource& src : sources) inputs.insert(src.stage);
    for (const StageId id : inputs)
      if (!printed(id)) notes_.push_back(quiz + ": its input " + name(s, id) + " " + why_not(id));
    // Its answer, printed where the question does not hide it (a cell it is a copy of).
    const CellRef root = copy_source(s, asked);
    for (const auto& [id, cell] : printed_cell_) {
      if (cell < kReadableCell || id == whole_matrix(s, asked.stage)) continue;
      const StageInfo& info = state.stage_info(id);
      if (info.rows * info.cols > 64 * 64) continue;
      bool found = false;
      for (int r = 0; r < info.rows && !found; ++r)
        for (int c = 0; c < info.cols && !found; ++c) {
          const CellRef shown{id, r, c};
          if (copy_source(s, shown) == root && !gives_away(s, asked, shown)) {
            notes_.push_back(quiz + ": its answer is printed on the slide, as " + to_string(shown));
            found = true;
          }
        }
    }
  }
  for (const std::string& n : notes_) {
    std::printf("warning: step %d ('%s'): %s\n", state.lesson.step + 1, step.title.c_str(), n.c_str());
    ++warnings_;
  }
  notes_.clear();
  printed_cell_.clear();
  drawn_cell_.clear();
  labels_cut_.clear();
}

}  // namespace attention_lab::gui
