// The reaper's watchdog, adopted orphans and reap_adopted, with real processes. A "host" is
// simulated by a forked copy of the test process, so that it can die without the test.

#include "platform/reaper.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "platform/process.hpp"
#include "platform/process_tree.hpp"
#include "support/process_test_support.hpp"

namespace escouade::platform {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using testing::eventually;
using testing::gone;
using testing::LineReader;
using ::testing::Not;
using testing::ProcessTest;

// For simulated hosts, which must not use gtest: one line to the test.
void put(int fd, const std::string& line) {
  const std::string text = line + "\n";
  [[maybe_unused]] const ssize_t n = ::write(fd, text.data(), text.size());
}

std::string join(const std::vector<int>& pids) {
  std::string out;
  for (int pid : pids)
    out += (out.empty() ? "" : ",") + std::to_string(pid);
  return out;
}

// "key value" lines until the end of the stream.
std::map<std::string, std::string> read_report(int fd) {
  LineReader in(fd);
  std::map<std::string, std::string> report;
  for (std::optional<std::string> line; (line = in.next());) {
    const std::size_t space = line->find(' ');
    report[line->substr(0, space)] = space == std::string::npos ? "" : line->substr(space + 1);
  }
  return report;
}

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// The bits of a /proc/<pid>/status signal mask (SigIgn, ...).
std::uint64_t status_mask(int pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(field + ":"))
      return std::stoull(line.substr(field.size() + 1), nullptr, 16);
  }
  return 0;
}

std::uint64_t bit(int sig) {
  return std::uint64_t{1} << (sig - 1);
}

using ReaperTest = ProcessTest;

TEST_F(ReaperTest, TheWatchdogHoldsNothingOfTheHostAndIgnoresTerminalSignals) {
  auto reaper = start_reaper();
  ASSERT_TRUE(reaper) << reaper.error().message;
  const int pid = reaper->pid();
  ASSERT_GT(pid, 0);
  EXPECT_TRUE(reaper->active());
  // Its setup runs after fork returns here: wait until it has named itself.
  ASSERT_TRUE(eventually([&] {
    return read_first_line("/proc/" + std::to_string(pid) + "/comm") == "escouade-reaper";
  }));

  EXPECT_EQ(::getsid(pid), pid) << "a session of its own: the terminal's signals miss it";
  const std::uint64_t ignored = status_mask(pid, "SigIgn");
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
    EXPECT_TRUE(ignored & bit(sig)) << signal_name(sig);
  }
  // 0, 1 and 2 on /dev/null, its socket from the host, and a pidfd on the host where the
  // kernel has them: nothing else.
  std::map<std::string, std::string> fds;
  for (const auto& entry :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
    fds[entry.path().filename().string()] = std::filesystem::read_symlink(entry.path()).string();
  }
  EXPECT_EQ(fds["0"], "/dev/null");
  EXPECT_EQ(fds["1"], "/dev/null");
  EXPECT_EQ(fds["2"], "/dev/null");
  int sockets = 0;
  int others = 0;
  for (const auto& [fd, target] : fds) {
    if (fd == "0" || fd == "1" || fd == "2") continue;
    if (target.starts_with("socket:")) {
      ++sockets;
    } else if (target.find("pidfd") == std::string::npos) {
      ++others;
    }
  }
  EXPECT_EQ(sockets, 1) << ::testing::PrintToString(fds);
  EXPECT_EQ(others, 0) << ::testing::PrintToString(fds);
  EXPECT_EQ(std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/cwd"), "/");

  // Sent to it alone, they change nothing.
  ::kill(pid, SIGINT);
  ::kill(pid, SIGTERM);
  ::kill(pid, SIGHUP);

  const auto status = reaper->close();
  ASSERT_TRUE(status);
  EXPECT_EQ(status->describe(), "exit code 0");
  EXPECT_FALSE(reaper->active());
  EXPECT_EQ(reaper->close(), std::nullopt) << "once";
}

