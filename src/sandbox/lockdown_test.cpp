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
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <set>
#include <string>

namespace escouade::sandbox::lockdown {
namespace {

// How a child ended: its exit code, or the signal that killed it.
struct Ending {
  int code = -1;
  int signal = 0;
};

// How the child `pid` ends.
Ending ending_of(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  Ending e;
  if (WIFEXITED(status)) e.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) e.signal = WTERMSIG(status);
  return e;
}

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
  return ending_of(pid);
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
  EXPECT_KILLED_BY_THE_FILTER(
      [] { return static_cast<int>(::syscall(SYS_pipe, std::array<int, 2>{}.data())); });
  // pipe2 is the sanitizers' runtime's, in a build with AddressSanitizer only.
  const auto extras = lockdown::sanitizer_calls();
  if (std::find(extras.begin(), extras.end(), std::string_view("pipe2")) == extras.end()) {
    EXPECT_KILLED_BY_THE_FILTER([] { return ::pipe2(std::array<int, 2>{}.data(), O_CLOEXEC); });
  }
  EXPECT_KILLED_BY_THE_FILTER([] { return ::ioctl(0, 0); });
}

// Opening a file never happens: it is answered "permission denied", for the C library's sake;
// so is reading where a link leads, for ICU's.
TEST(Lockdown, NoFileIsOpenedItIsRefused) {
  const Ending e = in_lockdown([] {
    if (::open("/etc/passwd", O_RDONLY) != -1 || errno != EACCES) return 1;
    if (::openat(AT_FDCWD, "/proc/self/environ", O_RDONLY) != -1 || errno != EACCES) return 2;
    if (::open("/tmp/escouade-lockdown-created", O_WRONLY | O_CREAT, 0600) != -1) return 3;
    char target[256];
    if (::readlink("/etc/localtime", target, sizeof target) != -1 || errno != EACCES) return 4;
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

// The clocks the engine reads (Date.now through gettimeofday, the C library's time(), the
// clocks' resolution) are read in the vDSO on this machine, never through the filter; where the
// clock source has no vDSO reading (Xen's, HPET) or the kernel was booted with vdso=0 the same
// calls enter the kernel. Made here as system calls, as there: each runs.
TEST(Lockdown, TheClocksRunWithoutTheVdsoToo) {
  const Ending e = in_lockdown([] {
    timeval tv{};
    if (::syscall(SYS_gettimeofday, &tv, nullptr) != 0 || tv.tv_sec == 0) return 1;
    if (::syscall(SYS_time, nullptr) <= 0) return 2;
    timespec t{};
    if (::syscall(SYS_clock_getres, CLOCK_MONOTONIC, &t) != 0) return 3;
    if (::syscall(SYS_clock_gettime, CLOCK_REALTIME, &t) != 0 || t.tv_sec == 0) return 4;
    return 0;
  });
  EXPECT_EQ(e.signal, 0);
  EXPECT_EQ(e.code, 0);
}

// The engine's helper threads are made before the lockdown, so that each lowers its priority
// while it may: the filter reaches them all the same. Here a thread made first lowers itself,
// waits for the lockdown, then makes a forbidden call: the whole process is killed at it.
std::atomic<int> g_step{0};  // 1: the thread lowered itself; 2: the filter is in
TEST(Lockdown, AThreadMadeBeforeTheFilterHasItToo) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    pthread_t thread;
    const auto early = [](void*) -> void* {
      if (::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 19) != 0) ::_exit(97);
      g_step = 1;
      while (g_step.load() != 2)
        ::sched_yield();
      (void)::socket(AF_INET, SOCK_STREAM, 0);
      ::_exit(0);  // the filter did not reach this thread
    };
    if (pthread_create(&thread, nullptr, early, nullptr) != 0) ::_exit(98);
    while (g_step.load() != 1)
      ::sched_yield();
    if (!limit_process(4, 0) || !install_filter()) ::_exit(99);
    g_step = 2;
    pthread_join(thread, nullptr);
    ::_exit(96);
  }
  const Ending e = ending_of(pid);
  EXPECT_EQ(e.signal, SIGSYS) << "exit " << e.code;
}

// The state letter of process `pid` in /proc (R, S, T...), or 0 once it is gone.
char state_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto paren = text.rfind(')');
  return paren == std::string::npos || paren + 2 >= text.size() ? 0 : text[paren + 2];
}

