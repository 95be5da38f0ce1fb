#include "attention_lab/scenario.h"
#include "attention_lab/number_text.h"

#include "attention_lab/limits.h"
#include "attention_lab/stage_info.h"
#include "attention_lab/stage_registry.h"

#include <cmath>
#include <cstdio>
#include <numbers>
#include <string>

namespace attention_lab {

const char* to_string(MaskKind kind) {
  switch (kind) {
    case MaskKind::None: return "none";
    case MaskKind::Causal: return "causal";
    case MaskKind::Window: return "window";
    case MaskKind::Custom: return "custom";
  }
  return "none";
}

const char* to_string(RopePairs pairs) { return pairs == RopePairs::Interleaved ? "interleaved" : "half"; }

const char* to_string(RopeScaling scaling) {
  switch (scaling) {
    case RopeScaling::None: return "none";
    case RopeScaling::Linear: return "linear";
    case RopeScaling::Llama3: return "llama3";
  }
  return "none";
}

const char* to_string(QkNormScope scope) {
  switch (scope) {
    case QkNormScope::Off: return "off";
    case QkNormScope::PerHead: return "head";
    case QkNormScope::Whole: return "whole";
  }
  return "off";
}

std::string check_rope(const Rope& r, const std::string& where) {
  const auto num = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return std::string(buf);
  };
  if (!(std::isfinite(r.theta) && r.theta > 1.0f))
    return where + ".theta: expected a finite number greater than 1, found " + num(r.theta);
  if (r.scaling == RopeScaling::None) return {};
  if (!(std::isfinite(r.factor) && r.factor >= 1.0f))
    return where + ".scaling.factor: expected a finite number of at least 1, found " + num(r.factor);
  if (r.scaling == RopeScaling::Linear) return {};
  if (!(std::isfinite(r.low_freq_factor) && r.low_freq_factor > 0.0f))
    return where + ".scaling.low_freq_factor: expected a finite number greater than 0, found " + num(r.low_freq_factor);
  if (!(std::isfinite(r.high_freq_factor) && r.high_freq_factor > r.low_freq_factor))
    return where + ".scaling.high_freq_factor: expected a finite number greater than low_freq_factor " +
           num(r.low_freq_factor) + ", found " + num(r.high_freq_factor);
  if (r.original_max_positions < 1)
    return where + ".scaling.original_max_position_embeddings: expected a positive integer, found " +
           std::to_string(r.original_max_positions);
  return {};
}

namespace {

// HF: inv_freq = 1 / θ^(arange(0, d_k, 2) / d_k), before any scaling.
double unscaled_frequency(const Rope& rope, int d_k, int pair) {
  return 1.0 / std::pow(static_cast<double>(rope.theta), 2.0 * pair / d_k);
}

// Where Llama 3's scaling puts a frequency (HF's _compute_llama3_parameters):
// a wavelength over original/low_freq_factor is divided by factor, one under
// original/high_freq_factor kept, one between blended with weight `smooth`
// on the kept frequency.
struct Llama3Band {
  double wavelength;
  double low, high;  // the two wavelength limits
  double smooth;     // 0: divided, 1: kept
};
Llama3Band llama3_band(const Rope& r, double inv_freq) {
  Llama3Band b;
  b.wavelength = 2.0 * std::numbers::pi / inv_freq;
  const double original = r.original_max_positions;
  const double low_factor = static_cast<double>(r.low_freq_factor), high_factor = static_cast<double>(r.high_freq_factor);
  b.low = original / low_factor;
  b.high = original / high_factor;
  if (b.wavelength > b.low) b.smooth = 0.0;
  else if (b.wavelength < b.high) b.smooth = 1.0;
  else b.smooth = (original / b.wavelength - low_factor) / (high_factor - low_factor);
  return b;
}

}  // namespace

