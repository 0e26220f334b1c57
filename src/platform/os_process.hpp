#pragma once

// Internal to src/platform: what the POSIX code (process_tree_posix.cpp, reaper_posix.cpp)
// needs from each system, implemented in os_process_linux.cpp and os_process_macos.cpp.

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace escouade::platform {

// One row of the system's process table.
struct ProcEntry {
  int pid = 0;
  int ppid = 0;
  int pgid = 0;
  // Its owner, read only where orphans go to init (kOrphansGoToInit: macOS), the one place it
  // is needed; 0 on Linux, which spares each scan a stat of every process.
  uid_t uid = 0;
  bool zombie = false;   // ended, not reaped yet
  bool stopped = false;  // stopped by a signal (or traced)
};

// A snapshot of every process of the system (threads are not processes here). Processes that
// end while it is read are left out.
std::vector<ProcEntry> read_process_table();

// One process's row, read alone (Linux: its stat file); nullopt once it is gone.
std::optional<ProcEntry> read_process(int pid);

// The processes whose group is one of `groups`, with their state, without reading every
// process's row: Linux lists /proc and asks getpgid(2) of each pid, one system call where a row
// is an open, a read and a close of its stat file (about 7 us a process on this VM), then reads
// the rows of the members alone. nullopt where the system has nothing cheaper than
// read_process_table (macOS, whose table is one sysctl).
std::optional<std::vector<ProcEntry>> group_members(const std::unordered_set<int>& groups);

// The same members, looked for among this process's own children alone: their pids from its
// lists of children, a getpgid(2) of each, the rows of the members. Enough for the freeze of
// the trees of `leaders` when each is a child of this process (ended or not, not reaped) and
// this process is a subreaper: a member of a leader's group that is not the leader's descendant
// by the lists lost its parent in the tree and came here (one that joined the group from
// outside the tree is not looked for). nullopt otherwise, and where the lists are not kept
// (macOS, a kernel without CONFIG_PROC_CHILDREN).
std::optional<std::vector<ProcEntry>> group_members_among_own_children(
    const std::unordered_set<int>& groups, const std::vector<int>& leaders);

// The children of `pid` (of every thread of it), with their state (uid left 0), read without a
// scan of the whole table: Linux's /proc/<pid>/task/*/children, each one's parent checked in its
// own stat. Empty when `pid` is gone; nullopt where the system does not say (macOS, a kernel
// without CONFIG_PROC_CHILDREN): read_process_table then. A child whose pid is in `passed_over`
// is left out before its row is read: the host asks for the children it did not start, and a
// row is an open, a read and a close (each plugin's, at each program's end, made a host's stop
// quadratic in its plugins).
std::optional<std::vector<ProcEntry>> children_of(int pid, const std::set<int>& passed_over = {});

// This process's children (of every thread), with their state: children_of(getpid(), ...).
std::optional<std::vector<ProcEntry>> own_children(const std::set<int>& passed_over = {});

// The resident memory of one process, in bytes; 0 when it is gone or a zombie.
std::uint64_t resident_bytes(int pid);
// Of it, what no file backs (Linux: statm's resident minus its shared pages): what the process
// holds itself, its libraries' code left out. macOS: the resident memory.
std::uint64_t anonymous_bytes(int pid);

// Whether the environment `pid` was started with holds `entry` ("K=V") exactly. False when it
// cannot be read: gone, a zombie, another user's.
bool environment_has(int pid, std::string_view entry);

// Where the orphans of a process go when no subreaper takes them: true on macOS (launchd,
// pid 1), where adopted_orphans_of looks for them; false on Linux, where the host is a
// subreaper.
#if defined(__APPLE__)
inline constexpr bool kOrphansGoToInit = true;
#else
inline constexpr bool kOrphansGoToInit = false;
#endif

// Closes every descriptor from `first` up, except `keep` and `also_keep` (-1: none). `max_fd`
// bounds the loop used where the system has no close_range. Async-signal-safe: used between fork
// and exec.
void close_fds_from(int first, int max_fd, int keep, int also_keep = -1) noexcept;
inline void close_fds_from_3(int max_fd, int keep, int also_keep = -1) noexcept {
  close_fds_from(3, max_fd, keep, also_keep);
}

// The bound given to close_fds_from_3: the highest possible descriptor + 1. Call before fork.
int fd_limit() noexcept;

// A handle on `pid`, a process not reaped yet, that tells later whether it has ended even if
// its pid was reused since: a pidfd on Linux; -1 where there is none.
int open_process_handle(int pid) noexcept;

// True when the process of `handle` (from open_process_handle, >= 0) has ended.
bool process_handle_ended(int handle) noexcept;

// Names this process as ps shows it (at most 15 bytes on Linux); does nothing elsewhere.
void set_process_name(const char* name) noexcept;

// kill_tree (process_tree_posix.cpp), for a leader that may have ended already: with
// `leader_alive` false the leader's pid is not signaled, since it may belong to someone else
// by now; its process group still is, as a group's id is not reused while it has members.
void end_tree(int leader, bool leader_alive);

}  // namespace escouade::platform
