#pragma once
// Runs attention-lab-cli in-process, as the CLI tests do: exit code, stdout, stderr.

#include "cli.h"

#include <gtest/gtest.h>

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

// `attention-lab-cli bench ARGS…`
inline CliResult run_bench(std::vector<std::string> args) {
  args.insert(args.begin(), "bench");
  return run_cli(args);
}

// A refused bench: exit 2, nothing on stdout, and stderr is one line,
// "attention-lab-cli: bench: …", that mentions `needle`.
inline ::testing::AssertionResult bench_refused(const CliResult& r, const std::string& needle) {
  if (r.code != cli::kExitBadInput) return ::testing::AssertionFailure() << "exit " << r.code << ": " << r.err;
  if (!r.out.empty()) return ::testing::AssertionFailure() << "printed '" << r.out << "'";
  if (r.err.empty() || r.err.back() != '\n' || r.err.find('\n') != r.err.size() - 1)
    return ::testing::AssertionFailure() << "not one line: '" << r.err << "'";
  if (r.err.rfind("attention-lab-cli: bench: ", 0) != 0) return ::testing::AssertionFailure() << "no prefix: " << r.err;
  if (r.err.find(needle) == std::string::npos)
    return ::testing::AssertionFailure() << "'" << r.err << "' does not mention '" << needle << "'";
  return ::testing::AssertionSuccess();
}

}  // namespace attention_lab::test
