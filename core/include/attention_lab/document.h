#pragma once
// A Document is one open scenario: its inputs, the engine's computed stages and
// the undo history. Front ends and tests change it only through apply(), so
// every change is validated, recomputed incrementally and undoable.

#include "attention_lab/edit.h"
#include "attention_lab/engine.h"
#include "attention_lab/scenario.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace attention_lab {

class Document {
 public:
  // `scenario` must be valid (see validate()); an invalid one is a programming error.
  explicit Document(Scenario scenario);

  const Scenario& scenario() const { return *scenario_; }
  const Engine& engine() const { return engine_; }
  MatrixView stage(StageId id) const { return engine_.stage(id); }

  // Applies `edit` and records it for undo; returns an error message (and
  // changes nothing) when the edit is invalid. Edits that carry the same
  // non-zero `gesture` id, one right after the other, share one undo entry:
  // a whole drag undoes in one step.
  std::string apply(const Edit& edit, std::uint64_t gesture = 0);

  // A fresh id for apply(…, gesture).
  std::uint64_t begin_gesture() { return ++last_gesture_; }

  bool can_undo() const { return !undo_.empty(); }
  bool can_redo() const { return !redo_.empty(); }
  std::string undo_label() const { return can_undo() ? undo_.back().label : ""; }
  std::string redo_label() const { return can_redo() ? redo_.back().label : ""; }
  bool undo();
  bool redo();

  // [SECTION] Changes computed in the background
  // A change that recomputes everything at a large size (a resize, a new
  // scenario, undoing one) is prepared here on the UI thread, computed on a
  // worker thread, then committed, so the window keeps showing the last
  // finished result meanwhile. The document must not change between prepare
  // and commit (the app refuses edits while a change is pending).
  struct PendingChange {
    enum class Kind { Apply, Undo, Redo };
    Kind kind = Kind::Apply;
    std::unique_ptr<Scenario> scenario;  // the scenario after the change
    Engine engine;                       // filled by compute()
    Edit edit;                           // Apply: the edit and its inverse, for the history
    Edit inverse;
    std::string label;
    bool computed = false;

    // Computes every stage of `scenario`: safe on any thread, touches nothing else.
    void compute() {
      engine.recompute_all(*scenario);
      computed = true;
    }
  };

  // Returns the error message in `error` (and no change) when `edit` is invalid.
  std::unique_ptr<PendingChange> prepare(const Edit& edit, std::string& error) const;
  std::unique_ptr<PendingChange> prepare_undo() const;  // nullptr when there is nothing to undo
  std::unique_ptr<PendingChange> prepare_redo() const;
  void commit(std::unique_ptr<PendingChange> change);

  // [SECTION] Set aside without its stages
  // A document set aside (a model's layer left for another) may let its
  // computed stages go and keep its scenario and history, a tenth of its
  // memory at real sizes. Until its stages are back, only scenario(),
  // modified() and the undo labels may be used. restore_stages() computes
  // them here, or takes an engine computed elsewhere (on a worker, from a
  // copy of scenario(): the same values).
  void release_stages();
  bool stages_released() const { return released_; }
  void restore_stages();
  void restore_stages(Engine computed);

  // The edits undo() / redo() would apply next (empty when none), so the app
  // can tell whether they are heavy enough for the background.
  std::vector<Edit> next_undo_edits() const;
  std::vector<Edit> next_redo_edits() const;

  // Unsaved changes since construction or the last mark_saved().
  bool modified() const { return state_serial() != saved_serial_; }
  // Changes whenever the scenario does (an edit, undo, redo, a commit), and
  // differs between documents: what views derived from the scenario cache by.
  std::uint64_t revision() const { return revision_; }
  void mark_saved() { saved_serial_ = state_serial(); }
  // Work restored after a crash is on no disk but the recovery folder: it
  // stays unsaved until the next save, whatever undo reaches.
  void mark_unsaved() { saved_serial_ = kNeverSaved; }

  // Bytes of the matrices the undo and redo history keeps that the scenario
  // does not share (each buffer once): what a resize, a toggle or a pasted
  // matrix costs in memory once it is done (the old X after a resize of T).
  std::uint64_t history_bytes() const;

  // Kept for the undo menu and memory: the oldest entries go first.
  static constexpr std::size_t kMaxUndo = 1000;

 private:
  // One undo step. A gesture may touch several cells, so it keeps every edit:
  // redo applies `forward` in order, undo applies `inverse` backwards.
  struct Entry {
    std::vector<Edit> forward;
    std::vector<Edit> inverse;
    std::string label;
    std::uint64_t gesture = 0;
    std::uint64_t serial = 0;  // identifies the state this entry leads to
  };

  static void add_inverse(Entry& entry, Edit inverse);
  std::uint64_t state_serial() const { return undo_.empty() ? base_serial_ : undo_.back().serial; }

  std::unique_ptr<Scenario> scenario_;  // heap: the engine keeps a pointer to it
  Engine engine_;
  bool released_ = false;  // engine_ is empty (release_stages)
  std::vector<Entry> undo_;
  std::vector<Entry> redo_;
  std::uint64_t last_gesture_ = 0;
  std::uint64_t revision_ = 0;
  void touch();
  std::uint64_t next_serial_ = 1;
  static constexpr std::uint64_t kNeverSaved = ~std::uint64_t{0};  // no state has this serial
  std::uint64_t saved_serial_ = 0;
  std::uint64_t base_serial_ = 0;  // the state below the oldest entry: not 0 once old entries were dropped
};

}  // namespace attention_lab