double rope_frequency(const Rope& rope, int d_k, int pair) {
  const double inv_freq = unscaled_frequency(rope, d_k, pair);
  const double factor = static_cast<double>(rope.factor);
  switch (rope.scaling) {
    case RopeScaling::None: return inv_freq;
    case RopeScaling::Linear: return inv_freq / factor;
    case RopeScaling::Llama3: {
      const double smooth = llama3_band(rope, inv_freq).smooth;
      return (1.0 - smooth) * inv_freq / factor + smooth * inv_freq;
    }
  }
  return inv_freq;
}

std::string rope_frequency_formula(const Rope& rope, int d_k, int pair) {
  const std::string power = "θ^(−" + std::to_string(2 * pair) + "/" + std::to_string(d_k) + ")";
  const std::string divided = power + " ÷ " + significant(static_cast<double>(rope.factor), 4);
  switch (rope.scaling) {
    case RopeScaling::None: return power;
    case RopeScaling::Linear: return divided;
    case RopeScaling::Llama3: {
      const Llama3Band b = llama3_band(rope, unscaled_frequency(rope, d_k, pair));
      if (b.smooth == 0.0) return divided;
      if (b.smooth == 1.0) return power;
      return "(" + significant(b.smooth, 4) + " + " + significant(1.0 - b.smooth, 4) + "/" + significant(static_cast<double>(rope.factor), 4) +
             ")·" + power;
    }
  }
  return power;
}

std::string rope_scaling_note(const Rope& rope, int d_k, int pair) {
  switch (rope.scaling) {
    case RopeScaling::None: return {};
    case RopeScaling::Linear: return "linear scaling: every frequency divided by " + significant(static_cast<double>(rope.factor), 4);
    case RopeScaling::Llama3: {
      const Llama3Band b = llama3_band(rope, unscaled_frequency(rope, d_k, pair));
      const std::string w = "Llama 3 scaling: pair " + std::to_string(pair) + "'s wavelength " + significant(b.wavelength, 4);
      if (b.smooth == 0.0) return w + " is over " + significant(b.low, 4) + ", so its frequency is divided by " +
                                  significant(static_cast<double>(rope.factor), 4);
      if (b.smooth == 1.0) return w + " is under " + significant(b.high, 4) + ", so its frequency is kept";
      return w + " is between " + significant(b.high, 4) + " and " + significant(b.low, 4) + ", so its frequency is blended: " +
             significant(b.smooth, 4) + " of it kept, " + significant(1.0 - b.smooth, 4) + " of it divided by " +
             significant(static_cast<double>(rope.factor), 4);
    }
  }
  return {};
}

double rope_angle(const Rope& rope, int d_k, int pair, int position) {
  return position * rope_frequency(rope, d_k, pair);
}

double score_scale_divisor(const Scenario& s) {
  if (!s.scale) return 1.0;
  return s.score_scale > 0.0f ? 1.0 / static_cast<double>(s.score_scale) : std::sqrt(static_cast<double>(s.dims().d_k));
}

std::string score_scale_text(const Scenario& s) {
  if (!s.scale) return "1";
  if (s.score_scale > 0.0f) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", static_cast<double>(s.score_scale));
    return std::string("1/") + buf;
  }
  return "√" + std::to_string(s.dims().d_k);
}

double score_divisor(const Scenario& s) { return score_scale_divisor(s) * static_cast<double>(s.temperature); }

std::pair<int, int> rope_pair(RopePairs pairs, int d_k, int pair) {
  return pairs == RopePairs::Interleaved ? std::pair{2 * pair, 2 * pair + 1} : std::pair{pair, pair + d_k / 2};
}

int rotary_width(const Rope& rope, int d_k) { return rope.dims > 0 && rope.dims < d_k ? rope.dims : d_k; }

int rope_partner(RopePairs pairs, int d_k, int dim) {
  if (dim >= d_k) return dim;  // not turned
  if (pairs == RopePairs::Interleaved) return dim ^ 1;
  return dim < d_k / 2 ? dim + d_k / 2 : dim - d_k / 2;
}

int rope_pair_of(RopePairs pairs, int d_k, int dim) {
  if (dim >= d_k) return -1;  // not turned
  return pairs == RopePairs::Interleaved ? dim / 2 : dim % (d_k / 2);
}

