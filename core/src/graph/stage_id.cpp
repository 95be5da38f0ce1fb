#include "attention_lab/stage_id.h"

#include "attention_lab/hook_names.h"
#include "attention_lab/stage_registry.h"

#include <charconv>

namespace attention_lab {

bool is_input(StageKind kind) { return spec(kind).input; }

bool is_per_head(StageKind kind) { return spec(kind).per_head; }

const char* kind_name(StageKind kind) { return spec(kind).id_name; }

std::string to_string(StageId id) {
  std::string s;
  if (id.layer != 0) s += "L" + std::to_string(id.layer) + ".";
  if (id.role == Role::Gradient) s += "grad.";
  s += kind_name(id.kind);
  if (is_per_head(id.kind)) s += "[" + std::to_string(id.head) + "]";
  return s;
}

namespace {

// Reads a non-negative decimal that fills `digits` entirely.
bool whole_number(std::string_view digits, int& out) {
  if (digits.empty()) return false;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
  return ec == std::errc{} && end == digits.data() + digits.size() && out >= 0;
}

}  // namespace

std::optional<StageId> parse_stage_id(std::string_view text) {
  // TransformerLens's names too (hook_names.h): "blocks.0.attn.hook_pattern[2]"
  if (auto hook = read_hook_name(text)) return hook->id;
  int layer = 0;
  if (text.size() > 1 && text[0] == 'L' && text[1] >= '0' && text[1] <= '9') {
    const auto dot = text.find('.');
    if (dot == std::string_view::npos || !whole_number(text.substr(1, dot - 1), layer) || layer == 0)
      return std::nullopt;  // "L0." is never written: layer 0 has no prefix
    text.remove_prefix(dot + 1);
  }
  Role role = Role::Value;
  if (text.starts_with("grad.")) {
    role = Role::Gradient;
    text.remove_prefix(5);
  }
  std::string_view name = text;
  int head = 0;
  bool has_head = false;
  if (const auto open = text.find('['); open != std::string_view::npos) {
    if (text.back() != ']' || open + 2 > text.size() - 1) return std::nullopt;
    if (!whole_number(text.substr(open + 1, text.size() - open - 2), head)) return std::nullopt;
    name = text.substr(0, open);
    has_head = true;
  }
  for (const StageSpec& sp : all_stages()) {
    if (name != sp.id_name || has_head != sp.per_head) continue;  // "Q" is all heads, "Q[1]" one head
    return StageId{sp.kind, has_head ? head : 0, layer, role};
  }
  return std::nullopt;
}

}  // namespace attention_lab
