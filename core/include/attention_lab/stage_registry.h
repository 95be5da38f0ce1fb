#pragma once
// The one table of stages. Every fact about a stage kind that does not
// depend on how it is computed lives here: its name in ids and trace files,
// its title, symbol and formula, its shape as a rule over the scenario's
// dimensions, what labels its sides, what it is computed from, whether it is
// per head, whether it is edited (an input) or pinned (computed), which
// setting turns it on, and where a view keeps its cells. The engine, edits,
// file I/O, descriptions, provenance and the front ends read it; adding a
// stage is one entry here plus its kernel in the engine
// (tests/core/registry_test.cpp walks the table and checks each entry is
// computed, traced, described and addressable).

#include "attention_lab/scenario.h"
#include "attention_lab/stage_id.h"
#include "attention_lab/stage_info.h"

#include "attention_lab/cell_ref.h"

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace attention_lab {

// A dimension of a stage, as a rule over Dims.
enum class Extent {
  One,       // a bias row
  T,         // tokens (queries)
  Tk,        // key tokens: T_k with cross-attention, else T
  d_model,   // features of X
  d_kv,      // features of what K and V are projected from (X_kv, else X)
  QWidth,    // heads·d_k: Q, all heads side by side
  KWidth,    // kv_heads·d_k: K (as wide as Q without grouped-query heads)
  VWidth,    // kv_heads·d_v: V
  ContextWidth,  // heads·d_v: the heads' contexts side by side (concat, W_o's rows)
  d_k,       // one head's query/key width
  d_v,       // one head's value width
  d_out,     // the output's width
  Heads,     // one column per head (the sinks)
  Positions, // every position a query or key has: the larger of T and T_k
  Pairs,     // d_k/2: the pairs of dimensions RoPE turns together
  QNormWidth,  // the q norm's gains: d_k (one head's, shared) or heads·d_k (the whole row)
  KNormWidth,  // the k norm's: d_k or kv_heads·d_k
};
int extent(Extent e, const Dims& d);
const char* extent_name(Extent e);  // "heads*d_k": for error messages

// What the labels along one side of a stage say.
enum class SideLabels {
  Token,       // the scenario's tokens
  KeyToken,    // the tokens keys come from (X_kv's with cross-attention, else the tokens)
  Feature,     // the scenario's features
  KeyFeature,  // the features of X_kv (indices) with cross-attention, else the features
  Index,       // 0, 1, 2, …
  HeadIndex,   // indices of the whole matrix this head's block sits in (h·width + i)
  Bias,        // the single row of a bias: "bias"
  SinkLogit,   // the single row of the sink logits (one per head): "logit"
  Gain,        // the single row of a norm's gains: "gain"
};

// The setting that has to be on for a stage to be part of the pipeline.
enum class Requires { Nothing, Biases, OutputProjection, OutputBias, Alibi, Sinks, Rope, Cross, QkNorm, Softcap };

// How a stage's cells relate to stored cells, so a pin or a highlight on a
// view reaches what is stored.
enum class ViewKind {
  Stored,          // its own cells
  HeadSlice,       // head h's column block of a layer-wide stage (Q[h] of Q)
  KVSlice,         // the column block of the K/V head that query head h reads (K[h] of K)
  HeadsSideBySide, // every head's per-head stage side by side (concat of contexts)
};

// Where a trace file (trace@1) holds a stage.
enum class Trace {
  No,          // not written (the weights are in the scenario file)
  Top,         // a top-level key before "heads"
  InHead,      // a key of each entry of "heads"
  AfterHeads,  // a top-level key after "heads"
};

// One place a cell is computed from, to light up: a whole row, a whole column
// or one cell of `stage`.
struct CellSource {
  StageId stage;
  int row = -1;       // a whole row (−1: none)
  int col = -1;       // a whole column (−1: none)
  int cell_row = -1;  // one cell (−1: none)
  int cell_col = -1;
  friend bool operator==(const CellSource&, const CellSource&) = default;
};

struct StageSpec {
  StageKind kind;
  const char* id_name;   // in ids and trace files: "scores", "W_q"
  bool per_head;         // one matrix per head ("scores[2]")
  bool input;            // edited for real (else computed; cells can be pinned)
  Extent rows, cols;
  SideLabels row_labels, col_labels;
  ValueDomain domain;
  Requires requires_setting;
  ViewKind view;
  StageKind storage;     // what a view shows (HeadQ → Q, Concat → Context); the kind itself when Stored
  SharedMatrix Scenario::*member;  // where an input lives in the scenario (nullptr: the mask, computed stages)
  Trace trace;           // where `trace` writes it
  // Words and math; `h` is the head (0 for layer stages).
  const char* title;                                            // "Attention scores"
  std::string (*symbol)(int shown_h);                           // "S₁" (the head as shown: h + index_base)
  std::string (*formula)(const Scenario& s, const Dims& d, int h);  // "S₁ = Q₁·K₁ᵀ"
  std::string (*explanation)(const Scenario& s, const Dims& d, int h);
  std::vector<StageId> (*inputs)(const Scenario& s, int h);     // what it is computed from
  // Which cells make cell (r, c) of head h's stage: the cells of its inputs
  // (or, for a view, of its storage's inputs) hovering it lights up.
  std::vector<CellSource> (*sources)(const Scenario& s, const Dims& d, int h, int r, int c);
  std::string (*title_note)(const Scenario& s) = nullptr;       // added to the title: "Mask (causal)"
  // Computed from the tokens' positions alone (ALiBi's bias): it reads no
  // other stage, and its cells are read only (pin the stage it feeds instead).
  bool positional = false;
  // Why its cells cannot be pinned (nullptr: they can, if computed).
  const char* not_pinnable = nullptr;
};

// The cells cell (row, col) of `stage` is computed from, one level up (the
// sources of its storage too, for a view such as Q[h]); none for inputs.
std::vector<CellSource> cell_sources(const Scenario& s, StageId stage, int row, int col);

// Whether cells of a computed stage can be pinned; `why` gets the reason when not.
bool pinnable(StageKind kind, std::string* why = nullptr);

// Every stage kind, in StageKind order (all_stages()[k].kind == StageKind(k)).
std::span<const StageSpec> all_stages();
const StageSpec& spec(StageKind kind);

// Rows and columns of a stage under `d` (whether or not the stage is active).
int stage_rows(StageKind kind, const Dims& d);
int stage_cols(StageKind kind, const Dims& d);

// Whether the scenario's settings turn the stage on (biases, W_o, b_o).
bool setting_on(const Scenario& s, Requires r);
// The setting in words ("the output projection W_o"), and whether it is plural ("the biases").
const char* setting_name(Requires r);
bool setting_plural(Requires r);

// The stored cell a cell of a view shows (Q[1][r][c] → Q[r][1·d_k + c],
// concat[r][c] → context[c / d_v][r][c % d_v]); the same cell for stored
// stages. nullopt when the view has no storage under `d` (d_v = 0).
std::optional<CellRef> storage_cell(const CellRef& cell, const Dims& d);

// Where a stored cell shows on stage `view` (the inverse of storage_cell), or
// nullopt when `view` does not show it.
std::optional<CellRef> view_cell(const CellRef& stored, StageId view, const Dims& d);

// The head a column of a layer-wide stage belongs to (W_q, Q, b_v…): -1 for
// stages whose columns are not head blocks. For K, V and their weights and
// biases that is a K/V head (a group of query heads with grouped-query heads).
int head_of_column(StageKind kind, int col, const Dims& d);
// Whether the columns of a layer-wide stage are K/V heads (K, V, W_k, b_k…).
bool columns_are_kv_heads(StageKind kind);

}  // namespace attention_lab
