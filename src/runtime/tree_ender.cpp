#include "runtime/tree_ender.hpp"

#include <vector>

#include "platform/process.hpp"
#include "platform/process_tree.hpp"

namespace escouade::runtime {

namespace {

// Orphans leave more orphans as they end (each of theirs comes to the host in turn): a few
// rounds, as long as there are some.
constexpr int kOrphanRounds = 8;

}  // namespace

void TreeEnder::end(int leader, std::function<void()> then) {
  workers_.run(
      "trees",
      [leader] {
        platform::kill_tree(leader);
        return 0;
      },
      [then = std::move(then)](int) {
        if (then) then();
      });
}

void TreeEnder::end_and_reap(int leader, std::function<void()> then) {
  workers_.run(
      "trees",
      [leader] {
        platform::kill_tree(leader);
        platform::Spawned child;
        child.pid = leader;
        (void)platform::wait_exit(child);
        return 0;
      },
      [then = std::move(then)](int) {
        if (then) then();
      });
}

void TreeEnder::end_orphans(std::set<int>& known_children, std::function<void()> then) {
  orphan_round(known_children, 0, std::move(then));
}

int TreeEnder::start_child(const std::function<int()>& spawn) {
  std::lock_guard lock(gate_);
  const int pid = spawn();
  if (pid > 0) starting_.insert(pid);
  return pid;
}

void TreeEnder::adopted(int pid) {
  std::lock_guard lock(gate_);
  starting_.erase(pid);
}

std::set<int> TreeEnder::known_now(const std::set<int>& known) const {
  std::set<int> all = known;
  all.insert(starting_.begin(), starting_.end());
  return all;
}

void TreeEnder::orphan_round(std::set<int>& known, int round, std::function<void()> then) {
  std::vector<int> orphans;
  {
    // No child is being started meanwhile, and those started are not adopted yet count.
    std::lock_guard lock(gate_);
    const std::set<int> seen = known_now(known);
    if (round < kOrphanRounds) {
      for (int pid : platform::adopted_orphans(seen))
        if (!ending_.count(pid)) orphans.push_back(pid);
    }
    if (orphans.empty()) platform::reap_adopted(seen);
  }
  if (orphans.empty()) {
    if (then) then();
    return;
  }
  for (int pid : orphans) {
    known.insert(pid);
    ending_.insert(pid);
  }
  workers_.run(
      "trees",
      [orphans] {
        platform::kill_trees(orphans);
        return 0;
      },
      [this, &known, orphans, round, then = std::move(then)](int) mutable {
        for (int pid : orphans) {
          known.erase(pid);
          ending_.erase(pid);
        }
        {
          std::lock_guard lock(gate_);
          platform::reap_adopted(known_now(known));
        }
        orphan_round(known, round + 1, std::move(then));
      });
}

}  // namespace escouade::runtime
