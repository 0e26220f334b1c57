// spawn, its pipes and errors, the child's starting state, and how exits are described.
// Real processes: process_fixture (see its modes) and, as a fixture program, /bin/sh.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "platform/exec_path.hpp"
#include "platform/os_process.hpp"
#include "platform/process.hpp"
#include "support/process_test_support.hpp"

namespace escouade::platform {
namespace {

using ::testing::ElementsAre;
using testing::fixture_path;
using ::testing::HasSubstr;
using testing::LineReader;
using testing::ProcessTest;

namespace fs = std::filesystem;

// A fresh folder under the system's temporary one, removed with the object.
class TempFolder {
 public:
  TempFolder() {
    std::string pattern = (fs::temp_directory_path() / "escouade-platform-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data()) ? fs::path(pattern) : fs::path();
  }
  ~TempFolder() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EAGAIN) {
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, 1000);
      continue;
    }
    ASSERT_GT(n, 0);
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

TEST(ExecPath, APathWithASlashIsTheOnlyCandidate) {
  EXPECT_THAT(exec_candidates("./guard", "/usr/bin:/bin"), ElementsAre("./guard"));
  EXPECT_THAT(exec_candidates("/opt/x/guard", "/usr/bin"), ElementsAre("/opt/x/guard"));
  EXPECT_THAT(exec_candidates("bin/guard", "/usr/bin"), ElementsAre("bin/guard"));
}

TEST(ExecPath, ANameIsLookedUpInEachFolderOfPath) {
  EXPECT_THAT(exec_candidates("git", "/usr/local/bin:/usr/bin/"),
              ElementsAre("/usr/local/bin/git", "/usr/bin/git"));
  // An empty folder is the working folder, as for execvp.
  EXPECT_THAT(exec_candidates("git", ":/bin:"), ElementsAre("./git", "/bin/git", "./git"));
  EXPECT_TRUE(exec_candidates("", "/bin").empty());
}

TEST(ExecPath, PathComesFromTheRequestFirst) {
  EXPECT_EQ(search_path({"A=1", "PATH=/only/here", "PATH=/not/this"}), "/only/here");
  EXPECT_FALSE(search_path({"A=1"}).empty());  // the host's, or the system's default
}

TEST(ExitStatus, DescribesACodeOrASignal) {
  EXPECT_EQ((ExitStatus{3, std::nullopt}).describe(), "exit code 3");
  EXPECT_EQ((ExitStatus{std::nullopt, SIGKILL}).describe(), "killed by signal 9 (SIGKILL)");
  EXPECT_EQ((ExitStatus{std::nullopt, SIGTERM}).describe(), "killed by signal 15 (SIGTERM)");
  EXPECT_EQ(signal_name(SIGSEGV), "SIGSEGV");
  EXPECT_EQ(signal_name(SIGRTMIN + 2), "SIGRTMIN+2");
  EXPECT_EQ(signal_name(0), "");
  EXPECT_EQ((ExitStatus{std::nullopt, 0}).describe(), "killed by signal 0");
}

// Each member of a group by its pid: its group, and whether it is a zombie.
using Members = std::map<int, std::pair<int, bool>>;

Members by_pid(const std::vector<ProcEntry>& rows) {
  Members members;
  for (const ProcEntry& e : rows)
    members[e.pid] = {e.pgid, e.zombie};
  return members;
}

// The members of `groups` by the whole table: what a search of them must find.
Members members_in_table(const std::unordered_set<int>& groups) {
  Members members;
  for (const ProcEntry& e : read_process_table())
    if (groups.count(e.pgid)) members[e.pid] = {e.pgid, e.zombie};
  return members;
}

class Spawn : public ProcessTest {
 protected:
  // Two groups for the searches of a group's members: `first` leads one and runs; `second`
  // led the other and ended (a zombie, not reaped), leaving its child in it (`orphan`).
  struct TwoGroups {
    Spawned first, second;
    int orphan = 0;
  };
  void start_two_groups(TwoGroups& g) {
    g.first = start_fixture({"sleep"});
    g.second = start_fixture({"orphan-exit"});
    LineReader out(g.second.stdout_fd);
    const auto said = out.next();
    ASSERT_TRUE(said && said->starts_with("child ")) << said.value_or("nothing");
    g.orphan = std::stoi(said->substr(6));
    ASSERT_TRUE(testing::eventually([&] { return testing::is_zombie(g.second.pid); }));
  }
};

TEST_F(Spawn, EchoesThroughThePipes) {
  Spawned child = start_fixture({"echo"});
  ASSERT_GT(child.pid, 0);
  write_all(child.stdin_fd, "hello\nsecond line\n");
  LineReader out(child.stdout_fd);
  LineReader err(child.stderr_fd);
  EXPECT_EQ(out.next(), "hello");
  EXPECT_EQ(out.next(), "second line");
  EXPECT_EQ(err.next(), "err hello");
  EXPECT_EQ(err.next(), "err second line");
  ::close(std::exchange(child.stdin_fd, -1));  // end of its input: it exits
  EXPECT_EQ(out.next(), std::nullopt);
  const auto status = wait_exit(child);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->describe(), "exit code 0");
  close_fds(child);
}

TEST_F(Spawn, HostEndsAreNonBlockingAndCloseOnExec) {
  Spawned child = start_fixture({"echo"});
  ASSERT_GT(child.pid, 0);
  for (int fd : {child.stdin_fd, child.stdout_fd, child.stderr_fd}) {
    EXPECT_TRUE(::fcntl(fd, F_GETFL) & O_NONBLOCK) << fd;
    EXPECT_TRUE(::fcntl(fd, F_GETFD) & FD_CLOEXEC) << fd;
  }
  ASSERT_GE(child.pidfd, 0) << "this kernel has pidfd_open (5.3+)";
  EXPECT_TRUE(::fcntl(child.pidfd, F_GETFD) & FD_CLOEXEC);
  // The child's stdout is empty for now: a read does not block.
  char byte;
  EXPECT_EQ(::read(child.stdout_fd, &byte, 1), -1);
  EXPECT_EQ(errno, EAGAIN);
}

TEST_F(Spawn, ThePidfdBecomesReadableWhenTheChildEnds) {
  Spawned child = start_fixture({"sleep"});
  ASSERT_GE(child.pidfd, 0);
  pollfd p{child.pidfd, POLLIN, 0};
  EXPECT_EQ(::poll(&p, 1, 0), 0);
  ::kill(child.pid, SIGKILL);
  EXPECT_EQ(::poll(&p, 1, static_cast<int>(testing::kSafety.count() * 1000)), 1);
  const auto status = wait_exit(child);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->describe(), "killed by signal 9 (SIGKILL)");
}

