#pragma once

// Ends the plugins' process trees when the host dies without stopping them (a crash, SIGKILL).
//
// start_reaper() forks a small watchdog process, in a session of its own, that holds only the
// read end of a socket from the host. The host tells it each plugin leader it starts and each
// it reaps. When the host dies, the socket's other end closes: the watchdog ends the tree of
// every leader still registered (kill_tree), then exits. The leaders are their own subreapers
// and have no death signal, so their trees are whole when it acts.
// On Windows a job object does this instead, and the Reaper does nothing.

#include <optional>
#include <set>
#include <span>

#include "base/result.hpp"
#include "platform/process.hpp"

namespace escouade::platform {

// The host's end of the watchdog. Move-only; used from one thread.
class Reaper {
 public:
  Reaper() = default;  // inactive: add and remove do nothing
  Reaper(Reaper&& other) noexcept;
  Reaper& operator=(Reaper&& other) noexcept;
  Reaper(const Reaper&) = delete;
  Reaper& operator=(const Reaper&) = delete;
  // close()
  ~Reaper();

  // A leader was started: the watchdog will end its tree if the host dies. `keep_open` are the
  // host's ends of the leader's pipes: the watchdog holds copies of them until the leader is
  // removed, so that when the host dies the leader sees neither the end of its input nor a
  // broken output, and cannot exit (leaving what it started to init) before its tree is ended.
  Result<void> add(int pid, std::span<const int> keep_open = {});
  // The leader ended and was reaped: forget it.
  Result<void> remove(int pid);

  // Removes every leader, closes the socket and reaps the watchdog, which exits with code 0
  // when it was told nothing is registered. Its exit status; nullopt when inactive. Idempotent.
  std::optional<ExitStatus> close();

  // The watchdog's pid (-1 when inactive). It is a child of the host: count it among the known
  // children given to reap_adopted.
  int pid() const noexcept { return pid_; }
  bool active() const noexcept { return fd_ >= 0; }

 private:
  friend Result<Reaper> start_reaper();
  Reaper(int pid, int fd) : pid_(pid), fd_(fd) {}
  Result<void> send_line(const char* verb, int pid, std::span<const int> fds = {});

  int pid_ = -1;
  int fd_ = -1;
  std::set<int> registered_;
};

// Forks the watchdog. Call it at the host's start, before any thread: the watchdog is a fork
// that runs on without exec.
Result<Reaper> start_reaper();

}  // namespace escouade::platform
