// Process trees on Linux and macOS, from the process table of os_process_*.cpp.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "platform/os_process.hpp"
#include "platform/process.hpp"
#include "platform/process_tree.hpp"

namespace escouade::platform {
namespace {

// Each process's children, from one snapshot.
using Children = std::unordered_map<int, std::vector<int>>;

Children children_by_parent(const std::vector<ProcEntry>& table) {
  Children children;
  for (const ProcEntry& e : table)
    children[e.ppid].push_back(e.pid);
  return children;
}

// `roots` and their descendants, each once, roots first; only processes in the snapshot.
std::vector<int> descendants(const std::vector<int>& roots, const std::vector<ProcEntry>& table) {
  const Children children = children_by_parent(table);
  std::unordered_set<int> present;
  for (const ProcEntry& e : table)
    present.insert(e.pid);
  std::vector<int> out;
  std::unordered_set<int> seen;
  for (int root : roots) {
    if (present.count(root) && seen.insert(root).second) out.push_back(root);
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    const auto it = children.find(out[i]);
    if (it == children.end()) continue;
    for (int child : it->second) {
      if (seen.insert(child).second) out.push_back(child);
    }
  }
  return out;
}

// This process, its group, and pid 0 and 1 are never signaled.
bool may_signal(int pid) {
  return pid > 1 && pid != ::getpid();
}
bool may_signal_group(int pgid) {
  return pgid > 1 && pgid != ::getpgrp();
}

}  // namespace

std::vector<int> process_tree(int leader) {
  if (leader <= 0) return {};
  // Where the system lists each process's children, the tree is walked from its leader: a few
  // reads a process of the tree, where a scan reads every process of the system (each plugin's
  // memory check made one, so a hundred plugins read the table fifty times a second).
  if (::kill(leader, 0) != 0 && errno != EPERM) return {};
  std::vector<int> out{leader};
  std::unordered_set<int> seen{leader};
  for (std::size_t i = 0; i < out.size(); ++i) {
    auto children = children_of(out[i]);
    if (!children) return descendants({leader}, read_process_table());
    for (const ProcEntry& e : *children) {
      if (seen.insert(e.pid).second) out.push_back(e.pid);
    }
  }
  return out;
}

std::uint64_t tree_resident_bytes(int leader) {
  std::uint64_t total = 0;
  for (int pid : process_tree(leader))
    total += resident_bytes(pid);
  return total;
}

std::uint64_t private_resident_bytes(int pid) {
  return anonymous_bytes(pid);
}

namespace {

// The rows a round of the freeze looks at. Where the system lists groups and children without a
// read of every process (Linux), the tree's alone: the members of its groups, its leaders while
// they live, every process signaled before (whose state the round checks again), and the
// descendants of all of them by their children's lists. Each row is read when its process is
// found and its list after it, so a process seen stopped lists every child its forks made. Two
// scans of 90 processes took 1.2 ms of each proc/spawn when each read every row. Elsewhere, the
// whole table, whose listing comes before each row's read.
//
// The members of the groups: where the leaders are children of this process and it is a
// subreaper, among its own children, where a member that lost its parent in the tree comes (the
// others are the leaders' descendants by the lists); else from a getpgid of every pid of the
// system, which made the end of each program cost two such scans, the longer the more processes
// the machine runs.
std::vector<ProcEntry> freeze_rows(const std::vector<int>& leaders, bool leaders_alive,
                                   const std::unordered_set<int>& groups,
                                   const std::unordered_set<int>& signaled) {
  auto members = group_members_among_own_children(groups, leaders);
  if (!members) members = group_members(groups);
  if (!members) return read_process_table();
  std::vector<ProcEntry> rows;
  std::unordered_set<int> found;
  const auto add = [&](const ProcEntry& e) {
    if (found.insert(e.pid).second) rows.push_back(e);
  };
  for (const ProcEntry& e : *members)
    add(e);
  for (int pid : leaders) {
    if (!leaders_alive || found.count(pid)) continue;
    if (auto e = read_process(pid)) add(*e);
  }
  for (int pid : signaled) {
    if (found.count(pid)) continue;
    if (auto e = read_process(pid)) add(*e);
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    auto children = children_of(rows[i].pid);
    if (!children) return read_process_table();
    for (const ProcEntry& child : *children)
      add(child);
  }
  return rows;
}

// end_tree for several leaders at once: one freeze over the union of their trees, so ending a
// hundred orphans costs a few scans, not a few hundred.
void end_trees(const std::vector<int>& given, bool leaders_alive) {
  std::vector<int> leaders;
  std::unordered_set<int> groups;  // the leaders whose group may be signaled
  for (int leader : given) {
    if (leader <= 1 || leader == ::getpid()) continue;
    leaders.push_back(leader);
    if (may_signal_group(leader)) groups.insert(leader);
  }
  if (leaders.empty()) return;
  // First freeze the tree, then kill it: a stopped process cannot fork.
  //
  // A SIGSTOP sent to one pid while that process is inside fork() does not cancel the fork (only
  // a fatal signal or one sent to its group does): the child appears when the fork returns,
  // unstopped. A process seen stopped has no fork under way, and the children of its forks are
  // in its list, read after its row (freeze_rows); but a scan lists /proc (for the groups'
  // members, or the whole table) before it reads each process's state, so a child born between
  // the two whose parent then exits is in no list and missing from the very scan that shows its
  // parent ended. The freeze is complete only when a scan whose listing began after every process
  // signaled was seen stopped (or dead) finds nothing new and all of them still stopped: two
  // quiet scans in a row. Until then, scan again, and signal again those not stopped yet.
  //
  // A process the freeze cannot see (resumed by a SIGCONT from one not stopped yet, and forking
  // before its SIGKILL) becomes an orphan of whoever reaps for the tree: the host is a subreaper
  // and kills the orphans it adopts (adopted_orphans_of).
  for (int g : groups)
    ::kill(-g, SIGSTOP);
  std::unordered_set<int> signaled;
  std::unordered_set<int> dead;  // found as zombies: never signaled
  std::vector<int> order;
  // The deadline is for a process that cannot stop (in uninterruptible sleep): it is killed
  // anyway, and SIGKILL, being fatal, does cancel a fork under way. It runs from the last
  // progress (a process found or seen stopped), so a slow machine is not mistaken for one.
  constexpr auto kNoProgress = std::chrono::seconds(2);
  auto deadline = std::chrono::steady_clock::now() + kNoProgress;
  bool quiet_before = false;  // the previous scan found nothing new and saw all stopped
  std::size_t stopped_before = 0;
  for (int round = 0; round < 100000; ++round) {
    const std::vector<ProcEntry> table = freeze_rows(leaders, leaders_alive, groups, signaled);
    std::vector<int> roots;
    if (leaders_alive) roots = leaders;
    // Members of a leader's group whose parent left the tree (by exit before the leader became
    // their subreaper, say) are still its own.
    for (const ProcEntry& e : table) {
      if (groups.count(e.pgid)) roots.push_back(e.pid);
    }
    // A process found ended (a zombie) is noted, never signaled: it forks no more, and the
    // children it had are in this scan or go to a subreaper. It is no growth: a tree whose leader
    // has exited, alone, is confirmed by the next scan (two in all, not three). Nor is it
    // signaled later: once reaped, its pid could be another's.
    std::unordered_set<int> zombies;
    for (const ProcEntry& e : table) {
      if (e.zombie) zombies.insert(e.pid);
    }
    bool grew = false;
    for (int pid : descendants(roots, table)) {
      if (!may_signal(pid) || !signaled.insert(pid).second) continue;
      if (zombies.count(pid)) {
        dead.insert(pid);
        continue;
      }
      ::kill(pid, SIGSTOP);
      order.push_back(pid);
      grew = true;
    }
    const auto now = std::chrono::steady_clock::now();
    if (grew) {
      quiet_before = false;
      deadline = now + kNoProgress;
      continue;
    }
    std::size_t stopped = 0;
    bool all_stopped = true;
    for (const ProcEntry& e : table) {
      if (!signaled.count(e.pid) || dead.count(e.pid)) continue;
      if (e.stopped || e.zombie) {
        ++stopped;
      } else {
        all_stopped = false;
        ::kill(e.pid, SIGSTOP);
      }
    }
    if (all_stopped && quiet_before) break;
    quiet_before = all_stopped;
    if (all_stopped) continue;  // the confirming scan, at once
    if (stopped > stopped_before) deadline = now + kNoProgress;
    stopped_before = stopped;
    if (now > deadline) break;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  // The groups at once, then the others deepest first. The order matters: when a process dies,
  // a group it leaves orphaned that has stopped members gets SIGHUP and SIGCONT from the
  // kernel, and a process resumed before its SIGKILL is pending could fork. Killed first, the
  // descendants already have theirs when their parents die.
  for (int g : groups)
    ::kill(-g, SIGKILL);
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    ::kill(*it, SIGKILL);
}

}  // namespace

void end_tree(int leader, bool leader_alive) {
  end_trees({leader}, leader_alive);
}

void kill_tree(int leader) {
  end_trees({leader}, true);
}

void kill_trees(const std::vector<int>& leaders) {
  end_trees(leaders, true);
}

bool kill_group(int pgid, int sig) {
  if (!may_signal_group(pgid)) return false;
  return ::kill(-pgid, sig) == 0;
}

namespace {

// This process's children but the `known` ones: from its own list where the system keeps one (a
// few reads, where the whole table is hundreds; the known ones' rows not read), else from the
// table.
std::vector<ProcEntry> unknown_children_of_self(const std::set<int>& known) {
  if (auto own = own_children(known)) return std::move(*own);
  const int self = ::getpid();
  std::vector<ProcEntry> children;
  for (const ProcEntry& e : read_process_table()) {
    if (e.ppid == self && !known.count(e.pid)) children.push_back(e);
  }
  return children;
}

}  // namespace

std::vector<int> adopted_orphans(const std::set<int>& known_children) {
  // Not a subreaper, no orphan comes here: an unknown child is the embedding app's own.
  if (!is_subreaper()) return {};
  const int self = ::getpid();
  std::vector<int> orphans;
  for (const ProcEntry& e : unknown_children_of_self(known_children)) {
    if (e.zombie || !may_signal(e.pid)) continue;
    if (e.ppid == self) orphans.push_back(e.pid);
  }
  return orphans;
}

std::vector<int> adopted_orphans_of(std::string_view plugin_id,
                                    const std::set<int>& known_children) {
  const std::string entry = "ESCOUADE_PLUGIN_ID=" + std::string(plugin_id);
  const int self = ::getpid();
  const uid_t user = ::getuid();
  std::vector<int> orphans;
  for (const ProcEntry& e : read_process_table()) {
    if (e.zombie || known_children.count(e.pid) || !may_signal(e.pid)) continue;
    const bool adopted = e.ppid == self || (kOrphansGoToInit && e.ppid == 1 && e.uid == user);
    if (adopted && environment_has(e.pid, entry)) orphans.push_back(e.pid);
  }
  return orphans;
}

std::vector<int> reap_adopted(const std::set<int>& known_children) {
  std::vector<int> reaped;
  // Not a subreaper, nothing was adopted: an unknown child's status is the app's to take.
  if (!is_subreaper()) return reaped;
  const auto reap = [&](int pid) {
    int status = 0;
    pid_t r;
    do {
      r = ::waitpid(pid, &status, WNOHANG);
    } while (r < 0 && errno == EINTR);
    if (r == pid) reaped.push_back(pid);
    return r == pid;
  };
  // A peek (WNOWAIT) shows one ended child, and the same one again while it is not reaped: as
  // long as it is not a known one, reap it and look again.
  for (;;) {
    siginfo_t info{};
    if (::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
      if (errno == EINTR) continue;
      return reaped;  // no children at all
    }
    if (info.si_pid == 0) return reaped;  // none has ended
    if (known_children.count(info.si_pid) || !reap(info.si_pid)) break;
  }
  // A known child hides the others from the peek: find them among this process's children.
  const int self = ::getpid();
  for (const ProcEntry& e : unknown_children_of_self(known_children)) {
    if (e.ppid == self && e.zombie) reap(e.pid);
  }
  return reaped;
}

}  // namespace escouade::platform
