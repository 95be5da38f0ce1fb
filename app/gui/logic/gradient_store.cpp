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

const Gradients* GradientStore::get(const Document& doc) {
  if (doc_ != &doc || revision_ != doc.revision() || version_ == 0) {
    doc_ = &doc;
    revision_ = doc.revision();
    ++version_;
    gradients_.reset();
    problem_.clear();
    const Scenario& s = doc.scenario();
    if (!s.loss) {
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
