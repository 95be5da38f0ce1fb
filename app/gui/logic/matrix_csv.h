#pragma once
// A matrix as CSV text: one row per line, shortest round-trip floats,
// −∞ as "-inf" so spreadsheets and numpy.loadtxt read it.

#include "attention_lab/matrix.h"

#include <string>

namespace attention_lab::gui {

std::string matrix_to_csv(MatrixView m);

}  // namespace attention_lab::gui