Dims Scenario::dims() const {
  Dims d;
  d.T = T();
  d.d_model = d_model();
  d.heads = heads;
  d.kv_heads = kv_head_count();
  d.d_k = heads > 0 ? static_cast<int>(W_q.cols()) / heads : 0;
  d.d_v = d.kv_heads > 0 ? static_cast<int>(W_v.cols()) / d.kv_heads : 0;
  d.d_out = use_w_o ? static_cast<int>(W_o.cols()) : heads * d.d_v;  // the heads' contexts side by side
  d.T_k = static_cast<int>(kv_source().rows());
  d.d_kv = static_cast<int>(kv_source().cols());
  d.qk_norm_whole = qk_norm.scope == QkNormScope::Whole;
  if (rope.on && rotary_width(rope, d.d_k) < d.d_k) d.rotary = rotary_width(rope, d.d_k);
  return d;
}

std::string Scenario::shown_index(int i) const { return std::to_string(i + index_base); }
std::string Scenario::shown_subscript(int i) const { return subscript(i + index_base); }

std::string Scenario::token_label(int t) const {
  if (t >= 0 && static_cast<std::size_t>(t) < tokens.size() && !tokens[static_cast<std::size_t>(t)].empty())
    return tokens[static_cast<std::size_t>(t)];
  return "t" + shown_index(t);
}

std::string Scenario::key_label(int t) const {
  if (!cross()) return token_label(t);
  if (t >= 0 && static_cast<std::size_t>(t) < tokens_kv.size() && !tokens_kv[static_cast<std::size_t>(t)].empty())
    return tokens_kv[static_cast<std::size_t>(t)];
  return "t" + shown_index(t);
}

std::string Scenario::feature_label(int i) const {
  if (i >= 0 && static_cast<std::size_t>(i) < features.size() && !features[static_cast<std::size_t>(i)].empty())
    return features[static_cast<std::size_t>(i)];
  return shown_index(i);
}

Matrix Scenario::effective_mask() const {
  const auto n = to_index(T());
  switch (mask_kind) {
    case MaskKind::None: return Matrix::Ones(n, kv_source().rows());
    case MaskKind::Causal: {
      Matrix m = Matrix::Zero(n, n);
      m.triangularView<Eigen::Lower>().setOnes();  // query r may see keys 0…r
      return m;
    }
    case MaskKind::Window: {
      Matrix m = Matrix::Zero(n, n);
      for (Eigen::Index i = 0; i < n; ++i) {
        const Eigen::Index first = std::max<Eigen::Index>(0, i - window + 1);
        m.row(i).segment(first, i - first + 1).setOnes();  // keys i − W + 1 … i
      }
      return m;
    }
    case MaskKind::Custom: return custom_mask;
  }
  return Matrix::Ones(n, kv_source().rows());
}

std::vector<double> alibi_slopes(int heads) {
  std::vector<double> out;
  if (heads <= 0) return out;
  auto power_of_two = [](int n) {
    std::vector<double> s;
    for (int h = 0; h < n; ++h) s.push_back(std::exp2(-8.0 * (h + 1) / n));
    return s;
  };
  int p = 1;
  while (p * 2 <= heads) p *= 2;
  out = power_of_two(p);
  if (p == heads) return out;
  const std::vector<double> twice = power_of_two(2 * p);
  for (std::size_t i = 0; static_cast<int>(out.size()) < heads; i += 2) out.push_back(twice[i]);
  return out;
}

bool Scenario::mask_allows(int row, int col) const {
  switch (mask_kind) {
    case MaskKind::None: return true;
    case MaskKind::Causal: return col <= row;
    case MaskKind::Window: return col <= row && row - col < window;
    case MaskKind::Custom:
      return row < custom_mask.rows() && col < custom_mask.cols() && custom_mask(row, col) != 0.0f;
  }
  return true;
}

