#pragma once
// What an export renders and the file names it suggests: "weights-head0.png"
// for a stage, "attention-from-scratch-step04.png" for a lesson step,
// "view.png" for the whole centre view. No GL: unit-tested.

#include "attention_lab/stage_id.h"

#include <optional>
#include <string>
#include <vector>

namespace attention_lab::gui {

enum class ExportKind { Stage, Step, View };

struct ExportTarget {
  ExportKind kind = ExportKind::View;
  StageId stage;  // ExportKind::Stage only
};

// The scales an export offers (1×, 2×, 4× the logical size).
inline constexpr int kExportScales[] = {1, 2, 4};
bool is_export_scale(int scale);

// "step", "view" or a stage id as lessons write it ("weights[0]"); the stage
// must be one of `valid` (the scenario's pipeline). nullopt otherwise.
std::optional<ExportTarget> parse_export_target(const std::string& text, const std::vector<StageId>& valid);

// The stage ids of `valid`, per-head stages folded: "X, W_q, …, weights[0..3], …".
std::string stage_names_list(const std::vector<StageId>& valid);

// "weights-head0.png", "scores-head2.png", "x.png", "w_q.png".
std::string stage_file_name(StageId id);
// A lesson step (1-based): "attention-from-scratch-step04.png"; without a
// lesson the step-through's step: "step04.png"; neither: "view.png".
std::string step_file_name(const std::string& lesson_name, int step);

}  // namespace attention_lab::gui

namespace attention_lab::gui {

// One export: what, where, at which scale.
struct ExportRequest {
  ExportTarget target;
  std::string path;
  int scale = 1;
  // Keep what belongs to the screen, not the slide: the hover and selection
  // outlines, the lit provenance, a lesson's highlight outlines and the
  // quiz's "?" (a plain export leaves them out and prints every number).
  bool with_highlights = false;
};

}  // namespace attention_lab::gui