TEST_F(ReaperTest, ClosingForgetsTheLeadersAndLeavesThemRunning) {
  auto reaper = start_reaper();
  ASSERT_TRUE(reaper) << reaper.error().message;
  Spawned first = start_fixture({"sleep"});
  Spawned second = start_fixture({"sleep"});
  ASSERT_TRUE(reaper->add(first.pid));
  ASSERT_TRUE(reaper->add(second.pid));
  ASSERT_TRUE(reaper->remove(second.pid));

  const auto status = reaper->close();
  ASSERT_TRUE(status);
  EXPECT_EQ(status->describe(), "exit code 0");
  // The watchdog has exited: had it killed them, they would be dead by now.
  EXPECT_EQ(try_wait(first.pid), std::nullopt);
  EXPECT_EQ(try_wait(second.pid), std::nullopt);
  EXPECT_FALSE(gone(first.pid));
  EXPECT_FALSE(gone(second.pid));
}

// The pipes among a process's descriptors, by /proc.
int pipes_held_by(int pid) {
  int pipes = 0;
  std::error_code ec;
  for (const auto& entry :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    std::error_code link_ec;
    if (std::filesystem::read_symlink(entry.path(), link_ec).string().starts_with("pipe:")) {
      ++pipes;
    }
  }
  return pipes;
}

TEST_F(ReaperTest, TheWatchdogHoldsALeadersPipesUntilItIsRemoved) {
  auto reaper = start_reaper();
  ASSERT_TRUE(reaper) << reaper.error().message;
  Spawned leader = start_fixture({"sleep"});
  ASSERT_GT(leader.pid, 0);
  const int pipes[] = {leader.stdin_fd, leader.stdout_fd, leader.stderr_fd};
  ASSERT_TRUE(reaper->add(leader.pid, pipes));
  ASSERT_TRUE(reaper->add(leader.pid, pipes)) << "twice: the copies of the second are dropped";
  Spawned other = start_fixture({"sleep"});
  const int other_pipes[] = {other.stdout_fd};
  ASSERT_TRUE(reaper->add(other.pid, other_pipes));
  EXPECT_TRUE(eventually([&] { return pipes_held_by(reaper->pid()) == 4; }))
      << pipes_held_by(reaper->pid());
  ASSERT_TRUE(reaper->remove(other.pid));
  EXPECT_TRUE(eventually([&] { return pipes_held_by(reaper->pid()) == 3; }))
      << pipes_held_by(reaper->pid());
  ASSERT_TRUE(reaper->remove(leader.pid));
  EXPECT_TRUE(eventually([&] { return pipes_held_by(reaper->pid()) == 0; }))
      << pipes_held_by(reaper->pid());
  const auto status = reaper->close();
  ASSERT_TRUE(status);
  EXPECT_EQ(status->code, 0);
  EXPECT_FALSE(gone(leader.pid)) << "removed, it was left alone";
}

TEST_F(ReaperTest, AnInactiveReaperDoesNothing) {
  Reaper reaper;
  EXPECT_FALSE(reaper.active());
  EXPECT_EQ(reaper.pid(), -1);
  EXPECT_TRUE(reaper.add(12345));
  EXPECT_TRUE(reaper.remove(12345));
  EXPECT_EQ(reaper.close(), std::nullopt);
}

TEST_F(ReaperTest, MovingTheReaperKeepsOneWatchdog) {
  auto started = start_reaper();
  ASSERT_TRUE(started);
  Reaper moved = std::move(*started);
  EXPECT_FALSE(started->active());
  EXPECT_TRUE(moved.active());
  const auto status = moved.close();
  ASSERT_TRUE(status);
  EXPECT_EQ(status->code, 0);
}

// How the simulated host ends.
enum class HostDeath { kExits, kIsKilled };

class ReaperHostDeathTest : public ProcessTest, public ::testing::WithParamInterface<HostDeath> {};