TEST_F(Spawn, ReportsAnExitCode) {
  Spawned child = start_fixture({"exit", "3"});
  const auto status = wait_exit(child);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->code, 3);
  EXPECT_EQ(status->signal, std::nullopt);
  EXPECT_EQ(status->describe(), "exit code 3");
  EXPECT_EQ(wait_exit(child), std::nullopt) << "reaped once only";
}

TEST_F(Spawn, OwnChildrenAreTheTablesChildrenOfThisProcess) {
  Spawned running = start_fixture({"sleep"});
  Spawned ended = start_fixture({"exit", "0"});
  ASSERT_TRUE(testing::eventually([&] { return testing::is_zombie(ended.pid); }));
  const auto own = own_children();
  ASSERT_TRUE(own) << "this kernel lists a task's children (CONFIG_PROC_CHILDREN)";
  std::map<int, bool> listed;  // pid -> zombie
  for (const ProcEntry& e : *own)
    listed[e.pid] = e.zombie;
  std::map<int, bool> scanned;
  for (const ProcEntry& e : read_process_table())
    if (e.ppid == ::getpid()) scanned[e.pid] = e.zombie;
  EXPECT_EQ(listed, scanned);
  EXPECT_EQ(listed.count(running.pid), 1u);
  EXPECT_FALSE(listed[running.pid]);
  EXPECT_TRUE(listed[ended.pid]) << "an ended child not reaped yet is listed, as a zombie";
  ASSERT_TRUE(wait_exit(ended));
  ::kill(running.pid, SIGKILL);
  ASSERT_TRUE(wait_exit(running));
}

