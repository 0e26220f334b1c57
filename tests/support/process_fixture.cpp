// A test fixture for platform_test: one small program that makes the process trees the tests
// need. `process_fixture <mode> [args]`. Every process it makes ends by itself after
// kSafetySeconds, so a failed test leaves nothing running for long. Output goes through write(2)
// in single lines, so that forked processes sharing stdout never split or repeat a line.

#include <dirent.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <new>
#include <string>

extern char** environ;

namespace {

constexpr int kSafetySeconds = 60;

void say(const char* format, ...) __attribute__((format(printf, 1, 2)));
void say(const char* format, ...) {
  char line[4096];
  va_list args;
  va_start(args, format);
  int n = std::vsnprintf(line, sizeof line - 1, format, args);
  va_end(args);
  if (n < 0) return;
  if (n > static_cast<int>(sizeof line) - 2) n = static_cast<int>(sizeof line) - 2;
  line[n++] = '\n';
  [[maybe_unused]] const ssize_t written = ::write(1, line, static_cast<std::size_t>(n));
}

// Sleeps until the safety deadline, then exits.
[[noreturn]] void linger() {
  timespec rest{kSafetySeconds, 0};
  while (::nanosleep(&rest, &rest) != 0 && errno == EINTR) {
  }
  ::_exit(0);
}

std::string read_line_from_stdin() {
  std::string line;
  char c;
  while (::read(0, &c, 1) == 1 && c != '\n')
    line += c;
  return line;
}

int echo() {
  for (;;) {
    std::string line;
    char c;
    ssize_t n;
    while ((n = ::read(0, &c, 1)) == 1 && c != '\n')
      line += c;
    if (n != 1 && line.empty()) return 0;
    say("%s", line.c_str());
    const std::string err = "err " + line + "\n";
    [[maybe_unused]] const ssize_t written = ::write(2, err.data(), err.size());
    if (n != 1) return 0;
  }
}

int show_env() {
  for (char** e = environ; *e != nullptr; ++e)
    say("%s", *e);
  say("end");
  return 0;
}

std::string status_field(const char* name) {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return "?";
  char line[512];
  std::string value = "?";
  const std::size_t length = std::strlen(name);
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::strncmp(line, name, length) == 0 && line[length] == ':') {
      value = line + length + 1;
      value.erase(0, value.find_first_not_of(" \t"));
      value.erase(value.find_last_not_of(" \t\n") + 1);
    }
  }
  std::fclose(f);
  return value;
}

int show_state() {
  char cwd[4096];
  say("pid %d", static_cast<int>(::getpid()));
  say("pgid %d", static_cast<int>(::getpgid(0)));
  say("cwd %s", ::getcwd(cwd, sizeof cwd) != nullptr ? cwd : "?");
  say("sigblk %s", status_field("SigBlk").c_str());
  say("sigign %s", status_field("SigIgn").c_str());
  std::string fds;
  if (DIR* dir = ::opendir("/proc/self/fd")) {
    while (const dirent* d = ::readdir(dir)) {
      if (d->d_name[0] == '.' || std::atoi(d->d_name) == ::dirfd(dir)) continue;
      fds += fds.empty() ? "" : " ";
      fds += d->d_name;
    }
    ::closedir(dir);
  }
  say("fds %s", fds.c_str());
  return 0;
}

// Writes its number on each of the descriptors 3 and 4 a spawn gave it, then its state.
int given() {
  for (const int fd : {3, 4}) {
    const std::string text = std::to_string(fd) + "\n";
    if (::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) return 1;
  }
  return show_state();
}

// The leader forks a middle process, which forks a grandchild and exits: the grandchild is an
// orphan, and its parent should then be the leader, a subreaper.
int orphan() {
  const pid_t middle = ::fork();
  if (middle == 0) {
    const pid_t grandchild = ::fork();
    if (grandchild == 0) linger();
    say("grandchild %d", static_cast<int>(grandchild));
    ::_exit(0);
  }
  int status;
  ::waitpid(middle, &status, 0);
  say("middle-reaped");
  linger();
}

// b, in a session of its own, and its child c, each saying who it is once in place.
[[noreturn]] void session_and_child() {
  ::setsid();
  say("b %d", static_cast<int>(::getpid()));
  if (::fork() == 0) {
    say("c %d", static_cast<int>(::getpid()));
    linger();
  }
  linger();
}

// The leader says who it is and starts a, which starts b (setsid) and its child c; each says
// who it is once in place.
void start_tree() {
  say("leader %d", static_cast<int>(::getpid()));
  if (::fork() == 0) {
    say("a %d", static_cast<int>(::getpid()));
    if (::fork() == 0) session_and_child();
    linger();
  }
}

