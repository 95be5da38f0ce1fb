#pragma once
// The engine computes every stage of multi-head self-attention from a Scenario
// and keeps what it needs to show each one. It tracks which stages are stale
// and recomputes only those: whole heads after a setting changes, single rows
// and columns after a single-cell edit.
//
// [SECTION] What is stored, and what is derived on demand
// Q, K, V hold all heads side by side (head i is column block i, the same
// memory the per-head views show); concat holds the heads' contexts side by
// side, so context_i is a view of it. The mask, concat and output are stored.
//
// scores: stored, T×T per head, pins applied. The softmax never reads a
// masked cell, so the forward pass computes scores only in the 64×64 blocks
// that hold an allowed cell: with a causal mask that skips the upper half of
// the product. The other blocks are computed the first time stage(scores[h])
// is requested (once per head until Q or K change), so the matrix a front end
// shows always holds the true Q_i·K_iᵀ, masked cells included.
//
// scaled, masked and weights: not stored. scaled and masked are scores times
// a constant, with −∞ where the mask forbids, and pins laid over them. For
// the weights the engine keeps, per head and row, the softmax state: an
// offset m (the row max when the row was last computed from scratch) and the
// sum Z = Σ_j e^(masked_ij − m) in double, so weights_ij = e^(masked_ij − m)/Z.
// stage() materializes these three for the requested head into a small cache
// (kDerivedCacheSize matrices, least recently used out first). A view of one
// of them stays valid until the next recompute, or until kDerivedCacheSize
// other derived stages have been requested since. Rows that are unusual (a
// pin on scaled, masked or weights, no allowed key, +∞ or NaN) are "direct":
// their weights are computed explicitly as before and their context from them.
//
// context: the engine keeps the unnormalized context U = Σ_j e^(masked_ij − m)
// V_j per head, so context = U/Z (context pins laid over it). When W_o is on
// it also keeps, once an edit of X (or of one row of K or V) has needed them,
// the per-head partial outputs R_h = U_h·W_o_h (T × h·d_out floats), so
// output_i = Σ_h R_h,i / Z_h,i can be brought up to date without a
// T × h·d_v × d_out product. A full recompute drops them.
//
// [SECTION] Incremental updates and their accuracy
// One cell of X changes one row of Q, K and V; that changes one row and one
// column of every head's scores. Every other softmax row changes by a factor
// and one entry (Z += e_new − e_old), its context by a rank-one correction of
// U, and its output row is re-summed from R. An edit of a column of W_q or W_k
// recomputes that head (scores included); a column of W_v recomputes one
// column of V, U and concat and updates the output by a rank-one product; a
// cell of W_o or b_o recomputes one output column; a mask cell one row of
// every head. Pins recompute the rows they sit in. Settings (scale,
// temperature, toggles, whole matrices, resizes) recompute whole stages.
//
// Incremental updates round differently from a full recompute. Every stage
// stays within 1e-5 of a full recompute, relative to the largest finite
// magnitude of that stage (tests/core/incremental_test.cpp): each row of U
// and R carries an estimate of the rounding error its updates accumulated
// (amplified when Z shrinks, e.g. when the row's dominant entry is edited
// away; each update adds about an ulp of its terms and of the row's own
// context, so rows with small contexts go longer) and is recomputed from
// scratch, batched per head after the edit's pass over the rows, before the
// estimate reaches 64 float ulps of the head's largest context value; output rows updated by rank-one
// products are recomputed exactly after at most 64 such updates. Rows start
// at staggered estimates so those refreshes spread over many edits. The bound
// assumes scores of moderate size (|masked| up to a few dozen): a score of
// 200 has a float ulp of 1.5e-5, and any two float computations of it (a dot
// product here, a blocked product there) can move the weights by that much.
//
// The engine copies the scenario's pins at every recompute, so stage() of a
// computed stage reads only the engine; inputs are views of the scenario.
//
// [SECTION] Threads, cancellation, copies
// Products run on OpenMP threads (omp_set_num_threads or Eigen::setNbThreads
// choose how many); independent heads run in parallel. The engine itself must
// be used from one thread at a time (stage() fills caches). A full recompute
// can run on a worker thread into a separate Engine that is then moved into
// place; set_control() lets the owner watch its progress and cancel it.

