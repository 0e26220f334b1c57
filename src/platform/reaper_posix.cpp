// The reaper on Linux and macOS: a forked watchdog that ends the registered plugin trees when
// the host's end of their socket closes, i.e. when the host has died.

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <system_error>
#include <vector>

#include "base/os_message.hpp"
#include "base/unique_fd.hpp"
#include "platform/os_process.hpp"
#include "platform/reaper.hpp"

namespace escouade::platform {
namespace {

#ifdef MSG_NOSIGNAL
constexpr int kSendFlags = MSG_NOSIGNAL;  // a dead watchdog is an error, not a SIGPIPE
#else
constexpr int kSendFlags = 0;  // macOS: SO_NOSIGPIPE is set on the socket instead
#endif

// Moves `fd` to 3 or above with FD_CLOEXEC, so that /dev/null can take 0, 1 and 2 in the
// watchdog and no child of the host inherits it.
bool prepare_fd(UniqueFd& fd) {
  if (fd.get() < 3) {
    const int lifted = ::fcntl(fd.get(), F_DUPFD_CLOEXEC, 3);
    if (lifted < 0) return false;
    fd.reset(lifted);
  }
  return ::fcntl(fd.get(), F_SETFD, FD_CLOEXEC) == 0;
}

// What the watchdog holds for one leader: a handle on it, and copies of its pipes' host ends.
struct Leader {
  int handle = -1;
  std::vector<int> pipes;
};

void close_pipes(Leader& l) {
  for (int fd : l.pipes)
    ::close(fd);
  l.pipes.clear();
}

// The watchdog's commands, one a line: "add <pid>", "add <pid> <n>" (n descriptors, the
// leader's pipes, came with the line as SCM_RIGHTS and wait, in order, in `received`) and
// "del <pid>".
void apply(std::string_view line, std::map<int, Leader>& leaders,
           std::vector<std::vector<int>>& received) {
  const std::size_t space = line.find(' ');
  const std::string_view verb = line.substr(0, space);
  std::string_view number = space == std::string_view::npos ? "" : line.substr(space + 1);
  std::size_t attached = 0;
  if (const std::size_t second = number.find(' '); second != std::string_view::npos) {
    const std::string_view count = number.substr(second + 1);
    std::from_chars(count.data(), count.data() + count.size(), attached);
    number = number.substr(0, second);
  }
  // The descriptors of this line are taken whatever the line says, so that the next line's
  // are still next.
  Leader incoming;
  if (attached > 0 && !received.empty()) {
    incoming.pipes = std::move(received.front());
    received.erase(received.begin());
  }
  int pid = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), pid);
  const bool valid = ec == std::errc() && end == number.data() + number.size() && pid > 1;
  if (valid && verb == "add" && !leaders.count(pid)) {
    // The leader is still a child of the host, not reaped: the handle is surely its own.
    incoming.handle = open_process_handle(pid);
    leaders[pid] = std::move(incoming);
    return;
  }
  close_pipes(incoming);
  if (valid && verb == "del") {
    const auto it = leaders.find(pid);
    if (it == leaders.end()) return;
    if (it->second.handle >= 0) ::close(it->second.handle);
    close_pipes(it->second);
    leaders.erase(it);
  }
}

// Returns once the host has wholly exited, or after a bound. Its socket closes early in its
// exit, before the kernel re-parents its children; at that step, a process group of a plugin
// that becomes orphaned and has stopped members gets SIGHUP and SIGCONT. Stopping a tree before
// that could get its leader killed by the SIGHUP, and its subtree re-parented to init out of
// reach: so the watchdog acts only after.
void wait_for_host_exit(int host, int host_handle) {
  for (int waited_ms = 0; waited_ms < 5000; ++waited_ms) {
    if (host_handle >= 0 ? process_handle_ended(host_handle) : ::getppid() != host) break;
    ::usleep(1000);
  }
  // Without a handle, getppid() changes while the kernel still re-parents the host's other
  // children: leave it time to finish.
  if (host_handle < 0) ::usleep(20000);
}

