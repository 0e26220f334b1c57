#pragma once

// Ends process trees off the host's thread. platform::kill_tree stops every process of a tree
// before it kills them, and waits up to 2 s for one that cannot stop (uninterruptible sleep): a
// plugin's stubborn tree, or three of its orphans, must not hold every other plugin's calls
// (issue 11). One thread does it, in order; each job's completion comes back on the host's
// thread. Closing finishes what was asked, within a bound, rather than dropping it: a tree
// left running would outlive the host.
//
// Thread: end*() on the host's thread; the completions there too.

#include <boost/asio/any_io_executor.hpp>
#include <functional>
#include <mutex>
#include <set>
#include <string>

#include "base/workers.hpp"

namespace escouade::runtime {

class TreeEnder {
 public:
  // How long closing gives the jobs asked: each kill_tree takes 2 s at the most.
  static constexpr std::chrono::milliseconds kCloseBound{10'000};

  explicit TreeEnder(boost::asio::any_io_executor host) : workers_(std::move(host), 1) {}
  ~TreeEnder() { workers_.close(kCloseBound, true); }
  TreeEnder(const TreeEnder&) = delete;
  TreeEnder& operator=(const TreeEnder&) = delete;

  // Ends the tree of `leader`, a child not reaped yet (the caller does not reap it before
  // `then`).
  void end(int leader, std::function<void()> then);
  // The same, then reaps `leader`: for a program destroyed while it runs.
  void end_and_reap(int leader, std::function<void()> then);
  // Ends the tree of every process this host adopted (a subreaper) that is not one of
  // `known_children`: the orphans of plugins whose leader ended, round after round (an orphan's
  // own orphans come to the host as it ends). Each round's scan runs on the host's thread, where
  // `known_children` is kept, so a leader started meanwhile is never taken for an orphan; the
  // orphans of a round are added to `known_children` while they are being ended, so nothing
  // reaps them and their pids stay theirs. `known_children` must outlive this object; `then`
  // on the host's thread, once no orphan is left (or after the last round).
  void end_orphans(std::set<int>& known_children, std::function<void()> then);

  // Starts a child off the host's thread (proc/spawn's programs): `spawn` forks and returns the
  // child's pid (<= 0: none). A child of the host that is not in known_children is taken for an
  // orphan by the rounds above, so `spawn` runs while no round looks, and its pid counts as
  // known until adopted(pid), once the host's thread has put it in known_children. Any thread.
  int start_child(const std::function<int()>& spawn);
  // On the host's thread, once `pid` (from start_child) is in known_children, or reaped.
  void adopted(int pid);

 private:
  void orphan_round(std::set<int>& known_children, int round, std::function<void()> then);
  // known_children and the children being started: what the rounds leave alone.
  std::set<int> known_now(const std::set<int>& known_children) const;

  Workers workers_;
  std::set<int> ending_;  // orphans being ended now
  // Held by start_child while it forks and by each round while it looks at the host's children.
  mutable std::mutex gate_;
  std::set<int> starting_;  // started by start_child, not adopted yet (under gate_)
};

}  // namespace escouade::runtime