// The host asks for the children it did not start: those it names are left out, the others
// listed as before.
TEST_F(Spawn, OwnChildrenLeaveOutThosePassedOver) {
  Spawned known = start_fixture({"sleep"});
  Spawned other = start_fixture({"sleep"});
  Spawned ended = start_fixture({"exit", "0"});
  ASSERT_TRUE(testing::eventually([&] { return testing::is_zombie(ended.pid); }));
  const auto own = own_children({known.pid});
  ASSERT_TRUE(own) << "this kernel lists a task's children (CONFIG_PROC_CHILDREN)";
  std::map<int, bool> listed;  // pid -> zombie
  for (const ProcEntry& e : *own)
    listed[e.pid] = e.zombie;
  EXPECT_EQ(listed.count(known.pid), 0u) << "passed over";
  ASSERT_EQ(listed.count(other.pid), 1u);
  EXPECT_FALSE(listed[other.pid]);
  ASSERT_EQ(listed.count(ended.pid), 1u);
  EXPECT_TRUE(listed[ended.pid]);
  EXPECT_EQ(own_children({known.pid, other.pid, ended.pid})->size(), own->size() - 2)
      << "each one named is left out, the rest as before";
  ASSERT_TRUE(wait_exit(ended));
  for (const Spawned* s : {&known, &other}) {
    ::kill(s->pid, SIGKILL);
    ASSERT_TRUE(wait_exit(*s));
  }
}

// What the freeze of kill_tree reads instead of the whole table: a group's members and single
// rows, the same as the table's.
TEST_F(Spawn, AGroupsMembersAndOneRowAreTheTablesOwn) {
  TwoGroups g;
  ASSERT_NO_FATAL_FAILURE(start_two_groups(g));
  auto& [first, second, orphan] = g;
  const std::unordered_set<int> groups{first.pid, second.pid};
  const auto members = group_members(groups);
  ASSERT_TRUE(members) << "Linux lists a group's members without the whole table";
  Members listed = by_pid(*members);
  EXPECT_EQ(listed, members_in_table(groups));
  EXPECT_EQ(listed[first.pid], std::make_pair(first.pid, false));
  EXPECT_EQ(listed[second.pid], std::make_pair(second.pid, true)) << "an ended leader, a zombie";
  EXPECT_EQ(listed[orphan], std::make_pair(second.pid, false)) << "its orphan, in its group";
  EXPECT_TRUE(group_members({}).value().empty());

  const auto row = read_process(first.pid);
  ASSERT_TRUE(row);
  EXPECT_EQ(row->ppid, ::getpid());
  EXPECT_EQ(row->pgid, first.pid);
  EXPECT_FALSE(row->zombie || row->stopped);
  ::kill(orphan, SIGKILL);
  ::kill(first.pid, SIGKILL);
  ASSERT_TRUE(wait_exit(first));
  ASSERT_TRUE(wait_exit(second));
  EXPECT_EQ(read_process(first.pid), std::nullopt) << "reaped: gone";
}

