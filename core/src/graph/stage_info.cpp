#include "attention_lab/stage_info.h"

#include "attention_lab/gradients.h"

#include "attention_lab/stage_registry.h"

#include <algorithm>
#include <iterator>

namespace attention_lab {

std::string subscript(int n) {
  static const char* digits[] = {"₀", "₁", "₂", "₃", "₄", "₅", "₆", "₇", "₈", "₉"};
  if (n < 0) return "₋" + subscript(-n);
  std::string out;
  const std::string s = std::to_string(n);
  for (char ch : s) out += digits[ch - '0'];
  return out;
}

namespace {

// Labels along one side of a stage, with what they name.
struct Labels {
  std::vector<std::string> text;
  LabelKind kind = LabelKind::Index;
};

Labels token_labels(const Scenario& s) {
  Labels out{{}, LabelKind::Token};
  for (int t = 0; t < s.T(); ++t) out.text.push_back(s.token_label(t));
  return out;
}

Labels feature_labels(const Scenario& s) {
  Labels out{{}, LabelKind::Feature};
  for (int i = 0; i < s.d_model(); ++i) out.text.push_back(s.feature_label(i));
  return out;
}

Labels index_labels(const Scenario& s, int n, int offset = 0) {
  Labels out;
  for (int i = 0; i < n; ++i) out.text.push_back(s.shown_index(offset + i));
  return out;
}

Labels side_labels(const Scenario& s, SideLabels kind, int n, int head) {
  switch (kind) {
    case SideLabels::Token: return token_labels(s);
    case SideLabels::KeyToken: {
      if (!s.cross()) return token_labels(s);
      Labels out{{}, LabelKind::KeyToken};  // renamed by SetTokenLabel with key
      for (int t = 0; t < n; ++t) out.text.push_back(s.key_label(t));
      return out;
    }
    case SideLabels::Feature: return feature_labels(s);
    case SideLabels::KeyFeature: return s.cross() ? index_labels(s, n) : feature_labels(s);
    case SideLabels::Index: return index_labels(s, n);
    case SideLabels::HeadIndex: return index_labels(s, n, head * n);
    case SideLabels::Bias: return Labels{{"bias"}, LabelKind::Index};
    case SideLabels::SinkLogit: return Labels{{"logit"}, LabelKind::Index};
    case SideLabels::Gain: return Labels{{"gain"}, LabelKind::Index};
  }
  return index_labels(s, n);
}

}  // namespace

StageInfo describe_stage(const Scenario& s, StageId id) {
  if (id.role == Role::Gradient) return describe_gradient(s, id);
  const Dims d = s.dims();
  const StageSpec& sp = spec(id.kind);
  const int h = sp.per_head ? id.head : 0;
  StageInfo info;
  info.id = id;
  info.id_text = to_string(id);
  info.name = sp.title;
  if (sp.title_note) info.name += sp.title_note(s);
  if (sp.per_head && d.heads > 1) info.name += " (head " + s.shown_index(h) + ")";
  // (the teacher's letters, when the scenario has its own: symbol_names.h)
  info.symbol = rename_symbols(sp.symbol(h + s.index_base), s.symbols);
  info.formula = rename_symbols(sp.formula(s, d, h), s.symbols);
  info.explanation = sp.explanation(s, d, h);
  info.rows = extent(sp.rows, d);
  info.cols = extent(sp.cols, d);
  Labels rl = side_labels(s, sp.row_labels, info.rows, h);
  Labels cl = side_labels(s, sp.col_labels, info.cols, h);
  info.row_labels = std::move(rl.text);
  info.col_labels = std::move(cl.text);
  info.row_label_kind = rl.kind;
  info.col_label_kind = cl.kind;
  info.inputs = sp.inputs(s, h);
  for (StageId& in : info.inputs) {
    in.layer = id.layer;
    in.role = Role::Value;  // a gradient is described from the values it is made of, for now
  }
  info.domain = sp.domain;
  info.editability = sp.input ? Editability::EditCells : pinnable(sp.kind) ? Editability::PinCells : Editability::ReadOnly;
  info.active = setting_on(s, sp.requires_setting);
  return info;
}

std::string cell_symbol(const Scenario& s, StageId stage, int row, int col) {
  return describe_stage(s, stage).symbol + "[" + s.shown_index(row) + "," + s.shown_index(col) + "]";
}

std::vector<StageId> pipeline(const Scenario& s) {
  using K = StageKind;
  // The order of the math; the registry says which of them the settings turn on.
  static constexpr K kBefore[] = {K::X,   K::X_kv, K::W_q, K::b_q,        K::QProjected, K::QNorm, K::QUnrotated,
                                  K::RopeAngle, K::Q, K::W_k, K::b_k, K::KProjected, K::KNorm, K::KUnrotated, K::K,
                                  K::W_v, K::b_v, K::V, K::Mask, K::Sinks};
  static constexpr K kAfter[] = {K::Concat, K::W_o, K::b_o, K::Output};
  std::vector<StageId> out;
  auto add = [&](K k, int h) {
    if (setting_on(s, spec(k).requires_setting)) out.push_back(spec(k).per_head ? StageId::of_head(k, h) : StageId::input(k));
  };
  for (K k : kBefore) add(k, 0);
  for (int h = 0; h < s.heads; ++h) {
    // Q and K before the q/k norm and before RoPE come before the ones that enter the scores
    static constexpr K kEarlier[] = {K::HeadQProjected, K::HeadKProjected, K::HeadQUnrotated, K::HeadKUnrotated};
    for (K k : kEarlier) add(k, h);
    for (const StageSpec& sp : all_stages())
      if (sp.per_head && std::find(std::begin(kEarlier), std::end(kEarlier), sp.kind) == std::end(kEarlier)) add(sp.kind, h);
  }
  for (K k : kAfter) add(k, 0);
  return out;
}

}  // namespace attention_lab
