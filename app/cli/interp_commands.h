#pragma once
// The interpretability commands on a checkpoint: detect-heads, logit-lens,
// ablate, patch, attribute, cache. Each returns an exit status (cli.h).

#include <ostream>
#include <string>
#include <vector>

namespace attention_lab::cli {

// args excludes the command name.
int cmd_detect_heads(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int cmd_logit_lens(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int cmd_ablate(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int cmd_patch(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int cmd_attribute(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int cmd_cache(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace attention_lab::cli
