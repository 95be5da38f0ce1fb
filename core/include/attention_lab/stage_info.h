#pragma once
// Descriptions of every stage, so a front end can draw and explain the whole
// pipeline without a hard-coded list: what it is called, its math, its shape,
// its labels, what it is made from and why it exists.

#include "attention_lab/scenario.h"
#include "attention_lab/stage_id.h"

#include <string>
#include <vector>

namespace attention_lab {

// What the numbers of a stage mean, which decides how they are coloured.
enum class ValueDomain {
  Signed,       // any real number: diverging colours centred at 0
  Probability,  // in [0, 1]: sequential colours
  Binary,       // the 0/1 mask
};

// What the labels along one side of a stage name, so a front end knows which
// edit renames one (tokens: SetTokenLabel; features: SetFeatureLabel).
enum class LabelKind {
  Index,    // a dimension index or "bias": not a name the user chose
  Token,    // a token of the scenario (a row of X)
  Feature,  // a feature of the scenario (a column of X)
  KeyToken, // a row of X_kv (cross-attention): SetTokenLabel with key
};

// How a user may change a stage's cells.
enum class Editability {
  EditCells,  // an input: cells are edited for real
  PinCells,   // computed: cells can be overridden by pins
  ReadOnly,   // computed from positions alone: nothing to edit or pin
};

struct StageInfo {
  StageId id;
  std::string id_text;      // to_string(id): "scores[1]"
  std::string name;         // "Attention scores (head 1)"
  std::string symbol;       // "S₁"
  std::string formula;      // "S₁ = Q₁·K₁ᵀ"
  std::string explanation;  // a few sentences in plain words
  int rows = 0;
  int cols = 0;
  std::vector<std::string> row_labels;  // tokens or dimension indices
  std::vector<std::string> col_labels;
  LabelKind row_label_kind = LabelKind::Index;
  LabelKind col_label_kind = LabelKind::Index;
  std::vector<StageId> inputs;  // the stages it is computed from (empty for inputs)
  ValueDomain domain = ValueDomain::Signed;
  Editability editability = Editability::PinCells;
  bool active = true;  // false when the scenario does not use it (biases off, no W_o)
};

StageInfo describe_stage(const Scenario& scenario, StageId id);

// Every stage in the order of the math: inputs, projections, then each head's
// chain, then concat and output. Unused inputs (biases off, W_o off) are left out.
std::vector<StageId> pipeline(const Scenario& scenario);

// One cell as the app writes it for people: "C₀[1,2]" (the stage's symbol in
// the scenario's letters, then row and column as the scenario counts them).
// Files and the CLI use to_string(CellRef) instead: "context[0][1][2]".
std::string cell_symbol(const Scenario& scenario, StageId stage, int row, int col);

// Subscript digits for symbols: 12 → "₁₂".
std::string subscript(int n);

}  // namespace attention_lab
