// Labels cut with "…" on a code point boundary; formulas wrapped only between
// their terms. A fixed-advance "font" (10 px per code point) stands in for ImGui.

#include "logic/text_fit.h"

#include <gtest/gtest.h>

using namespace attention_lab::gui;

namespace {

std::size_t code_points(std::string_view s) {
  std::size_t n = 0;
  for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0u) != 0x80u;
  return n;
}

const TextMeasure ten_px = [](std::string_view s) { return 10.0f * static_cast<float>(code_points(s)); };

bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + len > s.size()) return false;
    for (std::size_t k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0u) != 0x80u) return false;
    i += len;
  }
  return true;
}

}  // namespace

TEST(Ellipsize, ALabelThatFitsIsUnchanged) {
  EXPECT_EQ(ellipsize("cat", 30.0f, ten_px), "cat");
  EXPECT_EQ(ellipsize("", 0.0f, ten_px), "");
}

TEST(Ellipsize, ALongLabelEndsInAnEllipsisAndFits) {
  EXPECT_EQ(ellipsize("journey", 50.0f, ten_px), "jour…");
  EXPECT_EQ(ellipsize("stream", 30.0f, ten_px), "st…");
  EXPECT_LE(ten_px(ellipsize("because", 42.0f, ten_px)), 42.0f);
}

TEST(Ellipsize, NoRoomEvenForTheEllipsisGivesNothing) {
  EXPECT_EQ(ellipsize("journey", 9.0f, ten_px), "");
  EXPECT_EQ(ellipsize("journey", 10.0f, ten_px), "…");
}

TEST(Ellipsize, NeverCutsInsideAMultiByteCharacter) {
  // "naïve→café", "日本語テキスト", an emoji (4 bytes): every width gives valid UTF-8.
  for (const std::string s : {"naïve→café", "日本語テキスト", "a😀b😀c😀d", "Ŝ₀Ŝ₁Ŝ₂"}) {
    for (float w = 0.0f; w <= 120.0f; w += 5.0f) {
      const std::string out = ellipsize(s, w, ten_px);
      EXPECT_TRUE(valid_utf8(out)) << s << " at " << w << " gave " << out;
      EXPECT_LE(ten_px(out), w) << s << " at " << w;
      if (!out.empty() && out != s) {
        EXPECT_TRUE(out.ends_with("…")) << out;
      }
    }
  }
  EXPECT_EQ(ellipsize("日本語テキスト", 40.0f, ten_px), "日本語…");
}

TEST(Ellipsize, KeepsAsMuchAsFitsWithAProportionalFont) {
  // 'i' narrow, 'W' wide: the longest fitting prefix, not a guess from the byte count.
  const TextMeasure proportional = [](std::string_view s) {
    float w = 0;
    for (char c : s) w += c == 'i' ? 3.0f : c == 'W' ? 14.0f : (static_cast<unsigned char>(c) & 0xC0u) == 0x80u ? 0.0f : 8.0f;
    return w;
  };
  // "…" is 3 bytes: 8 px (first byte) in this font.
  EXPECT_EQ(ellipsize("iiiiiiiiWWW", 8.0f * 1 + 3.0f * 8, proportional), "iiiiiiii…");
}

TEST(Utf8Prefix, BacksUpToTheStartOfACodePoint) {
  const std::string s = "a→b";  // '→' is 3 bytes
  EXPECT_EQ(utf8_prefix(s, 1), 1u);
  EXPECT_EQ(utf8_prefix(s, 2), 1u);
  EXPECT_EQ(utf8_prefix(s, 3), 1u);
  EXPECT_EQ(utf8_prefix(s, 4), 4u);
  EXPECT_EQ(utf8_prefix(s, 99), s.size());
}

TEST(FormulaTokens, OperatorsGoWithTheTermAfterThem) {
  const auto t = formula_tokens("0.12×0.40 + (−0.31)×0.05 + … (8 terms) = 0.52");
  const std::vector<std::string> expected = {"0.12×0.40", "+ (−0.31)×0.05", "+ …", "(8 terms)", "= 0.52"};
  EXPECT_EQ(t, expected);
}

