// wait_exit and try_wait on Linux and macOS: waitpid.

#include <signal.h>
#include <sys/wait.h>

#include <cerrno>

#include "platform/process.hpp"

namespace escouade::platform {
namespace {

std::optional<ExitStatus> from_wait_status(int status) {
  ExitStatus s;
  if (WIFEXITED(status)) {
    s.code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    s.signal = WTERMSIG(status);
  } else {
    return std::nullopt;
  }
  return s;
}

}  // namespace

std::optional<ExitStatus> wait_exit(const Spawned& s) {
  if (s.pid <= 0) return std::nullopt;
  int status = 0;
  for (;;) {
    const pid_t r = ::waitpid(s.pid, &status, 0);
    if (r == s.pid) return from_wait_status(status);
    if (r < 0 && errno == EINTR) continue;
    return std::nullopt;
  }
}

std::optional<ExitStatus> try_wait(int pid) {
  if (pid <= 0) return std::nullopt;
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid, &status, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r != pid) return std::nullopt;
  return from_wait_status(status);
}

void ignore_default_sigpipe() {
  struct sigaction current {};
  if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL &&
      !(current.sa_flags & SA_SIGINFO)) {
    ::signal(SIGPIPE, SIG_IGN);
  }
}

}  // namespace escouade::platform