TEST_P(ReaperHostDeathTest, TheWatchdogEndsThePluginTreeWhenTheHostDies) {
  const HostDeath death = GetParam();
  const std::vector<std::string> env = tagged_env();
  int host = -1;
  const int report_fd = fork_host(
      [&](int out) {
        auto reaper = start_reaper();
        if (!reaper) return put(out, "error " + reaper.error().message);
        put(out, "watchdog " + std::to_string(reaper->pid()));
        auto leader = spawn({{testing::fixture_path(), "tree"}, {}, env});
        if (!leader) return put(out, "error " + leader.error().message);
        if (!reaper->add(leader->pid)) return put(out, "error add");
        LineReader tree(leader->stdout_fd);
        for (int i = 0; i < 4; ++i)
          put(out, tree.next().value_or("error tree"));
        if (death == HostDeath::kExits) ::_exit(0);  // no destructor: the Reaper is not closed
        put(out, "ready");
        ::close(out);
        ::pause();
      },
      host);
  ASSERT_GE(report_fd, 0);
  LineReader report(report_fd);
  std::map<std::string, int> pids;
  for (int i = 0; i < 5; ++i) {
    const auto line = report.next();
    ASSERT_TRUE(line) << "the host said too little";
    ASSERT_FALSE(line->starts_with("error")) << *line;
    const std::size_t space = line->find(' ');
    pids[line->substr(0, space)] = std::stoi(line->substr(space + 1));
  }
  forget_later(pids["watchdog"]);
  for (const char* role : {"leader", "a", "b", "c"})
    ASSERT_GT(pids[role], 0) << role;
  if (death == HostDeath::kIsKilled) {
    ASSERT_EQ(report.next(), "ready");
    ::kill(host, SIGKILL);
  }

  // The host is gone; the watchdog ends the tree, b included (another session), then exits.
  for (const char* role : {"leader", "a", "b", "c"}) {
    EXPECT_TRUE(eventually([&] { return gone(pids[role]); }))
        << role << " survived the host: " << testing::describe_process(pids[role]);
  }
  EXPECT_TRUE(eventually([&] { return gone(pids["watchdog"]); }))
      << "the watchdog lingers: " << testing::describe_process(pids["watchdog"]);
  EXPECT_TRUE(eventually([&] { return testing::tagged_processes(tag_).empty(); }))
      << "left: " << ::testing::PrintToString(testing::tagged_processes(tag_));
}

TEST_P(ReaperHostDeathTest, TheLeaderKeepsItsPipesUntilItsTreeIsEnded) {
  // The leader exits at the end of its input. Had it seen that end when the host died, it would
  // have exited before the watchdog acted, and b (another session) would have gone to init, out
  // of its tree. The watchdog holds copies of the host's ends of its pipes.
  const HostDeath death = GetParam();
  const std::vector<std::string> env = tagged_env();
  int host = -1;
  const int report_fd = fork_host(
      [&](int out) {
        auto reaper = start_reaper();
        if (!reaper) return put(out, "error " + reaper.error().message);
        put(out, "watchdog " + std::to_string(reaper->pid()));
        auto leader = spawn({{testing::fixture_path(), "detached"}, {}, env});
        if (!leader) return put(out, "error " + leader.error().message);
        const int pipes[] = {leader->stdin_fd, leader->stdout_fd, leader->stderr_fd};
        if (!reaper->add(leader->pid, pipes)) return put(out, "error add");
        LineReader tree(leader->stdout_fd);
        for (int i = 0; i < 3; ++i)
          put(out, tree.next().value_or("error tree"));
        if (death == HostDeath::kExits) ::_exit(0);
        put(out, "ready");
        ::close(out);
        ::pause();
      },
      host);
  ASSERT_GE(report_fd, 0);
  LineReader report(report_fd);
  std::map<std::string, int> pids;
  for (int i = 0; i < 4; ++i) {
    const auto line = report.next();
    ASSERT_TRUE(line) << "the host said too little";
    ASSERT_FALSE(line->starts_with("error")) << *line;
    const std::size_t space = line->find(' ');
    pids[line->substr(0, space)] = std::stoi(line->substr(space + 1));
  }
  forget_later(pids["watchdog"]);
  if (death == HostDeath::kIsKilled) {
    ASSERT_EQ(report.next(), "ready");
    ::kill(host, SIGKILL);
  }

  for (const char* role : {"leader", "b", "c"}) {
    EXPECT_TRUE(eventually([&] { return gone(pids[role]); }))
        << role << " survived the host: " << testing::describe_process(pids[role]);
  }
  EXPECT_TRUE(eventually([&] { return gone(pids["watchdog"]); }));
  EXPECT_TRUE(eventually([&] { return testing::tagged_processes(tag_).empty(); }));
}