#include "attention_lab/gemm.h"
#include "attention_lab/matrix.h"
#include "attention_lab/scenario.h"
#include "attention_lab/softcap.h"
#include "attention_lab/softmax.h"
#include "attention_lab/stage_id.h"

#include <array>
#include <cmath>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace attention_lab {

// Something the user should know about the numbers, e.g. a query row whose
// mask lets it attend to nothing.
struct Warning {
  int head = -1;  // -1 when not about one head
  int row = -1;
  std::string message;
};

// What went stale. Head-level entries (editing one column of W_q only touches
// the head that column belongs to) or single cells: a cell of an input (X,
// W_q, …, b_o, the mask) or the canonical key of a pin that was set or
// removed. A cell entry promises that nothing else changed since the engine's
// last recompute, so the engine may update only what depends on that cell.
class Invalidation {
 public:
  void mark(StageKind kind, int head);    // one head (ignored for per-layer kinds)
  void mark_all_heads(StageKind kind);
  void mark_everything();
  // One cell of `kind` (row, col in that matrix's own coordinates; Q, K and V
  // pins address the full matrices, context pins one head's block). `head` is
  // the head the cell belongs to, -1 for per-layer matrices.
  void mark_cell(StageKind kind, int head, int row, int col,
                 float old_value = std::numeric_limits<float>::quiet_NaN());
  bool everything() const { return everything_; }

  struct Entry {
    StageKind kind;
    int head;      // -1 = every head
    int row = -1;  // ≥ 0: only this cell changed
    int col = -1;
    // an input cell's value before the edit (NaN when not known): lets the
    // engine shift what depends on it linearly instead of recomputing
    float old_value = std::numeric_limits<float>::quiet_NaN();
    bool is_cell() const { return row >= 0 && col >= 0; }
  };
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  bool everything_ = false;
  std::vector<Entry> entries_;
};

// Lets the thread that owns an Engine watch a long recompute running on
// another thread and stop it. `progress` goes from 0 to 1.
struct ComputeControl {
  std::atomic<bool> cancel{false};
  std::atomic<float> progress{0.0f};
};

// Thrown by recompute() and recompute_all() when their ComputeControl's
// `cancel` was set. The engine is then half-computed and must not be used
// again except to be destroyed or to recompute_all() (the GUI computes into a
// separate Engine and discards it).
class Cancelled : public std::runtime_error {
 public:
  Cancelled() : std::runtime_error("the computation was cancelled") {}
};

// A stage id the engine does not hold: another layer (an engine computes one
// layer, layer 0), a gradient (not computed yet) or a head it does not have.
// Never answered with some other stage's values.
class StageNotHeld : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class Engine {
 public:
  // How many scaled, masked or weights matrices stage() keeps materialized.
  static constexpr std::size_t kDerivedCacheSize = 6;

  // Forgets everything and computes all stages of `scenario`, which must stay
  // alive and unmoved while the engine reads from it (see rebind()).
  void recompute_all(const Scenario& scenario);

  // Recomputes the stages `what` names and everything downstream of them.
  void recompute(const Scenario& scenario, const Invalidation& what);

  // Points the engine at `scenario` without recomputing anything: after the
  // engine or its scenario moved (they must hold the same values).
  void rebind(const Scenario& scenario) { scenario_ = &scenario; }

  // A copy for reading only, what Compare's snapshot keeps: every stage has
  // the same values (to within rounding), but the copy keeps neither Q, K, V
  // nor the per-head scores (after an edit they are most of what the document
  // replaced): it projects one head's blocks of Q, K and V again from its
  // scenario when a stage of that head is read, and recomputes that head's
  // scores from them, letting the previous head's go; a whole Q, K or V is
  // projected when it is read and let go when another one or a stage of a
  // head is read.
  // Nor does it keep what only incremental updates need (U, R). So it takes
  // a small part of the memory, and a view of one of its per-head stages or
  // of a projection stays valid only until the next stage() or rows().
  // Recomputing the copy recomputes it in full.
  Engine read_only_copy() const;
  bool read_only() const { return read_only_; }

