#pragma once
// Runs attention-lab-cli in-process, as the CLI tests do: exit code, stdout, stderr.

#include "cli.h"

#include <sstream>
#include <string>
#include <vector>

namespace attention_lab::test {

struct CliResult {
  int code = -1;
  std::string out, err;
};

inline CliResult run_cli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  CliResult r;
  r.code = cli::run(args, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

}  // namespace attention_lab::test
