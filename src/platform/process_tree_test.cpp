// process_tree, tree_resident_bytes, kill_tree and kill_group on real trees of process_fixture.

#include "platform/process_tree.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>

#include "platform/process.hpp"
#include "support/process_test_support.hpp"

namespace escouade::platform {
namespace {

using ::testing::Contains;
using testing::eventually;
using testing::gone;
using ::testing::IsSupersetOf;
using testing::LineReader;
using testing::parent_of;
using testing::ProcessTest;

class ProcessTreeTest : public ProcessTest {
 protected:
  void expect_forking_tree_ends(const std::string& pause_us);
  // None of this test's processes is left running (zombies are not), else each one described.
  void expect_none_escaped();
  // Waits until `leader` has exited by itself, without reaping it: a zombie, as the host keeps
  // a program's leader until its tree is ended.
  void wait_exited_not_reaped(const Spawned& leader);
  // Reaps `leader`, which exited with code 0.
  void expect_reaped_after_exit_0(Spawned& leader);
  // The freezes of a leader that exited (the two tests below, and as a subreaper): its group
  // forking on; a member of its group running a part that left it.
  void expect_group_left_forking_ends();
  void expect_part_outside_the_group_ends(bool as_subreaper);
};

void ProcessTreeTest::wait_exited_not_reaped(const Spawned& leader) {
  siginfo_t info{};
  ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(leader.pid), &info, WEXITED | WNOWAIT), 0);
  EXPECT_EQ(info.si_code, CLD_EXITED);
  ASSERT_TRUE(eventually([&] { return testing::is_zombie(leader.pid); }));
}

void ProcessTreeTest::expect_reaped_after_exit_0(Spawned& leader) {
  const auto status = wait_exit(leader);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->code, 0);
}

void ProcessTreeTest::expect_none_escaped() {
  EXPECT_TRUE(eventually([&] { return testing::tagged_processes(tag_).empty(); })) << [&] {
    std::string text;
    for (int pid : testing::tagged_processes(tag_)) {
      text += "\n  escaped: " + testing::describe_process(pid);
    }
    return text;
  }();
}

// The fixture's "tree": leader -> a -> b (setsid) -> c. Their pids by role.
std::map<std::string, int> read_tree(const Spawned& leader) {
  LineReader out(leader.stdout_fd);
  std::map<std::string, int> pids;
  for (int i = 0; i < 4; ++i) {
    const auto line = out.next();
    if (!line) break;
    const std::size_t space = line->find(' ');
    pids[line->substr(0, space)] = std::stoi(line->substr(space + 1));
  }
  return pids;
}

TEST_F(ProcessTreeTest, ListsTheLeaderAndAllItsDescendants) {
  Spawned leader = start_fixture({"tree"});
  ASSERT_GT(leader.pid, 0);
  auto pids = read_tree(leader);
  ASSERT_EQ(pids.size(), 4u);
  EXPECT_EQ(pids["leader"], leader.pid);
  EXPECT_EQ(::getsid(pids["b"]), pids["b"]) << "b left the session";
  EXPECT_EQ(::getpgid(pids["b"]), pids["b"]) << "and so the leader's group";

  const std::vector<int> tree = process_tree(leader.pid);
  ASSERT_FALSE(tree.empty());
  EXPECT_EQ(tree.front(), leader.pid);
  EXPECT_EQ(tree.size(), 4u);
  EXPECT_THAT(tree, IsSupersetOf({pids["a"], pids["b"], pids["c"]}));
  // A subtree is a tree too.
  EXPECT_EQ(process_tree(pids["b"]), (std::vector<int>{pids["b"], pids["c"]}));
}

TEST_F(ProcessTreeTest, ANonexistentLeaderHasNoTree) {
  EXPECT_TRUE(process_tree(-5).empty());
  EXPECT_TRUE(process_tree(0).empty());
  Spawned child = start_fixture({"exit"});
  ASSERT_TRUE(wait_exit(child));
  EXPECT_TRUE(process_tree(child.pid).empty()) << "reaped: gone";
  EXPECT_EQ(tree_resident_bytes(child.pid), 0u);
}