namespace {

std::string shape(Eigen::Index r, Eigen::Index c) { return std::to_string(r) + " x " + std::to_string(c); }

// "W_k: expected 8 rows (d_model) x 8 columns (heads*d_k), found 8 x 6"
std::string check_shape(const char* name, const Matrix& m, Eigen::Index rows, const char* rows_what,
                        Eigen::Index cols, const char* cols_what) {
  if (m.rows() == rows && m.cols() == cols) return {};
  return std::string(name) + ": expected " + std::to_string(rows) + " rows (" + rows_what + ") x " +
         std::to_string(cols) + " columns (" + cols_what + "), found " + shape(m.rows(), m.cols());
}

std::string check_finite(const char* name, const Matrix& m) {
  for (Eigen::Index r = 0; r < m.rows(); ++r)
    for (Eigen::Index c = 0; c < m.cols(); ++c)
      if (!std::isfinite(m(r, c)))
        return std::string(name) + "[" + std::to_string(r) + "][" + std::to_string(c) +
               "]: expected a finite number, found " + std::to_string(m(r, c));
  return {};
}

std::string check_range(const char* what, long long value, long long max) {
  if (value < 1) return std::string(what) + ": expected at least 1, found " + std::to_string(value);
  if (value > max)
    return std::string(what) + ": expected at most " + std::to_string(max) + " (size limit), found " +
           std::to_string(value);
  return {};
}

}  // namespace

