#pragma once
// The gradients of the document's scenario under its loss, as the Pipeline
// draws them: computed only when something asks (a view showing gradients,
// the inspector on a gradient cell) and again only after the document changed.

#include "attention_lab/document.h"
#include "attention_lab/gradients.h"
#include "attention_lab/model_gradient.h"
#include "logic/task_thread.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attention_lab::gui {

// What the Pipeline shows of each stage.
enum class GradientView { Values, Gradients, Both };
const char* to_string(GradientView view);  // "values", "gradients", "both"
// Values → gradients → both → values (Ctrl+G).
GradientView next_gradient_view(GradientView view);

// Model mode's loss: the model's next-token loss on its text, reaching the
// focused layer's attention output from the layers after it (model_gradient.h).
struct ModelLoss {
  std::shared_ptr<const TransformerModel> model;
  std::vector<int> ids;
  int layer = 0;
  std::string refused;  // why the model's gradients are not computed now (its ablations), or ""
  friend bool operator==(const ModelLoss& a, const ModelLoss& b) {
    return a.model == b.model && a.ids == b.ids && a.layer == b.layer && a.refused == b.refused;
  }
};

class GradientStore {
 public:
  // The gradients of `doc` now: under its scenario's loss, or else (in model
  // mode) the model's; null when there is none or they cannot be computed
  // (problem() says why).
  const Gradients* get(const Document& doc);
  // The model the document's scenario is a layer of (nullopt: none). The
  // gradients follow it; the float copy of a model's weights the backward
  // pass reads is made once per model, when gradients are first asked for.
  //
  // A model's part of the backward pass (all the layers after the focused
  // one) takes seconds at GPT-2 size and T = 1024: above a few hundred
  // million multiply-adds it runs on a thread of its own. Until the result
  // for the document as it is now is in, get() gives null and problem() says
  // it is computing (never the gradients of an earlier state); a request
  // made meanwhile is computed when the running one ends (its result dropped).
  void set_model(std::optional<ModelLoss> model);
  bool has_model() const { return model_.has_value(); }
  // A model's gradients are computing on their thread.
  bool computing() const { return model_task_.running() || pending_; }
  // Above how much work (the model's parameters × T) the model's part runs
  // on its thread (the default: about a tenth of a second of it).
  void set_thread_above(double parameter_tokens) { thread_above_ = parameter_tokens; }
  // What get() last gave, if it was for `doc` as it is now (null otherwise):
  // for readers that may not compute (the probe).
  const Gradients* current(const Document& doc) const {
    return doc_ == &doc && revision_ == doc.revision() && gradients_ ? &*gradients_ : nullptr;
  }
  // Why get() gave null ("" when it did not, or was not asked).
  const std::string& problem() const { return problem_; }
  // Changes whenever the gradients do: a texture drawn from them keys on it.
  std::uint64_t version() const { return version_; }

 private:
  const Document* doc_ = nullptr;
  std::uint64_t revision_ = 0;
  std::optional<Gradients> gradients_;
  std::string problem_;
  std::uint64_t version_ = 0;
  std::optional<ModelLoss> model_;
  // The backward pass of model_'s model (made on first use), or why not.
  const TransformerModel* gradient_model_ = nullptr;
  std::shared_ptr<const ModelGradient> gradient_;
  std::string gradient_error_;
  // The model's part on its thread: ∂L/∂O for a document revision.
  struct ModelPart {
    const TransformerModel* model = nullptr;  // what it is of: the model, layer and text
    int layer = 0;
    std::vector<int> ids;
    std::uint64_t revision = 0;
    std::shared_ptr<const ModelGradient> gradient;  // made by the task when it was not yet
    std::string error;                              // why it could not be made
    LayerOutputGradient out;
  };
  TaskThread<ModelPart> model_task_;
  bool pending_ = false;
  double thread_above_ = 2e7;  // the current revision's model part is computing or waits for the thread

  void compute_model_gradients(const Document& doc);
  void start_model_part(const Document& doc);
  void finish_model_part(const Document& doc, const LayerOutputGradient& out);
  void poll_model_part(const Document& doc);
};

}  // namespace attention_lab::gui
