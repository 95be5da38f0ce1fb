#include "attention_lab/hook_names.h"

#include <charconv>

namespace attention_lab {

namespace {

using K = StageKind;

// One hook of a block's attention: the stage for all heads (nullopt: the hook
// needs a head) and for one head.
struct AttentionHook {
  std::string_view suffix;  // after "blocks.L."
  std::optional<StageKind> whole;
  std::optional<StageKind> per_head;
};

constexpr AttentionHook kHooks[] = {
    {"ln1.hook_normalized", K::X, std::nullopt},
    {"attn.hook_q", K::QUnrotated, K::HeadQUnrotated},
    {"attn.hook_k", K::KUnrotated, K::HeadKUnrotated},
    {"attn.hook_v", K::V, K::HeadV},
    {"attn.hook_rot_q", K::Q, K::HeadQ},
    {"attn.hook_rot_k", K::K, K::HeadK},
    {"attn.hook_attn_scores", std::nullopt, K::Masked},
    {"attn.hook_pattern", std::nullopt, K::Weights},
    {"attn.hook_z", K::Concat, K::Context},
    {"hook_attn_out", K::Output, std::nullopt},
};

// Hooks of a block outside its attention, and of the model around the blocks.
constexpr std::string_view kBlockHooks[] = {"hook_resid_pre", "hook_resid_mid", "hook_resid_post", "hook_mlp_in",
                                            "hook_mlp_out",   "hook_q_input",   "hook_k_input",    "hook_v_input",
                                            "ln1.hook_scale", "ln2.hook_scale", "ln2.hook_normalized", "mlp.hook_pre",
                                            "mlp.hook_post",  "attn.hook_result"};

bool hook_number(std::string_view digits, int& out) {
  if (digits.empty()) return false;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
  return ec == std::errc{} && end == digits.data() + digits.size() && out >= 0;
}

HookRead hook_refused(std::string_view text, const std::string& why) { return {std::nullopt, std::string(text) + ": " + why}; }

}  // namespace

std::optional<HookRead> read_hook_name(std::string_view text) {
  if (text.starts_with("hook_") || text.starts_with("ln_final."))
    return hook_refused(text, "a hook of the model around its blocks (the embeddings, the final norm), not of one attention "
                         "layer; a scenario's stages are those of blocks.L.attn");
  if (!text.starts_with("blocks.")) return std::nullopt;
  const std::string_view full = text;
  text.remove_prefix(7);
  const auto dot = text.find('.');
  int layer = 0;
  if (dot == std::string_view::npos || !hook_number(text.substr(0, dot), layer))
    return hook_refused(full, "expected blocks.L.… with L the layer, a whole number");
  text.remove_prefix(dot + 1);
  int head = -1;
  if (const auto open = text.find('['); open != std::string_view::npos) {
    if (text.back() != ']' || !hook_number(text.substr(open + 1, text.size() - open - 2), head))
      return hook_refused(full, "expected a head as a whole number in [ ], as in blocks.0.attn.hook_pattern[0]");
    text = text.substr(0, open);
  }
  for (const AttentionHook& h : kHooks) {
    if (text != h.suffix) continue;
    if (head >= 0 && !h.per_head)
      return hook_refused(full, std::string(h.suffix) + " holds every head together; it takes no [head]");
    if (head < 0 && !h.whole)
      return hook_refused(full, "TransformerLens holds every head here, our stages one each: add the head, as blocks." +
                               std::to_string(layer) + "." + std::string(h.suffix) + "[0]");
    StageId id{head >= 0 ? *h.per_head : *h.whole, head >= 0 ? head : 0, layer, Role::Value};
    return HookRead{id, {}};
  }
  for (const std::string_view b : kBlockHooks)
    if (text == b)
      return hook_refused(full, "a stage of the block around the attention (the Block view of a model), not of the attention "
                           "layer a scenario holds");
  return hook_refused(full, "not a TransformerLens hook we know; the attention's are ln1.hook_normalized, attn.hook_q, "
                       "attn.hook_k, attn.hook_v, attn.hook_rot_q, attn.hook_rot_k, attn.hook_attn_scores[h], "
                       "attn.hook_pattern[h], attn.hook_z and hook_attn_out");
}

const std::vector<HookEntry>& hook_table() {
  static const std::vector<HookEntry> table = {
      {"blocks.L.ln1.hook_normalized", "X", "the attention's input: in a model, the normed residual stream"},
      {"blocks.L.attn.hook_q", "Q_unrotated, Q_unrotated[h]", "before RoPE (the same as Q without RoPE)"},
      {"blocks.L.attn.hook_k", "K_unrotated, K_unrotated[h]", "before RoPE; K has the K/V heads' blocks"},
      {"blocks.L.attn.hook_v", "V, V[h]", ""},
      {"blocks.L.attn.hook_rot_q", "Q, Q[h]", "after RoPE"},
      {"blocks.L.attn.hook_rot_k", "K, K[h]", "after RoPE"},
      {"blocks.L.attn.hook_attn_scores[h]", "masked[h]",
       "theirs are already scaled, soft-capped, biased (ALiBi) and masked: our masked[h], not scores[h]"},
      {"blocks.L.attn.hook_pattern[h]", "weights[h]", ""},
      {"blocks.L.attn.hook_z", "concat, context[h]", "hook_z holds every head's context: our concat"},
      {"blocks.L.hook_attn_out", "output", "with W_o and b_o"},
  };
  return table;
}

}  // namespace attention_lab