std::string validate(const Scenario& s) {
  using namespace limits;
  if (auto e = check_range("T (rows of X)", s.X.rows(), kMaxTokens); !e.empty()) return e;
  if (auto e = check_range("d_model (columns of X)", s.X.cols(), kMaxModelDim); !e.empty()) return e;
  if (auto e = check_range("heads", s.heads, kMaxHeads); !e.empty()) return e;
  const auto T = s.X.rows();
  const auto D = s.X.cols();
  const auto H = to_index(s.heads);
  if (s.kv_heads < 0 || (s.kv_heads > 0 && s.heads % s.kv_heads != 0))
    return "kv_heads: expected a number that divides heads (" + std::to_string(s.heads) + "), found " +
           std::to_string(s.kv_heads);
  const auto KV = to_index(s.kv_head_count());
  if (s.cross()) {
    if (auto e = check_range("T_k (rows of X_kv)", s.X_kv.rows(), kMaxTokens); !e.empty()) return e;
    if (auto e = check_range("d_kv (columns of X_kv)", s.X_kv.cols(), kMaxModelDim); !e.empty()) return e;
  }
  const auto Tk = s.kv_source().rows(), Dkv = s.kv_source().cols();
  for (auto [name, W] : {std::pair{"W_q", &s.W_q}, std::pair{"W_k", &s.W_k}, std::pair{"W_v", &s.W_v}}) {
    const auto rows = W == &s.W_q ? D : Dkv;
    if (W->rows() != rows)
      return std::string(name) + ": expected " + std::to_string(rows) + " rows (" +
             (W == &s.W_q || !s.cross() ? "d_model" : "d_kv, the columns of X_kv") + "), found " +
             std::to_string(W->rows());
    if (auto e = check_range((std::string(name) + " columns").c_str(), W->cols(), kMaxProjectionWidth); !e.empty())
      return e;
    const auto n = W == &s.W_q ? H : KV;
    if (W->cols() % n != 0)
      return std::string(name) + ": expected a column count divisible by " + (W == &s.W_q ? "heads" : "kv_heads") +
             " (" + std::to_string(n) + "), found " + std::to_string(W->cols()) + " columns";
  }
  const auto width_q = s.W_q.cols();
  const auto width_k = width_q / H * KV;
  const auto width_v = s.W_v.cols();
  const auto width_context = width_v / KV * H;
  const char* k_what = KV == H ? "heads*d_k" : "kv_heads*d_k";
  const char* v_what = KV == H ? "heads*d_v" : "kv_heads*d_v";
  if (auto e = check_shape("W_k", s.W_k, Dkv, s.cross() ? "d_kv" : "d_model", width_k, k_what); !e.empty()) return e;
  if (auto e = check_range("d_k", width_q / H, kMaxHeadDim); !e.empty()) return e;
  if (auto e = check_range("d_v", width_v / KV, kMaxHeadDim); !e.empty()) return e;
  if (width_context > kMaxProjectionWidth)
    return "heads*d_v: expected at most " + std::to_string(kMaxProjectionWidth) + " (size limit), found " +
           std::to_string(width_context);
  if (s.use_bias) {
    if (auto e = check_shape("b_q", s.b_q, 1, "a single row", width_q, "heads*d_k"); !e.empty()) return e;
    if (auto e = check_shape("b_k", s.b_k, 1, "a single row", width_k, k_what); !e.empty()) return e;
    if (auto e = check_shape("b_v", s.b_v, 1, "a single row", width_v, v_what); !e.empty()) return e;
  }
  if (s.use_w_o) {
    if (s.W_o.rows() != width_context)
      return "W_o: expected " + std::to_string(width_context) + " rows (heads*d_v), found " +
             std::to_string(s.W_o.rows());
    if (auto e = check_range("W_o columns (d_out)", s.W_o.cols(), kMaxModelDim); !e.empty()) return e;
  }
  const auto d_out = s.use_w_o ? s.W_o.cols() : width_context;
  if (s.use_output_bias)
    if (auto e = check_shape("b_o", s.b_o, 1, "a single row", d_out, s.use_w_o ? "d_out" : "heads*d_v"); !e.empty())
      return e;
  if (s.use_sinks) {
    if (s.sinks.rows() != 1 || s.sinks.cols() != s.heads)
      return "sinks: expected " + std::to_string(s.heads) + " numbers (one per head), found " +
             std::to_string(s.sinks.size());
    for (Eigen::Index h = 0; h < s.sinks.cols(); ++h)
      if (!std::isfinite(s.sinks(0, h)))
        return "sinks[" + std::to_string(h) + "]: expected a finite number, found " + std::to_string(s.sinks(0, h));
  }
  if (s.rope.on) {
    if ((width_q / H) % 2 != 0)
      return "rope: expected an even d_k (RoPE turns pairs of dimensions), found d_k = " + std::to_string(width_q / H);
    if (std::string problem = check_rope(s.rope); !problem.empty()) return problem;
    if (s.rope.dims != 0 && (s.rope.dims < 2 || s.rope.dims % 2 != 0 || s.rope.dims > width_q / H))
      return "rope.dims: expected an even number from 2 to d_k (" + std::to_string(width_q / H) +
             ", the dimensions of a head RoPE turns), found " + std::to_string(s.rope.dims);
  }
  if (!(std::isfinite(s.score_scale) && s.score_scale >= 0.0f))
    return "scale_factor: expected a number greater than 0 (what the scores are multiplied by instead of 1/√d_k), found " +
           std::to_string(s.score_scale);
  if (!(std::isfinite(s.softcap) && s.softcap >= 0.0f))
    return "softcap: expected a number greater than 0 (the scores' cap), found " + std::to_string(s.softcap);
  if (s.qk_norm.on()) {
    if (!(std::isfinite(s.qk_norm.eps) && s.qk_norm.eps >= 0.0f))
      return "qk_norm.eps: expected a finite number ≥ 0, found " + std::to_string(s.qk_norm.eps);
    const bool whole = s.qk_norm.scope == QkNormScope::Whole;
    if (auto e = check_shape("q_norm", s.q_norm, 1, "a single row", whole ? width_q : width_q / H,
                             whole ? "heads*d_k" : "d_k");
        !e.empty())
      return e;
    if (auto e = check_shape("k_norm", s.k_norm, 1, "a single row", whole ? width_k : width_q / H, whole ? k_what : "d_k");
        !e.empty())
      return e;
  }
  if ((s.mask_kind == MaskKind::Causal || s.mask_kind == MaskKind::Window) && Tk != T)
    return std::string("mask: expected \"none\" or a custom ") + std::to_string(T) + " x " + std::to_string(Tk) +
           " mask with cross-attention over a different number of tokens (T = " + std::to_string(T) + ", T_k = " +
           std::to_string(Tk) + "), found \"" + to_string(s.mask_kind) + "\": it is defined only when each query has a key at its own position";
  if (s.mask_kind == MaskKind::Window && !(s.window >= 1 && s.window <= kMaxTokens))
    return "mask.window: expected a whole number from 1 to " + std::to_string(kMaxTokens) + ", found " +
           std::to_string(s.window);
  if (s.mask_kind == MaskKind::Custom) {
    if (auto e = check_shape("mask", s.custom_mask, T, "T", Tk, s.cross() ? "T_k" : "T"); !e.empty()) return e;
    for (Eigen::Index r = 0; r < T; ++r)
      for (Eigen::Index c = 0; c < Tk; ++c)
        if (s.custom_mask(r, c) != 0.0f && s.custom_mask(r, c) != 1.0f)
          return "mask[" + std::to_string(r) + "][" + std::to_string(c) + "]: expected 0 or 1, found " +
                 std::to_string(s.custom_mask(r, c));
  }
  if (!(std::isfinite(s.temperature) && s.temperature > 0.0f))
    return "temperature: expected a finite number greater than 0, found " + std::to_string(s.temperature);
  if (!s.tokens.empty() && s.tokens.size() != static_cast<std::size_t>(T))
    return "tokens: expected " + std::to_string(T) + " labels (T), found " + std::to_string(s.tokens.size());
  if (!s.tokens_kv.empty() && s.tokens_kv.size() != static_cast<std::size_t>(s.X_kv.rows()))
    return "tokens_kv: expected " + std::to_string(s.X_kv.rows()) + " labels (T_k, the rows of X_kv), found " +
           std::to_string(s.tokens_kv.size());
  for (std::size_t i = 0; i < s.tokens_kv.size(); ++i)
    if (auto e = check_label_length("tokens_kv[" + std::to_string(i) + "]", s.tokens_kv[i]); !e.empty()) return e;
  if (!s.features.empty() && s.features.size() != static_cast<std::size_t>(D))
    return "features: expected " + std::to_string(D) + " names (d_model, the columns of X), found " +
           std::to_string(s.features.size());
  for (const auto* list : {&s.tokens, &s.features})
    for (std::size_t i = 0; i < list->size(); ++i)
      if (auto e = check_label_length(std::string(list == &s.tokens ? "tokens[" : "features[") + std::to_string(i) + "]",
                                      (*list)[i]);
          !e.empty())
        return e;
  for (auto [name, m] : {std::pair{"X", &s.X}, std::pair{"X_kv", &s.X_kv}, std::pair{"W_q", &s.W_q},
                         std::pair{"W_k", &s.W_k}, std::pair{"W_v", &s.W_v}})
    if (auto e = check_finite(name, *m); !e.empty()) return e;
  if (s.use_w_o) if (auto e = check_finite("W_o", s.W_o); !e.empty()) return e;
  if (s.use_bias)
    for (auto [name, m] : {std::pair{"b_q", &s.b_q}, std::pair{"b_k", &s.b_k}, std::pair{"b_v", &s.b_v}})
      if (auto e = check_finite(name, *m); !e.empty()) return e;
  if (s.use_output_bias) if (auto e = check_finite("b_o", s.b_o); !e.empty()) return e;
  const Dims d = s.dims();
  for (const auto& [key, value] : s.pins) {
    if (!std::isfinite(value))
      return "pin on " + to_string(key.stage) + ": expected a finite number, found " + std::to_string(value);
    const int rows = stage_rows(key.stage.kind, d), cols = stage_cols(key.stage.kind, d);
    if (key.row < 0 || key.col < 0 || key.row >= rows || key.col >= cols || (is_per_head(key.stage.kind) && key.stage.head >= d.heads))
      return "pin on " + to_string(key.stage) + ": expected a cell within " + std::to_string(rows) + " x " +
             std::to_string(cols) + ", found row " + std::to_string(key.row) + ", column " + std::to_string(key.col);
  }
  return {};
}

}  // namespace attention_lab