TEST(FormulaTokens, ANumberOrAnIndexIsNeverSplit) {
  // Joined again, the tokens are the text: nothing dropped, nothing cut.
  const std::string text = "1.80×1.51 + 0.25×3.00 = 3.47 ; + 0.1 = 3.57 S₀[2,3] / √4";
  std::string joined;
  for (const std::string& tok : formula_tokens(text)) joined += (joined.empty() ? "" : " ") + tok;
  EXPECT_EQ(joined, text);
  EXPECT_EQ(formula_tokens(text).back(), "/ √4");
  const auto t = formula_tokens("1.80×1.51 + 0.25×3.00 = 3.47 ; + 0.1");
  const std::vector<std::string> expected = {"1.80×1.51", "+ 0.25×3.00", "= 3.47", "; + 0.1"};
  EXPECT_EQ(t, expected);
}

TEST(FormulaTokens, AShortGroupInParenthesesStaysWhole) {
  // The softmax's exponent: broken inside, "Σⱼ e^(Ŝ₅ⱼ" and "− 0.041)" read as two formulas.
  const auto t = formula_tokens("Σⱼ e^(Ŝ₅ⱼ − 0.041) = 2.31");
  const std::vector<std::string> expected = {"Σⱼ", "e^(Ŝ₅ⱼ − 0.041)", "= 2.31"};
  EXPECT_EQ(t, expected);
  // A long group breaks as before (it could be wider than any line), losing nothing.
  const std::string text = "(0.11×0.22 + 0.33×0.44 + 0.55×0.66 + 0.77×0.88) / 4";
  std::string joined;
  for (const std::string& tok : formula_tokens(text)) {
    EXPECT_LE(tok.size(), 40u + 16u) << tok;
    joined += (joined.empty() ? "" : " ") + tok;
  }
  EXPECT_EQ(joined, text);
}

TEST(WrapTokens, LinesBreakOnlyBetweenTermsAndStartWithTheirOperator) {
  const auto lines = wrap_tokens(formula_tokens("1.80×1.51 + 0.25×3.00 + 0.10×0.20 = 3.49"), 120.0f, ten_px);
  const std::vector<std::string> expected = {"1.80×1.51", "+ 0.25×3.00", "+ 0.10×0.20", "= 3.49"};
  EXPECT_EQ(lines, expected);
  for (const auto& l : lines) EXPECT_LE(ten_px(l), 120.0f) << l;
}

TEST(WrapTokens, FillsALineBeforeBreaking) {
  const auto lines = wrap_tokens(formula_tokens("a + b + c + d"), 50.0f, ten_px);
  const std::vector<std::string> expected = {"a + b", "+ c", "+ d"};  // "+ c + d" is 70 px
  EXPECT_EQ(lines, expected);
}

TEST(WrapTokens, ATermWiderThanTheLineBreaksRatherThanRunOffTheEdge) {
  // a word: between its characters (the panel would cut it at its edge, unseen)
  const auto lines = wrap_tokens(formula_tokens("123456789.123 + 1"), 40.0f, ten_px);
  const std::vector<std::string> expected = {"1234", "5678", "9.12", "3", "+ 1"};
  EXPECT_EQ(lines, expected);
  // a group in parentheses: at its own spaces first, every character kept
  const auto group = wrap_tokens(formula_tokens("0.614×((−0.233) − (−0.143)) = −0.0551"), 160.0f, ten_px);
  std::string joined;
  for (const auto& l : group) {
    EXPECT_LE(ten_px(l), 160.0f) << l;
    joined += (joined.empty() ? "" : " ") + l;
  }
  EXPECT_EQ(joined, "0.614×((−0.233) − (−0.143)) = −0.0551");
  EXPECT_EQ(group.front(), "0.614×((−0.233)");
}