  // Progress and cancellation for the next recomputes (nullptr: none). The
  // control must outlive them. A copy or a move of the engine starts without
  // one, so an engine computed on a worker and moved into place never reports
  // to that worker's (soon destroyed) control again.
  void set_control(ComputeControl* control) { control_.p = control; }

  // The current value of any stage (inputs included). Per-head views are
  // windows onto the shared storage; scaled, masked and weights are
  // materialized on demand (see above), so this is not thread-safe.
  // Throws StageNotHeld for an id of another layer, a gradient or a head
  // out of range (as rows() and version() do).
  MatrixView stage(StageId id) const;

  // Why `id` is not held ("grad.weights[0]: …"), or "" when it is.
  std::string not_held(StageId id) const;

  // Rows [first, first + count) of a stage (clamped to the stage), computed
  // without materializing the whole of a derived one: the head view of a
  // long sequence shows 25 of 1024 rows of twelve heads' weights, 25 rows
  // each instead of twelve 1024×1024 matrices. Same values as stage().
  Matrix rows(StageId id, Eigen::Index first, Eigen::Index count) const;

  // Bumped every time a stage's values are rewritten; front ends compare it to
  // know when to re-upload a texture. Unique across all engines of the
  // process, so an engine moved in after a background recompute never
  // repeats a version an earlier one gave.
  std::uint64_t version(StageId id) const;

  const std::vector<Warning>& warnings() const { return warnings_; }
  const Dims& dims() const { return dims_; }

  // Bytes of every matrix and per-row array the engine keeps, caches included,
  // and of those the part that other engines (read-only copies) hold too.
  std::size_t bytes_kept() const;
  std::size_t bytes_shared() const;

  // How many times a stage kind's values were rewritten, wholly or partly,
  // summed over heads, since the last reset_counters(); tests use it to prove
  // work was skipped. full_recompute_count counts only the times a head's
  // whole stage (or a whole layer stage) was computed from scratch.
  int recompute_count(StageKind kind) const { return counts_[static_cast<std::size_t>(kind)]; }
  int full_recompute_count(StageKind kind) const { return full_counts_[static_cast<std::size_t>(kind)]; }
  void reset_counters() {
    counts_.fill(0);
    full_counts_.fill(0);
  }

