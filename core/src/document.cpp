#include "attention_lab/document.h"

#include <cassert>

namespace attention_lab {

Document::Document(Scenario scenario) : scenario_(std::make_unique<Scenario>(std::move(scenario))) {
  assert(validate(*scenario_).empty());
  engine_.recompute_all(*scenario_);
}

std::string Document::apply(const Edit& edit, std::uint64_t gesture) {
  Applied applied = apply_edit(*scenario_, edit);
  if (!applied.error.empty()) return applied.error;
  engine_.recompute(*scenario_, applied.stale);

  redo_.clear();
  if (gesture != 0 && !undo_.empty() && undo_.back().gesture == gesture) {
    // Same gesture: keep the first inverse (the state before the drag began).
    undo_.back().forward = edit;
    undo_.back().label = describe(edit);
    undo_.back().serial = next_serial_++;
    return {};
  }
  undo_.push_back({edit, std::move(applied.inverse), describe(edit), gesture, next_serial_++});
  if (undo_.size() > kMaxUndo) undo_.erase(undo_.begin());
  return {};
}

bool Document::undo() {
  if (undo_.empty()) return false;
  Entry entry = std::move(undo_.back());
  undo_.pop_back();
  Applied applied = apply_edit(*scenario_, entry.inverse);
  // An inverse was produced from the state it restores, so it always applies.
  assert(applied.error.empty());
  engine_.recompute(*scenario_, applied.stale);
  entry.gesture = 0;  // a redone entry never merges with a later drag
  redo_.push_back(std::move(entry));
  return true;
}

bool Document::redo() {
  if (redo_.empty()) return false;
  Entry entry = std::move(redo_.back());
  redo_.pop_back();
  Applied applied = apply_edit(*scenario_, entry.forward);
  assert(applied.error.empty());
  engine_.recompute(*scenario_, applied.stale);
  entry.inverse = std::move(applied.inverse);
  undo_.push_back(std::move(entry));
  return true;
}

}  // namespace attention_lab