INSTANTIATE_TEST_SUITE_P(Reaper, ReaperHostDeathTest,
                         ::testing::Values(HostDeath::kExits, HostDeath::kIsKilled),
                         [](const ::testing::TestParamInfo<HostDeath>& param_info) {
                           return param_info.param == HostDeath::kExits ? "HostExits"
                                                                        : "HostIsKilled";
                         });

using OrphanTest = ProcessTest;

TEST_F(OrphanTest, TheSubreaperHostFindsTheOrphansOfADeadLeaderByTheirEnvironment) {
  const std::vector<std::string> env = tagged_env();
  const std::string tag = tag_;
  int host = -1;
  const int report_fd = fork_host(
      [&](int out) {
        if (!become_subreaper()) return put(out, "error subreaper");
        // A leader that leaves an orphan and exits, and a living leader of the same plugin.
        auto dying = spawn({{testing::fixture_path(), "orphan-exit"}, {}, env});
        auto living = spawn({{testing::fixture_path(), "sleep"}, {}, env});
        if (!dying || !living) return put(out, "error spawn");
        const int orphan = testing::field_int(LineReader(dying->stdout_fd).next(), "child");
        put(out, "orphan " + std::to_string(orphan));
        put(out, "dying " + wait_exit(*dying).value_or(ExitStatus{}).describe());
        put(out, "parent " + std::to_string(testing::parent_of(orphan)));
        const std::set<int> known = {living->pid};
        put(out, "found " + join(adopted_orphans_of(tag, known)));
        put(out, "other " + join(adopted_orphans_of("dev.example.other", known)));
        put(out, "known " + join(adopted_orphans_of(tag, {living->pid, orphan})));
        put(out, "any " + join(adopted_orphans(known)));
        kill_tree(orphan);
        kill_tree(living->pid);
        std::vector<int> reaped;
        eventually([&] {
          const auto now = reap_adopted(known);
          reaped.insert(reaped.end(), now.begin(), now.end());
          return !reaped.empty();
        });
        put(out, "reaped " + join(reaped));
        put(out, "living " + wait_exit(*living).value_or(ExitStatus{}).describe());
      },
      host);
  ASSERT_GE(report_fd, 0);
  auto report = read_report(report_fd);
  ASSERT_EQ(report.count("error"), 0u) << report["error"];
  const std::string orphan = report["orphan"];
  ASSERT_FALSE(orphan.empty());
  EXPECT_EQ(report["dying"], "exit code 0");
  EXPECT_EQ(report["parent"], std::to_string(host)) << "adopted by the subreaper host";
  EXPECT_EQ(report["found"], orphan);
  EXPECT_EQ(report["other"], "") << "another plugin's id";
  EXPECT_EQ(report["known"], "") << "a known child is not an orphan";
  EXPECT_EQ(report["any"], orphan) << "an orphan is found whatever its environment";
  EXPECT_EQ(report["reaped"], orphan);
  EXPECT_EQ(report["living"], "killed by signal 9 (SIGKILL)") << "its status was not stolen";
}

