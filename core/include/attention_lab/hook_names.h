#pragma once
// TransformerLens's hook names for our stages, so an engineer's habits work
// wherever a stage id does (lesson files, --select, export targets, pins):
// "blocks.5.attn.hook_pattern[3]" is "L5.weights[3]". TransformerLens hooks
// hold every head at once; ours are one head each, so a per-head hook takes
// the head as ours do ("[3]"); hook_q, hook_k, hook_v and hook_z without
// one are the whole matrices (hook_z: the heads' contexts side by side, our
// concat). The hooks of the rest of a block (the residual stream, the MLP,
// the embeddings) are refused by name: a scenario is one attention layer.

#include "attention_lab/stage_id.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attention_lab {

struct HookRead {
  std::optional<StageId> id;  // the stage, or
  std::string problem;        // why the hook has none ("blocks.0.hook_resid_pre: …")
};

// nullopt when `text` is no TransformerLens name (it does not start with
// "blocks." or "hook_"); else the stage it names or why there is none.
std::optional<HookRead> read_hook_name(std::string_view text);

// The table the docs print: hook (L for the layer, [h] for a head), ours
// (for layer 0; another layer has its prefix, "L5.weights[h]"), and where
// the meaning differs.
struct HookEntry {
  const char* hook;
  const char* ours;
  const char* note;
};
const std::vector<HookEntry>& hook_table();

}  // namespace attention_lab
