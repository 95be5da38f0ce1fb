#include "logic/export_names.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace attention_lab::gui {

bool is_export_scale(int scale) { return std::find(std::begin(kExportScales), std::end(kExportScales), scale) != std::end(kExportScales); }

std::optional<ExportTarget> parse_export_target(const std::string& text, const std::vector<StageId>& valid) {
  if (text == "step") return ExportTarget{ExportKind::Step, {}};
  if (text == "view") return ExportTarget{ExportKind::View, {}};
  const auto id = parse_stage_id(text);
  if (!id || std::find(valid.begin(), valid.end(), *id) == valid.end()) return std::nullopt;
  return ExportTarget{ExportKind::Stage, *id};
}

std::string stage_names_list(const std::vector<StageId>& valid) {
  std::string out;
  for (std::size_t i = 0; i < valid.size(); ++i) {
    const StageId id = valid[i];
    if (is_per_head(id.kind)) {
      // one entry per kind: its heads' range
      bool seen = false;
      for (std::size_t j = 0; j < i; ++j) seen = seen || valid[j].kind == id.kind;
      if (seen) continue;
      int last = id.head;
      for (const StageId& other : valid)
        if (other.kind == id.kind) last = std::max(last, other.head);
      out += (out.empty() ? "" : ", ") + std::string(kind_name(id.kind)) + "[" + std::to_string(id.head) +
             (last > id.head ? ".." + std::to_string(last) : "") + "]";
    } else {
      out += (out.empty() ? "" : ", ") + to_string(id);
    }
  }
  return out;
}

std::string stage_file_name(StageId id) {
  std::string stem = kind_name(id.kind);
  std::transform(stem.begin(), stem.end(), stem.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  if (is_per_head(id.kind)) stem += "-head" + std::to_string(id.head);
  return stem + ".png";
}

std::string step_file_name(const std::string& lesson_name, int step) {
  if (step < 1) return "view.png";
  char number[16];
  std::snprintf(number, sizeof number, "step%02d", step);
  return (lesson_name.empty() ? std::string() : lesson_name + "-") + number + ".png";
}

}  // namespace attention_lab::gui
