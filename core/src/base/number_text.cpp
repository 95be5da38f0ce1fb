#include "attention_lab/number_text.h"

#include <cstdio>

namespace attention_lab {

std::string significant(double v, int digits) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

}  // namespace attention_lab
