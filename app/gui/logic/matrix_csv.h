#pragma once
// A matrix as CSV text: one row per line, shortest round-trip floats,
// −∞ as "-inf" so spreadsheets and numpy.loadtxt read it. With labels, the
// first line holds the column labels (after an empty corner) and each row
// starts with its label, quoted per RFC 4180 when needed, so
// pandas.read_csv(f, index_col=0) gets the tokens back as the index.

#include "attention_lab/matrix.h"

#include <string>
#include <vector>

namespace attention_lab::gui {

std::string matrix_to_csv(MatrixView m);
std::string matrix_to_csv(MatrixView m, const std::vector<std::string>& row_labels,
                          const std::vector<std::string>& col_labels);

// One CSV field: as is, or in double quotes (inner quotes doubled) when it
// holds a comma, a quote, a line break or starts/ends with a space.
std::string csv_field(const std::string& text);

}  // namespace attention_lab::gui
