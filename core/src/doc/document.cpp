#include "attention_lab/document.h"

#include <atomic>
#include <cassert>
#include <set>
#include <type_traits>

namespace attention_lab {

namespace {

// Whether applying `next` right after `prev` leaves the same scenario as
// applying `next` alone, so a drag on one value keeps one forward edit.
bool supersedes(const Edit& next, const Edit& prev) {
  if (const auto* a = std::get_if<SetCell>(&next))
    if (const auto* b = std::get_if<SetCell>(&prev)) return a->target == b->target && a->row == b->row && a->col == b->col;
  if (const auto* a = std::get_if<SetPin>(&next))
    if (const auto* b = std::get_if<SetPin>(&prev)) return a->key == b->key;
  if (std::holds_alternative<SetRope>(next)) return std::holds_alternative<SetRope>(prev);  // θ dragged
  if (std::holds_alternative<SetQkNorm>(next)) return std::holds_alternative<SetQkNorm>(prev);  // ε dragged
  if (std::holds_alternative<SetSoftcap>(next)) return std::holds_alternative<SetSoftcap>(prev);  // c dragged
  return std::holds_alternative<SetTemperature>(next) && std::holds_alternative<SetTemperature>(prev);
}

// Whether `earlier`, an inverse recorded earlier in the same entry, restores
// everything `later` would: undo applies it after `later`'s place anyway.
bool covers(const Edit& earlier, const Edit& later) {
  if (std::holds_alternative<ReplaceScenario>(earlier)) return true;  // the whole scenario
  if (std::holds_alternative<SetPins>(earlier)) return std::holds_alternative<SetPins>(later) || std::holds_alternative<SetPin>(later);
  if (const auto* a = std::get_if<SetMatrix>(&earlier)) {
    if (const auto* b = std::get_if<SetMatrix>(&later)) return a->target == b->target;
    if (const auto* b = std::get_if<SetCell>(&later)) return a->target == b->target;
    return false;
  }
  if (const auto* a = std::get_if<SetLabels>(&earlier)) {  // the whole list of that kind
    if (const auto* b = std::get_if<SetLabels>(&later)) return a->which == b->which;
    if (const auto* b = std::get_if<SetTokenLabel>(&later))
      return a->which == (b->key ? LabelList::KeyTokens : LabelList::Tokens);
    if (std::holds_alternative<SetFeatureLabel>(later)) return a->which == LabelList::Features;
    return false;
  }
  if (earlier.index() != later.index()) return false;
  if (const auto* a = std::get_if<SetCell>(&earlier)) {
    const auto& b = std::get<SetCell>(later);
    return a->target == b.target && a->row == b.row && a->col == b.col;
  }
  if (const auto* a = std::get_if<SetPin>(&earlier)) return a->key == std::get<SetPin>(later).key;
  if (const auto* a = std::get_if<SetToggle>(&earlier)) return a->which == std::get<SetToggle>(later).which;
  if (const auto* a = std::get_if<SetTokenLabel>(&earlier)) {
    const auto& b = std::get<SetTokenLabel>(later);
    return a->index == b.index && a->key == b.key;
  }
  if (const auto* a = std::get_if<SetFeatureLabel>(&earlier)) return a->index == std::get<SetFeatureLabel>(later).index;
  // SetMask, SetTemperature, SetRope and SetQkNorm restore the whole mask or the whole setting.
  return std::holds_alternative<SetMask>(earlier) || std::holds_alternative<SetTemperature>(earlier) ||
         std::holds_alternative<SetRope>(earlier) || std::holds_alternative<SetQkNorm>(earlier) ||
         std::holds_alternative<SetSoftcap>(earlier);
}

}  // namespace

namespace {
std::atomic<std::uint64_t> g_revisions{0};  // shared by every document, so two never share a revision
}  // namespace

void Document::touch() { revision_ = ++g_revisions; }

Document::Document(Scenario scenario) : scenario_(std::make_unique<Scenario>(std::move(scenario))) {
  touch();
  assert(validate(*scenario_).empty());
  engine_.recompute_all(*scenario_);
}

// An inverse an earlier one covers is not kept, so a long drag stays one small entry.
void Document::add_inverse(Entry& entry, Edit inverse) {
  for (const Edit& kept : entry.inverse)
    if (covers(kept, inverse)) return;
  entry.inverse.push_back(std::move(inverse));
}

std::string Document::apply(const Edit& edit, std::uint64_t gesture) {
  Applied applied = apply_edit(*scenario_, edit);
  if (!applied.error.empty()) return applied.error;
  touch();
  engine_.recompute(*scenario_, applied.stale);

  redo_.clear();
  if (gesture != 0 && !undo_.empty() && undo_.back().gesture == gesture) {
    // Same gesture: one entry, however many cells the drag touched.
    Entry& entry = undo_.back();
    if (supersedes(edit, entry.forward.back()))
      entry.forward.back() = edit;
    else
      entry.forward.push_back(edit);
    add_inverse(entry, std::move(applied.inverse));
    entry.label = describe(edit);
    entry.serial = next_serial_++;
    return {};
  }
  undo_.push_back({{edit}, {std::move(applied.inverse)}, describe(edit), gesture, next_serial_++});
  if (undo_.size() > kMaxUndo) {
    base_serial_ = undo_.front().serial;  // the oldest state undo can still reach
    undo_.erase(undo_.begin());
  }
  return {};
}

std::uint64_t Document::history_bytes() const {
  std::set<const void*> counted;
  for (const SharedMatrix* m : scenario_->matrices()) counted.insert(m->buffer());  // the scenario's own
  std::uint64_t total = 0;
  auto count = [&](const SharedMatrix& m) {
    if (m.buffer() && counted.insert(m.buffer()).second) total += static_cast<std::uint64_t>(m.size()) * sizeof(float);
  };
  // The edits that hold matrices: a whole scenario, a whole matrix, a mask.
  auto visit = [&](const Edit& edit) {
    std::visit(
        [&](const auto& e) {
          using E = std::decay_t<decltype(e)>;
          if constexpr (std::is_same_v<E, ReplaceScenario>) {
            if (e.scenario)
              for (const SharedMatrix* m : e.scenario->matrices()) count(*m);
          } else if constexpr (std::is_same_v<E, SetMatrix>) {
            count(e.value);
          } else if constexpr (std::is_same_v<E, SetMask>) {
            if (e.custom) count(*e.custom);
          }
        },
        edit);
  };
  for (const std::vector<Entry>* history : {&undo_, &redo_})
    for (const Entry& entry : *history) {
      for (const Edit& e : entry.forward) visit(e);
      for (const Edit& e : entry.inverse) visit(e);
    }
  return total;
}

bool Document::undo() {
  if (undo_.empty()) return false;
  Entry entry = std::move(undo_.back());
  undo_.pop_back();
  for (auto it = entry.inverse.rbegin(); it != entry.inverse.rend(); ++it) {
    Applied applied = apply_edit(*scenario_, *it);
    // An inverse was produced from the state it restores, so it always applies.
    assert(applied.error.empty());
    touch();
    engine_.recompute(*scenario_, applied.stale);
  }
  entry.gesture = 0;  // a redone entry never merges with a later drag
  redo_.push_back(std::move(entry));
  return true;
}

bool Document::redo() {
  if (redo_.empty()) return false;
  Entry entry = std::move(redo_.back());
  redo_.pop_back();
  entry.inverse.clear();
  for (const Edit& forward : entry.forward) {
    Applied applied = apply_edit(*scenario_, forward);
    assert(applied.error.empty());
    touch();
    engine_.recompute(*scenario_, applied.stale);
    add_inverse(entry, std::move(applied.inverse));
  }
  undo_.push_back(std::move(entry));
  return true;
}

// [SECTION] Changes computed in the background

std::unique_ptr<Document::PendingChange> Document::prepare(const Edit& edit, std::string& error) const {
  auto change = std::make_unique<PendingChange>();
  change->kind = PendingChange::Kind::Apply;
  change->scenario = std::make_unique<Scenario>(*scenario_);
  Applied applied = apply_edit(*change->scenario, edit);
  if (!applied.error.empty()) {
    error = applied.error;
    return nullptr;
  }
  change->edit = edit;
  change->inverse = std::move(applied.inverse);
  change->label = describe(edit);
  return change;
}

std::unique_ptr<Document::PendingChange> Document::prepare_undo() const {
  if (undo_.empty()) return nullptr;
  auto change = std::make_unique<PendingChange>();
  change->kind = PendingChange::Kind::Undo;
  change->scenario = std::make_unique<Scenario>(*scenario_);
  const Entry& entry = undo_.back();
  for (auto it = entry.inverse.rbegin(); it != entry.inverse.rend(); ++it) {
    [[maybe_unused]] const Applied applied = apply_edit(*change->scenario, *it);
    assert(applied.error.empty());
  }
  change->label = entry.label;
  return change;
}

std::unique_ptr<Document::PendingChange> Document::prepare_redo() const {
  if (redo_.empty()) return nullptr;
  auto change = std::make_unique<PendingChange>();
  change->kind = PendingChange::Kind::Redo;
  change->scenario = std::make_unique<Scenario>(*scenario_);
  const Entry& entry = redo_.back();
  for (const Edit& forward : entry.forward) {
    [[maybe_unused]] const Applied applied = apply_edit(*change->scenario, forward);
    assert(applied.error.empty());
  }
  change->label = entry.label;
  return change;
}

void Document::release_stages() {
  engine_ = Engine();
  released_ = true;
}

void Document::restore_stages() {
  if (!released_) return;
  Engine computed;
  computed.recompute_all(*scenario_);
  restore_stages(std::move(computed));
}

void Document::restore_stages(Engine computed) {
  engine_ = std::move(computed);
  engine_.rebind(*scenario_);  // computed from a copy with the same values
  released_ = false;
}

void Document::commit(std::unique_ptr<PendingChange> change) {
  if (!change->computed) change->compute();
  // The engine reads inputs through a pointer to the scenario it computed;
  // moving the unique_ptr keeps that heap object, so the pointer stays valid.
  std::unique_ptr<Scenario> old_scenario = std::move(scenario_);
  scenario_ = std::move(change->scenario);
  touch();
  engine_ = std::move(change->engine);
  switch (change->kind) {
    case PendingChange::Kind::Apply:
      redo_.clear();
      undo_.push_back({{change->edit}, {std::move(change->inverse)}, change->label, 0, next_serial_++});
      if (undo_.size() > kMaxUndo) {
        base_serial_ = undo_.front().serial;
        undo_.erase(undo_.begin());
      }
      break;
    case PendingChange::Kind::Undo: {
      Entry entry = std::move(undo_.back());
      undo_.pop_back();
      entry.gesture = 0;
      redo_.push_back(std::move(entry));
      break;
    }
    case PendingChange::Kind::Redo: {
      Entry entry = std::move(redo_.back());
      redo_.pop_back();
      // Recreate the inverses against the state they restore, as redo() does.
      Scenario replay = *old_scenario;
      entry.inverse.clear();
      for (const Edit& forward : entry.forward) {
        Applied applied = apply_edit(replay, forward);
        add_inverse(entry, std::move(applied.inverse));
      }
      undo_.push_back(std::move(entry));
      break;
    }
  }
}

std::vector<Edit> Document::next_undo_edits() const { return undo_.empty() ? std::vector<Edit>{} : undo_.back().inverse; }
std::vector<Edit> Document::next_redo_edits() const { return redo_.empty() ? std::vector<Edit>{} : redo_.back().forward; }

}  // namespace attention_lab
