#pragma once
// A dot product written out with its numbers, the way every derivation shows
// one: "a₀×b₀ + a₁×b₁ + … (n terms)".

#include "attention_lab/matrix.h"

#include <string>

namespace attention_lab::gui {

// The first `limit` products of a and b, each factor written by `factor`; a
// longer sum ends with how many terms it has.
std::string dot_product_text(const RowVector& a, const RowVector& b, int limit, std::string (*factor)(float));

}  // namespace attention_lab::gui
