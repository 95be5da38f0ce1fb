#include "logic/colormap.h"

#include <algorithm>
#include <cmath>

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

}  // namespace attention_lab::gui
