#include "logic/pipeline_layout.h"

#include "attention_lab/stage_info.h"
#include "attention_lab/stage_registry.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attention_lab::gui {

namespace {

// The operator between a stage's inputs, given its kind.
std::vector<Term> right_hand_side(const Scenario& s, const StageInfo& info, bool continues) {
  std::vector<Term> t;
  const auto& in = info.inputs;
  switch (info.id.kind) {
    case StageKind::Q: case StageKind::K: case StageKind::V:
    case StageKind::QUnrotated: case StageKind::KUnrotated:
    case StageKind::QProjected: case StageKind::KProjected:
      if (in.size() == 2 && in[1].kind == StageKind::RopeAngle) {  // with RoPE: Q and K are their unrotated selves, turned
        t = {Term::matrix(in[0]), Term::op("RoPE: turn each pair by"), Term::matrix(in[1]), Term::op("→")};
        break;
      }
      if (in.size() == 2 && (in[1].kind == StageKind::QNorm || in[1].kind == StageKind::KNorm)) {  // the q/k norm
        t = {Term::matrix(in[0]), Term::op(s.qk_norm.scope == QkNormScope::PerHead ? "÷ RMS per head, × gains" : "÷ RMS of the row, × gains"),
             Term::matrix(in[1]), Term::op("→")};
        break;
      }
      t = {Term::matrix(in[0]), Term::op("·"), Term::matrix(in[1])};
      if (in.size() > 2) t.push_back(Term::op("+")), t.push_back(Term::matrix(in[2]));
      break;
    case StageKind::Scores: t = {Term::matrix(in[0]), Term::op("·"), Term::matrix(in[1], true)}; break;
    case StageKind::Scaled: {
      std::string text;
      if (s.scale && s.score_scale > 0.0f) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "× %.4g", static_cast<double>(s.score_scale));
        text = buf;
      } else if (s.scale) {
        text = "÷ √" + std::to_string(s.dims().d_k);
      }
      if (s.temperature != 1.0f) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%s÷ τ=%.2g", text.empty() ? "" : " ", static_cast<double>(s.temperature));
        text += buf;
      }
      t = {Term::matrix(in[0]), Term::op(text.empty() ? "× 1" : text)};
      break;
    }
    case StageKind::Capped: {
      char buf[48];
      std::snprintf(buf, sizeof buf, "soft-cap: %.4g·tanh(· / %.4g) →", static_cast<double>(s.softcap), static_cast<double>(s.softcap));
      t = {Term::matrix(in[0]), Term::op(buf)};
      break;
    }
    case StageKind::Masked:
      t = {Term::matrix(in[0])};
      if (in.size() > 2) t.push_back(Term::op("+")), t.push_back(Term::matrix(in[2]));  // ALiBi's position bias
      t.push_back(Term::op("+ mask")), t.push_back(Term::matrix(in[1]));
      break;
    case StageKind::Weights:
      t = {Term::matrix(in[0])};
      if (in.size() > 1) t.push_back(Term::op("with sink")), t.push_back(Term::matrix(in[1]));  // attention sinks
      t.push_back(Term::op("softmax →"));
      break;
    case StageKind::SinkShare: t = {Term::matrix(in[0]), Term::op("with sink"), Term::matrix(in[1]), Term::op("softmax → sink's share")}; break;
    case StageKind::Context: t = {Term::matrix(in[0]), Term::op("·"), Term::matrix(in[1])}; break;
    case StageKind::Concat:
      for (std::size_t i = 0; i < in.size(); ++i) t.push_back(Term::matrix(in[i])), t.push_back(Term::op(i + 1 < in.size() ? "|" : ""));
      t.pop_back();
      break;
    case StageKind::Output:
      t = {Term::matrix(in[0])};
      for (std::size_t i = 1; i < in.size(); ++i) t.push_back(Term::op(in[i].kind == StageKind::W_o ? "·" : "+")), t.push_back(Term::matrix(in[i]));
      break;  // without W_o: "C₀ = O (no W_o)", the note after the result (pipeline_equations)
    default: break;
  }
  if (continues && !t.empty()) t.erase(t.begin());  // the chain already shows the first input
  return t;
}

}  // namespace

StageKind shown_focus(const Scenario& s, StageKind focus) {
  return focus == StageKind::Concat && s.heads == 1 ? StageKind::Context : focus;
}

std::vector<EquationLine> pipeline_equations(const Scenario& s, int head) {
  std::vector<EquationLine> lines;
  StageId previous{StageKind::X, -1};
  for (const StageId id : pipeline(s)) {
    if (is_input(id.kind) || spec(id.kind).view == ViewKind::HeadSlice || spec(id.kind).view == ViewKind::KVSlice)
      continue;
    if (is_per_head(id.kind) && id.head != head) continue;
    // Concat of one head is the head's context itself: skip the no-op line.
    if (shown_focus(s, id.kind) != id.kind) continue;
    const StageInfo info = describe_stage(s, id);
    if (info.inputs.empty()) continue;
    StageId first = info.inputs[0];
    if (id.kind == StageKind::Output && s.heads == 1) first = StageId::of_head(StageKind::Context, 0);
    const bool continues = !lines.empty() && first == previous;
    if (!continues) lines.emplace_back();
    auto rhs = right_hand_side(s, info, continues);
    if (id.kind == StageKind::Output && s.heads == 1 && !continues) rhs[0] = Term::matrix(first);
    auto& terms = lines.back().terms;
    terms.insert(terms.end(), rhs.begin(), rhs.end());
    if (!terms.empty() && terms.back().kind == Term::Kind::Matrix) terms.push_back(Term::op("="));
    // an operator that ends in an arrow ("softmax →") already leads to the result
    else if (!terms.empty() && !terms.back().text.ends_with("→") && terms.back().text.find("softmax") == std::string::npos)
      terms.back().text += "  =";
    terms.push_back(Term::matrix(id));
    if (id.kind == StageKind::Output && info.inputs.size() == 1) terms.push_back(Term::op("(no W_o)"));
    previous = id;
  }
  return lines;
}

bool may_break_before(const Term& term) {
  return term.kind == Term::Kind::Operator && !term.text.empty() && term.text.front() != '(';
}

std::vector<std::size_t> equation_rows(const EquationLine& line, const std::vector<float>& widths, float row_width) {
  std::vector<std::size_t> starts;
  const std::size_t n = std::min(line.terms.size(), widths.size());
  if (n == 0) return starts;
  starts.push_back(0);
  float used = 0.0f;
  std::size_t i = 0;
  while (i < n) {
    // The group: this term and everything up to the next place a row may break.
    std::size_t end = i + 1;
    float group = widths[i];
    while (end < n && !may_break_before(line.terms[end])) group += widths[end++];
    if (i > 0 && used + group > row_width) {
      starts.push_back(i);
      used = 0.0f;
    }
    used += group;
    i = end;
  }
  return starts;
}

}  // namespace attention_lab::gui