 private:
  // Since which version a derived stage (scaled, masked, weights) of one head
  // changed as a whole, and which rows and columns changed after that, so a
  // cached copy can be patched instead of rebuilt.
  struct Changes {
    std::uint64_t full = 0;
    std::vector<std::uint64_t> rows;  // per row: the version it last changed at
    std::vector<std::pair<std::uint64_t, Eigen::Index>> cols;
  };
  // Per head: the scores and the softmax state of every row.
  struct HeadState {
    Matrix S;                          // T×T scores, pins applied; see block_valid
    std::vector<std::uint8_t> valid;   // nb×nb: 1 when that 64×64 block of S is computed
    std::vector<float> offset;         // m per row
    std::vector<double> sum;           // Z per row
    std::vector<float> cscale;         // concat = U·cscale: 1/Z, or 1 for direct rows
    std::vector<RowIssue> issue;
    std::vector<std::uint8_t> direct;  // weights computed explicitly for this row
    std::vector<float> drift;          // error estimate of U and R rows (see above)
    float cmax = 0.0f;                 // largest |context| of the head: the drift unit
    float score_error = 0.0f;          // bound of the rounding rank-one updates added to S
    float score_largest = 0.0f;        // largest |S| the last shift found (0: none yet)
    Changes changes[4];                // scaled, masked, weights, position_bias (see changes_of)
  };
  // What edit_rows knows of one head before its pass over the rows.
  struct HeadEdit {
    RowVector y_old, y_new;         // V_r(old)·W_o_h and V_r(new)·W_o_h, when has_y
    bool has_y = false;             // R_h is kept and V_r or K_r changed
    float vmax_old = 0.0f, vmax_new = 0.0f;  // largest |V_h,r| before and after
    double inv_unit = 0.0;          // 1 / the head's drift unit (HeadState::cmax)
  };
  // What edit_entry did to one row of one head.
  struct RowUpdate {
    // 0 untouched, 1 updated incrementally, 2 recomputed, 3 to be recomputed
    // (edit_rows batches those per head after its pass)
    std::uint8_t state = 0;
    float a = 0.0f, b = 0.0f;  // U_i += a·V_r(old) + b·V_r(new), likewise R_i with y
  };
  // A weights copy's exponentials e^(masked − offset), row by row, with the
  // offset and the length each row was taken with (length −1: none kept, a
  // direct row). An edit that moved a row's masked values in a few columns
  // and its sum (an X or K edit: column r) then costs the copy a multiply per
  // entry instead of the row's exponentials. A copy of the engine (read-only:
  // Compare) starts without them.
  struct KeptExps {
    KeptExps() = default;
    KeptExps(const KeptExps&) {}
    KeptExps(KeptExps&&) = default;
    KeptExps& operator=(const KeptExps&) {
      *this = KeptExps{};
      return *this;
    }
    KeptExps& operator=(KeptExps&&) = default;
    Matrix e;
    std::vector<float> offset;
    std::vector<Eigen::Index> length;
  };
  struct Derived {
    StageId id;
    std::uint64_t version = 0;
    std::uint64_t used = 0;
    Matrix m;
    KeptExps exps;  // weights only
  };
  // A W_q or W_k edit's change of one head's scores, S += a·bᵀ per pair (one
  // pair, or two with RoPE's partner column), applied by head_block to the
  // blocks it reads and by edit_qk_column to the other computed ones.
  struct ScoreShift {
    struct Pair {
      Eigen::VectorXf a, b;
      float step = 0.0f;  // largest |a_i·b_j|
    };
    std::vector<Pair> pairs;
    std::vector<std::uint8_t> blocks;  // computed before the edit: the blocks to shift
    // per pair × block row: the largest |S| after the pair's update, and whether all were finite
    std::vector<float> largest;
    std::vector<std::uint8_t> finite;
  };
  // Where a head pass writes each row's change of concat, for an edit that
  // adds the change times W_o_h to the output (written beside the new row,
  // while the row is in cache: a copy of the old concat before the pass and
  // a subtraction after it took a tenth of a W_q edit).
  struct ConcatChange {
    Matrix rows;                        // T × d_v per recorded head
    std::vector<int> column;            // per head: its first column in `rows`, -1 when not recorded
    std::vector<std::uint8_t> started;  // per head: `rows` holds its change so far (a later pass adds to it)
  };
  class Work;

  // [SECTION] Scheduling
  void full_forward();
  void recompute_heads(const Invalidation& what);
  bool recompute_cells(const Invalidation& what);
  void refresh_settings();
  void index_pins();
  void finish();

  // [SECTION] Storage and the mask
  void resize_storage();
  void load_mask();
  bool mask_is_current() const;
  Eigen::Index extent(Eigen::Index block_row) const;
  bool allowed(Eigen::Index i, Eigen::Index j) const { return mask_(i, j) != 0.0f; }

  // [SECTION] Kernels
  void compute_projection(StageKind kind, int head, Work* work);
  // shifts (indexed by head, or null): heads whose scores are shifted first (with_scores false)
  // change (or null): where to record the heads' change of concat
  void head_pass(const std::vector<int>& heads, bool with_scores, Work* work, std::vector<ScoreShift>* shifts = nullptr,
                 ConcatChange* change = nullptr);
  void head_block(int h, Eigen::Index bi, bool with_scores, std::vector<float>& scratch, ScoreShift* shift,
                  ConcatChange* change);
  void compute_block(int h, Eigen::Index bi, Eigen::Index bj) const;
  void ensure_blocks_for_mask(int h);
  void complete_scores(int h) const;
  Eigen::Index scaled_masked_prefix(int h, Eigen::Index i, Eigen::Index limit, float* x) const;
  // How many of row i's first `limit` entries scaled_masked_prefix writes.
  Eigen::Index prefix_length(Eigen::Index i, Eigen::Index limit) const;
  void recompute_row(int h, Eigen::Index i);
  void recompute_rows(int h, const std::vector<Eigen::Index>& rows);
  static void set_softmax_state(HeadState& hs, Eigen::Index i, float offset, double z);
  void set_concat_row(int h, Eigen::Index i);
  void build_r(int h);
  void full_output(Work* work);
  void output_row(Eigen::Index i);
  void output_rows(const std::vector<Eigen::Index>& rows);  // ascending
  bool output_from_r(Eigen::Index i) const;
  void finish_output_row(Eigen::Index i);
  void refresh_aged_outputs();

