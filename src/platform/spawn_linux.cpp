// spawn() on Linux: clone(CLONE_VM | CLONE_VFORK) + execve, never a shell. Everything the child
// needs is prepared before, so that the child, which runs in the host's memory on a stack of its
// own until exec, makes only async-signal-safe calls and writes nothing but its own stack and,
// when it cannot reach exec, the report its parent reads.
// Sharing the memory spares the copy of the host's page tables that fork makes, and its undoing
// at exec: 0.25 ms of each start (bench: spawn of the fixture, 376-420 us with fork, as
// posix_spawn with clone). The caller's thread waits, as vfork makes it, until the child has
// exec'd or given up.

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "base/os_message.hpp"
#include "base/unique_fd.hpp"
#include "platform/exec_path.hpp"
#include "platform/os_process.hpp"
#include "platform/posix_util.hpp"
#include "platform/process.hpp"

// Under AddressSanitizer the child's frames would poison the shadow of its stack, a mapping of
// the host's memory that the child leaves by exec, not by returning: that shadow would stay, and
// a later mapping at the same address would look like a stack redzone. The child's own code is
// not instrumented, and the parent clears the shadow before it unmaps the stack.
#include "base/sanitizers.hpp"
#if defined(ESCOUADE_ADDRESS_SANITIZER)
#include <sanitizer/asan_interface.h>
#define ESCOUADE_CHILD_CODE __attribute__((no_sanitize_address))
#else
#define ESCOUADE_CHILD_CODE
#endif

namespace escouade::platform {
namespace {

// What the child reports when it cannot reach exec, written straight into the parent's memory
// (the child runs in it until exec, and the parent resumes only once the child has exec'd or
// ended, as glibc's posix_spawn reports): a successful exec leaves it zero.
struct ChildFailure {
  enum Stage : int { kSetup = 1, kFolder = 2, kExec = 3 };
  int stage = 0;
  int error = 0;
};

// The child's whole plan, built before fork: plain pointers and numbers only.
struct ChildPlan {
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  const char* const* candidates = nullptr;
  std::size_t candidate_count = 0;
  const char* cwd = nullptr;  // nullptr: stay
  int stdin_read = -1;
  int stdout_write = -1;
  int stderr_write = -1;
  ChildFailure* failure = nullptr;  // the parent's
  // The request's descriptors, copied above 3 + given_count: dup2'd to 3, 4, ... in order.
  const int* given = nullptr;
  int given_count = 0;
  int max_fd = 0;
};

[[noreturn]] ESCOUADE_CHILD_CODE void report_and_exit(ChildFailure* failure, int stage,
                                                      int error) noexcept {
  // volatile: stores the compiler may not drop before _exit, which it knows does not return
  volatile ChildFailure* report = failure;
  report->error = error;
  report->stage = stage;
  ::_exit(127);
}

// Runs in the child, between clone and exec: async-signal-safe calls only.
[[noreturn]] ESCOUADE_CHILD_CODE void run_child(const ChildPlan& plan) noexcept {
  // Every signal at its default. The parent blocked them all around clone, so none of its
  // handlers can run here; the mask is cleared just before exec.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigemptyset(&dfl.sa_mask);
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &dfl, nullptr);  // EINVAL ignored
  }
  if (::setpgid(0, 0) != 0) report_and_exit(plan.failure, ChildFailure::kSetup, errno);
  // Orphans of the plugin's processes come back to it, not to init: its tree stays whole, and
  // reachable by parent pids, while it lives. Kept across execve.
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
    report_and_exit(plan.failure, ChildFailure::kSetup, errno);
  }
  if (plan.cwd != nullptr && ::chdir(plan.cwd) != 0) {
    report_and_exit(plan.failure, ChildFailure::kFolder, errno);
  }
  // Every descriptor of the plan is >= 3 + given_count (see lift_above), so no dup2 overwrites
  // another.
  if (::dup2(plan.stdin_read, 0) < 0 || ::dup2(plan.stdout_write, 1) < 0 ||
      ::dup2(plan.stderr_write, 2) < 0) {
    report_and_exit(plan.failure, ChildFailure::kSetup, errno);
  }
  for (int i = 0; i < plan.given_count; ++i) {
    if (::dup2(plan.given[i], 3 + i) < 0) {
      report_and_exit(plan.failure, ChildFailure::kSetup, errno);
    }
  }
  close_fds_from(3 + plan.given_count, plan.max_fd, -1);
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);

  // execvp's rules for the candidates: go on past the paths that are not there, remember a
  // permission refusal, stop at any other error.
  int error = ENOENT;
  bool refused = false;
  for (std::size_t i = 0; i < plan.candidate_count; ++i) {
    ::execve(plan.candidates[i], plan.argv, plan.envp);
    error = errno;
    switch (error) {
      case EACCES:
        refused = true;
        break;
      case ENOENT:
      case ENOTDIR:
      case ESTALE:
      case ENODEV:
      case ETIMEDOUT:
        break;
      default:
        report_and_exit(plan.failure, ChildFailure::kExec, error);
    }
  }
  report_and_exit(plan.failure, ChildFailure::kExec, refused ? EACCES : error);
}

