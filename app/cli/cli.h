#pragma once
// attention-lab-cli: the headless front end. Kept as a library so the tests
// can run every command in-process and check its output and exit code.

#include <ostream>
#include <string>
#include <vector>

namespace attention_lab::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;   // could not write the output
inline constexpr int kExitBadInput = 2;  // bad arguments or a bad scenario

// args excludes the program name.
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace attention_lab::cli