// Returns at the end of this process's input.
void read_to_the_end() {
  char byte;
  while (::read(0, &byte, 1) > 0) {
  }
}

// leader -> a -> b (setsid) -> c.
int tree() {
  start_tree();
  linger();
}

// tree()'s, whose leader exits at the end of its input: a, in its group, and b and c, out of
// it, live on behind an ended leader.
int leave_tree() {
  start_tree();
  read_to_the_end();
  return 0;
}

// leader -> b (setsid) -> c; the leader exits at the end of its input, as plugins do. Were it to
// exit while the host dies, b would go to init, out of the tree.
int detached() {
  say("leader %d", static_cast<int>(::getpid()));
  if (::fork() == 0) session_and_child();
  read_to_the_end();
  return 0;
}

// Processes that keep forking and exiting, fast: most live a few milliseconds, so the tree is
// never the same twice and a single scan of it always misses the newest. At most kLive at once,
// kForks in all, and none past the safety deadline. `pause_us`: the pause of each process
// between two rounds (500 by default; 0 for a storm).
int forker(int pause_us, bool keep_group = false) {
  constexpr int kLive = 50;
  constexpr int kForks = 200000;
  struct Shared {
    std::atomic<int> live;
    std::atomic<int> forks;
  };
  void* memory =
      ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return 1;
  auto* shared = new (memory) Shared{};
  shared->live = 1;
  const std::time_t deadline = std::time(nullptr) + kSafetySeconds;
  bool leader = true;
  int rounds = 0;
  say("forking");
  while (std::time(nullptr) < deadline) {
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    if (shared->forks.load() < kForks && shared->live.fetch_add(1) < kLive) {
      shared->forks.fetch_add(1);
      const pid_t pid = ::fork();
      if (pid == 0) {
        leader = false;
        rounds = 0;
        // Out of the leader's group: only pids find it.
        if (!keep_group && ::getpid() % 5 == 0) ::setsid();
        continue;
      }
      if (pid < 0) shared->live.fetch_sub(1);
    } else {
      shared->live.fetch_sub(1);
    }
    // A third of them live long (the tree keeps a size), the others a few rounds.
    if (!leader && ::getpid() % 3 != 0 && ++rounds > ::getpid() % 4) {
      shared->live.fetch_sub(1);
      ::_exit(0);
    }
    ::usleep(static_cast<useconds_t>(pause_us));
  }
  return 0;
}

// The leader forks a child that, told "go" on stdin, maps and touches `megabytes` MB.
int alloc(int megabytes) {
  if (::fork() == 0) {
    say("child %d", static_cast<int>(::getpid()));
    if (read_line_from_stdin() != "go") ::_exit(1);
    const std::size_t size = static_cast<std::size_t>(megabytes) << 20;
    void* memory =
        ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) ::_exit(1);
    volatile char* bytes = static_cast<char*>(memory);
    for (std::size_t i = 0; i < size; i += 4096)
      bytes[i] = 1;
    say("allocated");
    linger();
  }
  linger();
}

// The leader forks a child, says its pid, and exits at once: the child is an orphan.
int orphan_exit() {
  const pid_t child = ::fork();
  if (child == 0) linger();
  say("child %d", static_cast<int>(child));
  return 0;
}

// The leader starts a forker that stays in its group, and exits at once: a group that goes on
// forking behind a leader that ended.
int leave_forker(int pause_us) {
  const pid_t child = ::fork();
  if (child < 0) return 1;
  if (child == 0) ::_exit(forker(pause_us, true));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "echo") return echo();
  if (mode == "exit") return argc > 2 ? std::atoi(argv[2]) : 0;
  if (mode == "env") return show_env();
  if (mode == "state") return show_state();
  if (mode == "given") return given();
  if (mode == "orphan") return orphan();
  if (mode == "tree") return tree();
  if (mode == "leave-tree") return leave_tree();
  if (mode == "detached") return detached();
  if (mode == "forker") return forker(argc > 2 ? std::atoi(argv[2]) : 500);
  if (mode == "alloc") return alloc(argc > 2 ? std::atoi(argv[2]) : 100);
  if (mode == "orphan-exit") return orphan_exit();
  if (mode == "leave-forker") return leave_forker(argc > 2 ? std::atoi(argv[2]) : 500);
  if (mode == "sleep") linger();
  std::fprintf(stderr, "process_fixture: unknown mode '%s'\n", mode.c_str());
  return 2;
}
