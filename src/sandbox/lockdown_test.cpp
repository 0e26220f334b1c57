// The helper's lockdown, in forked children of this test: each child locks itself down exactly as
// escouade-sandbox does (lockdown::limit_process, then lockdown::install_filter), then makes one
// system call. What the filter forbids kills the child with SIGSYS, at the call; what it allows
// runs, the child exits 0. No engine here: the helper's own run is tested in sandbox_test.

#include "sandbox/lockdown.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>

namespace escouade::sandbox::lockdown {
namespace {

// How a child ended: its exit code, or the signal that killed it.
struct Ending {
  int code = -1;
  int signal = 0;
};

// Forks a child that locks itself down (descriptors 0 to 3 kept: 3 is `report`'s write end when
// given), with its filter unless told, runs `body`, and exits with what it returns. A child that
// could not lock itself down exits 99.
Ending in_lockdown(const std::function<int()>& body, int report = -1, bool filter = true) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (report >= 0 && ::dup2(report, 3) < 0) ::_exit(98);
    if (!limit_process(4, 0)) ::_exit(99);
    if (filter && !install_filter()) ::_exit(99);
    ::_exit(body());
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  Ending e;
  if (WIFEXITED(status)) e.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) e.signal = WTERMSIG(status);
  return e;
}

#define EXPECT_KILLED_BY_THE_FILTER(...)                                \
  do {                                                                  \
    const Ending e = in_lockdown(__VA_ARGS__);                          \
    EXPECT_EQ(e.signal, SIGSYS) << #__VA_ARGS__ << ": exit " << e.code; \
  } while (false)

TEST(Lockdown, WhatTheFilterForbidsKillsTheHelperAtTheCall) {
  EXPECT_KILLED_BY_THE_FILTER(
      [] { return static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, "/etc/passwd", nullptr, 0)); });
  EXPECT_KILLED_BY_THE_FILTER([] { return ::creat("/tmp/escouade-lockdown-test", 0600); });
  EXPECT_KILLED_BY_THE_FILTER([] { return ::socket(AF_INET, SOCK_STREAM, 0) >= 0 ? 0 : 1; });
  EXPECT_KILLED_BY_THE_FILTER([] { return ::socket(AF_UNIX, SOCK_STREAM, 0) >= 0 ? 0 : 1; });
  EXPECT_KILLED_BY_THE_FILTER([] {
    char* const argv[] = {const_cast<char*>("/bin/true"), nullptr};
    return ::execve("/bin/true", argv, nullptr);
  });
  EXPECT_KILLED_BY_THE_FILTER(
      [] { return static_cast<int>(::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr)); });
  // A process, not a thread: fork (clone without CLONE_THREAD), vfork.
  EXPECT_KILLED_BY_THE_FILTER([] { return static_cast<int>(::syscall(SYS_fork)); });
  EXPECT_KILLED_BY_THE_FILTER([] { return static_cast<int>(::syscall(SYS_vfork)); });
  EXPECT_KILLED_BY_THE_FILTER(
      [] { return static_cast<int>(::syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0)); });
  // A signal to another process (the host, its parent), a tgkill to one either.
  EXPECT_KILLED_BY_THE_FILTER([] { return ::kill(::getppid(), 0); });
  EXPECT_KILLED_BY_THE_FILTER(
      [] { return static_cast<int>(::syscall(SYS_tgkill, ::getppid(), ::getppid(), 0)); });
  // prctl beyond a thread's name: its dumpable flag back on.
  EXPECT_KILLED_BY_THE_FILTER([] { return ::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0); });
  EXPECT_KILLED_BY_THE_FILTER([] { return ::memfd_create("x", 0); });
  EXPECT_KILLED_BY_THE_FILTER([] { return ::pipe(std::array<int, 2>{}.data()); });
  EXPECT_KILLED_BY_THE_FILTER([] { return ::ioctl(0, 0); });
}

// Opening a file never happens: it is answered "permission denied", for the C library's sake.
TEST(Lockdown, NoFileIsOpenedItIsRefused) {
  const Ending e = in_lockdown([] {
    if (::open("/etc/passwd", O_RDONLY) != -1 || errno != EACCES) return 1;
    if (::openat(AT_FDCWD, "/proc/self/environ", O_RDONLY) != -1 || errno != EACCES) return 2;
    if (::open("/tmp/escouade-lockdown-created", O_WRONLY | O_CREAT, 0600) != -1) return 3;
    return 0;
  });
  EXPECT_EQ(e.signal, 0);
  EXPECT_EQ(e.code, 0);
  EXPECT_FALSE(std::filesystem::exists("/tmp/escouade-lockdown-created"));
}

