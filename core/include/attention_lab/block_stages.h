#pragma once
// The Transformer block around the focused layer's attention, stage by stage:
// the embeddings that start the residual stream, then the focused layer's
// norm → attention → residual sum → norm → MLP (up, activation, down) →
// residual sum (or, with post-norms, attention → norm → residual sum → MLP →
// norm → residual sum). One table (block_stage_table) knows each stage's symbol,
// name, formula, shape and inputs; BlockTrace holds the values, recomputing
// only the rows an edit of the attention changed.

#include "attention_lab/transformer_model.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace attention_lab {

enum class BlockStage {
  TokenEmbedding,  // E = W_te[id]
  Position,        // P = W_pe[t] (learned positions: GPT-2)
  Embedded,        // E + P: the input of layer 0 (learned positions; else E is)
  Input,           // x: the focused layer's input
  Norm1Mean,       // LayerNorm's per-row mean (not RMSNorm)
  Norm1Spread,     // per-row variance (LayerNorm) or mean square (RMSNorm)
  Norm1,           // n₁: the attention's input (X in the pipeline)
  Attention,       // a: the pipeline's output, with every edit and pin
  Residual,        // h = x + a
  Norm2Mean,
  Norm2Spread,
  Norm2,           // n₂
  Up,              // u = n₂·W_up + b
  Gate,            // g = n₂·W_gate (SwiGLU: the Llama family)
  Hidden,          // f = act(u), or SiLU(g)⊙u
  Down,            // m = f·W_down + b
  Output,          // y = h + m: the next layer's input
  // Norms on the outputs (OLMo-2, Gemma 2): RMSNorm of a, and of m, before the residual sums
  PostAttnSpread,
  PostAttn,
  PostMlpSpread,
  PostMlp,
};
inline constexpr int kBlockStageCount = 21;

// The stage the MLP reads (n₂, or h itself without a norm before the MLP) and
// the ones the residual sums add (a or its post-norm, m or its post-norm).
BlockStage mlp_input_stage(const ModelConfig& config);
// What norm2 reads: h, or the layer's input x (GPT-NeoX's parallel residual).
BlockStage mlp_norm_input_stage(const ModelConfig& config);
BlockStage attention_added_stage(const ModelConfig& config);
BlockStage mlp_added_stage(const ModelConfig& config);

// How many columns a stage has.
enum class BlockWidth { Model, FeedForward, One };
// How an input feeds a cell (r, c): the same cell, all of row r, or every row
// the attention lets row r see (0…r when causal).
enum class BlockFeed { Cell, Row, VisibleRows };

struct BlockInput {
  BlockStage stage;
  BlockFeed feed;
};

struct BlockStageInfo {
  BlockStage stage;
  std::string key;          // stable, for the probe and tests: "norm1.mean"
  bool embeddings = false;  // before layer 0 (else: the focused layer)
  std::string symbol;       // "n₁"
  std::string name;         // "normed input (LayerNorm 1)"
  std::string formula;      // "(x − μ₁)/√(σ²₁ + ε)·γ + β"
  std::string explanation;  // what it means, one or two sentences
  BlockWidth width = BlockWidth::Model;
  bool non_negative = false;     // variances and mean squares
  bool follows_attention = false;  // recomputed when the attention output changes
  std::vector<BlockInput> inputs;
};

// The stages `config`'s family has, in the order the block computes them.
std::vector<BlockStageInfo> block_stage_table(const ModelConfig& config);

// The values of every stage of a model's block at layer `layer` for one
// token sequence. The stages before the attention never change; update()
// reruns those after it for the rows whose attention output changed.
class BlockTrace {
 public:
  // `input` is the layer's input (T × d_model) from the unedited forward.
  BlockTrace(std::shared_ptr<const TransformerModel> model, std::vector<int> ids, int layer, Matrix input);

  // Takes the attention output (T × d_model) and recomputes the later stages
  // of the rows that differ from the last call's (every row on the first
  // call). Returns how many rows ran.
  int update(const Matrix& attention_out);

  const TransformerModel& model() const { return *model_; }
  const std::vector<int>& ids() const { return ids_; }
  int layer() const { return layer_; }
  int T() const { return static_cast<int>(ids_.size()); }
  const std::vector<BlockStageInfo>& stages() const { return table_; }
  // Null when this model's family has no such stage.
  const BlockStageInfo* info(BlockStage stage) const;
  // Empty until update() ran for the stages after the attention.
  const Matrix& values(BlockStage stage) const { return values_[static_cast<std::size_t>(stage)]; }
  // Changes whenever the stage's values do (0: never computed).
  std::uint64_t version(BlockStage stage) const { return versions_[static_cast<std::size_t>(stage)]; }

 private:
  void compute_rows(const std::vector<Eigen::Index>& rows);

  std::shared_ptr<const TransformerModel> model_;
  std::vector<int> ids_;
  int layer_ = 0;
  std::vector<BlockStageInfo> table_;
  std::vector<Matrix> values_;
  std::vector<std::uint64_t> versions_;
  std::uint64_t next_version_ = 1;
};

// Per-row statistics of a norm, as normalize() computes them: the mean
// (LayerNorm; zeros for RMSNorm) and the variance (LayerNorm) or the mean
// square (RMSNorm), each T × 1.
void norm_statistics(const Norm& norm, const Matrix& x, Matrix& mean, Matrix& spread);

}  // namespace attention_lab
