// The process table and process primitives on Linux: /proc, close_range, pidfd, prctl.

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <string>

#include "base/unique_fd.hpp"
#include "platform/os_process.hpp"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434  // Linux 5.3, the same number on every architecture
#endif
#ifndef SYS_close_range
#define SYS_close_range 436  // Linux 5.9
#endif

namespace escouade::platform {
namespace {

// Reads a small /proc file into `buf`; its length, or -1.
ssize_t read_small(int dir_fd, const char* path, char* buf, std::size_t size) {
  UniqueFd fd(::openat(dir_fd, path, O_RDONLY | O_CLOEXEC));
  if (!fd) return -1;
  std::size_t used = 0;
  while (used < size) {
    const ssize_t n = ::read(fd.get(), buf + used, size - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) break;
    used += static_cast<std::size_t>(n);
  }
  return static_cast<ssize_t>(used);
}

bool parse_int(std::string_view text, int& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

// "pid (comm) S ppid pgrp ...": comm may hold spaces and parentheses, so parse after the last ')'.
bool parse_stat(std::string_view line, ProcEntry& e) {
  const std::size_t close = line.rfind(')');
  if (close == std::string_view::npos || close + 2 >= line.size()) return false;
  std::string_view rest = line.substr(close + 2);
  const char state = rest[0];
  int fields[2] = {0, 0};
  std::size_t pos = 1;
  for (int& field : fields) {
    while (pos < rest.size() && rest[pos] == ' ')
      ++pos;
    const std::size_t end = rest.find(' ', pos);
    if (end == std::string_view::npos || !parse_int(rest.substr(pos, end - pos), field)) {
      return false;
    }
    pos = end;
  }
  e.ppid = fields[0];
  e.pgid = fields[1];
  e.zombie = state == 'Z' || state == 'X';
  e.stopped = state == 'T' || state == 't';
  return true;
}

// Fills `e` (whose pid is set) from /proc/<pid>/stat, read relative to `proc_fd` (/proc), or at
// `prefix` ("/proc/") with AT_FDCWD.
// False when the process is gone or its line does not parse.
bool read_entry(int proc_fd, ProcEntry& e, const char* prefix = "") {
  char path[64];
  char line[1024];
  std::snprintf(path, sizeof path, "%s%d/stat", prefix, e.pid);
  const ssize_t n = read_small(proc_fd, path, line, sizeof line);
  return n > 0 && parse_stat(std::string_view(line, static_cast<std::size_t>(n)), e);
}

}  // namespace

std::vector<ProcEntry> read_process_table() {
  std::vector<ProcEntry> table;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return table;
  const int proc_fd = ::dirfd(proc);
  while (const dirent* d = ::readdir(proc)) {
    ProcEntry e;
    if (!parse_int(d->d_name, e.pid) || e.pid <= 0 || !read_entry(proc_fd, e)) continue;
    table.push_back(e);
  }
  ::closedir(proc);
  return table;
}

std::optional<ProcEntry> read_process(int pid) {
  if (pid <= 0) return std::nullopt;
  ProcEntry e;
  e.pid = pid;
  if (!read_entry(AT_FDCWD, e, "/proc/")) return std::nullopt;
  return e;
}

std::optional<std::vector<ProcEntry>> group_members(const std::unordered_set<int>& groups) {
  if (groups.empty()) return std::vector<ProcEntry>();
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return std::nullopt;
  const int proc_fd = ::dirfd(proc);
  std::vector<ProcEntry> members;
  while (const dirent* d = ::readdir(proc)) {
    ProcEntry e;
    if (!parse_int(d->d_name, e.pid) || e.pid <= 0) continue;
    const pid_t group = ::getpgid(e.pid);
    if (group <= 0 || !groups.count(group)) continue;
    // Its row, read after: it may have left the group meanwhile.
    if (read_entry(proc_fd, e) && groups.count(e.pgid)) members.push_back(e);
  }
  ::closedir(proc);
  return members;
}

namespace {

// The pids in the lists of children of every thread of `pid` (none when it is gone), those in
// `passed_over` left out; nullopt where the kernel keeps no such lists (CONFIG_PROC_CHILDREN).
std::optional<std::vector<int>> listed_children(int pid, const std::set<int>& passed_over) {
  // Whether the kernel keeps the lists, asked once of this process.
  static const bool listed_here = [] {
    char probe[64];
    std::snprintf(probe, sizeof probe, "/proc/self/task/%d/children", static_cast<int>(::getpid()));
    return ::access(probe, R_OK) == 0;
  }();
  if (!listed_here || pid <= 0) return std::nullopt;
  std::vector<int> pids;
  char dir[64];
  std::snprintf(dir, sizeof dir, "/proc/%d/task", pid);
  DIR* tasks = ::opendir(dir);
  if (tasks == nullptr) return pids;  // gone: no children
  const int tasks_fd = ::dirfd(tasks);
  std::string text(4096, '\0');
  while (const dirent* d = ::readdir(tasks)) {
    int tid = 0;
    if (!parse_int(d->d_name, tid)) continue;
    char path[64];
    std::snprintf(path, sizeof path, "%d/children", tid);
    ssize_t n = 0;
    for (;;) {  // "pid pid ... " of this thread's children; grown until it fits
      n = read_small(tasks_fd, path, text.data(), text.size());
      if (n < 0 || static_cast<std::size_t>(n) < text.size()) break;
      text.resize(text.size() * 2);
    }
    if (n < 0) continue;  // a thread that ended meanwhile
    std::string_view rest(text.data(), static_cast<std::size_t>(n));
    while (!rest.empty()) {
      const std::size_t space = rest.find(' ');
      int child = 0;
      if (parse_int(rest.substr(0, space), child) && !passed_over.count(child)) {
        pids.push_back(child);
      }
      if (space == std::string_view::npos) break;
      rest.remove_prefix(space + 1);
    }
  }
  ::closedir(tasks);
  return pids;
}

}  // namespace

std::optional<std::vector<ProcEntry>> children_of(int pid, const std::set<int>& passed_over) {
  const auto pids = listed_children(pid, passed_over);
  if (!pids) return std::nullopt;
  std::vector<ProcEntry> children;
  if (pids->empty()) return children;
  UniqueFd proc(::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!proc) return std::nullopt;
  for (int child : *pids) {
    ProcEntry e;
    e.pid = child;
    if (!read_entry(proc.get(), e)) continue;  // reaped meanwhile
    if (e.ppid != pid) continue;               // and its pid taken by another
    children.push_back(e);
  }
  return children;
}

std::optional<std::vector<ProcEntry>> own_children(const std::set<int>& passed_over) {
  return children_of(::getpid(), passed_over);
}

std::optional<std::vector<ProcEntry>> group_members_among_own_children(
    const std::unordered_set<int>& groups, const std::vector<int>& leaders) {
  int subreaper = 0;
  if (::prctl(PR_GET_CHILD_SUBREAPER, &subreaper, 0, 0, 0) != 0 || subreaper == 0)
    return std::nullopt;
  const int self = ::getpid();
  const auto pids = listed_children(self, {});
  if (!pids) return std::nullopt;
  // A child stays in its parent's list until it is reaped, ended or not.
  for (int leader : leaders)
    if (std::find(pids->begin(), pids->end(), leader) == pids->end()) return std::nullopt;
  std::vector<ProcEntry> members;
  if (groups.empty()) return members;
  UniqueFd proc(::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!proc) return std::nullopt;
  for (int child : *pids) {
    const pid_t group = ::getpgid(child);
    if (group <= 0 || !groups.count(group)) continue;
    // Its row, read after: it may have left the group, or been reaped and its pid taken.
    ProcEntry e;
    e.pid = child;
    if (read_entry(proc.get(), e) && e.ppid == self && groups.count(e.pgid)) members.push_back(e);
  }
  return members;
}

std::uint64_t resident_bytes(int pid) {
  char path[64];
  char text[256];
  std::snprintf(path, sizeof path, "/proc/%d/statm", pid);
  const ssize_t n = read_small(AT_FDCWD, path, text, sizeof text - 1);
  if (n <= 0) return 0;
  text[n] = '\0';
  unsigned long long size = 0;
  unsigned long long resident = 0;
  if (std::sscanf(text, "%llu %llu", &size, &resident) != 2) return 0;
  return static_cast<std::uint64_t>(resident) * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

std::uint64_t anonymous_bytes(int pid) {
  char path[64];
  char text[256];
  std::snprintf(path, sizeof path, "/proc/%d/statm", pid);
  const ssize_t n = read_small(AT_FDCWD, path, text, sizeof text - 1);
  if (n <= 0) return 0;
  text[n] = '\0';
  unsigned long long size = 0;
  unsigned long long resident = 0;
  unsigned long long shared = 0;
  if (std::sscanf(text, "%llu %llu %llu", &size, &resident, &shared) != 3 || shared > resident)
    return 0;
  return static_cast<std::uint64_t>(resident - shared) *
         static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

bool environment_has(int pid, std::string_view entry) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/environ", pid);
  UniqueFd fd(::open(path, O_RDONLY | O_CLOEXEC));
  if (!fd) return false;
  // Entries end with a NUL; one may straddle two reads. Only what could still equal `entry` is
  // kept of the current one.
  std::string current;
  bool too_long = false;
  char chunk[8192];
  for (;;) {
    const ssize_t n = ::read(fd.get(), chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    std::string_view data(chunk, static_cast<std::size_t>(n));
    while (!data.empty()) {
      const std::size_t nul = data.find('\0');
      const std::string_view piece = data.substr(0, nul);
      too_long = too_long || current.size() + piece.size() > entry.size();
      if (!too_long) current.append(piece);
      if (nul == std::string_view::npos) break;
      if (!too_long && current == entry) return true;
      current.clear();
      too_long = false;
      data.remove_prefix(nul + 1);
    }
  }
  return !too_long && !current.empty() && current == entry;
}

void close_fds_from(int first, int max_fd, int keep, int also_keep) noexcept {
  const auto close_range = [](unsigned from, unsigned to) {
    return ::syscall(SYS_close_range, from, to, 0) == 0;
  };
  const int low = keep < also_keep ? keep : also_keep;
  const int high = keep < also_keep ? also_keep : keep;
  bool done = true;
  int next = first;  // the first descriptor not yet closed
  for (int kept : {low, high}) {
    if (kept < next) continue;  // none, below 3, or the same twice
    if (kept > next) done = done && close_range(next, static_cast<unsigned>(kept) - 1);
    next = kept + 1;
  }
  done = done && close_range(static_cast<unsigned>(next), ~0U);
  if (done) return;
  for (int fd = first; fd < max_fd; ++fd) {  // kernels before 5.9
    if (fd != keep && fd != also_keep) ::close(fd);
  }
}

int fd_limit() noexcept {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY ||
      limit.rlim_cur > (1u << 20)) {
    return 1 << 20;
  }
  return static_cast<int>(limit.rlim_cur);
}

int open_process_handle(int pid) noexcept {
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));  // CLOEXEC by itself
}

bool process_handle_ended(int handle) noexcept {
  pollfd p{handle, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0;
}

void set_process_name(const char* name) noexcept {
  ::prctl(PR_SET_NAME, reinterpret_cast<unsigned long>(name), 0, 0, 0);
}

}  // namespace escouade::platform