TEST(Lockdown, WhatTheEngineNeedsRuns) {
  // Its pipes, memory, a thread, time, random bytes, its thread's name: exit 0.
  const Ending e = in_lockdown([] {
    if (::write(1, "", 0) != 0) return 1;
    void* p = ::mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED || ::mprotect(p, 4096, PROT_READ | PROT_EXEC) != 0) return 2;
    if (::munmap(p, 1 << 20) != 0) return 3;
    pthread_t thread;
    if (pthread_create(
            &thread, nullptr,
            [](void*) -> void* {
              pthread_setname_np(pthread_self(), "lockdown-test");
              return nullptr;
            },
            nullptr) != 0)
      return 4;
    if (pthread_join(thread, nullptr) != 0) return 5;
    timespec t{};
    if (::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0) return 6;
    char random[16];
    if (::getrandom(random, sizeof random, 0) != sizeof random) return 7;
    // clone3 is answered, not run: the C library then uses clone.
    if (::syscall(SYS_clone3, nullptr, 0) != -1 || errno != ENOSYS) return 8;
    return 0;
  });
  EXPECT_EQ(e.signal, 0);
  EXPECT_EQ(e.code, 0);
}

// Step 1 alone (the filter would forbid the calls that read them back).
TEST(Lockdown, ItsLimitsItsFlagsAndItsDescriptors) {
  int report[2];
  ASSERT_EQ(::pipe(report), 0);
  const int leaked = ::open("/dev/null", O_RDONLY);  // no O_CLOEXEC: closed by the lockdown
  const Ending e = in_lockdown(
      [] {
        std::ostringstream out;
        rlimit l{};
        ::getrlimit(RLIMIT_CORE, &l);
        out << "core " << l.rlim_cur << " " << l.rlim_max << "\n";
        ::getrlimit(RLIMIT_CPU, &l);
        out << "cpu " << l.rlim_cur << "\n";
        ::getrlimit(RLIMIT_FSIZE, &l);
        out << "fsize " << l.rlim_cur << "\n";
        ::getrlimit(RLIMIT_NOFILE, &l);
        out << "nofile " << l.rlim_cur << "\n";
        out << "dumpable " << ::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) << "\n";
        out << "no_new_privs " << ::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) << "\n";
        std::string fds;
        for (int fd = 0; fd < 64; ++fd)
          if (::fcntl(fd, F_GETFD) >= 0) fds += (fds.empty() ? "" : " ") + std::to_string(fd);
        out << "fds " << fds << "\n";
        // No new descriptor past the limit: a pipe needs two.
        int p[2];
        out << "pipe " << (::pipe(p) == 0 ? "made" : std::strerror(errno)) << "\n";
        const std::string text = out.str();
        return ::write(3, text.data(), text.size()) == static_cast<ssize_t>(text.size()) ? 0 : 1;
      },
      report[1], /*filter=*/false);
  ::close(report[1]);
  ::close(leaked);
  std::string text;
  char buf[512];
  for (ssize_t n; (n = ::read(report[0], buf, sizeof buf)) > 0;)
    text.append(buf, static_cast<std::size_t>(n));
  ::close(report[0]);
  EXPECT_EQ(e.code, 0);
  EXPECT_EQ(text, "core 0 0\ncpu " + std::to_string(kCpuSeconds) +
                      "\nfsize 0\nnofile 4\ndumpable 0\nno_new_privs 1\nfds 0 1 2 3\n"
                      "pipe Too many open files\n");
}

// The document lists each allowed call with its reason: every call of the filter has one.
TEST(Lockdown, EachAllowedCallHasItsReason) {
  std::set<std::string_view> names;
  for (const Allowed& a : allowed_calls()) {
    EXPECT_FALSE(a.why.empty()) << a.name;
    EXPECT_TRUE(names.insert(a.name).second) << a.name << " twice";
  }
  for (std::string_view forbidden : {"openat2", "socket", "execve", "ptrace", "fork", "vfork",
                                     "kill", "connect", "ioctl", "fcntl", "pipe", "creat"})
    EXPECT_FALSE(names.contains(forbidden)) << forbidden;
  EXPECT_TRUE(names.contains("clone"));
}

}  // namespace
}  // namespace escouade::sandbox::lockdown
