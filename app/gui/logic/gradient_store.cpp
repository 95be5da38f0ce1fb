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
  pending_ = false;
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
  if (gradient_model_ == model_->model.get() && !gradient_) {
    problem_ = gradient_error_;
    return;
  }
  const double work = static_cast<double>(model_->model->parameters) * static_cast<double>(model_->ids.size());
  // (below it, on the UI thread: no "computing" flicker while a small model's cell is dragged)
  if (work > thread_above_) return start_model_part(doc);
  if (gradient_model_ != model_->model.get()) {
    gradient_model_ = model_->model.get();
    gradient_ = ModelGradient::make(*model_->model, gradient_error_);
    if (!gradient_) {
      problem_ = gradient_error_;
      return;
    }
  }
  try {
    const Matrix output = doc.engine().stage(StageId::input(StageKind::Output));
    finish_model_part(doc, gradient_->at_layer(model_->ids, model_->layer, &output));
  } catch (const std::invalid_argument& e) {
    problem_ = e.what();
  }
}

void GradientStore::start_model_part(const Document& doc) {
  pending_ = true;
  problem_ = "computing the model's gradients (its layers after this one, forward and back)…";
  if (model_task_.running()) return;  // poll_model_part starts this revision's when that one ends
  const bool have = gradient_model_ == model_->model.get();
  model_task_.start([revision = doc.revision(), model = model_->model, ids = model_->ids, layer = model_->layer,
                     gradient = have ? gradient_ : nullptr,
                     output = Matrix(doc.engine().stage(StageId::input(StageKind::Output)))](const auto& progress) {
    ModelPart part;
    part.model = model.get();
    part.layer = layer;
    part.ids = ids;
    part.revision = revision;
    part.gradient = gradient;
    if (!part.gradient) part.gradient = ModelGradient::make(*model, part.error);
    // Asked between layers: closing the window (the task's cancel) stops it within one.
    if (part.gradient) part.out = part.gradient->at_layer(ids, layer, &output, [&progress] { return progress(0.0); });
    return part;
  });
}

void GradientStore::finish_model_part(const Document& doc, const LayerOutputGradient& out) {
  gradients_ = backward_from_output(doc.engine(), doc.scenario(), out.d_output, out.loss,
                                    "the model's next-token loss, the mean over its " + std::to_string(out.positions) +
                                        " positions with a next token");
  problem_.clear();
}

void GradientStore::poll_model_part(const Document& doc) {
  std::string error;
  std::optional<ModelPart> part = model_task_.take(error);
  if (!part) {
    if (!error.empty() && pending_) pending_ = false, problem_ = error;
    return;
  }
  // (a result for a model, layer or text no longer shown is dropped; the
  // backward pass it made is kept if it is of the model shown)
  const bool same_model = model_ && part->model == model_->model.get();
  if (same_model && gradient_model_ != part->model) {
    gradient_model_ = part->model;
    gradient_ = part->gradient;
    gradient_error_ = part->error;
  }
  if (!pending_ || doc_ != &doc) return;
  if (!same_model || part->layer != model_->layer || part->ids != model_->ids) return start_model_part(doc);
  if (!part->gradient) {
    pending_ = false;
    problem_ = part->error;
  } else if (!error.empty()) {
    pending_ = false;
    problem_ = error;
  } else if (part->revision == doc.revision() && revision_ == doc.revision()) {
    pending_ = false;
    ++version_;
    finish_model_part(doc, part->out);
  } else {
    start_model_part(doc);  // the document moved on while it computed: its state now
  }
}

const Gradients* GradientStore::get(const Document& doc) {
  poll_model_part(doc);
  if (doc_ != &doc || revision_ != doc.revision() || version_ == 0) {
    doc_ = &doc;
    revision_ = doc.revision();
    ++version_;
    gradients_.reset();
    problem_.clear();
    pending_ = false;
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
