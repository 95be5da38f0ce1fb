#include "attention_lab/softcap.h"

#include <cmath>

namespace attention_lab {

__attribute__((noinline)) float softcap(float x, float c) { return std::tanh(x / c) * c; }

}  // namespace attention_lab
