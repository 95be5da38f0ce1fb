#include "logic/gradient_store.h"

#include <stdexcept>

namespace attention_lab::gui {

const char* to_string(GradientView view) {
  switch (view) {
    case GradientView::Values: return "values";
    case GradientView::Gradients: return "gradients";
    case GradientView::Both: return "both";
  }
  return "?";
}

GradientView next_gradient_view(GradientView view) {
  switch (view) {
    case GradientView::Values: return GradientView::Gradients;
    case GradientView::Gradients: return GradientView::Both;
    case GradientView::Both: return GradientView::Values;
  }
  return GradientView::Values;
}

void GradientStore::set_model(std::optional<ModelLoss> model) {
  if (model == model_) return;
  model_ = std::move(model);
  version_ = 0;  // computed again on the next get()
  if (!model_ || model_->model.get() != gradient_model_) {
    gradient_.reset();
    gradient_model_ = nullptr;
    gradient_error_.clear();
  }
}

void GradientStore::compute_model_gradients(const Document& doc) {
  const Scenario& s = doc.scenario();
  if (!model_->refused.empty()) {
    problem_ = model_->refused;
    return;
  }
  if (std::string why = gradients_problem(s); !why.empty()) {
    problem_ = std::move(why);
    return;
  }
  if (s.dims().T != static_cast<int>(model_->ids.size())) {
    problem_ = "T: the model's loss is of its " + std::to_string(model_->ids.size()) + " tokens, and the layer now has " +
               std::to_string(s.dims().T) + " rows";
    return;
  }
  if (gradient_model_ != model_->model.get()) {
    gradient_model_ = model_->model.get();
    gradient_ = ModelGradient::make(*model_->model, gradient_error_);
  }
  if (!gradient_) {
    problem_ = gradient_error_;
    return;
  }
  try {
    const Matrix output = doc.engine().stage(StageId::input(StageKind::Output));
    const LayerOutputGradient out = gradient_->at_layer(model_->ids, model_->layer, &output);
    gradients_ = backward_from_output(doc.engine(), s, out.d_output, out.loss,
                                      "the model's next-token loss, the mean over its " + std::to_string(out.positions) +
                                          " positions with a next token");
  } catch (const std::invalid_argument& e) {
    problem_ = e.what();
  }
}

const Gradients* GradientStore::get(const Document& doc) {
  if (doc_ != &doc || revision_ != doc.revision() || version_ == 0) {
    doc_ = &doc;
    revision_ = doc.revision();
    ++version_;
    gradients_.reset();
    problem_.clear();
    const Scenario& s = doc.scenario();
    if (!s.loss && model_) {
      compute_model_gradients(doc);
    } else if (!s.loss) {
      problem_ = "The scenario has no loss: set one in the Train tab (or a scenario file's \"loss\"), then each stage has a gradient.";
    } else if (std::string why = gradients_problem(s, *s.loss); !why.empty()) {
      problem_ = std::move(why);
    } else {
      gradients_ = backward(doc.engine(), s, *s.loss);
    }
  }
  return gradients_ ? &*gradients_ : nullptr;
}

}  // namespace attention_lab::gui
