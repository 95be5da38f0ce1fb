#include "slide_check.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>

extern char** environ;

namespace attention_lab::cli {
namespace {

// attention-lab beside this executable (both are installed to one bindir,
// and a build puts both in bin/).
std::filesystem::path app_beside_this_program() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  return self.parent_path() / "attention-lab";
}

// Runs `argv`, returns its exit status and what it wrote (stdout and stderr together).
int run_capturing(const std::vector<std::string>& args, std::string& output, std::string& error) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) {
    error = std::strerror(errno);
    return -1;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[1]);
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (spawned != 0) {
    close(pipe_fds[0]);
    error = std::strerror(spawned);
    return -1;
  }
  char buffer[4096];
  for (;;) {
    const ssize_t n = read(pipe_fds[0], buffer, sizeof buffer);
    if (n > 0) output.append(buffer, static_cast<std::size_t>(n));
    else if (n == 0 || errno != EINTR) break;
  }
  close(pipe_fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace

SlideCheck check_slides(const std::string& lesson_path) {
  SlideCheck c;
  const std::filesystem::path app = app_beside_this_program();
  std::error_code ec;
  if (app.empty() || !std::filesystem::is_regular_file(app, ec)) {
    c.note = "slides not checked: the desktop app (attention-lab) is not installed beside attention-lab-cli";
    return c;
  }
  std::string output, error;
  const int code = run_capturing({app.string(), "--lesson", lesson_path, "--check-slides", "--size", c.size}, output, error);
  if (code != 0) {
    // Its own message (no OpenGL at all, …), on one line.
    std::string said = error.empty() ? output : error;
    while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) said.pop_back();
    for (char& ch : said)
      if (ch == '\n') ch = ' ';
    c.note = "slides not checked: " + app.string() + " --check-slides " + (code < 0 ? "did not start" : "exited " + std::to_string(code)) +
             (said.empty() ? "" : ": " + said);
    return c;
  }
  c.ran = true;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("warning: ", 0) == 0) c.warnings.push_back(line.substr(9));
  return c;
}

}  // namespace attention_lab::cli
