#include "support/process_test_support.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "platform/os_process.hpp"

extern char** environ;

namespace escouade::platform::testing {
namespace {

using Clock = std::chrono::steady_clock;

// Reaps `pid` if it is an unreaped child of ours, killing it first if it still runs.
void kill_and_reap_child(int pid) {
  int status = 0;
  const pid_t r = ::waitpid(pid, &status, WNOHANG);
  if (r != 0) return;  // reaped now, or not (or no longer) our child: nothing to do
  ::kill(pid, SIGKILL);
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

std::string stat_of(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

std::string fixture_path() {
  return ESCOUADE_PROCESS_FIXTURE;
}

std::optional<std::string> LineReader::next() {
  const auto deadline = Clock::now() + kSafety;
  for (;;) {
    const std::size_t nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    if (eof_) return std::nullopt;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return std::nullopt;
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char chunk[4096];
    const ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) {
      eof_ = true;
      continue;
    }
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

bool eventually(const std::function<bool()>& done) {
  const auto deadline = Clock::now() + kSafety;
  while (Clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return done();
}

std::vector<int> tagged_processes(const std::string& tag) {
  std::vector<int> out;
  const std::string entry = "ESCOUADE_PLUGIN_ID=" + tag;
  for (const ProcEntry& e : read_process_table()) {
    if (!e.zombie && environment_has(e.pid, entry)) out.push_back(e.pid);
  }
  return out;
}

bool is_zombie(int pid) {
  const std::string line = stat_of(pid);
  const std::size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() &&
         (line[close + 2] == 'Z' || line[close + 2] == 'X');
}

bool gone(int pid) {
  return stat_of(pid).empty() || is_zombie(pid);
}

std::string describe_process(int pid) {
  std::ifstream wchan("/proc/" + std::to_string(pid) + "/wchan");
  std::string channel;
  std::getline(wchan, channel);
  return stat_of(pid) + " wchan " + channel;
}

int parent_of(int pid) {
  const std::string line = stat_of(pid);
  const std::size_t close = line.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(line.substr(close + 2));
  char state;
  int ppid = -1;
  rest >> state >> ppid;
  return ppid;
}

int field_int(const std::optional<std::string>& line, const std::string& key) {
  if (!line || !line->starts_with(key + " ")) return -1;
  return std::stoi(line->substr(key.size() + 1));
}

void ProcessTest::SetUp() {
  static int counter = 0;
  tag_ = "test.platform." + std::to_string(::getpid()) + "." + std::to_string(++counter);
}

void ProcessTest::TearDown() {
  // Whatever still carries the tag, wherever it was re-parented: kill it until none is left.
  // (Forking fixtures stop growing once most of them are dead.)
  for (int round = 0; round < 1000; ++round) {
    const std::vector<int> left = tagged_processes(tag_);
    if (left.empty()) break;
    for (int pid : left)
      ::kill(pid, SIGSTOP);
    for (int pid : left)
      ::kill(pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  for (Spawned& s : spawned_) {
    kill_and_reap_child(s.pid);
    close_fds(s);
  }
  for (int pid : forked_)
    kill_and_reap_child(pid);
  for (int fd : pipes_)
    ::close(fd);
  for (int pid : strays_) {
    std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
    std::string name;
    std::getline(comm, name);
    if (name == "escouade-reaper") ::kill(pid, SIGKILL);
  }
  EXPECT_TRUE(tagged_processes(tag_).empty()) << "processes of " << tag_ << " survived the test";
}

std::vector<std::string> ProcessTest::tagged_env(const std::vector<std::string>& extra) const {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (!std::string_view(*e).starts_with("ESCOUADE_PLUGIN_ID=")) env.emplace_back(*e);
  }
  env.push_back("ESCOUADE_PLUGIN_ID=" + tag_);
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

Result<Spawned> ProcessTest::start(const SpawnRequest& request) {
  auto spawned = spawn(request);
  if (spawned) spawned_.push_back(*spawned);
  return spawned;
}

Spawned ProcessTest::start_fixture(const std::vector<std::string>& args) {
  SpawnRequest request;
  request.argv.push_back(fixture_path());
  request.argv.insert(request.argv.end(), args.begin(), args.end());
  request.env = tagged_env();
  auto spawned = start(request);
  EXPECT_TRUE(spawned) << spawned.error().message;
  return spawned ? *spawned : Spawned{};
}

int ProcessTest::fork_host(const std::function<void(int out_fd)>& body, int& host_pid) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    ADD_FAILURE() << "pipe2 failed";
    return -1;
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    body(fds[1]);
    ::_exit(0);
  }
  ::close(fds[1]);
  if (pid < 0) {
    ADD_FAILURE() << "fork failed";
    ::close(fds[0]);
    return -1;
  }
  forked_.push_back(pid);
  pipes_.push_back(fds[0]);
  host_pid = pid;
  return fds[0];
}

}  // namespace escouade::platform::testing