  // [SECTION] Incremental paths
  // A cell of X or of X_kv (cross-attention): the projections it feeds.
  void edit_x_row(StageKind input, Eigen::Index r, Eigen::Index c, float old_value);
  void edit_qk_column(StageKind kind, Eigen::Index c);
  bool shift_factors(StageKind kind, int h, Eigen::Index c, const Eigen::VectorXf& old_col, ScoreShift& shift) const;
  // (c: a column of Q or K; old_col: its values before the edit)
  bool finish_shift(int h, ScoreShift& shift);
  bool shift_breaks_bound(int h, const ScoreShift& shift) const;
  void edit_v_column(Eigen::Index c);
  void edit_context_column(int h, Eigen::Index c, const Eigen::Ref<const Eigen::VectorXf>& vcol);
  void edit_output_column(Eigen::Index c);
  void edit_mask_cell(Eigen::Index i, Eigen::Index j);
  // (self: row r of Q and key r are the same token, so query row r is redone whole)
  void edit_rows(const std::vector<int>& heads, Eigen::Index r, bool q, bool k, bool v, const RowVector& v_old,
                 bool self = true);
  void edit_entry(int h, Eigen::Index i, Eigen::Index r, bool k, bool v, const float* v_old, float s_old,
                  float s_new, const HeadEdit& he, RowUpdate& out, bool self);
  void edit_pin(const Invalidation::Entry& e);
  void recompute_projection_row(StageKind kind, Eigen::Index r, Eigen::Index first, Eigen::Index width);
  bool shift_projection_row(StageKind kind, Eigen::Index r, Eigen::Index c, float delta);
  void apply_projection_pins(StageKind kind, Eigen::Index r, Eigen::Index first, Eigen::Index width);
  std::vector<float>& proj_error(StageKind kind) {
    return proj_err_[kind == StageKind::Q ? 0 : kind == StageKind::K ? 1 : 2];
  }
  void recompute_projection_cell(StageKind kind, Eigen::Index r, Eigen::Index c);

