#pragma once
// The commands that work on a checkpoint: model-info, tokenize, trace --model,
// generate, extract (interp_commands.h: the interpretability ones). Each returns an exit status (cli.h).

#include <ostream>
#include <string>
#include <vector>

namespace attention_lab::cli {

// args excludes the command name.
int cmd_model_info(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int cmd_tokenize(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int cmd_trace_model(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int cmd_generate(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int cmd_extract(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// True when a trace command names a model (trace --model …) rather than a scenario.
bool names_a_model(const std::vector<std::string>& args);

}  // namespace attention_lab::cli