// As a subreaper (the host), the freeze looks for a group's members among this process's own
// children: a leader's orphan comes here when the leader ends. They are the table's own; not a
// subreaper, or a leader that is not a child of this process, and the members are not looked for
// there (nullopt: the caller scans every pid).
TEST_F(Spawn, AsASubreaperAGroupsMembersAreFoundAmongItsOwnChildren) {
  ASSERT_TRUE(become_subreaper());
  struct NoLongerSubreaper {
    ~NoLongerSubreaper() { ::prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0); }
  } after;
  TwoGroups g;
  ASSERT_NO_FATAL_FAILURE(start_two_groups(g));
  auto& [first, second, orphan] = g;
  ASSERT_TRUE(testing::eventually([&] {
    const auto row = read_process(g.orphan);
    return row && row->ppid == ::getpid();
  })) << "the orphan of a leader that ended comes to its subreaper";

  const std::unordered_set<int> groups{first.pid, second.pid};
  const auto members = group_members_among_own_children(groups, {first.pid, second.pid});
  ASSERT_TRUE(members) << "a subreaper whose leaders are its children, on a kernel with the lists";
  Members listed = by_pid(*members);
  EXPECT_EQ(listed, members_in_table(groups));
  EXPECT_EQ(listed[second.pid], std::make_pair(second.pid, true)) << "an ended leader, a zombie";
  EXPECT_EQ(listed[orphan], std::make_pair(second.pid, false)) << "its orphan, in its group";
  EXPECT_TRUE(group_members_among_own_children({}, {first.pid}).value().empty());

  EXPECT_EQ(group_members_among_own_children(groups, {first.pid, ::getppid()}), std::nullopt)
      << "a leader that is not a child of this process";
  ::prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
  EXPECT_EQ(group_members_among_own_children(groups, {first.pid, second.pid}), std::nullopt)
      << "not a subreaper: an orphan may have gone elsewhere";

  ::kill(orphan, SIGKILL);
  ::kill(first.pid, SIGKILL);
  ASSERT_TRUE(wait_exit(first));
  ASSERT_TRUE(wait_exit(second));
  Spawned adopted;
  adopted.pid = orphan;
  EXPECT_TRUE(wait_exit(adopted)) << "the orphan was this process's child";
}

TEST_F(Spawn, TryWaitReturnsNothingWhileTheChildRuns) {
  Spawned child = start_fixture({"sleep"});
  EXPECT_EQ(try_wait(child.pid), std::nullopt);
  ::kill(child.pid, SIGTERM);
  std::optional<ExitStatus> status;
  EXPECT_TRUE(testing::eventually([&] { return (status = try_wait(child.pid)).has_value(); }));
  ASSERT_TRUE(status);
  EXPECT_EQ(status->describe(), "killed by signal 15 (SIGTERM)");
}

TEST_F(Spawn, ReportsAMissingProgram) {
  TempFolder folder;
  auto spawned = start({{"./no-such-program"}, folder.path(), tagged_env()});
  ASSERT_FALSE(spawned);
  EXPECT_EQ(spawned.error().code, kOsError);
  EXPECT_EQ(spawned.error().message, "cannot start ./no-such-program: No such file or directory");
}

TEST_F(Spawn, ReportsAProgramItMayNotRun) {
  TempFolder folder;
  std::ofstream(folder.path() / "guard") << "#!/bin/sh\nexit 0\n";
  fs::permissions(folder.path() / "guard", fs::perms::owner_read | fs::perms::owner_write);
  auto spawned = start({{"./guard"}, folder.path(), tagged_env()});
  ASSERT_FALSE(spawned);
  EXPECT_EQ(spawned.error().message, "cannot start ./guard: Permission denied");
}

TEST_F(Spawn, NeverRunsAScriptWithoutItsInterpreterLine) {
  // execvp would hand this to /bin/sh; spawn runs no shell.
  TempFolder folder;
  std::ofstream(folder.path() / "script") << "exit 0\n";
  fs::permissions(folder.path() / "script", fs::perms::owner_all);
  auto spawned = start({{"./script"}, folder.path(), tagged_env()});
  ASSERT_FALSE(spawned);
  EXPECT_EQ(spawned.error().message, "cannot start ./script: Exec format error");
}

