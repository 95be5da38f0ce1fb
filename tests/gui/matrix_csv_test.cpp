// "Copy matrix as CSV": one line per row, shortest floats that read back to
// the same bits, and −∞ as "-inf" so spreadsheets and numpy read it.

#include "logic/matrix_csv.h"
#include "gui_test_support.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

using namespace attention_lab;
using namespace attention_lab::gui;
using namespace attention_lab::gui_test;

namespace {


std::vector<std::vector<std::string>> cells(const std::string& csv) {
  std::vector<std::vector<std::string>> out;
  std::istringstream lines(csv);
  for (std::string line; std::getline(lines, line);) {
    out.emplace_back();
    std::istringstream fields(line);
    for (std::string f; std::getline(fields, f, ',');) out.back().push_back(f);
  }
  return out;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

TEST(MatrixCsv, OneLinePerRowAndOneFieldPerColumn) {
  Matrix m(2, 3);
  m << 1.0f, 2.5f, -3.0f, 0.0f, 0.25f, 100.0f;
  EXPECT_EQ(matrix_to_csv(m), "1,2.5,-3\n0,0.25,100\n");
}

TEST(MatrixCsv, ASingleColumnHasNoCommas) {
  Matrix m(3, 1);
  m << 1.0f, 2.0f, 3.0f;
  EXPECT_EQ(matrix_to_csv(m), "1\n2\n3\n");
}

TEST(MatrixCsv, AnEmptyMatrixIsEmptyText) { EXPECT_EQ(matrix_to_csv(Matrix(0, 0)), ""); }

TEST(MatrixCsv, MaskedCellsAreWrittenAsMinusInf) {
  Matrix m(1, 4);
  m << 0.5f, -kInf, kInf, std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(matrix_to_csv(m), "0.5,-inf,inf,nan\n");
  // and strtod, which numpy and spreadsheets use, reads them back
  const auto back = cells(matrix_to_csv(m));
  EXPECT_EQ(std::strtof(back[0][1].c_str(), nullptr), -kInf);
  EXPECT_EQ(std::strtof(back[0][2].c_str(), nullptr), kInf);
}

TEST(MatrixCsv, FloatsAreTheShortestTextThatReadsBackToTheSameBits) {
  EXPECT_EQ(matrix_to_csv(Matrix::Constant(1, 1, 0.1f)), "0.1\n");  // not 0.100000001
  EXPECT_EQ(matrix_to_csv(Matrix::Constant(1, 1, 1.0f / 3.0f)), "0.33333334\n");
  EXPECT_EQ(matrix_to_csv(Matrix::Constant(1, 1, 1e-7f)), "1e-07\n");

  Matrix m(2, 4);
  m << 0.1f, 1.0f / 3.0f, -2.0f / 7.0f, 1e-7f, std::numeric_limits<float>::max(),
      std::numeric_limits<float>::denorm_min(), -123456.79f, 0.29611194f;
  const auto back = cells(matrix_to_csv(m));
  ASSERT_EQ(back.size(), 2u);
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    ASSERT_EQ(back[static_cast<std::size_t>(r)].size(), 4u);
    for (Eigen::Index c = 0; c < m.cols(); ++c) {
      const std::string& text = back[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)];
      EXPECT_TRUE(same_bits(std::strtof(text.c_str(), nullptr), m(r, c))) << text;
      EXPECT_LE(text.size(), 15u) << text;  // at most 9 significant digits, a sign and an exponent
    }
  }
}

TEST(MatrixCsv, NegativeZeroKeepsItsSign) {
  const auto back = cells(matrix_to_csv(Matrix::Constant(1, 1, -0.0f)));
  EXPECT_TRUE(same_bits(std::strtof(back[0][0].c_str(), nullptr), -0.0f)) << back[0][0];
}

TEST(MatrixCsv, AViewOfAColumnBlockWritesOnlyThoseColumns) {
  Matrix m(2, 4);
  m << 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 8.0f;
  EXPECT_EQ(matrix_to_csv(m.middleCols(1, 2)), "2,3\n6,7\n");
}

TEST(MatrixCsv, LabelsMakeAHeaderLineAndAFirstColumnWithAnEmptyCorner) {
  Matrix m(2, 2);
  m << 1.0f, 2.0f, 3.0f, 4.0f;
  EXPECT_EQ(matrix_to_csv(m, {"the", "cat"}, {"the", "cat"}), ",the,cat\nthe,1,2\ncat,3,4\n");
}

TEST(MatrixCsv, LabelsWithCommasOrQuotesAreQuotedAsRfc4180Says) {
  Matrix m(2, 1);
  m << 1.0f, 2.0f;
  EXPECT_EQ(matrix_to_csv(m, {"a,b", "say \"hi\""}, {"0"}), ",0\n\"a,b\",1\n\"say \"\"hi\"\"\",2\n");
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_field(" padded"), "\" padded\"");  // spreadsheets would trim the space
  EXPECT_EQ(csv_field(""), "");
}

TEST(MatrixCsv, MissingLabelsFallBackToIndices) {
  Matrix m(2, 3);
  m.setZero();
  EXPECT_EQ(matrix_to_csv(m, {"only"}, {}), ",0,1,2\nonly,0,0,0\n1,0,0,0\n");
}