  // [SECTION] Grouped-query heads and RoPE (core/src/attention/positions.cpp)
  // The K/V head query head h reads.
  int kv(int h) const { return dims_.kv_head(h); }
  // The query heads that read column block `block` of Q (that head), K or V (a K/V head).
  std::vector<int> heads_of_block(StageKind kind, int block) const;
  void bump_block(StageKind kind, int block, bool full);
  Matrix& projection(StageKind kind) { return kind == StageKind::Q ? Q_ : kind == StageKind::K ? K_ : V_; }
  // The weights and the bias Q, K or V is projected with.
  const Matrix& weights_of(StageKind kind) const {
    return kind == StageKind::Q ? scenario_->W_q : kind == StageKind::K ? scenario_->W_k : scenario_->W_v;
  }
  const Matrix& bias_of(StageKind kind) const {
    return kind == StageKind::Q ? scenario_->b_q : kind == StageKind::K ? scenario_->b_k : scenario_->b_v;
  }
  // What Q, K or V is projected from: X, or X_kv for K and V with cross-attention.
  const Matrix& projection_source(StageKind kind) const {
    return kind == StageKind::Q ? scenario_->X : scenario_->kv_source();
  }
  // Whether RoPE turns this projection: then it is computed into Qu_ or Ku_
  // and rotated into Q_ or K_, where its pins are laid.
  bool rotates(StageKind kind) const { return rope_on_ && kind != StageKind::V; }
  Matrix& unrotated(StageKind kind) {
    return !rotates(kind) ? projection(kind) : kind == StageKind::Q ? Qu_ : Ku_;
  }
  // Whether the q/k norm normalises this projection: then X·W + b is
  // computed into Qp_ or Kp_ and normalised into unrotated(kind).
  bool normalizes(StageKind kind) const { return norm_on_ && kind != StageKind::V; }
  // Whether what X·W + b gives is not yet what enters the scores (normed
  // and/or turned): then pins are laid after finish_rows.
  bool transforms(StageKind kind) const { return rotates(kind) || normalizes(kind); }
  // Where X·W + b is computed into: Qp_/Kp_ with the q/k norm, else unrotated(kind).
  Matrix& raw(StageKind kind) {
    return !normalizes(kind) ? unrotated(kind) : kind == StageKind::Q ? Qp_ : Kp_;
  }
  // Sizes the storage a transformed projection passes through (Qp_, Qu_ …).
  void ensure_transform_storage(StageKind kind);
  // Rows [r0, r0 + rows) of Q_ or K_ from raw(kind) in the head blocks of
  // columns [first, first + width): normed (the whole row when the norm
  // spans every head), then turned. Pins are the caller's.
  void finish_rows(StageKind kind, Eigen::Index r0, Eigen::Index rows, Eigen::Index first, Eigen::Index width);
  void refresh_rope();
  void refresh_qk_norm();
  // Rows [r0, r0 + rows) of Q_ or K_ from Qu_ or Ku_, in the head blocks of
  // columns [first, first + width) (block-aligned).
  void rotate_rows(StageKind kind, Eigen::Index r0, Eigen::Index rows, Eigen::Index first, Eigen::Index width);
  // Column c of Q_ or K_ and the column RoPE pairs it with, from Qu_ or Ku_
  // (pins laid); returns the partner column.
  Eigen::Index rotate_column_pair(StageKind kind, Eigen::Index c);

