#include "logic/what_if.h"

#include "attention_lab/stage_info.h"
#include "attention_lab/stage_registry.h"
#include "logic/number_format.h"

namespace attention_lab::gui {

namespace {

std::string pin_value(const std::optional<float>& v) { return v ? format_number(*v, 2) : std::string("unpinned"); }

}  // namespace

SetAside set_aside(const Scenario& before, const Scenario& after) {
  SetAside out;
  std::string first;
  for (const StageSpec& s : all_stages()) {
    if (!s.input || !s.member) continue;
    const Matrix& a = (before.*s.member).get();
    const Matrix& b = (after.*s.member).get();
    if (a.rows() != b.rows() || a.cols() != b.cols()) continue;
    const StageId id = StageId::input(s.kind);
    for (Eigen::Index r = 0; r < a.rows(); ++r)
      for (Eigen::Index c = 0; c < a.cols(); ++c) {
        const float x = a(r, c), y = b(r, c);
        if (x == y || (std::isnan(x) && std::isnan(y))) continue;
        out.edits.emplace_back(SetCell{id, static_cast<int>(r), static_cast<int>(c), y});
        if (first.empty())
          first = cell_symbol(after, id, static_cast<int>(r), static_cast<int>(c)) + " " + format_number(x, 2) + " → " +
                  format_number(y, 2);
      }
  }
  const auto pin_change = [&](const PinKey& k, std::optional<float> was, std::optional<float> now) {
    out.edits.emplace_back(SetPin{k, now});
    if (first.empty()) first = "the pin on " + cell_symbol(after, k.stage, k.row, k.col) + " " + pin_value(was) + " → " + pin_value(now);
  };
  for (const auto& [k, v] : after.pins)
    if (const auto it = before.pins.find(k); it == before.pins.end() || it->second != v)
      pin_change(k, it == before.pins.end() ? std::nullopt : std::optional<float>(it->second), v);
  for (const auto& [k, v] : before.pins)
    if (!after.pins.count(k)) pin_change(k, v, std::nullopt);
  if (!first.empty())
    out.summary = first + (out.edits.size() > 1 ? " and " + std::to_string(out.edits.size() - 1) +
                                                      (out.edits.size() == 2 ? " more change" : " more changes")
                                                : std::string());
  return out;
}

}  // namespace attention_lab::gui
