#pragma once
// Writing matrices as compact, strict JSON: one row per line, floats in their
// shortest round-trip form ("0.43", not "0.4300000071525574"), non-finite
// numbers as the strings "inf", "-inf", "nan".

#include "attention_lab/matrix.h"

#include <ostream>
#include <string>

namespace attention_lab::json_text {

void write_number(std::ostream& out, float v);
// [[a, b], [c, d]] with each row on its own line, indented by `indent` spaces.
void write_matrix(std::ostream& out, MatrixView m, int indent);
// [a, b, c] on one line.
void write_row(std::ostream& out, MatrixView m, Eigen::Index row);
// A JSON string literal with escapes.
std::string quote(const std::string& s);

}  // namespace attention_lab::json_text