  // [SECTION] Values
  float scale_value(float s) const { return use_div_ ? s / scale_div_ : s * scale_mul_; }
  // The soft-cap c·tanh(x/c) of a scaled score (x itself without one): what
  // enters masked (attention_lab/softcap.h).
  float cap(float x) const { return softcap_ > 0.0f ? softcap(x, softcap_) : x; }
  void cap_row(float* x, Eigen::Index n) const {
    if (softcap_ > 0.0f)
      for (Eigen::Index j = 0; j < n; ++j) x[j] = cap(x[j]);
  }
  // ALiBi's m_h·(j − i), or 0 without ALiBi: what masked adds to scaled.
  float position_bias(int h, Eigen::Index i, Eigen::Index j) const {
    return alibi_.empty() ? 0.0f : alibi_[static_cast<std::size_t>(h)] * static_cast<float>(j - i);
  }
  void add_position_bias(int h, Eigen::Index i, float* x, Eigen::Index n) const;
  // The head's sink logit, −∞ without sinks (then it changes nothing).
  float sink(int h) const {
    return sinks_.empty() ? -std::numeric_limits<float>::infinity() : sinks_[static_cast<std::size_t>(h)];
  }
  // The sink's share of row i of head h's softmax (0 without sinks).
  float sink_share(int h, Eigen::Index i) const;
  static int changes_of(StageKind kind);
  float masked_value(int h, Eigen::Index i, Eigen::Index j) const;
  void masked_row(int h, Eigen::Index i, float* x) const;
  bool row_is_direct(int h, Eigen::Index i) const;
  void weights_row(int h, Eigen::Index i, float* w, float* x_scratch) const;
  Eigen::Index masked_exps(int h, Eigen::Index i, float* x, float* e) const;
  void scale_exps(int h, Eigen::Index i, const float* e, float* w, Eigen::Index n) const;
  void apply_pins(StageKind kind, int head);
  // The pins of a whole stage (Q, K, V or the output) in columns [first,
  // first + width), laid into `target` at column c − shift.
  void lay_pins(StageKind kind, Eigen::Index first, Eigen::Index width, Matrix& target, Eigen::Index shift) const;
  void apply_row_pins(StageKind kind, int head, Eigen::Index row);
  MatrixView derived(StageId id) const;
  // In a read-only copy: recompute head h's scores (letting another head's
  // go), or let them go once what needed them is materialized.
  void resident_scores(int h) const;
  void release_scores() const;
  // In a read-only copy: head h's blocks of Q, K and V (its K/V head's), and
  // a whole projection stage when one is read, computed from the scenario;
  // see OnDemand.
  void resident_projections(int h) const;
  bool projected_on_demand(StageKind kind) const;  // read-only, and a stage of Q, K or V
  MatrixView projection_on_demand(StageId id) const;
  void release_whole_projection() const;
  // Columns [first, first + width) of Q, K or V (whole heads) projected from
  // the scenario as compute_projection does: into `out` as they enter the
  // scores (turned by RoPE, pins laid) or, with `turn` false, before RoPE;
  // `before` (may be null) also receives them before RoPE when RoPE turns them.
  void project_columns(StageKind kind, Eigen::Index first, Eigen::Index width, bool turn, Matrix& out,
                       Matrix* before) const;
  // The columns of Q, K or V: one block per query head or per K/V head.
  Eigen::Index projection_cols(StageKind kind) const {
    return static_cast<Eigen::Index>(kind == StageKind::Q   ? dims_.heads * dims_.d_k
                                     : kind == StageKind::K ? dims_.kv_heads * dims_.d_k
                                                            : dims_.kv_heads * dims_.d_v);
  }
  std::size_t cache_limit() const { return read_only_ ? 1 : kDerivedCacheSize; }
  void collect_warnings();
  void bump(StageKind kind, int head, bool full);
  void note_row(StageKind kind, int head, Eigen::Index row);
  void note_col(StageKind kind, int head, Eigen::Index col);
  template <typename Row>
  static void each_changed_row(const Changes& c, bool whole, std::uint64_t since, Eigen::Index T, Eigen::Index Tk,
                               Row&& row);
  void patch_derived(Derived& d) const;
  void patch_weights(Derived& d, bool whole, std::uint64_t since) const;
  void weights_row_kept(int h, Eigen::Index i, float* w, KeptExps& kept, const std::vector<Eigen::Index>* moved) const;
  void fill_derived_row(StageId id, Matrix& m, Eigen::Index i) const;
  void fill_derived_row(StageId id, Eigen::Index i, float* out) const;

  // A pointer that copies and moves do not carry over.
  struct ControlRef {
    ComputeControl* p = nullptr;
    ControlRef() = default;
    ControlRef(const ControlRef&) {}
    ControlRef& operator=(const ControlRef&) {
      p = nullptr;
      return *this;
    }
    ~ControlRef() = default;
  };

