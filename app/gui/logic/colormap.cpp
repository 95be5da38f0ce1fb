#include "logic/colormap.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attention_lab::gui {

namespace {
Rgb mix(Rgb a, Rgb b, float t) { return {a.r + (b.r - a.r) * t, a.g + (b.g - a.g) * t, a.b + (b.b - a.b) * t}; }
}  // namespace

Rgb diverging(float t) {
  const Rgb neg2{0.129f, 0.400f, 0.675f}, neg1{0.573f, 0.773f, 0.871f}, mid{0.969f, 0.969f, 0.969f},
      pos1{0.957f, 0.647f, 0.510f}, pos2{0.698f, 0.094f, 0.169f};
  t = std::clamp(t, -1.0f, 1.0f);
  if (t < -0.5f) return mix(neg2, neg1, (t + 1.0f) * 2.0f);
  if (t < 0.0f) return mix(neg1, mid, (t + 0.5f) * 2.0f);
  if (t < 0.5f) return mix(mid, pos1, t * 2.0f);
  return mix(pos1, pos2, (t - 0.5f) * 2.0f);
}

Rgb viridis(float t) {
  t = std::clamp(t, 0.0f, 1.0f);
  const double c[7][3] = {{0.2777273272234177, 0.005407344544966578, 0.3340998053353061},
                          {0.1050930431085774, 1.404613529898575, 1.384590162594685},
                          {-0.3308618287255563, 0.214847559468213, 0.09509516302823659},
                          {-4.634230498983486, -5.799100973351585, -19.33244095627987},
                          {6.228269936347081, 14.17993336680509, 56.69055260068105},
                          {4.776384997670288, -13.74514537774601, -65.35303263337234},
                          {-5.435455855934631, 4.645852612178535, 26.3124352495832}};
  double out[3];
  for (int ch = 0; ch < 3; ++ch) {
    double v = c[6][ch];
    for (int k = 5; k >= 0; --k) v = c[k][ch] + static_cast<double>(t) * v;
    out[ch] = std::clamp(v, 0.0, 1.0);
  }
  return {static_cast<float>(out[0]), static_cast<float>(out[1]), static_cast<float>(out[2])};
}

int colormap_for(ValueDomain domain) {
  switch (domain) {
    case ValueDomain::Signed: return 0;
    case ValueDomain::Probability: return 1;
    case ValueDomain::Binary: return 2;
  }
  return 0;
}

float colour_range(ValueDomain domain, MatrixView values) {
  if (domain != ValueDomain::Signed) return 1.0f;  // weights and masks live in [0, 1]
  float m = 0.0f;
  for (Eigen::Index r = 0; r < values.rows(); ++r)
    for (Eigen::Index c = 0; c < values.cols(); ++c)
      if (std::isfinite(values(r, c))) m = std::max(m, std::fabs(values(r, c)));
  return m > 0.0f ? m : 1.0f;
}

const char* to_string(ColourScale scale) {
  switch (scale) {
    case ColourScale::Linear: return "linear";
    case ColourScale::Log: return "log";
    case ColourScale::PerRow: return "per row";
  }
  return "linear";
}

int log_decades(int T) {
  return std::max(2, static_cast<int>(std::ceil(std::log10(static_cast<double>(std::max(T, 1))))) + 1);
}

float scaled_weight(float v, ColourScale scale, float row_max, int decades) {
  if (std::isnan(v)) return v;
  switch (scale) {
    case ColourScale::Linear: return std::clamp(v, 0.0f, 1.0f);
    case ColourScale::Log: {
      if (!(v > 0.0f)) return 0.0f;  // a masked key's exact 0 is the bottom
      const float t = 1.0f + std::log10(v) / static_cast<float>(std::max(decades, 1));
      return std::clamp(t, 0.0f, 1.0f);
    }
    case ColourScale::PerRow:
      if (!(row_max > 0.0f) || !std::isfinite(row_max)) return 0.0f;  // a row that attends to nothing
      return std::clamp(v / row_max, 0.0f, 1.0f);
  }
  return v;
}

Matrix scaled_weights(MatrixView w, ColourScale scale, int decades) {
  Matrix out(w.rows(), w.cols());
  for (Eigen::Index r = 0; r < w.rows(); ++r) {
    float row_max = 0.0f;
    if (scale == ColourScale::PerRow)
      for (Eigen::Index c = 0; c < w.cols(); ++c)
        if (std::isfinite(w(r, c))) row_max = std::max(row_max, w(r, c));
    for (Eigen::Index c = 0; c < w.cols(); ++c) out(r, c) = scaled_weight(w(r, c), scale, row_max, decades);
  }
  return out;
}

std::pair<std::string, std::string> colour_bar_ends(ColourScale scale, int decades) {
  switch (scale) {
    case ColourScale::Linear: return {"0", "1"};
    case ColourScale::Log: {
      // 10 with a superscript exponent: "10⁻⁴"
      static const char* const digits[] = {"⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"};
      std::string exponent;
      for (const char ch : std::to_string(std::max(decades, 1))) exponent += digits[ch - '0'];
      return {"≤10⁻" + exponent, "1"};
    }
    case ColourScale::PerRow: return {"0", "row max"};
  }
  return {"0", "1"};
}

ColourBarLabels colour_bar_labels(float bar_width, float lo_width, float hi_width, float gap) {
  ColourBarLabels out;
  out.stacked = lo_width + gap + hi_width > bar_width;
  // Right-aligned to the bar's end, but never left of the bar.
  out.hi_x = std::max(0.0f, bar_width - hi_width);
  return out;
}

}  // namespace attention_lab::gui
