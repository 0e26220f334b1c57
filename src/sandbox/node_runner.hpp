#pragma once

// Node, for the tests that hold the sandbox's JavaScript to it: the prelude's parse
// (prelude_test) and the same bundle run by Node beside the sandbox (sandbox_web_apis_test).
// Test code only. Node comes from the PATH (scripts/install-deps.sh installs it).

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace escouade::sandbox::testing {

// node on the PATH, or empty.
inline std::string find_node() {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::filesystem::path candidate = std::filesystem::path(dir.empty() ? "." : dir) / "node";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return {};
}

struct NodeRun {
  int status = -1;  // its exit code; 128 + a signal; -1 when it did not start
  std::string out;  // its stdout
  std::string err;  // its stderr
};

// Runs `node args...` with `input` on its stdin until it ends: no shell, no time limit of its
// own (ctest's is the safety net).
inline NodeRun run_node(const std::string& node, const std::vector<std::string>& args,
                        const std::string& input = {}) {
  NodeRun run;
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) != 0) return run;
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) return run;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  std::vector<std::string> all{node};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, node.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  if (rc != 0) {
    ::close(in[1]);
    ::close(out[0]);
    ::close(err[0]);
    return run;
  }
  // Small inputs and outputs: the input fits the pipe, then each output is read to its end
  // (stderr after stdout: what a test gives Node says little on it).
  (void)!::write(in[1], input.data(), input.size());
  ::close(in[1]);
  const auto drain = [](int fd, std::string& into) {
    char buf[4096];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
      into.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
  };
  drain(out[0], run.out);
  drain(err[0], run.err);
  int status = 0;
  ::waitpid(pid, &status, 0);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return run;
}

}  // namespace escouade::sandbox::testing
