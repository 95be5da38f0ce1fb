#include "cli.h"

#include "attention_lab/huge_pages.h"

#include <exception>
#include <iostream>

int main(int argc, char** argv) {
  attention_lab::restart_with_huge_pages(argv);
  std::ios::sync_with_stdio(false);
  try {
    return attention_lab::cli::run(std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr);
  } catch (const std::exception& e) {  // e.g. std::bad_alloc: one line, no core dump
    std::cerr << "attention-lab-cli: " << e.what() << '\n';
    return attention_lab::cli::kExitFailure;
  }
}
