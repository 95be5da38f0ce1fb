#pragma once
// The gradient of a model's language-model loss as it reaches one layer:
// the mean cross-entropy of every position's next token (what transformers'
// GPT2LMHeadModel computes with labels = the ids), differentiated back
// through the final norm, the later layers and the layer's MLP to the
// layer's attention output. backward_from_output (gradients.h) carries it on
// through the layer's scenario, so every stage of a model's layer has a
// gradient the app and the trace show.
//
// The backward pass is the tiny GPT's (tiny_gpt.h), on a float copy of the
// checkpoint's weights: the GPT-2 layout. Any other layout or feature is
// refused by name (model_gradient_problem), never answered with the
// gradient of a different model.

#include "attention_lab/tiny_gpt.h"
#include "attention_lab/transformer_model.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace attention_lab {

struct LayerOutputGradient {
  Matrix d_output;    // T × d_model: ∂L/∂(the layer's attention output)
  double loss = 0.0;  // L
  int positions = 0;  // T − 1: the positions with a next token
};

// Why the gradient cannot be computed for `model` (a layout or a feature
// this backward pass does not have: named), or "".
std::string model_gradient_problem(const TransformerModel& model);

class ModelGradient {
 public:
  // A float copy of `model`'s weights; null with `error` set when
  // model_gradient_problem is not "".
  static std::unique_ptr<ModelGradient> make(const TransformerModel& model, std::string& error);

  // ∂L/∂(layer `layer`'s attention output) for the text `ids` (at least two
  // tokens, at most the model's context). `attention_out` (may be null) is
  // that output as shown, edits and all: the later layers run from it, so
  // the gradient is of the model the user sees. Throws std::invalid_argument
  // naming a bad argument. `keep_going` (may be empty) is asked before each
  // layer's pass: false stops the work within one layer and throws Cancelled
  // (engine.h), so a window that closes need not wait for the whole model.
  LayerOutputGradient at_layer(const std::vector<int>& ids, int layer, const Matrix* attention_out,
                               const std::function<bool()>& keep_going = {}) const;

 private:
  explicit ModelGradient(TinyGpt gpt) : gpt_(std::move(gpt)) {}
  TinyGpt gpt_;
};

}  // namespace attention_lab
