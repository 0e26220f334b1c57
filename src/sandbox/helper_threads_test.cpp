// The engine's helper threads in a running helper (spidermonkey/helper_threads.hpp): they are the
// helper's own, named and lowered as engine.hpp says, none of the engine's own pool runs, and
// plugins whose engine compiles on them (Ion for a hot run.js loop, a run.wasm module) answer.
// Read from /proc/<pid>/task/ (readable though the helper is not dumpable); nothing is timed.

#include <signal.h>

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "sandbox/sandbox_test_fixture.hpp"
#include "sandbox/spidermonkey/engine.hpp"

namespace escouade::sandbox {
namespace {

struct Thread {
  int tid = 0;
  std::string name;
  int nice = 0;
  char state = 0;  // R running, S sleeping, T stopped...
};

// The threads of process `pid`: their names (comm) and nice values (field 19 of their stat).
std::vector<Thread> threads_of(int pid) {
  std::vector<Thread> out;
  std::error_code ec;
  const fs::path tasks = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& entry : fs::directory_iterator(tasks, ec)) {
    Thread t;
    t.tid = std::stoi(entry.path().filename().string());
    std::ifstream comm(entry.path() / "comm");
    std::getline(comm, t.name);
    std::ifstream stat_file(entry.path() / "stat");
    std::string stat;
    std::getline(stat_file, stat);
    // The name, in parentheses, may hold spaces ("JS Helper"): the fields are counted after it,
    // the first there being the third.
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;  // the thread ended meanwhile
    std::istringstream fields(stat.substr(close + 1));
    std::string field;
    for (int i = 3; i <= 19 && fields >> field; ++i) {
      if (i == 3) t.state = field.empty() ? 0 : field[0];
      if (i == 19) t.nice = std::stoi(field);
    }
    out.push_back(std::move(t));
  }
  return out;
}

class SandboxHelperThreads : public Sandbox {
 protected:
  void start_wasm(const std::string& module) {
    runtime::ProgramSpec spec;
    spec.plugin_id = "dev.test.wasm";
    spec.kind = runtime::RunKind::wasm;
    spec.folder = ESCOUADE_WASM_FIXTURES;
    spec.module = fs::path(ESCOUADE_WASM_FIXTURES) / module;
    ASSERT_TRUE(fs::exists(spec.module)) << spec.module;
    Sandbox::start(spec);
  }
  void handshake() {
    call(1, "initialize", json::object{{"protocolVersion", 1}});
    ASSERT_EQ(result(1).at("protocolVersion"), 1);
  }