// A relative sleep stopped by SIGSTOP and continued comes back through restart_syscall (the
// kernel's restart block): a debugger's attach, job control and a cgroup freezer all do it to a
// helper whose watchdog or engine threads wait with a timeout. The helper goes on.
TEST(Lockdown, ASleepStoppedAndContinuedGoesOn) {
  std::array<int, 2> report{};
  ASSERT_EQ(::pipe(report.data()), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(report[0]);
    if (::dup2(report[1], 3) < 0) ::_exit(98);
    if (!limit_process(4, 0) || !install_filter()) ::_exit(99);
    if (::write(3, "s", 1) != 1) ::_exit(97);
    const timespec two_seconds{2, 0};
    // Nothing else here blocks: once the parent sees the state S, this sleep is in progress.
    ::_exit(::clock_nanosleep(CLOCK_MONOTONIC, 0, &two_seconds, nullptr));
  }
  ::close(report[1]);
  char byte = 0;
  ASSERT_EQ(::read(report[0], &byte, 1), 1);
  ::close(report[0]);
  for (int i = 0; i < 10'000 && state_of(pid) != 'S'; ++i)  // safety net: 10 s
    ::usleep(1000);
  ASSERT_EQ(state_of(pid), 'S');
  ASSERT_EQ(::kill(pid, SIGSTOP), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, WUNTRACED), pid);
  ASSERT_TRUE(WIFSTOPPED(status)) << "the sleep ended before the stop";
  ASSERT_EQ(::kill(pid, SIGCONT), 0);
  const Ending e = ending_of(pid);
  EXPECT_EQ(e.signal, 0);
  EXPECT_EQ(e.code, 0);
}

// Step 1 alone (the filter would forbid the calls that read them back).
TEST(Lockdown, ItsLimitsItsFlagsAndItsDescriptors) {
  int report[2];
  ASSERT_EQ(::pipe(report), 0);
  const int leaked = ::open("/dev/null", O_RDONLY);  // no O_CLOEXEC: closed by the lockdown
  // Plain C calls only: under the sanitizers, iostreams' checks would want descriptors of their
  // own, which its limit leaves none of.
  const Ending e = in_lockdown(
      [] {
        char text[512];
        rlimit core{}, cpu{}, fsize{}, nofile{};
        ::getrlimit(RLIMIT_CORE, &core);
        ::getrlimit(RLIMIT_CPU, &cpu);
        ::getrlimit(RLIMIT_FSIZE, &fsize);
        ::getrlimit(RLIMIT_NOFILE, &nofile);
        char fds[64] = "";
        for (int fd = 0; fd < 16; ++fd) {
          if (::fcntl(fd, F_GETFD) < 0) continue;
          char one[8];
          std::snprintf(one, sizeof one, fds[0] ? " %d" : "%d", fd);
          std::strncat(fds, one, sizeof fds - std::strlen(fds) - 1);
        }
        int p[2];
        const bool made = ::pipe(p) == 0;
        const int n = std::snprintf(
            text, sizeof text,
            "core %llu %llu\ncpu %llu\nfsize %llu\nnofile %llu\ndumpable %d\nno_new_privs %d\n"
            "fds %s\npipe %s\n",
            static_cast<unsigned long long>(core.rlim_cur),
            static_cast<unsigned long long>(core.rlim_max),
            static_cast<unsigned long long>(cpu.rlim_cur),
            static_cast<unsigned long long>(fsize.rlim_cur),
            static_cast<unsigned long long>(nofile.rlim_cur), ::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0),
            ::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0), fds, made ? "made" : std::strerror(errno));
        return ::write(3, text, static_cast<std::size_t>(n)) == n ? 0 : 1;
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
  const bool bare = open_files(4) == 4;  // not a build with AddressSanitizer
  EXPECT_EQ(text, "core 0 0\ncpu " + std::to_string(kCpuSeconds) + "\nfsize 0\nnofile " +
                      std::to_string(open_files(4)) +
                      "\ndumpable 0\nno_new_privs 1\nfds 0 1 2 3\npipe " +
                      (bare ? "Too many open files" : "made") + "\n");
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

// docs/sandbox.md's table of the filter names every allowed call, with its reason: the document
// is the list's, not a list of its own.
TEST(Lockdown, TheDocumentListsEveryAllowedCall) {
  std::ifstream in(ESCOUADE_SANDBOX_DOC);
  ASSERT_TRUE(in) << ESCOUADE_SANDBOX_DOC;
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const Allowed& a : allowed_calls()) {
    const std::string row = "| `" + std::string(a.name) + "` | " +
                            (a.only.empty() ? "" : std::string(a.only) + " ") + "| " +
                            std::string(a.why) + " |";
    EXPECT_NE(doc.find(row), std::string::npos) << "docs/sandbox.md has no row " << row;
  }
}

}  // namespace
}  // namespace escouade::sandbox::lockdown
