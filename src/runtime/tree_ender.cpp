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

void TreeEnder::orphan_round(std::set<int>& known, int round, std::function<void()> then) {
  std::vector<int> orphans;
  if (round < kOrphanRounds) {
    for (int pid : platform::adopted_orphans(known))
      if (!ending_.count(pid)) orphans.push_back(pid);
  }
  if (orphans.empty()) {
    platform::reap_adopted(known);
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
        platform::reap_adopted(known);
        orphan_round(known, round + 1, std::move(then));
      });
}

}  // namespace escouade::runtime