  const Scenario* scenario_ = nullptr;
  ControlRef control_;
  Dims dims_;
  // (Q, K, V and their unrotated copies are mutable only so read_only_copy
  // can set them aside while the engine is copied, as it does heads_' scores:
  // its copy keeps none of them.)
  mutable Matrix Q_, K_, V_;
  Matrix concat_, output_;
  // 0/1, T×T_k; shared with read-only copies until the mask changes (load_mask
  // gives it a new buffer, a mask cell edit writes the engine's own)
  SharedMatrix mask_;
  mutable Matrix Qu_, Ku_;  // Q and K before RoPE (empty when RoPE is off)
  bool rope_on_ = false;
  mutable Matrix Qp_, Kp_;  // Q and K before the q/k norm (empty when it is off)
  bool norm_on_ = false;
  QkNorm qk_norm_;
  Rope rope_;                       // the tables' settings
  Matrix rope_cos_, rope_sin_;      // T × d_k/2: cos and sin of each position's angle per pair
  Matrix rope_angle_;               // the angles themselves, modulo 2π (the stage rope_angle)
  Eigen::Index rope_T_ = -1;        // the tables' T and d_k
  int rope_dk_ = -1;
  // (mutable, as Q_: set aside by read_only_copy, whose copy keeps neither)
  mutable Matrix U_;  // unnormalized context, T × h·d_v
  mutable Matrix R_;  // partial outputs, T × h·d_out (empty until built)
  std::vector<std::uint8_t> r_valid_;  // per head: R_h = U_h·W_o_h
  mutable std::vector<HeadState> heads_;
  // Causal and Window rows end at the diagonal, so the row arithmetic stops
  // there; Custom and Window rows also read mask_ for the cells before it.
  enum class MaskShape { None, Causal, Window, Custom } mask_shape_ = MaskShape::None;
  static MaskShape shape_of(MaskKind kind);
  std::vector<int> mask_block_count_;  // nb×nb: allowed cells per block
  // The generated mask (no mask or causal) that mask_ holds unedited, so a
  // full forward of the same size need not build its T × T_k floats again.
  std::optional<MaskKind> generated_mask_;
  Eigen::Index nbr_ = 0, nbc_ = 0;     // blocks down (queries) and across (keys)
  float scale_mul_ = 1.0f, scale_div_ = 1.0f;
  float softcap_ = 0.0f;  // the scenario's soft-cap (0: none)
  std::vector<float> alibi_;  // per head: ALiBi's slope m_h (empty when ALiBi is off)
  std::vector<float> sinks_;  // per head: the sink's logit (empty without sinks)
  bool use_div_ = false;
  std::map<PinKey, float> pins_;        // the scenario's pins at the last recompute
  std::vector<std::uint8_t> row_pins_;  // [h·T + i]: kinds of pins in that row (bits)
  std::vector<std::uint8_t> out_age_;   // rank-one updates since each output row was exact
  // Buffers kept from one edit or pass to the next (a new one would
  // page-fault every time); not state, so a copy of the engine starts
  // without them, an engine copy-assigned another (a document letting its
  // stages go) lets them go, and one moved from another takes its buffers.
  struct Scratch {
    Scratch() = default;
    Scratch(const Scratch&) {}
    Scratch& operator=(const Scratch&) {
      *this = Scratch{};
      return *this;
    }
    Scratch& operator=(Scratch&&) = default;
    ConcatChange concat_change;       // a Q/K column edit's
    std::vector<GemmRhs> head_values;  // per K/V head: its values, prepared by head_pass for its blocks
    // edit_rows': per row and head, what edit_entry did; column r of each
    // head's scores, old and new; rows of heads to recompute, and output rows waiting for them
    std::vector<RowUpdate> row_updates;
    std::vector<float> score_column;
    std::vector<std::uint8_t> deferred, output_waits;
  };
  Scratch scratch_;
  std::vector<float> proj_err_[3];      // per row of Q, K, V: bound of the error X's shifts added
  std::vector<HeadEdit> edits_;         // per head, for edit_rows
  std::vector<Warning> warnings_;
  // versions_[head][kind]; per-layer kinds use head 0
  std::vector<std::array<std::uint64_t, kStageKindCount>> versions_;
  std::array<int, kStageKindCount> counts_{};
  std::array<int, kStageKindCount> full_counts_{};
  mutable std::vector<Derived> cache_;
  mutable std::uint64_t cache_clock_ = 0;
  bool read_only_ = false;
  mutable int resident_ = -1;  // read-only: the head whose scores are kept (-1: none)
  // What a read-only copy projects again when it is read (it keeps no Q_,
  // K_, V_): one head's blocks, T × d_k or T_k × d_k / d_v, and at most one
  // whole projection stage.
  struct OnDemand {
    int head = -1;           // whose blocks q, k, v (its K/V head's), qu, ku hold (-1: none)
    int kv_block = -1;       // the K/V head of k, v and ku (-1: none)
    Matrix q, k, v, qu, ku;  // qu, ku: before RoPE (empty when RoPE is off)
    std::optional<StageKind> whole_kind;  // Q, K, V or one before RoPE: held in `whole`
    Matrix whole;
  };
  mutable OnDemand on_demand_;
};

}  // namespace attention_lab
