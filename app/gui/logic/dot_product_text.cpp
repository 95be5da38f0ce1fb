#include "logic/dot_product_text.h"

namespace attention_lab::gui {

std::string dot_product_text(const RowVector& a, const RowVector& b, int limit, std::string (*factor)(float)) {
  std::string s;
  const auto n = a.size();
  for (Eigen::Index i = 0; i < n && i < limit; ++i) s += (i ? " + " : "") + factor(a[i]) + "×" + factor(b[i]);
  if (n > limit) s += " + … (" + std::to_string(n) + " terms)";
  return s;
}

}  // namespace attention_lab::gui