TEST_F(ProcessTreeTest, KillTreeEndsThreeLevelsAndASetsidGrandchild) {
  Spawned leader = start_fixture({"tree"});
  ASSERT_GT(leader.pid, 0);
  auto pids = read_tree(leader);
  ASSERT_EQ(pids.size(), 4u);

  kill_tree(leader.pid);

  const auto status = wait_exit(leader);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->describe(), "killed by signal 9 (SIGKILL)");
  for (const auto& [role, pid] : pids) {
    EXPECT_TRUE(eventually([pid = pid] { return gone(pid); })) << role << " survived";
  }
  expect_none_escaped();
}

// A tree whose processes fork and exit all the time (50 at most at once, each pausing
// `pause_us` between two forks) is killed: none of them may escape.
void ProcessTreeTest::expect_forking_tree_ends(const std::string& pause_us) {
  Spawned leader = start_fixture({"forker", pause_us});
  ASSERT_GT(leader.pid, 0);
  LineReader out(leader.stdout_fd);
  ASSERT_EQ(out.next(), "forking");
  ASSERT_TRUE(eventually([&] { return process_tree(leader.pid).size() >= 10; }));

  kill_tree(leader.pid);

  const auto status = wait_exit(leader);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->signal, SIGKILL);
  // An escaped process would go on forking until its safety deadline: this would not become
  // true.
  expect_none_escaped();
}

TEST_F(ProcessTreeTest, KillTreeEndsATreeThatKeepsForking) {
  expect_forking_tree_ends("500");
}

TEST_F(ProcessTreeTest, KillTreeEndsAForkStorm) {
  // No pause at all: a fork is under way in some process at almost every moment of the freeze.
  expect_forking_tree_ends("0");
}

// The leader has exited (not reaped yet, as the host keeps it until its tree is ended) and its
// group forks on: the freeze notes the ended leader without signaling it and still stops and
// ends every process of the group, none escaping.
TEST_F(ProcessTreeTest, KillTreeOfALeaderThatExitedEndsTheGroupItLeftForking) {
  expect_group_left_forking_ends();
}

void ProcessTreeTest::expect_group_left_forking_ends() {
  Spawned leader = start_fixture({"leave-forker", "0"});
  ASSERT_GT(leader.pid, 0);
  LineReader out(leader.stdout_fd);
  ASSERT_EQ(out.next(), "forking");
  ASSERT_NO_FATAL_FAILURE(wait_exited_not_reaped(leader));
  ASSERT_TRUE(eventually([&] { return testing::tagged_processes(tag_).size() >= 10; }));

  kill_tree(leader.pid);

  expect_none_escaped();
  expect_reaped_after_exit_0(leader);
}

// The same with a part out of the group: the leader exited, a (in its group, now an orphan)
// still runs b, which left the group, and b's child c. Only a's row leads to b and c.
TEST_F(ProcessTreeTest, KillTreeOfALeaderThatExitedEndsWhatItsGroupStartedOutsideIt) {
  expect_part_outside_the_group_ends(false);
}

void ProcessTreeTest::expect_part_outside_the_group_ends(bool as_subreaper) {
  Spawned leader = start_fixture({"leave-tree"});
  ASSERT_GT(leader.pid, 0);
  auto pids = read_tree(leader);
  ASSERT_EQ(pids.size(), 4u);
  ::close(leader.stdin_fd);
  leader.stdin_fd = -1;
  ASSERT_NO_FATAL_FAILURE(wait_exited_not_reaped(leader));
  if (as_subreaper) {
    ASSERT_TRUE(eventually([&] { return parent_of(pids["a"]) == ::getpid(); }))
        << "a, in the leader's group, came to this subreaper";
  }

  kill_tree(leader.pid);

  for (const auto& [role, pid] : pids) {
    if (role == "leader") continue;
    EXPECT_TRUE(eventually([pid = pid] { return gone(pid); })) << role << " survived";
  }
  expect_none_escaped();
  expect_reaped_after_exit_0(leader);
}

// The same two freezes where this process is a subreaper, as the host is: the processes a
// leader that exited left in its group came here, and the freeze looks for its members among
// this process's own children (group_members_among_own_children), not by a getpgid of every
// pid of the system.
class ProcessTreeAsSubreaperTest : public ProcessTreeTest {
 protected:
  void SetUp() override {
    ProcessTreeTest::SetUp();
    ASSERT_TRUE(become_subreaper());
  }
  void TearDown() override {
    ProcessTreeTest::TearDown();
    ::prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
    // The orphans that came here, ended: reaped.
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
  }
};

TEST_F(ProcessTreeAsSubreaperTest, KillTreeOfALeaderThatExitedEndsWhatItsGroupStartedOutsideIt) {
  expect_part_outside_the_group_ends(true);
}