// The test's process made a subreaper or not for a while, then as it was.
class SubreaperFor {
 public:
  explicit SubreaperFor(bool on) : was_(is_subreaper()) { set(on); }
  ~SubreaperFor() { set(was_); }
  SubreaperFor(const SubreaperFor&) = delete;
  SubreaperFor& operator=(const SubreaperFor&) = delete;
  static void set(bool on) { ::prctl(PR_SET_CHILD_SUBREAPER, on ? 1 : 0, 0, 0, 0); }

 private:
  bool was_;
};

// reap_adopted acts for a subreaper only: the test's process is one while each test runs.
class ReapAdoptedTest : public ProcessTest {
 protected:
  SubreaperFor subreaper_{true};
};

// Both exit at once; `known_first` decides which is the older child, the one a peek sees.
void check_reaps_only_the_unknown(bool known_first,
                                  const std::function<Spawned(std::vector<std::string>)>& start) {
  Spawned known;
  Spawned unknown;
  if (known_first) {
    known = start({"exit", "7"});
    unknown = start({"exit", "8"});
  } else {
    unknown = start({"exit", "8"});
    known = start({"exit", "7"});
  }
  ASSERT_GT(known.pid, 0);
  ASSERT_GT(unknown.pid, 0);
  ASSERT_TRUE(
      eventually([&] { return testing::is_zombie(known.pid) && testing::is_zombie(unknown.pid); }));

  const std::vector<int> reaped = reap_adopted({known.pid});

  EXPECT_THAT(reaped, Contains(unknown.pid));
  EXPECT_THAT(reaped, Not(Contains(known.pid)));
  EXPECT_TRUE(reap_adopted({known.pid}).empty()) << "nothing left but the known one";
  const auto status = wait_exit(known);
  ASSERT_TRUE(status) << "the known child's status was stolen";
  EXPECT_EQ(status->code, 7);
}

TEST_F(ReapAdoptedTest, NeverReapsAKnownChildSeenFirst) {
  check_reaps_only_the_unknown(true, [&](auto args) { return start_fixture(args); });
}

TEST_F(ReapAdoptedTest, NeverReapsAKnownChildSeenLast) {
  check_reaps_only_the_unknown(false, [&](auto args) { return start_fixture(args); });
}

// An app that embeds the host and is no subreaper adopts no orphan: a child of its process that
// the host did not start is the app's own. Neither the running one nor the ended one is touched,
// and the ended one's status is left for the app.
TEST_F(ProcessTest, ANonSubreaperTakesNoChildOfItsOwnForAnOrphan) {
  SubreaperFor subreaper(false);
  ASSERT_FALSE(is_subreaper());
  Spawned running = start_fixture({"sleep"});
  Spawned ended = start_fixture({"exit", "8"});
  ASSERT_GT(running.pid, 0);
  ASSERT_GT(ended.pid, 0);
  ASSERT_TRUE(eventually([&] { return testing::is_zombie(ended.pid); }));

  EXPECT_TRUE(adopted_orphans({}).empty());
  EXPECT_TRUE(reap_adopted({}).empty());
  EXPECT_EQ(try_wait(running.pid), std::nullopt) << "the app's running child was ended";
  const auto status = wait_exit(ended);
  ASSERT_TRUE(status) << "the app's child's status was taken";
  EXPECT_EQ(status->code, 8);
  SubreaperFor::set(true);
  EXPECT_THAT(adopted_orphans({}), Contains(running.pid)) << "a subreaper takes it for an orphan";
  ::kill(running.pid, SIGKILL);
  ASSERT_TRUE(wait_exit(running));
}

TEST_F(ReapAdoptedTest, ReapsNothingWhenNothingEnded) {
  Spawned running = start_fixture({"sleep"});
  EXPECT_TRUE(reap_adopted({}).empty());
  EXPECT_EQ(try_wait(running.pid), std::nullopt);
  EXPECT_FALSE(gone(running.pid));
}

}  // namespace
}  // namespace escouade::platform