TEST_F(Spawn, ReportsANameFoundNowhereOnPath) {
  TempFolder folder;
  SpawnRequest request{{"escouade-no-such-program"}, {}, {"PATH=" + folder.path().string()}};
  auto spawned = start(request);
  ASSERT_FALSE(spawned);
  EXPECT_EQ(spawned.error().message,
            "cannot start escouade-no-such-program: No such file or directory");
}

TEST_F(Spawn, ReportsAMissingFolder) {
  auto spawned = start({{fixture_path(), "exit"}, "/nonexistent/escouade", tagged_env()});
  ASSERT_FALSE(spawned);
  EXPECT_EQ(spawned.error().message, "cannot start " + fixture_path() +
                                         ": cannot enter its folder /nonexistent/escouade: "
                                         "No such file or directory");
}

// Each thread that starts programs keeps its child's stack from one start to the next, and a
// child that cannot reach exec writes its report into its parent's memory: starts from several
// threads at once, a failing one between two good ones on each, each reported as itself.
TEST_F(Spawn, StartsFromSeveralThreadsAtOnceAreEachReportedAsThemselves) {
  constexpr int kThreads = 4;
  constexpr int kRounds = 20;
  std::vector<std::string> problems[kThreads];
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRounds; ++i) {
        const int code = (t * kRounds + i) % 7;
        auto good = spawn({{fixture_path(), "exit", std::to_string(code)}, {}, tagged_env()});
        if (!good) {
          problems[t].push_back("a good start failed: " + good.error().message);
          continue;
        }
        const auto status = wait_exit(*good);
        close_fds(*good);
        if (!status || status->code != code)
          problems[t].push_back("exit " + std::to_string(code) + " came back otherwise");
        auto bad = spawn({{fixture_path(), "exit"}, "/nonexistent/escouade", tagged_env()});
        if (bad) {
          problems[t].push_back("a start in a missing folder succeeded");
          (void)wait_exit(*bad);
          close_fds(*bad);
        } else if (bad.error().message.find("cannot enter its folder") == std::string::npos) {
          problems[t].push_back("a missing folder reported as: " + bad.error().message);
        }
      }
    });
  }
  for (auto& thread : threads)
    thread.join();
  for (int t = 0; t < kThreads; ++t)
    EXPECT_THAT(problems[t], ::testing::IsEmpty()) << "thread " << t;
}

// What runs is the file resolved at load, not what PATH finds at spawn: an empty PATH entry
// means the current folder, where a plugin could keep a program of the same name.
TEST_F(Spawn, RunsExactlyTheExecutableItWasGivenWhateverPathSays) {
  TempFolder folder;
  std::ofstream(folder.path() / "escouade-test-fixture") << "#!/bin/sh\nexit 9\n";
  fs::permissions(folder.path() / "escouade-test-fixture", fs::perms::owner_all);
  SpawnRequest request{{"escouade-test-fixture", "exit", "6"},
                       folder.path(),
                       {"PATH=:/usr/bin", "ESCOUADE_PLUGIN_ID=" + tag_},
                       fixture_path()};
  auto spawned = start(request);
  ASSERT_TRUE(spawned) << spawned.error().message;
  const auto status = wait_exit(*spawned);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->code, 6) << "the folder's own program ran";
}

// A start that fails for want of room (here: no process may be added, as under a fork bomb) is
// told apart from a program that cannot run: the supervisor does not count it as the plugin's
// crash. In a child of the test, as a user that is not root (root is exempt from
// RLIMIT_NPROC), with no process allowed: its fork fails with EAGAIN.
TEST_F(Spawn, AStartWithoutRoomIsExhaustedNotAFaultOfTheProgram) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(3);
    const rlimit none{0, 0};
    if (::setrlimit(RLIMIT_NPROC, &none) != 0) ::_exit(3);
    auto spawned = spawn({{fixture_path(), "exit"}, {}, tagged_env()});
    if (spawned) ::_exit(4);
    if (spawned.error().code != Errc::exhausted) ::_exit(5);
    if (spawned.error().message.find("Resource temporarily unavailable") == std::string::npos) {
      ::_exit(6);
    }
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  if (WEXITSTATUS(status) == 3) GTEST_SKIP() << "cannot take another user's limits here";
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "4: it started; 5: not Errc::exhausted; 6: the reason is not EAGAIN's";
}