TEST_F(ProcessTreeAsSubreaperTest, KillTreeOfALeaderThatExitedEndsTheGroupItLeftForking) {
  expect_group_left_forking_ends();
}

TEST_F(ProcessTreeTest, KillTreesEndsSeveralTreesInOneFreeze) {
  Spawned first = start_fixture({"tree"});
  Spawned second = start_fixture({"forker"});
  ASSERT_GT(first.pid, 0);
  ASSERT_GT(second.pid, 0);
  auto pids = read_tree(first);
  ASSERT_EQ(pids.size(), 4u);
  LineReader out(second.stdout_fd);
  ASSERT_EQ(out.next(), "forking");

  kill_trees({first.pid, second.pid});

  for (Spawned* leader : {&first, &second}) {
    const auto status = wait_exit(*leader);
    ASSERT_TRUE(status);
    EXPECT_EQ(status->signal, SIGKILL);
  }
  for (const auto& [role, pid] : pids) {
    EXPECT_TRUE(eventually([pid = pid] { return gone(pid); })) << role << " survived";
  }
  expect_none_escaped();
}

TEST_F(ProcessTreeTest, KillGroupReachesTheGroupOnly) {
  // A polite SIGTERM to the leader's group does not reach b, which left it with setsid: the
  // reason kill_tree exists.
  Spawned leader = start_fixture({"tree"});
  ASSERT_GT(leader.pid, 0);
  auto pids = read_tree(leader);
  ASSERT_EQ(pids.size(), 4u);

  EXPECT_TRUE(kill_group(leader.pid, SIGTERM));

  const auto status = wait_exit(leader);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->signal, SIGTERM);
  EXPECT_TRUE(eventually([&] { return gone(pids["a"]); }));
  EXPECT_FALSE(gone(pids["b"]));
  EXPECT_FALSE(gone(pids["c"]));
}

TEST_F(ProcessTreeTest, NeverSignalsTheHostOrInit) {
  EXPECT_FALSE(kill_group(::getpgrp(), 0));
  EXPECT_FALSE(kill_group(1, 0));
  EXPECT_FALSE(kill_group(0, 0));
  EXPECT_FALSE(kill_group(-1, 0));
  kill_tree(::getpid());
  kill_tree(1);
  kill_tree(0);
  kill_tree(-1);
  SUCCEED() << "still here";
}

// The tree is walked through each process's list of children, which the system keeps per
// thread: a child started by a thread other than the main one is in its process's tree too.
TEST_F(ProcessTreeTest, ListsTheChildOfAThreadThatIsNotTheMainOne) {
  std::atomic<int> child{0};
  std::atomic<bool> checked{false};
  std::thread forker([&] {
    const pid_t pid = ::fork();
    if (pid == 0) {
      for (;;)
        ::pause();  // until killed
    }
    child = pid;
    // Alive while it is looked for: were this thread gone, its child would be its process's.
    while (!checked)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  ASSERT_TRUE(eventually([&] { return child.load() != 0; }));
  ASSERT_GT(child.load(), 0);
  const std::vector<int> tree = process_tree(::getpid());
  checked = true;
  forker.join();
  EXPECT_EQ(tree.front(), ::getpid());
  EXPECT_THAT(tree, Contains(child.load()));
  ::kill(child, SIGKILL);
  int status = 0;
  EXPECT_EQ(::waitpid(child, &status, 0), child.load());
}

TEST_F(ProcessTreeTest, ResidentMemoryGrowsWhenAChildAllocates) {
  Spawned leader = start_fixture({"alloc", "100"});
  ASSERT_GT(leader.pid, 0);
  LineReader out(leader.stdout_fd);
  const int child = testing::field_int(out.next(), "child");
  ASSERT_GT(child, 0);
  EXPECT_THAT(process_tree(leader.pid), Contains(child));

  const std::uint64_t before = tree_resident_bytes(leader.pid);
  EXPECT_GT(before, 0u);
  ASSERT_EQ(::write(leader.stdin_fd, "go\n", 3), 3);
  ASSERT_EQ(out.next(), "allocated");
  const std::uint64_t after = tree_resident_bytes(leader.pid);

  EXPECT_GE(after, before + (90u << 20)) << "before " << before << ", after " << after;
  kill_tree(leader.pid);
}

}  // namespace
}  // namespace escouade::platform
