// spawn() on macOS: posix_spawn, never a shell.
//
// UNTESTED HERE: Linux is the tested target and this file is compiled only on macOS. Written
// from Apple's posix_spawn(2), posix_spawnattr_setflags(3) (POSIX_SPAWN_SETPGROUP,
// POSIX_SPAWN_SETSIGDEF, POSIX_SPAWN_SETSIGMASK, and the Apple extension
// POSIX_SPAWN_CLOEXEC_DEFAULT: only the descriptors named in the file actions are inherited)
// and posix_spawn_file_actions_addchdir_np (macOS 10.15+).
//
// Differences from Linux, by the system's design: there is no child subreaper (an orphan of the
// plugin goes to launchd; kill_tree still finds its process group, and adopted_orphans_of looks
// for orphans under launchd), and no pidfd (Spawned::pidfd is -1).

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

#include "base/os_message.hpp"
#include "base/unique_fd.hpp"
#include "platform/exec_path.hpp"
#include "platform/posix_util.hpp"
#include "platform/process.hpp"

namespace escouade::platform {
namespace {

// `error`, the errno behind the failure when there is one, tells a lack of room (a fork bomb
// elsewhere, a full descriptor table), which passes, from a program that cannot run.
Error cannot_start(const std::string& program, const std::string& why, int error = 0) {
  const bool exhausted = error == EAGAIN || error == ENOMEM || error == EMFILE || error == ENFILE;
  return make_error(exhausted ? Errc::exhausted : kOsError, "cannot start " + program + ": " + why);
}

// A pipe end at 3 or above (the dup2 file actions onto 0, 1 and 2 must not hit another pipe
// end), with FD_CLOEXEC. macOS has no pipe2, so the flag is set after pipe(): spawn() may race
// with a fork elsewhere in the host, which POSIX_SPAWN_CLOEXEC_DEFAULT makes harmless for the
// processes started here.
bool prepare(UniqueFd& fd) {
  if (fd.get() < 3) {
    const int lifted = ::fcntl(fd.get(), F_DUPFD_CLOEXEC, 3);
    if (lifted < 0) return false;
    fd.reset(lifted);
  }
  return ::fcntl(fd.get(), F_SETFD, FD_CLOEXEC) == 0;
}

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

Result<Pipe> make_pipe(const std::string& program) {
  int fds[2];
  if (::pipe(fds) != 0) {
    const int error = errno;
    return cannot_start(program, "pipe: " + os_message(error), error);
  }
  Pipe p{UniqueFd(fds[0]), UniqueFd(fds[1])};
  if (!prepare(p.read) || !prepare(p.write)) {
    const int error = errno;
    return cannot_start(program, "pipe: " + os_message(error), error);
  }
  return p;
}

using detail::c_strings;
using detail::set_nonblocking;

// Owns the attributes and file actions of one posix_spawn.
struct SpawnSetup {
  posix_spawnattr_t attr;
  posix_spawn_file_actions_t actions;
  SpawnSetup() {
    ::posix_spawnattr_init(&attr);
    ::posix_spawn_file_actions_init(&actions);
  }
  ~SpawnSetup() {
    ::posix_spawn_file_actions_destroy(&actions);
    ::posix_spawnattr_destroy(&attr);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

}  // namespace

Result<Spawned> spawn(const SpawnRequest& request) {
  if (request.argv.empty() || request.argv.front().empty()) {
    return make_error(kOsError, "cannot start a program: the command is empty");
  }
  const std::string& program = request.argv.front();

  // The working folder is checked here, because posix_spawn reports a failed chdir action with
  // the same errno as a missing program. Relative candidates are made absolute against it, so
  // that their meaning does not depend on when the chdir action runs.
  std::filesystem::path folder;
  if (!request.cwd.empty()) {
    std::error_code ec;
    folder = std::filesystem::absolute(request.cwd, ec);
    struct stat st {};
    if (ec || ::stat(folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      const int error = ec ? ec.value() : (errno != 0 ? errno : ENOTDIR);
      return cannot_start(
          program, "cannot enter its folder " + request.cwd.string() + ": " + os_message(error));
    }
  }
  std::vector<std::string> candidates = request.executable.empty()
                                            ? exec_candidates(program, search_path(request.env))
                                            : std::vector<std::string>{request.executable.string()};
  for (std::string& c : candidates) {
    if (!folder.empty() && !c.starts_with('/')) c = (folder / c).string();
  }
  const std::vector<char*> argv = c_strings(request.argv);
  const std::vector<char*> envp = c_strings(request.env);

  auto in = make_pipe(program);
  if (!in) return in.error();
  auto out = make_pipe(program);
  if (!out) return out.error();
  auto err = make_pipe(program);
  if (!err) return err.error();

  SpawnSetup setup;
  ::posix_spawn_file_actions_adddup2(&setup.actions, in->read.get(), 0);
  ::posix_spawn_file_actions_adddup2(&setup.actions, out->write.get(), 1);
  ::posix_spawn_file_actions_adddup2(&setup.actions, err->write.get(), 2);
  // The request's descriptors as 3, 4, ...: CLOEXEC_DEFAULT closes everything else. A given
  // descriptor whose number is one of those targets is copied higher first.
  if (request.descriptors.size() > 8) {
    return make_error(kOsError, "cannot start " + program + ": more than 8 descriptors to give");
  }
  std::vector<UniqueFd> given;
  const int floor = 3 + static_cast<int>(request.descriptors.size());
  for (std::size_t i = 0; i < request.descriptors.size(); ++i) {
    const int copy = ::fcntl(request.descriptors[i], F_DUPFD, floor);
    if (copy < 0) {
      const int error = errno;
      return cannot_start(program, "a descriptor to give: " + os_message(error), error);
    }
    ::fcntl(copy, F_SETFD, FD_CLOEXEC);
    given.emplace_back(copy);
    ::posix_spawn_file_actions_adddup2(&setup.actions, copy, 3 + static_cast<int>(i));
  }
  if (!folder.empty()) {
    ::posix_spawn_file_actions_addchdir_np(&setup.actions, folder.c_str());
  }
  // A new process group that it leads (pgroup 0), every signal at its default and unblocked,
  // and no descriptor but 0, 1 and 2.
  const short flags = POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK |
                      POSIX_SPAWN_CLOEXEC_DEFAULT;
  ::posix_spawnattr_setflags(&setup.attr, flags);
  ::posix_spawnattr_setpgroup(&setup.attr, 0);
  sigset_t none;
  ::sigemptyset(&none);
  ::posix_spawnattr_setsigmask(&setup.attr, &none);
  sigset_t all;
  ::sigfillset(&all);
  ::sigdelset(&all, SIGKILL);
  ::sigdelset(&all, SIGSTOP);
  ::posix_spawnattr_setsigdefault(&setup.attr, &all);

  // execvp's rules over the candidates; Apple's posix_spawn returns the exec's error itself.
  pid_t pid = -1;
  int error = ENOENT;
  bool refused = false;
  bool started = false;
  for (const std::string& candidate : candidates) {
    error = ::posix_spawn(&pid, candidate.c_str(), &setup.actions, &setup.attr, argv.data(),
                          envp.data());
    if (error == 0) {
      started = true;
      break;
    }
    if (error == EACCES) {
      refused = true;
    } else if (error != ENOENT && error != ENOTDIR && error != ESTALE && error != ETIMEDOUT) {
      break;
    }
  }
  if (!started) {
    if (refused && (error == ENOENT || error == ENOTDIR)) error = EACCES;
    return cannot_start(program, os_message(error), error);
  }

  in->read.reset();
  out->write.reset();
  err->write.reset();
  if (!set_nonblocking(in->write.get()) || !set_nonblocking(out->read.get()) ||
      !set_nonblocking(err->read.get())) {
    const int fcntl_error = errno;
    ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return cannot_start(program, "fcntl: " + os_message(fcntl_error));
  }
  Spawned s;
  s.pid = pid;
  s.stdin_fd = in->write.release();
  s.stdout_fd = out->read.release();
  s.stderr_fd = err->read.release();
  s.pidfd = -1;
  return s;
}

void close_fds(Spawned& s) {
  for (int* fd : {&s.stdin_fd, &s.stdout_fd, &s.stderr_fd, &s.pidfd}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

Result<void> become_subreaper() {
  return make_error(kOsError,
                    "macOS has no child subreaper: the orphans of a plugin go to launchd");
}

bool is_subreaper() {
  return false;
}

}  // namespace escouade::platform
