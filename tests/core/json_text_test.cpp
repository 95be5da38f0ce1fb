// Numbers and strings as written into scenario and trace files.

#include "attention_lab/json_text.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <limits>
#include <sstream>

using namespace attention_lab;

namespace {
std::string number(float v) {
  std::ostringstream out;
  json_text::write_number(out, v);
  return out.str();
}
}  // namespace

TEST(JsonText, FloatsAreWrittenInTheirShortestRoundTripForm) {
  EXPECT_EQ(number(0.43f), "0.43");
  EXPECT_EQ(number(1.0f), "1");
  EXPECT_EQ(number(-2.5f), "-2.5");
  EXPECT_EQ(number(1e30f), "1e+30");
  for (float v : {0.1f, 1.0f / 3.0f, 3.4028235e38f, 1.17549435e-38f, 1e-45f, -123456.789f}) {
    const double parsed = nlohmann::json::parse(number(v)).get<double>();
    EXPECT_EQ(static_cast<float>(parsed), v) << number(v);
  }
}

TEST(JsonText, NegativeZeroKeepsItsSign) {
  const double parsed = nlohmann::json::parse(number(-0.0f)).get<double>();
  EXPECT_EQ(parsed, 0.0);
  EXPECT_TRUE(std::signbit(parsed)) << number(-0.0f);
}

TEST(JsonText, NonFiniteNumbersAreStrings) {
  EXPECT_EQ(number(std::numeric_limits<float>::infinity()), "\"inf\"");
  EXPECT_EQ(number(-std::numeric_limits<float>::infinity()), "\"-inf\"");
  EXPECT_EQ(number(std::numeric_limits<float>::quiet_NaN()), "\"nan\"");
}

TEST(JsonText, QuotingEscapesEverythingJsonRequires) {
  const std::string raw = "a\"b\\c\nd\te\x01 ü";
  const std::string quoted = json_text::quote(raw);
  EXPECT_EQ(quoted, "\"a\\\"b\\\\c\\nd\\te\\u0001 ü\"");
  EXPECT_EQ(nlohmann::json::parse(quoted).get<std::string>(), raw);
}

TEST(JsonText, MatricesAreOneRowPerLine) {
  Matrix m(2, 2);
  m << 1, 2, 3, -std::numeric_limits<float>::infinity();
  std::ostringstream out;
  json_text::write_matrix(out, m, 2);
  EXPECT_EQ(out.str(), "[\n    [1, 2],\n    [3, \"-inf\"]\n  ]");
  EXPECT_EQ(nlohmann::json::parse(out.str())[1][1], "-inf");
}