// The child's stack until exec: run_child's frames and execve's arguments on the way in.
constexpr std::size_t kChildStackBytes = 256 * 1024;

ESCOUADE_CHILD_CODE int child_entry(void* plan) {
  run_child(*static_cast<const ChildPlan*>(plan));
}

// `error`, the errno behind the failure when there is one, tells a lack of room (a fork bomb
// elsewhere, a full descriptor table), which passes, from a program that cannot run.
Error cannot_start(const std::string& program, const std::string& why, int error = 0) {
  const bool exhausted = error == EAGAIN || error == ENOMEM || error == EMFILE || error == ENFILE;
  return make_error(exhausted ? Errc::exhausted : kOsError, "cannot start " + program + ": " + why);
}

// Moves a descriptor to `floor` or above, keeping O_CLOEXEC: the child's dup2 onto 0, 1, 2 and
// the given descriptors' numbers must not hit a pipe end when the host runs with one of those
// closed, or holds a pipe end there.
bool lift_above(UniqueFd& fd, int floor) {
  if (fd.get() >= floor) return true;
  const int lifted = ::fcntl(fd.get(), F_DUPFD_CLOEXEC, floor);
  if (lifted < 0) return false;
  fd.reset(lifted);
  return true;
}

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

Result<Pipe> make_pipe(const std::string& program, int floor) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    const int error = errno;
    return cannot_start(program, "pipe: " + os_message(error), error);
  }
  Pipe p{UniqueFd(fds[0]), UniqueFd(fds[1])};
  if (!lift_above(p.read, floor) || !lift_above(p.write, floor)) {
    const int error = errno;
    return cannot_start(program, "pipe: " + os_message(error), error);
  }
  return p;
}

// A pipe's end has no status flag but its access mode, which F_SETFL leaves as it is: O_NONBLOCK
// is set without reading the flags first.
bool nonblocking_pipe_end(int fd) {
  return ::fcntl(fd, F_SETFL, O_NONBLOCK) == 0;
}

// The child's stack, kept by each thread that starts programs from one start to the next (the
// child is done with it when clone returns): a mapping made and unmade at each start, its pages
// faulted in again each time, cost more system calls and faults than the start's own. nullptr,
// with errno, when it cannot be mapped.
class ChildStack {
 public:
  ChildStack() = default;
  ChildStack(const ChildStack&) = delete;
  ChildStack& operator=(const ChildStack&) = delete;
  ~ChildStack() {
    if (base_ != nullptr) ::munmap(base_, kChildStackBytes);
  }
  void* get() {
    if (base_ == nullptr) {
      void* p = ::mmap(nullptr, kChildStackBytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
      if (p != MAP_FAILED) base_ = p;
    }
    return base_;
  }

 private:
  void* base_ = nullptr;
};

void* child_stack() {
  thread_local ChildStack stack;
  return stack.get();
}

using detail::c_strings;

}  // namespace

