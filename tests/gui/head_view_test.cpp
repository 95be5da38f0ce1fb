// The head view: lines of a token window, taken from only the window's rows
// of the weights; picking the nearest line; a distinct colour per head for
// a real layer's 12 (and up to 24) heads.

#include "logic/head_view.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <tuple>
#include <vector>

using namespace attention_lab;
using namespace attention_lab::gui;

namespace {

// A T×T matrix whose cell (q, k) holds a distinct weight in (0, 1).
Matrix distinct_weights(int T) {
  Matrix w(T, T);
  for (int q = 0; q < T; ++q)
    for (int k = 0; k < T; ++k) w(q, k) = 0.02f + 0.9f * static_cast<float>(q * T + k) / static_cast<float>(T * T);
  return w;
}

HeadViewLayout window(int first, int count) {
  HeadViewLayout l;
  l.left_x = 100, l.right_x = 400, l.top = 50, l.row_height = 20;
  l.first_token = first, l.token_count = count;
  return l;
}

}  // namespace

TEST(HeadView, TheWindowsRowsGiveTheSameLinesAsTheWholeMatrix) {
  const Matrix w = distinct_weights(40);
  const HeadViewLayout l = window(12, 9);
  const auto whole = attention_lines(w, 3, l);
  const auto part = attention_lines(w.middleRows(12, 9), 3, l, 0.01f, -1, -1, 12);
  ASSERT_EQ(whole.size(), 81u);  // every pair inside the window, none outside
  ASSERT_EQ(part.size(), whole.size());
  for (std::size_t i = 0; i < whole.size(); ++i) {
    EXPECT_EQ(std::tie(part[i].query, part[i].key, part[i].head), std::tie(whole[i].query, whole[i].key, whole[i].head));
    EXPECT_EQ(part[i].weight, w(part[i].query, part[i].key));
    EXPECT_FLOAT_EQ(part[i].y0, 50 + (static_cast<float>(part[i].query - 12) + 0.5f) * 20);
  }
  for (const auto& line : part) {
    EXPECT_GE(line.query, 12);
    EXPECT_LT(line.query, 21);
    EXPECT_GE(line.key, 12);
    EXPECT_LT(line.key, 21);
  }
}

TEST(HeadView, LinesAreWeakestFirstAndSkipTinyAndNaNWeights) {
  Matrix w = distinct_weights(6);
  w(2, 1) = 0.005f;
  w(3, 3) = std::numeric_limits<float>::quiet_NaN();
  const auto lines = attention_lines(w, 0, window(0, 6));
  EXPECT_EQ(lines.size(), 34u);
  for (std::size_t i = 1; i < lines.size(); ++i) EXPECT_LE(lines[i - 1].weight, lines[i].weight);
  for (const auto& line : lines) EXPECT_FALSE((line.query == 2 && line.key == 1) || (line.query == 3 && line.key == 3));
}

TEST(HeadView, HoveringATokenKeepsOnlyItsLines) {
  const Matrix w = distinct_weights(30);
  const HeadViewLayout l = window(10, 10);
  const auto from = attention_lines(w.middleRows(10, 10), 0, l, 0.01f, 14, -1, 10);
  ASSERT_EQ(from.size(), 10u);
  for (const auto& line : from) EXPECT_EQ(line.query, 14);
  const auto to = attention_lines(w.middleRows(10, 10), 0, l, 0.01f, -1, 17, 10);
  ASSERT_EQ(to.size(), 10u);
  for (const auto& line : to) EXPECT_EQ(line.key, 17);
  // A hovered query outside the rows given draws nothing (and reads nothing).
  EXPECT_TRUE(attention_lines(w.middleRows(10, 10), 0, l, 0.01f, 25, -1, 10).empty());
}

TEST(HeadView, PickingPrefersTheNearerThenTheHeavierLine) {
  // Two horizontal lines 3 px apart; a third one far away.
  const std::vector<AttentionLine> lines = {{0, 1, 1, 0.9f, 100, 80, 400, 80},
                                            {1, 2, 2, 0.2f, 100, 83, 400, 83},
                                            {2, 5, 5, 1.0f, 100, 200, 400, 200}};
  EXPECT_EQ(pick_line(lines, 250, 83)->head, 1);    // on the light one, 3 px from the heavy one
  EXPECT_EQ(pick_line(lines, 250, 81.5f)->head, 0);  // halfway: the heavier
  EXPECT_FALSE(pick_line(lines, 250, 150).has_value());
  EXPECT_FLOAT_EQ(distance_to_segment(0, 3, -1, 0, 1, 0), 3.0f);
  EXPECT_FLOAT_EQ(distance_to_segment(5, 0, -1, 0, 1, 0), 4.0f);
}

TEST(HeadView, TwentyFourHeadsHaveTwentyFourColours) {
  std::set<std::tuple<int, int, int>> seen;
  for (int h = 0; h < 24; ++h) {
    const Rgb c = head_colour(h);
    for (const float v : {c.r, c.g, c.b}) {
      EXPECT_GE(v, 0.0f);
      EXPECT_LE(v, 1.0f);
    }
    seen.insert({static_cast<int>(std::lround(c.r * 100)), static_cast<int>(std::lround(c.g * 100)),
                 static_cast<int>(std::lround(c.b * 100))});
  }
  EXPECT_EQ(seen.size(), 24u);
  const Rgb first = head_colour(0), again = head_colour(24);
  EXPECT_EQ(std::tie(first.r, first.g, first.b), std::tie(again.r, again.g, again.b));
}
