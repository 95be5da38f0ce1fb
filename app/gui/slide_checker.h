#pragma once
// --check-slides: walks every step and page of the open lesson in presenter
// mode, as a clicker would, and reports what would not work in a lecture hall:
// a stage the step shows whose numbers are not printed (cells under 22 px),
// a quiz whose inputs are not printed, a quiz whose answer is printed.
// attention-lab-cli validate runs it for a lesson.

#include "logic/slide_walk.h"

#include "attention_lab/stage_id.h"

#include <map>
#include <string>
#include <vector>

namespace attention_lab::gui {

struct AppState;

class SlideChecker {
 public:
  explicit SlideChecker(int steps) : walk_(steps) {}
  // After each frame is drawn: looks at a settled page, turns to the next, and
  // when the last page has been looked at prints the report and asks to quit.
  void after_frame(AppState& state);
  // Warnings printed, one per line: "warning: step 3 ('…'): …".
  int warnings() const { return warnings_; }

 private:
  void look(const AppState& state);
  void finish_step(AppState& state);

  SlideWalk walk_;
  // What the step's pages drew, over all of them: each stage's largest cell,
  // and its largest with numbers printed (0: none printed).
  std::map<StageId, float> drawn_cell_, printed_cell_;
  std::map<StageId, int> labels_cut_;  // the fewest labels cut on a drawing of it
  std::vector<std::string> notes_;  // this step's problems
  int warnings_ = 0;
};

}  // namespace attention_lab::gui
