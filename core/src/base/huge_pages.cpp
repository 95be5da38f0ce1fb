// See huge_pages.h.

#include "attention_lab/huge_pages.h"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#if defined(__linux__) && defined(__GLIBC__)
#include <gnu/libc-version.h>
#include <sys/auxv.h>
#include <unistd.h>
#define ATTENTION_LAB_CAN_RESTART 1
#endif

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ATTENTION_LAB_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define ATTENTION_LAB_SANITIZED 1
#endif
#endif

namespace attention_lab {

namespace {

constexpr std::string_view kTunable = "glibc.malloc.hugetlb";

bool mentions_tunable(const char* tunables) {
  return tunables && std::string_view(tunables).find(kTunable) != std::string_view::npos;
}

// "2.36" is; anything unreadable is not
bool at_least_2_35(std::string_view version) {
  int major = 0, minor = 0;
  std::size_t at = 0;
  while (at < version.size() && version[at] >= '0' && version[at] <= '9') major = major * 10 + (version[at++] - '0');
  if (at >= version.size() || version[at] != '.') return false;
  ++at;
  while (at < version.size() && version[at] >= '0' && version[at] <= '9') minor = minor * 10 + (version[at++] - '0');
  return major > 2 || (major == 2 && minor >= 35);
}

}  // namespace

std::optional<std::string> tunables_for_huge_pages(const char* tunables, const char* setting, std::string_view thp_modes,
                                                   std::string_view glibc_version) {
  if (setting && std::string_view(setting) == "0") return std::nullopt;
  if (mentions_tunable(tunables)) return std::nullopt;  // chosen already (or restarted already)
  // "always [madvise] never": the bracketed word is the mode in force
  if (thp_modes.find("[madvise]") == std::string_view::npos) return std::nullopt;
  if (!at_least_2_35(glibc_version)) return std::nullopt;
  std::string value = tunables && *tunables ? std::string(tunables) + ":" : std::string();
  return value + std::string(kTunable) + "=1";
}

void restart_with_huge_pages(char** argv) {
#if defined(ATTENTION_LAB_CAN_RESTART) && !defined(ATTENTION_LAB_SANITIZED)
  // Once only: whatever the restarted process finds, it runs on.
  constexpr const char* kRestarted = "ATTENTION_LAB_HUGE_PAGES_RESTARTED";
  if (std::getenv(kRestarted)) {
    unsetenv(kRestarted);
    return;
  }
  if (!argv || !argv[0]) return;
  // setuid or file capabilities: glibc drops most tunables from such a process
  if (getauxval(AT_SECURE) != 0) return;
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload && std::strstr(preload, "vgpreload")) return;  // valgrind
  // Started through the dynamic loader (ld-linux… ./program): /proc/self/exe
  // is the loader, which would take the program's first argument for the program.
  char exe[4096];
  const ssize_t length = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (length <= 0) return;
  exe[length] = '\0';
  const char* slash = std::strrchr(exe, '/');
  const std::string_view name = slash ? slash + 1 : exe;
  if (name.substr(0, 3) == "ld-" || name.substr(0, 5) == "ld.so") return;
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  std::getline(in, modes);
  const char* before = std::getenv("GLIBC_TUNABLES");
  const std::optional<std::string> was = before ? std::optional<std::string>(before) : std::nullopt;
  const auto value = tunables_for_huge_pages(before, std::getenv("ATTENTION_LAB_HUGE_PAGES"), modes, gnu_get_libc_version());
  if (!value || setenv("GLIBC_TUNABLES", value->c_str(), 1) != 0) return;
  setenv(kRestarted, "1", 1);
  execv(exe, argv);
  // Still here: the exec failed. Run on with 4 KiB pages and the environment
  // as it was, so that what this process reports (huge_pages_requested) is true.
  unsetenv(kRestarted);
  if (was)
    setenv("GLIBC_TUNABLES", was->c_str(), 1);
  else
    unsetenv("GLIBC_TUNABLES");
#else
  (void)argv;
#endif
}

bool huge_pages_requested() {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  return tunables && std::string_view(tunables).find(std::string(kTunable) + "=1") != std::string_view::npos;
}

double huge_page_bytes() {
  std::ifstream in("/proc/self/smaps_rollup");
  std::string line;
  constexpr std::string_view kKey = "AnonHugePages:";
  while (std::getline(in, line))
    if (line.compare(0, kKey.size(), kKey) == 0) return std::atof(line.c_str() + kKey.size()) * 1024.0;  // "… kB"
  return 0.0;
}

}  // namespace attention_lab
