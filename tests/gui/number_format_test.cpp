// Numbers as the inspector prints them: a true minus sign, ∞ and NaN in
// words a learner reads, exponents for the very small and very large.

#include "logic/number_format.h"
#include "gui_test_support.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

using namespace attention_lab::gui;
using namespace attention_lab::gui_test;

namespace {
const std::string kMinus = "\xE2\x88\x92";  // U+2212
}  // namespace

TEST(NumberFormat, OrdinaryNumbersHaveTheRequestedDecimals) {
  EXPECT_EQ(format_number(0.52f), "0.52");
  EXPECT_EQ(format_number(0.5f, 3), "0.500");
  EXPECT_EQ(format_number(1.0f, 4), "1.0000");
  EXPECT_EQ(format_number(2.0f, 0), "2");
  EXPECT_EQ(format_number(12345.678f, 1), "12345.7");
}

TEST(NumberFormat, NegativesUseTheTrueMinusSign) {
  EXPECT_EQ(format_number(-0.31f), kMinus + "0.31");
  EXPECT_EQ(format_number(-0.31f), "−0.31");
  EXPECT_EQ(format_number(-2.0f, 3), "−2.000");
  EXPECT_EQ(format_number(-2.0f, 3).find('-'), std::string::npos);
}

TEST(NumberFormat, InfinitiesAndNaNAreWords) {
  EXPECT_EQ(format_number(-kInf), "−∞");
  EXPECT_EQ(format_number(kInf), "∞");
  EXPECT_EQ(format_number(std::numeric_limits<float>::quiet_NaN()), "NaN");
  EXPECT_EQ(format_number(-std::numeric_limits<float>::quiet_NaN()), "NaN");
}

TEST(NumberFormat, TinyAndHugeNumbersUseExponents) {
  EXPECT_EQ(format_number(0.0001f), "1.00e-04");
  EXPECT_EQ(format_number(-2.5e-5f), "−2.50e-05");
  EXPECT_EQ(format_number(123456.0f, 1), "1.2e+05");
  EXPECT_EQ(format_number(-3e20f), "−3.00e+20");
  EXPECT_EQ(format_number(std::numeric_limits<float>::denorm_min(), 1), "1.4e-45");
}

TEST(NumberFormat, ExponentsStartAtTheEdgesOfTheReadableRange) {
  EXPECT_EQ(format_number(0.001f, 3), "0.001");
  EXPECT_EQ(format_number(0.000999f, 2), "9.99e-04");
  EXPECT_EQ(format_number(99999.0f, 0), "99999");
  EXPECT_EQ(format_number(100000.0f, 0), "1e+05");
}

TEST(NumberFormat, ZeroIsNeverNegative) {
  EXPECT_EQ(format_number(0.0f), "0.00");
  EXPECT_EQ(format_number(-0.0f), "0.00");
  EXPECT_EQ(format_number(-0.001f), "0.00");  // rounds to zero: no "−0.00"
  EXPECT_EQ(format_number(-0.004f), "0.00");
  EXPECT_EQ(format_number(-0.0049f, 2), "0.00");
  EXPECT_EQ(format_number(-0.0004f, 3), "−4.000e-04");  // not zero: written as an exponent
  EXPECT_EQ(format_number(-0.0f, 0), "0");
  for (const float v : {-0.001f, -0.002f, -0.003f, -0.004f, -0.0049f, -0.0f})
    for (int digits = 0; digits <= 2; ++digits) EXPECT_EQ(format_number(v, digits).find(kMinus), std::string::npos) << v;
}

TEST(NumberFormat, NegativeFactorsAreParenthesised) {
  EXPECT_EQ(format_factor(-0.31f), "(−0.31)");
  EXPECT_EQ(format_factor(0.31f), "0.31");
  EXPECT_EQ(format_factor(0.0f), "0.00");
  EXPECT_EQ(format_factor(-1.5f, 3), "(−1.500)");
}

