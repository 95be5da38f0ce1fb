#pragma once
// A checkpoint, a token sequence and a focused layer: what the app shows in
// model mode. The unedited forward runs once per text and keeps every
// layer's input; the focused layer's attention is an ordinary scenario (its
// Document gets every edit, pin and undo); the layers after it rerun from the
// engine's output so the next-token predictions follow every edit. The
// layers before it never rerun.

#include "attention_lab/ablation.h"
#include "attention_lab/engine.h"
#include "attention_lab/head_detectors.h"
#include "attention_lab/tokenizer.h"
#include "attention_lab/transformer_forward.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace attention_lab {

struct Prediction {
  int id = 0;
  float probability = 0.0f;  // with the edits
  float before = 0.0f;       // the unedited model's
};

// Every layer's every head's attention weights, pooled (mean over blocks) to
// at most `size` × `size`, for the layers × heads overview.
struct ModelOverview {
  int layers = 0;
  int heads = 0;
  std::vector<Matrix> weights;  // [layer · heads + head]
  const Matrix& at(int layer, int head) const { return weights[static_cast<std::size_t>(layer * heads + head)]; }
};

// The focused layer as the caller computes it from its scenario (the
// window's engine, whose document the caller keeps): the attention output
// (T × d_model) and each head's weights (T × T_k).
struct FocusedAttention {
  Matrix output;
  std::vector<Matrix> weights;
};
using FocusedLayer = std::function<FocusedAttention(LayerScenario)>;

class ModelSession {
 public:
  // Runs the unedited forward of `ids` (checked) and the overview; `control`
  // (may be null) reports progress and cancels (throws Cancelled). On a bad
  // input returns null and sets `error`.
  //
  // With `focused`, the focused layer's attention is what `focused` computes
  // from its scenario: it is the unedited attention (set_unedited_attention),
  // and the layers after it run from it, so the unedited predictions are the
  // logits of this forward with no second pass through the later layers
  // (which doubled the time to the first predictions).
  //
  // `ablations` (checked; ablation.h) apply in every layer: the session's
  // stream, overview, detector scores and predictions are of the ablated
  // model, and the predictions' "before" is the model without them. In the
  // focused layer a head's ablation is part of its scenario — the head's rows
  // of W_o zero (and, for a mean ablation, the mean of its z through them
  // added to b_o), which removes its output exactly — so it must be at every
  // position; the layer's attention and MLP ablations apply around it.
  //
  // `previous` (may be null), a session of the same model and ids: the
  // layers before the first one whose ablations differ (and before either
  // session's focused layer) are taken from it as they are, not run again —
  // an ablation reruns only the layers from it on — and so are the means and
  // output of the run without ablations when it had ablations too.
  static std::unique_ptr<ModelSession> start(std::shared_ptr<const TransformerModel> model,
                                             std::shared_ptr<const Tokenizer> tokenizer, std::vector<int> ids,
                                             int layer, ComputeControl* control, std::string& error,
                                             const FocusedLayer& focused = {}, std::vector<Ablation> ablations = {},
                                             const ModelSession* previous = nullptr);
  // How many layers start() took from `previous` (0: every layer ran).
  int reused_layers() const { return reused_layers_; }

  const TransformerModel& model() const { return *model_; }
  std::shared_ptr<const TransformerModel> model_ptr() const { return model_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  std::shared_ptr<const Tokenizer> tokenizer_ptr() const { return tokenizer_; }
  const std::vector<int>& ids() const { return ids_; }
  int T() const { return static_cast<int>(ids_.size()); }
  int layer() const { return layer_; }
  std::vector<std::string> token_labels() const;
  const ModelOverview& overview() const { return overview_; }
  // Every head's previous-token, duplicate-token and induction scores on
  // this text (head_detectors.h), from the weights the overview pools.
  const HeadScores& head_scores() const { return head_scores_; }

  // The focused layer's attention as a scenario (X = its normed input), with
  // the layer's head ablations in its W_o and b_o.
  LayerScenario scenario() const;
  const std::vector<Ablation>& ablations() const { return ablations_; }
  // Focuses another layer (0 ≤ layer < layers); nothing reruns.
  void set_layer(int layer);
  // The focused layer's attention output that counts as "before the edit"
  // (the engine's, computed from scenario() unedited), so predictions with no
  // edit match their "before" exactly. Until set, the plain forward's.
  void set_unedited_attention(Matrix attention_out) {
    unedited_attention_ = std::move(attention_out);
    residual_from_unedited_ = false;
    baseline_.clear();
  }
  // Empty until set_unedited_attention.
  const Matrix& unedited_attention() const { return unedited_attention_; }
  // The focused layer's input (the unedited residual stream).
  const Matrix& layer_input() const { return residual_[static_cast<std::size_t>(layer_)]; }

  // The k most likely next tokens after `row` when the focused layer's
  // attention outputs `attention_out` (T × d_model), with the unedited
  // probabilities. Only rows 0…row run through the later layers (causal).
  std::vector<Prediction> predictions(const Matrix& attention_out, int row, int k) const;
  // Softmax of the logits of `row` from the focused layer's attention output.
  RowVector probabilities(const Matrix& attention_out, int row) const;
  // Computes and keeps the unedited probabilities of `row` (after
  // set_unedited_attention): predictions of the unedited layer then run
  // nothing. Where the session is made, off the UI thread (a pass through
  // every later layer: a second at T = 1024 in GPT-2 small).
  void prepare_baseline(int row) const { (void)baseline(std::clamp(row, 0, T() - 1)); }

 private:
  ModelSession() = default;
  const RowVector& baseline(int row) const;
  // The focused layer's hooks (its attention and MLP ablations), or null.
  const LayerHooks* focused_hooks() const;
  // Puts the focused layer's head ablations into its scenario.
  void ablate_heads(LayerScenario& scenario) const;

  std::shared_ptr<const TransformerModel> model_;
  std::shared_ptr<const Tokenizer> tokenizer_;
  std::vector<int> ids_;
  int layer_ = 0;
  std::vector<Matrix> residual_;  // unedited: residual_[l] = input of layer l; [layers] = the last output
  Matrix unedited_attention_;
  // The residual stream after the focused layer was made from
  // unedited_attention_ (start with `focused`): the baseline is its logits.
  bool residual_from_unedited_ = false;
  ModelOverview overview_;
  HeadScores head_scores_;
  mutable std::map<int, RowVector> baseline_;  // row → unedited probabilities
  std::vector<Ablation> ablations_;
  int reused_layers_ = 0;
  ActivationMeans means_;            // of the run without ablations (mean ablations read them)
  std::vector<LayerHooks> hooks_;    // per layer, the ablations' (empty: none)
  Matrix unablated_output_;          // the last layer's output without ablations (the predictions' "before")
};

// Mean-pools a matrix to at most size × size (unchanged when it fits).
Matrix pool_to(const Matrix& m, int size);

}  // namespace attention_lab
