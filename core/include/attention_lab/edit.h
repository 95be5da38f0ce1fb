#pragma once
// Every change a user can make is an Edit: a plain value the front end builds
// and the Document applies. Applying an edit yields its exact inverse, which is
// what undo replays.

#include "attention_lab/engine.h"
#include "attention_lab/matrix.h"
#include "attention_lab/scenario.h"
#include "attention_lab/shared_matrix.h"
#include "attention_lab/stage_id.h"

#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace attention_lab {

// T_k and d_kv are the rows and columns of X_kv: they exist with cross-attention only.
enum class Dimension { T, d_model, heads, kv_heads, d_k, d_v, d_out, T_k, d_kv };
enum class Toggle { Scale, Bias, OutputProjection, OutputBias, Alibi, Sinks };

const char* to_string(Dimension d);
const char* to_string(Toggle t);

// One cell of an input: X, a weight matrix, a bias (row 0) or the mask (0/1;
// editing a mask cell switches the mask to custom, starting from the one shown).
struct SetCell {
  StageId target;
  int row = 0;
  int col = 0;
  float value = 0.0f;
};

// A whole input matrix at once (randomize, paste). Must keep its shape.
struct SetMatrix {
  StageId target;
  SharedMatrix value;  // shared with the scenario it is applied to and with its undo entry
  std::string label = "set";
};

// Pins a cell of a computed stage to a value, or unpins it (nullopt).
// Cells of per-head views are stored on the matrix they view: Q[1] (r,c) pins
// Q (r, d_k + c); concat (r,c) pins context[c / d_v] (r, c mod d_v).
struct SetPin {
  PinKey key;
  std::optional<float> value;
};

// Replaces every pin at once; {} clears them all.
struct SetPins {
  std::map<PinKey, float> pins;
};

// Changes a size. Existing values that still fit are kept (per head block for
// d_k, d_v and heads); new cells come from the scenario's seeded generator.
struct SetDimension {
  Dimension which = Dimension::T;
  int value = 1;
};

// Chooses the mask kind; `custom` also replaces the custom 0/1 matrix.
struct SetMask {
  MaskKind kind = MaskKind::None;
  std::optional<SharedMatrix> custom;
  int window = -1;  // the window's width (Scenario::window); -1 keeps the scenario's
};

struct SetToggle {
  Toggle which = Toggle::Scale;
  bool on = true;
};

struct SetTemperature {
  float value = 1.0f;
};

// Turns RoPE on or off, or changes its θ or pairing (needs an even d_k).
struct SetRope {
  Rope value;
};

// Soft-caps the scaled scores at c (c·tanh(s/c), Gemma 2), or not (0).
struct SetSoftcap {
  float value = 0.0f;
};

// Turns the q/k norm on or off, or changes its scope or ε. Turned on where
// the gains do not fit, they start at 1 (the norm alone, unweighted).
struct SetQkNorm {
  QkNorm value;
};

// Renames token `index` (a row of X); "" shows the index again.
// With `key`, renames row `index` of X_kv instead (cross-attention's key tokens).
struct SetTokenLabel {
  int index = 0;
  std::string label;
  bool key = false;
};

// Renames feature `index` (a column of X, a row of W_q, W_k and W_v).
struct SetFeatureLabel {
  int index = 0;
  std::string label;
};

enum class LabelList { Tokens, Features, KeyTokens };  // KeyTokens: X_kv's rows (tokens_kv)

// Replaces a whole list of labels; {} means "none, show the indices". It is
// the inverse of the first rename in a scenario without names, which is
// cheaper than keeping a copy of the whole scenario.
struct SetLabels {
  LabelList which = LabelList::Tokens;
  std::vector<std::string> labels;
};

// Swaps in a whole scenario (load a preset, undo of a resize).
struct ReplaceScenario {
  std::shared_ptr<const Scenario> scenario;
  std::string label = "replace scenario";
};

using Edit = std::variant<SetCell, SetMatrix, SetPin, SetPins, SetDimension, SetMask, SetToggle,
                          SetTemperature, SetRope, SetQkNorm, SetSoftcap, SetTokenLabel, SetFeatureLabel, SetLabels, ReplaceScenario>;

// Short text for menus and logs: "X[2][1] = 0.5", "heads = 4", "pin scores[0][2][3] = 5".
std::string describe(const Edit& edit);

struct Applied {
  std::string error;    // empty on success; then `inverse` and `stale` are set
  Edit inverse;         // applying it restores the scenario exactly
  Invalidation stale;   // what the engine must recompute
};

// Validates `edit` against `scenario` and applies it. On error the scenario is
// untouched and the message names the thing, the expected and the found.
Applied apply_edit(Scenario& scenario, const Edit& edit);

}  // namespace attention_lab