TEST(NumberFormat, CellValuesUseFixedDecimalsSoTinyOnesTakeNoMoreRoom) {
  EXPECT_EQ(format_cell_value(0.52f), "0.52");
  EXPECT_EQ(format_cell_value(-0.31f), "−0.31");
  EXPECT_EQ(format_cell_value(6.7e-4f), "0.00");  // format_number: "6.70e-04"
  EXPECT_EQ(format_cell_value(-6.7e-4f), "0.00");  // rounds to zero: no "−0.00"
  EXPECT_EQ(format_cell_value(-0.006f), "−0.01");
  EXPECT_EQ(format_cell_value(-0.06f, 1), "−0.1");
  EXPECT_EQ(format_cell_value(1234.5f, 1), "1234.5");
  EXPECT_EQ(format_cell_value(2.5e5f), "2.50e+05");
  EXPECT_EQ(format_cell_value(-std::numeric_limits<float>::infinity()), "−∞");
  EXPECT_EQ(format_cell_value(std::numeric_limits<float>::quiet_NaN()), "NaN");
  // Every value below 1e5 is as wide as any other of the same integer part.
  for (const float v : {1e-7f, 3e-4f, 0.004f, 0.5f, 0.99f}) EXPECT_EQ(format_cell_value(v).size(), 4u) << v;
}

TEST(NumberFormat, PercentagesNeverReadMinusZero) {
  EXPECT_EQ(format_percent(0.123), "12.3 %");
  EXPECT_EQ(format_percent(1.0), "100.0 %");
  EXPECT_EQ(format_percent(-1e-9), "0.0 %");  // 1 − (a sum a hair above 1)
  EXPECT_EQ(format_percent(-0.0), "0.0 %");
  EXPECT_EQ(format_percent(-0.0004), "0.0 %");
  EXPECT_EQ(format_percent(-0.25), "−25.0 %");
  EXPECT_EQ(format_percent(0.5, 0), "50 %");
  EXPECT_EQ(format_percent(std::nan("")), "NaN %");
}

TEST(NumberFormat, ProbabilitiesShowTheirSizeHoweverSmall) {
  EXPECT_EQ(format_probability(0.5), "50.0 %");
  EXPECT_EQ(format_probability(0.0234), "2.34 %");
  EXPECT_EQ(format_probability(0.000171), "0.0171 %");  // one of 50 257 tokens: "0.0 %" said nothing
  EXPECT_EQ(format_probability(2e-9), "2.00e-07 %");
  EXPECT_EQ(format_probability(0.00015), "0.0150 %");  // trailing zeros kept: a column of three digits
  EXPECT_EQ(format_probability(0.0), "0 %");
  EXPECT_EQ(format_probability(1.0), "100.0 %");
}

TEST(NumberFormat, AProbabilitysChangeShowsAsManyDigitsAsItNeeds) {
  EXPECT_EQ(format_probability_change(0.30, 0.323), "+2.3 pt");
  EXPECT_EQ(format_probability_change(0.000171, 0.000167), kMinus + "0.00040 pt");
  EXPECT_EQ(format_probability_change(0.000167, 0.000167 + 7.3e-7), "+0.000073 pt");  // fixed, never "7.3e-05"
  EXPECT_EQ(format_probability_change(1e-8, 1e-8 + 3e-12), "+3.0e-10 pt");  // far below any reading
  EXPECT_EQ(format_probability_change(0.0001711, 0.0001677), kMinus + "0.00034 pt");
  EXPECT_EQ(format_probability_change(0.25, 0.25), "±0");
  EXPECT_EQ(format_probability_change(0.25, 0.25 * (1 + 1e-7)), "±0");  // recomputing the same row
  EXPECT_EQ(format_probability_change(0.0, 0.0), "±0");
}

TEST(NumberFormat, ACompactCellValueDropsOnlyTheLeadingZero) {
  EXPECT_EQ(compact_cell_value("−0.4"), "−.4");
  EXPECT_EQ(compact_cell_value("0.25"), ".25");
  EXPECT_EQ(compact_cell_value("−1.8"), "−1.8");  // nothing to drop
  EXPECT_EQ(compact_cell_value("10.5"), "10.5");
  EXPECT_EQ(compact_cell_value("−∞"), "−∞");
  EXPECT_EQ(compact_cell_value("0"), "0");
}
