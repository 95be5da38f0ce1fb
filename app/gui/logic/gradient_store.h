#pragma once
// The gradients of the document's scenario under its loss, as the Pipeline
// draws them: computed only when something asks (a view showing gradients,
// the inspector on a gradient cell) and again only after the document changed.

#include "attention_lab/document.h"
#include "attention_lab/gradients.h"

#include <cstdint>
#include <optional>
#include <string>

namespace attention_lab::gui {

// What the Pipeline shows of each stage.
enum class GradientView { Values, Gradients, Both };
const char* to_string(GradientView view);  // "values", "gradients", "both"
// Values → gradients → both → values (Ctrl+G).
GradientView next_gradient_view(GradientView view);

class GradientStore {
 public:
  // The gradients of `doc` now; null when its scenario has no loss or they
  // cannot be computed (problem() says why).
  const Gradients* get(const Document& doc);
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
};

}  // namespace attention_lab::gui