Result<Spawned> spawn(const SpawnRequest& request) {
  if (request.argv.empty() || request.argv.front().empty()) {
    return make_error(kOsError, "cannot start a program: the command is empty");
  }
  const std::string& program = request.argv.front();
  constexpr std::size_t kMaxGiven = 8;
  if (request.descriptors.size() > kMaxGiven) {
    return make_error(kOsError, "cannot start " + program + ": more than 8 descriptors to give");
  }
  const int floor = 3 + static_cast<int>(request.descriptors.size());
  // Copies of the descriptors to give, above every number the child will dup2 onto.
  std::vector<UniqueFd> given;
  std::vector<int> given_fds;
  for (const int fd : request.descriptors) {
    const int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, floor);
    if (copy < 0) {
      const int error = errno;
      return cannot_start(program, "a descriptor to give: " + os_message(error), error);
    }
    given.emplace_back(copy);
    given_fds.push_back(copy);
  }

  // Everything the child reads, allocated now.
  const std::vector<std::string> candidates =
      request.executable.empty() ? exec_candidates(program, search_path(request.env))
                                 : std::vector<std::string>{request.executable.string()};
  std::vector<const char*> candidate_ptrs;
  for (const std::string& c : candidates)
    candidate_ptrs.push_back(c.c_str());
  const std::vector<char*> argv = c_strings(request.argv);
  const std::vector<char*> envp = c_strings(request.env);
  const std::string cwd = request.cwd.string();

  auto in = make_pipe(program, floor);
  if (!in) return in.error();
  auto out = make_pipe(program, floor);
  if (!out) return out.error();
  auto err = make_pipe(program, floor);
  if (!err) return err.error();

  ChildPlan plan;
  plan.argv = argv.data();
  plan.envp = envp.data();
  plan.candidates = candidate_ptrs.data();
  plan.candidate_count = candidate_ptrs.size();
  plan.cwd = cwd.empty() ? nullptr : cwd.c_str();
  plan.stdin_read = in->read.get();
  plan.stdout_write = out->write.get();
  plan.stderr_write = err->write.get();
  ChildFailure failure;
  plan.failure = &failure;
  plan.given = given_fds.data();
  plan.given_count = static_cast<int>(given_fds.size());
  plan.max_fd = fd_limit();

  void* stack = child_stack();
  if (stack == nullptr) {
    const int error = errno;
    return cannot_start(program, "its stack: " + os_message(error), error);
  }
  sigset_t all;
  sigset_t previous;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &previous);
  // No handler of the host can run in the child: every signal is blocked until run_child has
  // set them all to their default (its handlers are a copy: no CLONE_SIGHAND).
  const pid_t pid = ::clone(child_entry, static_cast<char*>(stack) + kChildStackBytes,
                            CLONE_VM | CLONE_VFORK | SIGCHLD, &plan);
  const int fork_error = errno;
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  // The child has exec'd or ended: its stack is free for the next start.
#if defined(ESCOUADE_ADDRESS_SANITIZER)
  ASAN_UNPOISON_MEMORY_REGION(stack, kChildStackBytes);
#endif
  if (pid < 0) return cannot_start(program, os_message(fork_error), fork_error);

  in->read.reset();
  out->write.reset();
  err->write.reset();
  UniqueFd pidfd(open_process_handle(pid));

  if (failure.stage != 0) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    switch (failure.stage) {
      case ChildFailure::kFolder:
        return cannot_start(program,
                            "cannot enter its folder " + cwd + ": " + os_message(failure.error));
      case ChildFailure::kSetup:
        return cannot_start(program, "cannot set up its process: " + os_message(failure.error),
                            failure.error);
      default:
        return cannot_start(program, os_message(failure.error), failure.error);
    }
  }

  if (!nonblocking_pipe_end(in->write.get()) || !nonblocking_pipe_end(out->read.get()) ||
      !nonblocking_pipe_end(err->read.get())) {
    // Not expected on a pipe; the child runs already, so it is ended before reporting.
    const int error = errno;
    ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return cannot_start(program, "fcntl: " + os_message(error));
  }

  Spawned s;
  s.pid = pid;
  s.stdin_fd = in->write.release();
  s.stdout_fd = out->read.release();
  s.stderr_fd = err->read.release();
  s.pidfd = pidfd.release();
  return s;
}

void close_fds(Spawned& s) {
  for (int* fd : {&s.stdin_fd, &s.stdout_fd, &s.stderr_fd, &s.pidfd}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

Result<void> become_subreaper() {
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
    return make_error(kOsError, "cannot become a child subreaper: " + os_message(errno));
  }
  return {};
}

bool is_subreaper() {
  int flag = 0;
  return ::prctl(PR_GET_CHILD_SUBREAPER, &flag, 0, 0, 0) == 0 && flag != 0;
}

}  // namespace escouade::platform
