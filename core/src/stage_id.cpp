#include "attention_lab/stage_id.h"

#include <charconv>

namespace attention_lab {

namespace {
constexpr const char* kNames[kStageKindCount] = {
    "X", "W_q", "W_k", "W_v", "b_q", "b_k", "b_v", "W_o", "b_o", "mask",
    "Q", "K", "V",
    "Q", "K", "V",  // a head's block: "Q[1]"
    "scores", "scaled", "masked", "weights", "context",
    "concat", "output",
};
}  // namespace

bool is_input(StageKind kind) { return kind <= StageKind::Mask; }

bool is_per_head(StageKind kind) { return kind >= StageKind::HeadQ && kind <= StageKind::Context; }

const char* kind_name(StageKind kind) { return kNames[static_cast<int>(kind)]; }

std::string to_string(StageId id) {
  std::string s = kind_name(id.kind);
  if (is_per_head(id.kind)) s += "[" + std::to_string(id.head) + "]";
  return s;
}

std::optional<StageId> parse_stage_id(std::string_view text) {
  std::string_view name = text;
  int head = 0;
  bool has_head = false;
  if (const auto open = text.find('['); open != std::string_view::npos) {
    if (text.back() != ']' || open + 2 > text.size() - 1) return std::nullopt;
    const auto digits = text.substr(open + 1, text.size() - open - 2);
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), head);
    if (ec != std::errc{} || end != digits.data() + digits.size() || head < 0) return std::nullopt;
    name = text.substr(0, open);
    has_head = true;
  }
  for (int k = 0; k < kStageKindCount; ++k) {
    if (name != kNames[k]) continue;
    const auto kind = static_cast<StageKind>(k);
    if (has_head != is_per_head(kind)) continue;  // "Q" is all heads, "Q[1]" one head
    return StageId{kind, has_head ? head : 0};
  }
  return std::nullopt;
}

}  // namespace attention_lab