TEST_F(Spawn, RefusesAnEmptyCommand) {
  auto spawned = start({{}, {}, tagged_env()});
  ASSERT_FALSE(spawned);
  EXPECT_THAT(spawned.error().message, HasSubstr("empty"));
}

TEST_F(Spawn, FindsANameOnTheRequestsPath) {
  TempFolder folder;
  fs::create_symlink(fixture_path(), folder.path() / "escouade-test-fixture");
  SpawnRequest request{
      {"escouade-test-fixture", "exit", "4"},
      {},
      {"PATH=/nonexistent:" + folder.path().string(), "ESCOUADE_PLUGIN_ID=" + tag_}};
  auto spawned = start(request);
  ASSERT_TRUE(spawned) << spawned.error().message;
  const auto status = wait_exit(*spawned);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->code, 4);
}

TEST_F(Spawn, FallsBackToTheHostsPath) {
  // No PATH in the request: sh is found on the host's PATH.
  auto spawned = start({{"sh", "-c", "exit 5"}, {}, {"ESCOUADE_PLUGIN_ID=" + tag_}});
  ASSERT_TRUE(spawned) << spawned.error().message;
  const auto status = wait_exit(*spawned);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->code, 5);
}

TEST_F(Spawn, ResolvesARelativePathFromItsFolder) {
  TempFolder folder;
  fs::create_symlink(fixture_path(), folder.path() / "fixture");
  ASSERT_NE(fs::current_path(), folder.path());
  auto spawned = start({{"./fixture", "state"}, folder.path(), tagged_env()});
  ASSERT_TRUE(spawned) << spawned.error().message;
  LineReader out(spawned->stdout_fd);
  std::string cwd;
  while (auto line = out.next()) {
    if (line->rfind("cwd ", 0) == 0) {
      cwd = *line;
      break;
    }
  }
  EXPECT_EQ(cwd, "cwd " + fs::canonical(folder.path()).string());
}

TEST_F(Spawn, GivesExactlyTheRequestedEnvironment) {
  const std::vector<std::string> env = {"A=1", "B=two words", "ESCOUADE_PLUGIN_ID=" + tag_,
                                        "EMPTY="};
  auto spawned = start({{fixture_path(), "env"}, {}, env});
  ASSERT_TRUE(spawned) << spawned.error().message;
  LineReader out(spawned->stdout_fd);
  std::vector<std::string> seen;
  for (std::optional<std::string> line; (line = out.next()) && *line != "end";) {
    seen.push_back(*line);
  }
  EXPECT_EQ(seen, env);
}

TEST_F(Spawn, TheChildLeadsItsOwnProcessGroup) {
  Spawned child = start_fixture({"sleep"});
  ASSERT_GT(child.pid, 0);
  EXPECT_EQ(::getpgid(child.pid), child.pid);
  EXPECT_NE(::getpgid(child.pid), ::getpgrp());
  EXPECT_EQ(::getsid(child.pid), ::getsid(0)) << "a new group, not a new session";
}

TEST_F(Spawn, TheChildStartsWithDefaultSignalsAndOnlyItsStdio) {
  // Disturb this process: an ignored signal, a blocked one, an inheritable descriptor.
  struct sigaction ignore {};
  struct sigaction previous {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGUSR1, &ignore, &previous);
  sigset_t block;
  sigset_t previous_mask;
  ::sigemptyset(&block);
  ::sigaddset(&block, SIGUSR2);
  ::sigprocmask(SIG_BLOCK, &block, &previous_mask);
  const int leaked = ::open("/dev/null", O_RDONLY);  // no O_CLOEXEC on purpose

  Spawned child = start_fixture({"state"});

  ::close(leaked);
  ::sigprocmask(SIG_SETMASK, &previous_mask, nullptr);
  ::sigaction(SIGUSR1, &previous, nullptr);

  ASSERT_GT(child.pid, 0);
  LineReader out(child.stdout_fd);
  std::map<std::string, std::string> state;
  for (std::optional<std::string> line; (line = out.next());) {
    const std::size_t space = line->find(' ');
    state[line->substr(0, space)] = line->substr(space + 1);
  }
  EXPECT_EQ(state["pgid"], std::to_string(child.pid));
  EXPECT_EQ(state["sigblk"], "0000000000000000");
  EXPECT_EQ(state["sigign"], "0000000000000000");
  EXPECT_EQ(state["fds"], "0 1 2");
}

