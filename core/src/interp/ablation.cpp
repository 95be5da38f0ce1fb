#include "attention_lab/ablation.h"

namespace attention_lab {

const char* to_string(AblationTarget target) {
  switch (target) {
    case AblationTarget::Head: return "head";
    case AblationTarget::Attention: return "attention";
    case AblationTarget::Mlp: return "mlp";
  }
  return "?";
}

const char* to_string(AblationMode mode) { return mode == AblationMode::Zero ? "zero" : "mean"; }

std::string to_spec(const Ablation& a) {
  std::string s = "L" + std::to_string(a.layer);
  switch (a.target) {
    case AblationTarget::Head: s += "H" + std::to_string(a.head); break;
    case AblationTarget::Attention: s += ".attn"; break;
    case AblationTarget::Mlp: s += ".mlp"; break;
  }
  if (a.position >= 0) s += "@" + std::to_string(a.position);
  if (a.mode == AblationMode::Mean) s += ":mean";
  return s;
}

namespace {

// Digits at s[i…], as an int (no sign, at most 9 digits); false when none.
bool read_number(const std::string& s, std::size_t& i, int& out) {
  const std::size_t start = i;
  long v = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9' && i - start < 9) v = v * 10 + (s[i++] - '0');
  out = static_cast<int>(v);
  return i > start;
}

}  // namespace

std::string parse_ablation(const std::string& spec, Ablation& out) {
  const std::string expected = "'" + spec + "': expected L<layer>H<head>, L<layer>.attn or L<layer>.mlp, then "
                               "optionally @<position> and :mean or :zero (e.g. L3H1, L2.mlp@5:mean)";
  Ablation a;
  std::size_t i = 0;
  if (spec.empty() || spec[i++] != 'L' || !read_number(spec, i, a.layer)) return expected;
  if (spec.compare(i, 5, ".attn") == 0) {
    a.target = AblationTarget::Attention;
    i += 5;
  } else if (spec.compare(i, 4, ".mlp") == 0) {
    a.target = AblationTarget::Mlp;
    i += 4;
  } else if (i < spec.size() && spec[i] == 'H') {
    ++i;
    if (!read_number(spec, i, a.head)) return expected;
  } else {
    return expected;
  }
  if (i < spec.size() && spec[i] == '@') {
    ++i;
    if (!read_number(spec, i, a.position)) return expected;
  }
  if (spec.compare(i, std::string::npos, ":mean") == 0) {
    a.mode = AblationMode::Mean;
  } else if (i != spec.size() && spec.compare(i, std::string::npos, ":zero") != 0) {
    return expected;
  }
  out = a;
  return {};
}

std::string check(const Ablation& a, const ModelConfig& c, int T) {
  const auto range = [](const char* what, int v, int n) {
    return std::string(what) + " " + std::to_string(v) + ": expected 0 to " + std::to_string(n - 1);
  };
  if (a.layer < 0 || a.layer >= c.layers) return range("layer", a.layer, c.layers);
  if (a.target == AblationTarget::Head && (a.head < 0 || a.head >= c.heads)) return range("head", a.head, c.heads);
  if (a.position < -1 || a.position >= T)
    return "position " + std::to_string(a.position) + ": expected 0 to " + std::to_string(T - 1) + ", or every position";
  return {};
}

namespace {

void add_mean(std::vector<RowVector>& sums, std::size_t l, const Matrix& m) {
  const RowVector s = m.colwise().sum();
  if (sums[l].size() == 0) sums[l] = s;
  else sums[l] += s;
}

// Every row (position −1) or row `position` of columns [c0, c0 + width) set to
// `fill` (a row of width values). A run of the first rows only (the
// predictions of an earlier token) may not have that row: nothing to do.
void fill_rows(Matrix& m, int position, Eigen::Index c0, const RowVector& fill) {
  if (position >= m.rows()) return;
  const Eigen::Index first = position < 0 ? 0 : position, n = position < 0 ? m.rows() : 1;
  for (Eigen::Index r = first; r < first + n; ++r) m.row(r).segment(c0, fill.size()) = fill;
}

}  // namespace

ActivationMeans activation_means(std::span<const RunCache> runs) {
  ActivationMeans means;
  if (runs.empty()) return means;
  const std::size_t layers = runs[0].z.size();
  means.z.resize(layers);
  means.attn_out.resize(layers);
  means.mlp_out.resize(layers);
  double positions = 0.0;
  for (const RunCache& run : runs) {
    positions += static_cast<double>(run.ids.size());
    for (std::size_t l = 0; l < layers; ++l) {
      add_mean(means.z, l, run.z[l]);
      add_mean(means.attn_out, l, run.attn_out[l]);
      add_mean(means.mlp_out, l, run.mlp_out[l]);
    }
  }
  const float inv = static_cast<float>(1.0 / positions);
  for (auto* v : {&means.z, &means.attn_out, &means.mlp_out})
    for (RowVector& r : *v) r *= inv;
  return means;
}

std::vector<LayerHooks> ablation_hooks(const ModelConfig& config, std::span<const Ablation> ablations,
                                       const ActivationMeans& means) {
  std::vector<LayerHooks> hooks(static_cast<std::size_t>(config.layers));
  const int dh = config.d_head;
  for (const Ablation& a : ablations) {
    const auto l = static_cast<std::size_t>(a.layer);
    const bool zero = a.mode == AblationMode::Zero;
    // Each hook wraps the layer's earlier ones, so several ablations of one layer compose.
    switch (a.target) {
      case AblationTarget::Head: {
        const Eigen::Index c0 = static_cast<Eigen::Index>(a.head) * dh;
        const RowVector fill = zero ? RowVector::Zero(dh) : RowVector(means.z[l].segment(c0, dh));
        hooks[l].z = [before = hooks[l].z, a, c0, fill](Matrix& m) {
          if (before) before(m);
          fill_rows(m, a.position, c0, fill);
        };
        break;
      }
      case AblationTarget::Attention:
      case AblationTarget::Mlp: {
        const bool attention = a.target == AblationTarget::Attention;
        const RowVector fill = zero ? RowVector::Zero(config.d_model) : (attention ? means.attn_out[l] : means.mlp_out[l]);
        auto& slot = attention ? hooks[l].attn_out : hooks[l].mlp_out;
        slot = [before = slot, a, fill](Matrix& m) {
          if (before) before(m);
          fill_rows(m, a.position, 0, fill);
        };
        break;
      }
    }
  }
  return hooks;
}

}  // namespace attention_lab