[[noreturn]] void run_watchdog(int fd, int host) {
  // A handle on the host, valid only if the host is still the parent (so the pid is its own).
  int host_handle = open_process_handle(host);
  if (host_handle >= 0 && ::getppid() != host) {
    ::close(host_handle);
    host_handle = -1;
  }
  // Out of the host's session and process group: the terminal's Ctrl-C, hangup and job control
  // are for the host, not for it. No handler of the host's may run here.
  ::setsid();
  struct sigaction action {};
  ::sigemptyset(&action.sa_mask);
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    const bool ignored = sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT ||
                         sig == SIGPIPE || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
    action.sa_handler = ignored ? SIG_IGN : SIG_DFL;
    ::sigaction(sig, &action, nullptr);
  }
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);

  // Hold none of the host's descriptors (its pipes would not close when it dies) nor its folder.
  const int null_fd = ::open("/dev/null", O_RDWR);
  if (null_fd >= 0) {
    for (int target = 0; target < 3; ++target) {
      if (null_fd != target) ::dup2(null_fd, target);
    }
  }
  // The handle on the host, when there is one, is kept as fd 3 or above like the socket.
  if (host_handle >= 0 && host_handle < 3) {
    const int lifted = ::fcntl(host_handle, F_DUPFD_CLOEXEC, 3);
    ::close(host_handle);
    host_handle = lifted;
  }
  close_fds_from_3(fd_limit(), fd, host_handle);
  if (::chdir("/") != 0) {
    // Nothing to do: staying in the host's folder only keeps it busy.
  }
  set_process_name("escouade-reaper");

  std::map<int, Leader> leaders;
  std::vector<std::vector<int>> received;  // descriptors that came with "add" lines
  std::string pending;
  char chunk[512];
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 8)];
  for (;;) {
    iovec iov{chunk, sizeof chunk};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
#ifdef MSG_CMSG_CLOEXEC
    const ssize_t n = ::recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
#else
    const ssize_t n = ::recvmsg(fd, &msg, 0);
#endif
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the host is gone (or its socket broke, which means the same)
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      std::vector<int> fds(count);
      std::memcpy(fds.data(), CMSG_DATA(c), count * sizeof(int));
      received.push_back(std::move(fds));
    }
    pending.append(chunk, static_cast<std::size_t>(n));
    std::size_t start = 0;
    for (std::size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
      apply(std::string_view(pending).substr(start, nl - start), leaders, received);
    }
    pending.erase(0, start);
    if (pending.size() > 64) pending.clear();  // not a command of ours
  }
  if (leaders.empty()) ::_exit(0);  // Reaper::close(): the host lives on and waits for us
  wait_for_host_exit(host, host_handle);
  for (auto& [pid, leader] : leaders) {
    end_tree(pid, leader.handle < 0 || !process_handle_ended(leader.handle));
    close_pipes(leader);  // only now: until its tree is ended, the leader sees its pipes open
  }
  ::_exit(0);
}

}  // namespace

Result<Reaper> start_reaper() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) {
    return make_error(kOsError, "cannot start the reaper: socketpair: " + os_message(errno));
  }
  UniqueFd host_end(fds[0]);
  UniqueFd watchdog_end(fds[1]);
  if (!prepare_fd(host_end) || !prepare_fd(watchdog_end)) {
    return make_error(kOsError, "cannot start the reaper: fcntl: " + os_message(errno));
  }
#ifdef SO_NOSIGPIPE
  const int on = 1;
  ::setsockopt(host_end.get(), SOL_SOCKET, SO_NOSIGPIPE, &on, sizeof on);
#endif
  const int host = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return make_error(kOsError, "cannot start the reaper: " + os_message(errno));
  if (pid == 0) run_watchdog(watchdog_end.get(), host);
  return Reaper(pid, host_end.release());
}

Reaper::Reaper(Reaper&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      fd_(std::exchange(other.fd_, -1)),
      registered_(std::move(other.registered_)) {
  other.registered_.clear();
}

Reaper& Reaper::operator=(Reaper&& other) noexcept {
  if (this != &other) {
    close();
    pid_ = std::exchange(other.pid_, -1);
    fd_ = std::exchange(other.fd_, -1);
    registered_ = std::move(other.registered_);
    other.registered_.clear();
  }
  return *this;
}

Reaper::~Reaper() {
  close();
}

Result<void> Reaper::send_line(const char* verb, int pid, std::span<const int> fds) {
  char line[48];
  const int length = fds.empty()
                         ? std::snprintf(line, sizeof line, "%s %d\n", verb, pid)
                         : std::snprintf(line, sizeof line, "%s %d %zu\n", verb, pid, fds.size());
  std::size_t sent = 0;
  if (!fds.empty()) {
    // The descriptors travel with the line's first bytes.
    if (fds.size() > 8) return make_error(kOsError, "the reaper takes at most 8 descriptors");
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 8)] = {};
    iovec iov{line, static_cast<std::size_t>(length)};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
    ssize_t n;
    do {
      n = ::sendmsg(fd_, &msg, kSendFlags);
    } while (n < 0 && errno == EINTR);
    if (n < 0) return make_error(kOsError, "the reaper is gone: " + os_message(errno));
    sent = static_cast<std::size_t>(n);
  }
  while (sent < static_cast<std::size_t>(length)) {
    const ssize_t n = ::send(fd_, line + sent, static_cast<std::size_t>(length) - sent, kSendFlags);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return make_error(kOsError, "the reaper is gone: " + os_message(errno));
    sent += static_cast<std::size_t>(n);
  }
  return {};
}

Result<void> Reaper::add(int pid, std::span<const int> keep_open) {
  if (!active()) return {};
  if (pid <= 1) return make_error(kOsError, "the reaper takes no pid " + std::to_string(pid));
  registered_.insert(pid);
  return send_line("add", pid, keep_open);
}

Result<void> Reaper::remove(int pid) {
  if (!active() || registered_.erase(pid) == 0) return {};
  return send_line("del", pid);
}

std::optional<ExitStatus> Reaper::close() {
  if (fd_ < 0) return std::nullopt;
  for (int pid : registered_) {
    if (!send_line("del", pid)) break;
  }
  registered_.clear();
  ::close(std::exchange(fd_, -1));
  Spawned watchdog;
  watchdog.pid = std::exchange(pid_, -1);
  return wait_exit(watchdog);
}

}  // namespace escouade::platform