TEST_F(Spawn, GivenDescriptorsArriveAsThreeAndFourAndNothingElse) {
  // Two pipes: the child must receive each as the number of its rank (3, then 4), whatever
  // numbers they have in this process, and no other descriptor.
  int first[2];
  int second[2];
  ASSERT_EQ(::pipe2(first, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(second, O_CLOEXEC), 0);
  const int leaked = ::open("/dev/null", O_RDONLY);  // no O_CLOEXEC on purpose
  SpawnRequest request;
  request.argv = {fixture_path(), "given"};
  request.env = tagged_env();
  request.descriptors = {first[1], second[1]};
  auto child = start(request);
  ::close(leaked);
  ::close(first[1]);
  ::close(second[1]);
  ASSERT_TRUE(child) << child.error().message;
  LineReader out(child->stdout_fd);
  std::map<std::string, std::string> state;
  for (std::optional<std::string> line; (line = out.next());) {
    const std::size_t space = line->find(' ');
    state[line->substr(0, space)] = line->substr(space + 1);
  }
  EXPECT_EQ(state["fds"], "0 1 2 3 4");
  // The child's 3 is the first pipe's write end, its 4 the second's: each pipe got its number,
  // then its end once the child exited (nothing else held them).
  ASSERT_TRUE(wait_exit(*child));
  char buf[8] = {};
  EXPECT_EQ(::read(first[0], buf, sizeof buf), 2);
  EXPECT_EQ(std::string(buf, 2), "3\n");
  EXPECT_EQ(::read(second[0], buf, sizeof buf), 2);
  EXPECT_EQ(std::string(buf, 2), "4\n");
  EXPECT_EQ(::read(first[0], buf, 1), 0);
  EXPECT_EQ(::read(second[0], buf, 1), 0);
  ::close(first[0]);
  ::close(second[0]);
}

TEST_F(Spawn, RefusesMoreThanEightDescriptors) {
  SpawnRequest request;
  request.argv = {fixture_path(), "exit"};
  request.descriptors = std::vector<int>(9, 0);
  auto child = start(request);
  ASSERT_FALSE(child);
  EXPECT_THAT(child.error().message, HasSubstr("more than 8 descriptors"));
}

TEST_F(Spawn, TheChildIsASubreaperAfterExec) {
  // PR_SET_CHILD_SUBREAPER has no field in /proc: show it by its effect. The fixture's middle
  // process exits, leaving a grandchild whose new parent must be the leader, not init.
  Spawned child = start_fixture({"orphan"});
  ASSERT_GT(child.pid, 0);
  LineReader out(child.stdout_fd);
  const int grandchild = testing::field_int(out.next(), "grandchild");
  ASSERT_GT(grandchild, 0);
  ASSERT_EQ(out.next(), "middle-reaped");
  EXPECT_EQ(testing::parent_of(grandchild), child.pid);
}

TEST_F(Spawn, WaitingForAProcessThatIsNotAChildGivesNothing) {
  Spawned not_ours;
  not_ours.pid = 1;
  EXPECT_EQ(wait_exit(not_ours), std::nullopt);
  EXPECT_EQ(try_wait(1), std::nullopt);
  EXPECT_EQ(try_wait(-1), std::nullopt);
}

}  // namespace
}  // namespace escouade::platform
