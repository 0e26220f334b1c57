// The process table and process primitives on macOS: sysctl(KERN_PROC_ALL), libproc,
// KERN_PROCARGS2.
//
// UNTESTED HERE: Linux is the tested target and this file is compiled only on macOS. Written
// from sysctl(3), <sys/sysctl.h> (struct kinfo_proc), <libproc.h> (proc_pidinfo,
// PROC_PIDTASKINFO) and the layout of KERN_PROCARGS2 as ps(1) and Activity Monitor read it.

#include <libproc.h>
#include <signal.h>
#include <sys/proc.h>
#include <sys/proc_info.h>
#include <sys/resource.h>
#include <sys/sysctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "platform/os_process.hpp"

namespace escouade::platform {

std::vector<ProcEntry> read_process_table() {
  // KERN_PROC_ALL lists zombies too, which proc_pidinfo does not; the table can grow between
  // the size query and the read, so a margin is added and the read retried.
  int mib[4] = {CTL_KERN, KERN_PROC, KERN_PROC_ALL, 0};
  std::vector<kinfo_proc> procs;
  for (int attempt = 0; attempt < 8; ++attempt) {
    std::size_t size = 0;
    if (::sysctl(mib, 3, nullptr, &size, nullptr, 0) != 0) return {};
    procs.resize(size / sizeof(kinfo_proc) + 64);
    size = procs.size() * sizeof(kinfo_proc);
    if (::sysctl(mib, 3, procs.data(), &size, nullptr, 0) == 0) {
      procs.resize(size / sizeof(kinfo_proc));
      break;
    }
    if (errno != ENOMEM) return {};
    procs.clear();
  }
  std::vector<ProcEntry> table;
  table.reserve(procs.size());
  for (const kinfo_proc& p : procs) {
    ProcEntry e;
    e.pid = p.kp_proc.p_pid;
    e.ppid = p.kp_eproc.e_ppid;
    e.pgid = p.kp_eproc.e_pgid;
    e.uid = p.kp_eproc.e_ucred.cr_uid;
    e.zombie = p.kp_proc.p_stat == SZOMB;
    e.stopped = p.kp_proc.p_stat == SSTOP;
    if (e.pid > 0) table.push_back(e);
  }
  return table;
}

std::optional<ProcEntry> read_process(int pid) {
  for (const ProcEntry& e : read_process_table()) {
    if (e.pid == pid) return e;
  }
  return std::nullopt;
}

std::optional<std::vector<ProcEntry>> group_members(const std::unordered_set<int>& groups) {
  (void)groups;
  return std::nullopt;  // the table is one sysctl: it is read whole
}

std::optional<std::vector<ProcEntry>> group_members_among_own_children(
    const std::unordered_set<int>& groups, const std::vector<int>& leaders) {
  (void)groups;
  (void)leaders;
  return std::nullopt;  // no lists of children: the table is scanned
}

std::optional<std::vector<ProcEntry>> children_of(int pid, const std::set<int>& passed_over) {
  (void)pid;
  (void)passed_over;
  return std::nullopt;  // no such list: the table is scanned
}

std::optional<std::vector<ProcEntry>> own_children(const std::set<int>& passed_over) {
  (void)passed_over;
  return std::nullopt;  // no such list: the table is scanned
}

std::uint64_t resident_bytes(int pid) {
  proc_taskinfo info{};
  const int n = ::proc_pidinfo(pid, PROC_PIDTASKINFO, 0, &info, sizeof info);
  return n == static_cast<int>(sizeof info) ? info.pti_resident_size : 0;
}

std::uint64_t anonymous_bytes(int pid) {
  return resident_bytes(pid);
}

bool environment_has(int pid, std::string_view entry) {
  // KERN_PROCARGS2: int argc, the executable's path, NUL padding, argc arguments, then the
  // environment's strings, each NUL-terminated, up to an empty one or the end.
  int argmax = 0;
  std::size_t argmax_size = sizeof argmax;
  int argmax_mib[2] = {CTL_KERN, KERN_ARGMAX};
  if (::sysctl(argmax_mib, 2, &argmax, &argmax_size, nullptr, 0) != 0 || argmax <= 0) {
    return false;
  }
  std::string buffer(static_cast<std::size_t>(argmax), '\0');
  std::size_t size = buffer.size();
  int mib[3] = {CTL_KERN, KERN_PROCARGS2, pid};
  if (::sysctl(mib, 3, buffer.data(), &size, nullptr, 0) != 0 || size < sizeof(int)) {
    return false;
  }
  buffer.resize(size);
  int argc = 0;
  std::memcpy(&argc, buffer.data(), sizeof argc);
  std::size_t pos = sizeof argc;
  pos = buffer.find('\0', pos);  // end of the executable's path
  if (pos == std::string::npos) return false;
  pos = buffer.find_first_not_of('\0', pos);  // padding
  for (int i = 0; i < argc && pos != std::string::npos && pos < buffer.size(); ++i) {
    pos = buffer.find('\0', pos);
    if (pos != std::string::npos) ++pos;
  }
  while (pos != std::string::npos && pos < buffer.size()) {
    const std::size_t end = buffer.find('\0', pos);
    const std::string_view item(buffer.data() + pos,
                                (end == std::string::npos ? buffer.size() : end) - pos);
    if (item.empty()) break;
    if (item == entry) return true;
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return false;
}

void close_fds_from(int first, int max_fd, int keep, int also_keep) noexcept {
  for (int fd = first; fd < max_fd; ++fd) {  // macOS has no close_range
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

// No pidfd on macOS: the reaper signals a registered leader by pid (a kqueue EVFILT_PROC watch
// could tell its exit, but would have to be read continuously).
int open_process_handle(int) noexcept {
  return -1;
}

bool process_handle_ended(int) noexcept {
  return false;
}

void set_process_name(const char*) noexcept {}

}  // namespace escouade::platform