  // The running helper's threads hold what engine.hpp says: kHelperThreads of the helper's own,
  // at its nice (or at the helper's own, were it already lower), kWaitedThreads at the helper's
  // priority, none of the engine's pool, and the instance's thread (`instance_name`) at the
  // helper's priority.
  void expect_our_helper_threads(const std::string& instance_name) {
    const auto pid = program_->pid();
    ASSERT_TRUE(pid);
    const auto threads = threads_of(*pid);
    const auto main = std::find_if(threads.begin(), threads.end(),
                                   [&](const Thread& t) { return t.tid == *pid; });
    ASSERT_NE(main, threads.end());
    const int lowered = std::max(spidermonkey::kHelperThreadNice, main->nice);
    int ours = 0;
    int waited = 0;
    bool instance = false;
    for (const Thread& t : threads) {
      EXPECT_NE(t.name, "JS Helper") << "a thread of the engine's own pool";
      if (t.name == spidermonkey::kHelperThreadName) {
        ++ours;
        EXPECT_EQ(t.nice, lowered) << "thread " << t.tid;
      } else {
        EXPECT_EQ(t.nice, main->nice) << t.name << ", thread " << t.tid;
      }
      if (t.name == spidermonkey::kWaitedThreadName) ++waited;
      if (t.name == instance_name) instance = true;
    }
    EXPECT_EQ(ours, spidermonkey::kHelperThreads);
    EXPECT_EQ(waited, spidermonkey::kWaitedThreads);
    EXPECT_TRUE(instance) << "no thread " << instance_name;
  }
};

// The loop of engine/hot.mjs, as the plugin computes it.
std::int64_t hot(std::int64_t n) {
  std::int64_t x = 1;
  for (std::int64_t i = 0; i < n; ++i)
    x = (x * 31 + i) % 1000003;
  return x;
}

// A hot loop: Ion compiles it on the helper threads while the baseline code runs it, and the
// compiled code takes over; garbage: the GC's background sweeping and decommit run there too.
TEST_F(SandboxHelperThreads, ARunJsPluginWhoseLoopIonCompilesAnswersRight) {
  start("engine", "hot.mjs");
  handshake();
  ASSERT_TRUE(in_a_helper());
  expect_our_helper_threads("escouade-js");
  constexpr std::int64_t kN = 2'000'000;
  for (int id = 2; id < 7; ++id) {
    call(id, "test/hot", json::object{{"n", kN}});
    EXPECT_EQ(result(id).at("x").to_number<std::int64_t>(), hot(kN)) << "call " << id;
  }
  for (int id = 7; id < 10; ++id) {
    call(id, "test/garbage", json::object{{"n", 300'000}});
    EXPECT_EQ(result(id).at("count"), 600'000) << "call " << id;
  }
  call(10, "test/hot", json::object{{"n", 1000}});
  EXPECT_EQ(result(10).at("x").to_number<std::int64_t>(), hot(1000));
  expect_our_helper_threads("escouade-js");
  EXPECT_FALSE(end_) << end_->reason;
}

// A run.wasm module is compiled on the helper's threads while its instance's thread waits (on
// those at its priority): that it answers is that they ran the engine's tasks.
TEST_F(SandboxHelperThreads, ARunWasmModuleCompiledOnThemAnswers) {
  start_wasm("echo.wasm");
  handshake();
  ASSERT_TRUE(in_a_helper());
  for (int id = 2; id < 50; ++id) {
    call(id, "test/echo", json::object{{"n", id}});
    EXPECT_EQ(result(id).at("echo"), (json::object{{"n", id}}));
  }
  expect_our_helper_threads("escouade-wasm");
  EXPECT_FALSE(end_) << end_->reason;
}

// A helper stopped in the middle of a turn and continued (a debugger's attach, job control, a
// cgroup freezer: SIGSTOP then SIGCONT) finishes the turn and goes on answering. Its watchdog
// waits with a timeout while a turn runs, and such a wait comes back through restart_syscall,
// which the filter must allow: without it the helper died of SIGSYS at the continue.
TEST_F(SandboxHelperThreads, AHelperStoppedAndContinuedInATurnGoesOn) {
  start("engine", "hot.mjs");
  handshake();
  ASSERT_TRUE(in_a_helper());
  const int pid = *program_->pid();
  constexpr std::int64_t kN = 50'000'000;  // a turn of a few hundred milliseconds of CPU
  const std::size_t lines = out_.size();
  call(2, "test/hot", json::object{{"n", kN}});
  const auto in_turn = [&] {
    for (const Thread& t : threads_of(pid))
      if (t.name == "escouade-js" && t.state == 'R') return true;
    return out_.size() > lines || end_.has_value();
  };
  ASSERT_TRUE(run_until(in_turn));
  ASSERT_EQ(out_.size(), lines) << "the turn ended before the stop";
  ASSERT_EQ(::kill(pid, SIGSTOP), 0);
  const auto stopped = [&] {
    const auto threads = threads_of(pid);
    return std::all_of(threads.begin(), threads.end(),
                       [](const Thread& t) { return t.state == 'T'; });
  };
  ASSERT_TRUE(run_until(stopped));
  ASSERT_EQ(::kill(pid, SIGCONT), 0);
  EXPECT_EQ(result(2).at("x").to_number<std::int64_t>(), hot(kN));
  call(3, "test/hot", json::object{{"n", 1000}});
  EXPECT_EQ(result(3).at("x").to_number<std::int64_t>(), hot(1000));
  EXPECT_FALSE(end_) << end_->reason;
}

}  // namespace
}  // namespace escouade::sandbox
