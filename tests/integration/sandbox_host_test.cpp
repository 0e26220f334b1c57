// run.js plugins through the whole host (its C++ API, as escouade-host builds it): the
// supervisor, the handshake, facts, calls, the journal, crashes and their restarts, refusals,
// shutdown, with the real engine and the fixtures of tests/fixtures/sandbox/.

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_to.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "base/sha256.hpp"
#include "base/temp_dir.hpp"
#include "host/host.hpp"
#include "host_answer.hpp"
#include "host_client.hpp"
#include "runtime/process_program.hpp"
#include "sandbox/sandbox_program.hpp"

namespace escouade::testing {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;

// fact() (host_client.hpp) as the generated type Host::publish takes.
proto::Fact typed_fact(std::string_view name, std::int64_t seq, std::string_view project = "p1") {
  return json::value_to<proto::Fact>(fact(name, seq, project));
}
namespace fs = std::filesystem;

const fs::path kFixtures = ESCOUADE_SANDBOX_FIXTURES;
const fs::path kWasmModules = ESCOUADE_WASM_FIXTURES;

// Whether `pid` is a sandbox helper now (its cmdline, readable though it is not dumpable).
bool is_helper(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::string argv0;
  std::getline(in, argv0, '\0');
  return argv0.ends_with("/escouade-sandbox");
}

// The parent of `pid`, from /proc/<pid>/stat; -1 when it is gone.
int parent_of(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(text.substr(close + 2));
  char state = 0;
  int ppid = -1;
  rest >> state >> ppid;
  return ppid;
}

// A run.wasm plugin's folder: `module` (built from tests/fixtures/sandbox/wasm/) as its
// plugin.wasm, beside a manifest whose run.wasm names the build file it would come from.
void write_wasm_plugin(const fs::path& dir, const std::string& id, const std::string& module) {
  fs::create_directories(dir);
  fs::copy_file(kWasmModules / module, dir / "plugin.wasm", fs::copy_options::overwrite_existing);
  std::ofstream(dir / "Makefile") << "plugin.wasm: echo.c\n";
  json::object manifest{
      {"id", id},
      {"version", "1.0.0"},
      {"name", "Sandbox " + module},
      {"run", json::object{{"wasm", "Makefile"}}},
      {"activation", json::array{"event:agent.status"}},
      {"permissions", json::object{{"events", json::array{"agent.status"}}, {"decide", true}}}};
  std::ofstream(dir / "escouade-plugin.json") << json::serialize(manifest);
}

class SandboxHost : public ::testing::Test {
 protected:
  SandboxHost()
      : processes_(io_.get_executor(), context_),
        sandboxed_(io_.get_executor(), context_, sandbox::SandboxOptions::installed()) {
    programs_.route(runtime::RunKind::command, &processes_);
    programs_.route(runtime::RunKind::js, &sandboxed_);
    programs_.route(runtime::RunKind::wasm, &sandboxed_);
    host::HostConfig config;
    config.data_dir = data_.path();
    config.base_env = {"PATH=/usr/bin:/bin"};
    host_ = std::make_unique<host::Host>(
        io_.get_executor(), config, programs_,
        [this](const supervisor::Status& s) { statuses_.push_back(s); });
  }
  ~SandboxHost() override {
    bool closed = false;
    host_->shutdown([&] { closed = true; });
    run_until([&] { return closed; });
  }

  // A plugin `id` whose run.js is `module` (a fixture of `from`), beside the echo fixture's
  // files (rules.json).
  std::string load(const std::string& id, const std::string& from, const std::string& module) {
    const fs::path dir = plugins_.path() / id;
    fs::create_directories(dir);
    fs::copy_file(kFixtures / "echo" / "rules.json", dir / "rules.json");
    fs::copy_file(kFixtures / from / module, dir / "plugin.mjs");
    json::object manifest{
        {"id", id},
        {"version", "1.0.0"},
        {"name", "Sandbox " + module},
        {"run", json::object{{"js", "plugin.mjs"}}},
        {"activation", json::array{"event:agent.status"}},
        {"permissions", json::object{{"events", json::array{"agent.status"}}, {"decide", true}}}};
    std::ofstream(dir / "escouade-plugin.json") << json::serialize(manifest);
    auto loaded = host_->load(dir);
    EXPECT_TRUE(loaded) << loaded.error().message;
    EXPECT_EQ(loaded->run, "js");
    EXPECT_TRUE(host_->enable(loaded->id, host::Project{"p1", "Project One", false, {}}));
    return loaded->id;
  }

  std::string load_wasm(const std::string& id, const std::string& module) {
    const fs::path dir = plugins_.path() / id;
    write_wasm_plugin(dir, id, module);
    auto loaded = host_->load(dir);
    EXPECT_TRUE(loaded) << loaded.error().message;
    EXPECT_EQ(loaded->run, "wasm");
    EXPECT_TRUE(host_->enable(loaded->id, host::Project{"p1", "Project One", false, {}}));
    return loaded->id;
  }

  supervisor::Status status(const std::string& id) { return (*host_->status(id))[0]; }
  void wait_state(const std::string& id, supervisor::State state) {
    run_until([&] { return status(id).state == state; });
  }
  Result<json::value> call(const std::string& id, const std::string& method, json::value params) {
    std::optional<Result<json::value>> out;
    host_->call(id, *rpc::Outgoing::request_value(method, params), std::chrono::milliseconds(30000),
                [&](Result<host::Answer> r) { keep_answer(out, std::move(r)); });
    run_until([&] { return out.has_value(); });
    return out ? *out : Result<json::value>(make_error(proto::ErrorCode::internal, "no answer"));
  }
  bool journal_has(const std::string& id, std::string_view text) {
    auto lines = host_->journal(id, 500);
    if (!lines) return false;
    for (const auto& l : *lines)
      if (l.find(text) != std::string::npos) return true;
    return false;
  }
  template <class P>
  void run_until(P done) {
    // A safety net only: nothing here is timed.
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!done() && std::chrono::steady_clock::now() < limit) {
      io_.restart();
      io_.run_one_for(std::chrono::milliseconds(20));
    }
    ASSERT_TRUE(done());
  }

  TempDir data_;
  TempDir plugins_;
  asio::io_context io_;
  runtime::ProcessContext context_;
  runtime::ProcessProgramFactory processes_;
  sandbox::SandboxProgramFactory sandboxed_;
  runtime::ProgramRouter programs_;
  std::vector<supervisor::Status> statuses_;
  std::unique_ptr<host::Host> host_;
};

TEST_F(SandboxHost, HandshakeFactsCallsAndShutdown) {
  auto id = load("dev.sandbox.echo", "echo", "plugin.mjs");
  for (int seq = 1; seq <= 3; ++seq)
    ASSERT_TRUE(host_->publish(typed_fact("agent.status", seq)));
  auto echo = call(id, "test/echo", json::object{{"hello", "sandbox"}});
  ASSERT_TRUE(echo) << echo.error().message;
  EXPECT_EQ(echo->at("echo"), (json::object{{"hello", "sandbox"}}));
  EXPECT_EQ(echo->at("facts"), 3);
  EXPECT_EQ(status(id).state, supervisor::State::running);
  ASSERT_TRUE(status(id).pid);  // its helper's
  EXPECT_TRUE(is_helper(*status(id).pid));
  EXPECT_TRUE(journal_has(id, "started: plugin.mjs in the sandbox"));
  EXPECT_TRUE(journal_has(id, "echo: started"));  // console.log, in its journal
  auto file = call(id, "test/file", json::object{{"name", "rules.json"}});
  ASSERT_TRUE(file);
  EXPECT_TRUE(file->as_object().contains("text"));

  bool closed = false;
  host_->shutdown([&] { closed = true; });
  run_until([&] { return closed; });
  EXPECT_EQ(status(id).state, supervisor::State::stopped);
  EXPECT_EQ(status(id).reason, "Escouade closed");
  EXPECT_EQ(status(id).crashes, 0);
}

TEST_F(SandboxHost, ADecisionIsAnsweredByTheSandboxedPlugin) {
  auto id = load("dev.sandbox.decide", "echo", "plugin.mjs");
  auto deny =
      call(id, "permissions/decide",
           json::parse(R"({"request":{"id":"r","kind":"command","input":{"command":"rm -rf /"}},)"
                       R"("project":{"id":"p1","name":"Project One","private":false}})"));
  ASSERT_TRUE(deny) << deny.error().message;
  EXPECT_EQ(deny->at("decision"), "deny");
  auto unknown = call(id, "test/nothing", json::object{});
  EXPECT_FALSE(unknown);  // its own -32601, relayed
  auto echo = call(id, "test/echo", 1);
  ASSERT_TRUE(echo);
  EXPECT_EQ(echo->at("echo"), 1);
}

// The host's own decision (its 500 ms delay) to a decide handler that loops: the turn keeps the
// 500 ms budget it began with after the host's delay passed and it answered "ask" itself, and
// the journal names the message the turn was handling.
TEST_F(SandboxHost, ALoopingDecideHandlerIsStoppedAt500msAndTheJournalNamesItsMessage) {
  auto id = load("dev.sandbox.decideloop", "echo", "plugin.mjs");
  ASSERT_TRUE(call(id, "test/echo", 0));
  const proto::DecideParams request = command_request("looping-decision", "spin forever");
  std::optional<Result<policy::Verdict>> out;
  host_->decide(request, [&](Result<policy::Verdict> v) { out = std::move(v); });
  run_until([&] { return out.has_value(); });
  ASSERT_TRUE(*out) << (*out).error().message;
  EXPECT_EQ((*out)->decision, proto::DecisionDecision::ask);
  run_until([&] { return status(id).crashes == 1; });
  EXPECT_TRUE(journal_has(id, "crashed: a turn ran past 500 ms: Escouade stopped its instance"));
  EXPECT_TRUE(journal_has(id, "the turn it was stopped in handled: {"));
  EXPECT_TRUE(journal_has(id, "looping-decision"));
  auto again = call(id, "test/echo", 1);  // a new instance answers
  ASSERT_TRUE(again) << again.error().message;
}

std::string sha256_of_file(const fs::path& file) {
  std::stringstream bytes;
  bytes << std::ifstream(file, std::ios::binary).rdbuf();
  return Sha256::hex(Sha256::of(bytes.str()));
}

// A store plugin's module, checked against the fingerprint of its version.json: the right one
// loads and runs; a wrong one is refused naming both digests, journaled, never compiled, and the
// version loaded before stays; a module changed after the load is refused at its start.
TEST_F(SandboxHost, AStoreModuleIsCheckedAgainstItsFingerprintBeforeItIsCompiled) {
  const std::string id = load("dev.sandbox.store", "echo", "plugin.mjs");
  const fs::path dir = plugins_.path() / id;
  const std::string good = sha256_of_file(dir / "plugin.mjs");
  auto reloaded = host_->load(dir, good);
  ASSERT_TRUE(reloaded) << reloaded.error().message;
  EXPECT_TRUE(journal_has(id, "its module's fingerprint checked"));
  ASSERT_TRUE(call(id, "test/echo", 1));

  const std::string wrong(64, 'a');
  // The compiles the loads above started in the background are over first: on a busy core their
  // stencils came after this count (the stress round), as if the refused load had made them.
  run_until([&] { return sandboxed_.compiling() == 0; });
  const std::size_t compiles = sandboxed_.compile_cache().counts().kept;
  auto refused = host_->load(dir, wrong);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, proto::ErrorCode::invalid_params);
  EXPECT_EQ(refused.error().message,
            "its module plugin.mjs does not match the fingerprint of its store: its SHA-256 is " +
                good + ", the store's version.json says " + wrong + "; it was not compiled");
  EXPECT_TRUE(journal_has(id, "refused: its module plugin.mjs does not match"));
  EXPECT_EQ(sandboxed_.compiling(), 0u);  // nothing compiling, nor compiled
  EXPECT_EQ(sandboxed_.compile_cache().counts().kept, compiles);
  // The version loaded before still answers.
  EXPECT_EQ(status(id).state, supervisor::State::running);
  ASSERT_TRUE(call(id, "test/echo", 2));

  // Changed after a load that checked it: its next start reads other bytes, and refuses them.
  ASSERT_TRUE(host_->load(dir, good));
  std::ofstream(dir / "plugin.mjs", std::ios::app) << "\n// changed after the load\n";
  EXPECT_FALSE(call(id, "test/echo", 3));
  wait_state(id, supervisor::State::stopped);
  EXPECT_EQ(status(id).reason.rfind("its module plugin.mjs does not match the fingerprint", 0), 0u)
      << status(id).reason;
}

TEST_F(SandboxHost, AWasmModuleIsCheckedAgainstItsFingerprintAndABadOneIsAParamsError) {
  const std::string id = load_wasm("dev.sandbox.storewasm", "echo.wasm");
  const fs::path dir = plugins_.path() / id;
  ASSERT_TRUE(host_->load(dir, sha256_of_file(dir / "plugin.wasm")));
  ASSERT_TRUE(call(id, "test/echo", 1));
  auto refused = host_->load(dir, std::string(64, '0'));
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("its module plugin.wasm does not match"),
            std::string::npos);
  // Not a digest at all.
  auto malformed = host_->load(dir, "abc");
  ASSERT_FALSE(malformed);
  EXPECT_EQ(malformed.error().message,
            "sha256: \"abc\" is not a SHA-256: expected 64 hexadecimal digits");
  ASSERT_TRUE(call(id, "test/echo", 2));
}

// One escouade-host's life on a data folder, for `version` of Escouade: a run.js and a run.wasm
// plugin loaded (their modules compiled then, if they must be), called once each, and what their
// journals hold at the end (the data folder's: every life's lines).
struct Life {
  std::vector<std::string> js_journal;
  std::vector<std::string> wasm_journal;
  std::size_t compiled = 0;  // modules compiled in this life
};

Life live(const fs::path& data, const fs::path& plugins, const std::string& version) {
  Life life;
  asio::io_context io;
  runtime::ProcessContext context;
  sandbox::SandboxProgramFactory sandboxed(io.get_executor(), context,
                                           sandbox::SandboxOptions::installed(data / "cache"));
  runtime::ProgramRouter programs;
  programs.route(runtime::RunKind::js, &sandboxed);
  programs.route(runtime::RunKind::wasm, &sandboxed);
  host::HostConfig config;
  config.data_dir = data;
  config.escouade_version = version;
  host::Host host(io.get_executor(), config, programs, [](const supervisor::Status&) {});
  const auto run_until = [&](auto done) {
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(60);  // a net
    while (!done() && std::chrono::steady_clock::now() < limit) {
      io.restart();
      io.run_one_for(std::chrono::milliseconds(20));
    }
    EXPECT_TRUE(done());
  };
  for (const char* folder : {"js", "wasm"}) {
    auto loaded = host.load(plugins / folder);
    EXPECT_TRUE(loaded) << loaded.error().message;
    EXPECT_TRUE(host.enable(loaded->id, host::Project{"p1", "Project One", false, {}}));
  }
  run_until([&] { return sandboxed.compiling() == 0; });
  for (const char* id : {"dev.update.js", "dev.update.wasm"}) {
    std::optional<Result<json::value>> out;
    host.call(id, *rpc::Outgoing::request_value("test/echo", json::object{}), std::nullopt,
              [&](Result<host::Answer> r) { keep_answer(out, std::move(r)); });
    run_until([&] { return out.has_value(); });
    EXPECT_TRUE(*out) << id << ": " << (*out).error().message;
  }
  life.compiled = sandboxed.compile_cache().counts().kept;
  life.js_journal = *host.journal("dev.update.js", 500);
  life.wasm_journal = *host.journal("dev.update.wasm", 500);
  bool closed = false;
  host.shutdown([&] { closed = true; });
  run_until([&] { return closed; });
  return life;
}

int count_with(const std::vector<std::string>& lines, std::string_view text) {
  return static_cast<int>(std::count_if(lines.begin(), lines.end(), [&](const std::string& l) {
    return l.find(text) != std::string::npos;
  }));
}

// Spec: the app "precompiles it again after an update of Escouade". The compile kept is for one
// version: the same version loads it as it is; the next compiles each module once, at its load,
// and the journal says so.
TEST(SandboxUpdate, AnUpdateOfEscouadeCompilesEachModuleAgainOnceAtItsLoad) {
  TempDir data;
  TempDir plugins;
  fs::create_directories(plugins.path() / "js");
  fs::copy_file(kFixtures / "echo" / "plugin.mjs", plugins.path() / "js" / "plugin.mjs");
  std::ofstream(plugins.path() / "js" / "escouade-plugin.json")
      << R"({"id":"dev.update.js","version":"1.0.0","name":"Update js","run":{"js":"plugin.mjs"},)"
         R"("activation":["event:agent.status"]})";
  write_wasm_plugin(plugins.path() / "wasm", "dev.update.wasm", "echo.wasm");

  const Life first = live(data.path(), plugins.path(), "2.2.0");
  EXPECT_EQ(first.compiled, 2u);
  EXPECT_EQ(count_with(first.js_journal, "its bundle plugin.mjs is compiled for Escouade 2.2.0"),
            1);
  EXPECT_EQ(count_with(first.wasm_journal, "its module plugin.wasm is compiled for Escouade 2.2.0"),
            1);

  const Life same = live(data.path(), plugins.path(), "2.2.0");
  EXPECT_EQ(same.compiled, 0u);  // kept from the first life
  EXPECT_EQ(count_with(same.js_journal, "is compiled"), 1);

  const Life updated = live(data.path(), plugins.path(), "2.3.0");
  EXPECT_EQ(updated.compiled, 2u);
  EXPECT_EQ(count_with(updated.js_journal,
                       "its bundle plugin.mjs is compiled again, for Escouade 2.3.0: it was "
                       "compiled for Escouade 2.2.0"),
            1);
  EXPECT_EQ(count_with(updated.wasm_journal,
                       "its module plugin.wasm is compiled again, for Escouade 2.3.0: it was "
                       "compiled for Escouade 2.2.0"),
            1);
}

// A module checked at its load: one that may not run is said in its journal then, before any
// start (which refuses it again, with the same reason).
TEST_F(SandboxHost, AWasmModuleThatMayNotRunIsSaidAtItsLoad) {
  const fs::path dir = plugins_.path() / "forbidden";
  write_wasm_plugin(dir, "dev.sandbox.forbidden", "forbidden_import.wasm");
  auto loaded = host_->load(dir);
  ASSERT_TRUE(loaded) << loaded.error().message;
  run_until([&] { return journal_has(loaded->id, "its compile failed: "); });
  EXPECT_TRUE(journal_has(loaded->id, "its module plugin.wasm is compiled for Escouade"));
}

TEST_F(SandboxHost, AnUncaughtExceptionIsACrashAndANewInstanceIsMade) {
  auto id = load("dev.sandbox.crash", "echo", "plugin.mjs");
  ASSERT_TRUE(call(id, "test/echo", 1));
  EXPECT_FALSE(call(id, "test/throw", json::object{}));
  auto again = call(id, "test/echo", 2);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->at("calls"), 2);  // a new instance: initialize, then this call
  EXPECT_EQ(status(id).crashes, 1);
  EXPECT_TRUE(journal_has(id, "crashed: its instance crashed: Error: boom from test/throw"));
}

TEST_F(SandboxHost, AnEndlessLoopEndsTheInstanceWithTheSpecSentenceAndItIsRestarted) {
  auto id = load("dev.sandbox.spin", "echo", "plugin.mjs");
  EXPECT_FALSE(call(id, "test/spin", json::object{}));
  auto again = call(id, "test/echo", 3);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(status(id).crashes, 1);
  EXPECT_TRUE(journal_has(id, "crashed: a turn ran past 2000 ms: Escouade stopped its instance"));
}

TEST_F(SandboxHost, ABundleThatCrashesAtOnceIsStoppedAfterFourCrashes) {
  auto id = load("dev.sandbox.throw", "hostile", "throw.mjs");
  ASSERT_TRUE(host_->publish(typed_fact("agent.status", 1)));
  wait_state(id, supervisor::State::stopped);
  EXPECT_EQ(status(id).reason, "stopped after 4 crashes within 5 minutes");
  EXPECT_EQ(status(id).crashes, 4);
}

TEST_F(SandboxHost, AForbiddenImportStopsItWithTheReasonAndNoRestart) {
  auto id = load("dev.sandbox.import", "hostile", "imports_child_process.mjs");
  ASSERT_TRUE(host_->publish(typed_fact("agent.status", 1)));
  wait_state(id, supervisor::State::stopped);
  EXPECT_EQ(status(id).reason,
            "its bundle imports \"node:child_process\" (plugin.mjs:1), which a sandboxed plugin "
            "may not: only node:fs and node:readline");
  EXPECT_EQ(status(id).crashes, 0);
  EXPECT_TRUE(journal_has(id, "stopped: its bundle imports \"node:child_process\""));
}

TEST_F(SandboxHost, AnSdk02BundleStopsWithTheAdviceToRebuild) {
  auto id = load("dev.sandbox.old", "hostile", "sdk_0_2.mjs");
  ASSERT_TRUE(host_->publish(typed_fact("agent.status", 1)));
  wait_state(id, supervisor::State::stopped);
  EXPECT_NE(status(id).reason.find("rebuild it with @escouade-dev/plugin 0.3 or later"),
            std::string::npos)
      << status(id).reason;
  EXPECT_EQ(status(id).crashes, 0);
}

TEST_F(SandboxHost, ASandboxedPluginGetsItsTimersFromTheHost) {
  auto id = load("dev.sandbox.rawtimer", "timers", "raw.mjs");
  auto fired = call(id, "test/rawTimer", json::object{{"ms", 1}});
  ASSERT_TRUE(fired) << fired.error().message;
  EXPECT_EQ(fired->at("fired"), true);
  EXPECT_GE(fired->at("timer").as_int64(), 1);
  auto echo = call(id, "test/echo", 4);
  ASSERT_TRUE(echo);
  EXPECT_EQ(*echo, 4);
}

// setTimeout and its kin through the real host's timers (services/timers.hpp) and its real clock.
TEST_F(SandboxHost, SetTimeoutClearTimeoutAndSetIntervalWorkOnTheHostsTimers) {
  auto id = load("dev.sandbox.timers", "timers", "plugin.mjs");
  auto after = call(id, "test/after", json::object{{"ms", 10}, {"value", 1}});
  ASSERT_TRUE(after) << after.error().message;
  EXPECT_EQ(after->at("value"), 1);
  // Which fires first is the real clock's business: both did, the late one with its arguments.
  const json::array& order = after->at("order").as_array();
  ASSERT_EQ(order.size(), 2u);
  EXPECT_NE(std::find(order.begin(), order.end(), json::value("early")), order.end());
  EXPECT_NE(std::find(order.begin(), order.end(), json::parse(R"(["late","x",2])")), order.end());
  auto clear = call(id, "test/clear", json::object{});
  ASSERT_TRUE(clear) << clear.error().message;
  EXPECT_EQ(clear->at("fired"), "only the last");
  auto interval = call(id, "test/interval", json::object{{"times", 3}});
  ASSERT_TRUE(interval) << interval.error().message;
  EXPECT_EQ(interval->at("n"), 3);
  auto jobs = call(id, "test/jobs", json::object{});
  ASSERT_TRUE(jobs);
  EXPECT_EQ(jobs->at("job"), 7);
  EXPECT_EQ(status(id).crashes, 0);
}

TEST_F(SandboxHost, The65thTimerThrowsInThePluginAndTheHostNeverRefusesThePrelude) {
  auto id = load("dev.sandbox.limit", "timers", "plugin.mjs");
  for (int round = 0; round < 2; ++round) {
    auto limit = call(id, "test/limit", json::object{});
    ASSERT_TRUE(limit) << limit.error().message;
    EXPECT_EQ(limit->at("refused").at("name"), "RangeError");
  }
  EXPECT_FALSE(journal_has(id, "timer/set: refused"));
  EXPECT_FALSE(journal_has(id, "Escouade refused the timer"));
}

TEST_F(SandboxHost, AnExceptionInATimerIsACrashAndTheNewInstanceStartsWithNoTimer) {
  auto id = load("dev.sandbox.timerthrow", "timers", "plugin.mjs");
  // A timer that would answer the call long after the crash: it goes with its instance.
  host_->call(
      id, *rpc::Outgoing::request_value("test/after", json::object{{"ms", 300}, {"value", "old"}}),
      std::chrono::milliseconds(30000), [](Result<host::Answer>) {});
  ASSERT_TRUE(call(id, "test/throwLater", json::object{}));
  run_until([&] { return status(id).crashes == 1; });
  EXPECT_TRUE(journal_has(id, "crashed: its instance crashed: Error: boom in a timer"));
  auto again = call(id, "test/after", json::object{{"ms", 400}, {"value", "new"}});
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->at("value"), "new");
  EXPECT_FALSE(journal_has(id, "its own timer/fired")) << "nothing of the old run fired into it";
  EXPECT_EQ(status(id).crashes, 1);
}

// Facts flood a sandboxed instance whose interval fires every 10 ms: past its input's bound the
// oldest facts are dropped, and counted in its journal; no timer/fired is, so the interval
// counts every one of its firings and answers (protocol/delivery.hpp).
TEST_F(SandboxHost, AFloodOfFactsLosesFactsNeverATimersFiring) {
  auto id = load("dev.sandbox.flood", "timers", "plugin.mjs");
  ASSERT_TRUE(call(id, "test/echo", json::object{}));  // running
  constexpr int kTimes = 40;
  std::optional<Result<host::Answer>> interval;
  host_->call(id, *rpc::Outgoing::request_value("test/interval", json::object{{"times", kTimes}}),
              std::chrono::milliseconds(120000),
              [&](Result<host::Answer> r) { interval = std::move(r); });
  proto::Fact fact = typed_fact("agent.status", 0);
  fact.data["padding"] = std::string(4096, 'x');
  int seq = 0;
  // Bursts of 8 MB, each past the 4 MiB bound before the loop runs, until the interval is done.
  while (!interval && seq < 200000) {
    for (int i = 0; i < 2000; ++i) {
      fact.seq = ++seq;
      ASSERT_TRUE(host_->publish(fact));
    }
    io_.restart();
    io_.run_for(std::chrono::milliseconds(20));
  }
  run_until([&] { return interval.has_value(); });
  ASSERT_TRUE(*interval) << interval->error().message;
  EXPECT_EQ((*interval)->value.at("n"), kTimes);
  run_until([&] { return journal_has(id, "were dropped while its input was full"); });
  EXPECT_TRUE(call(id, "test/echo", json::object{})) << "it still answers";
  EXPECT_EQ(status(id).crashes, 0);
}

TEST_F(SandboxHost, ARunWasmPluginServesCallsFactsAndADecision) {
  auto id = load_wasm("dev.sandbox.wasm", "echo.wasm");
  for (int seq = 1; seq <= 2; ++seq)
    ASSERT_TRUE(host_->publish(typed_fact("agent.status", seq)));
  auto echo = call(id, "test/echo", json::object{{"hello", "wasm"}});
  ASSERT_TRUE(echo) << echo.error().message;
  EXPECT_EQ(echo->at("echo"), (json::object{{"hello", "wasm"}}));
  EXPECT_EQ(echo->at("facts"), 2);
  auto deny =
      call(id, "permissions/decide",
           json::parse(R"({"request":{"id":"r","kind":"command","input":{"command":"rm -rf /"}},)"
                       R"("project":{"id":"p1","name":"Project One","private":false}})"));
  ASSERT_TRUE(deny) << deny.error().message;
  EXPECT_EQ(deny->at("decision"), "deny");
  EXPECT_EQ(status(id).state, supervisor::State::running);
  ASSERT_TRUE(status(id).pid);
  EXPECT_TRUE(is_helper(*status(id).pid));
  EXPECT_TRUE(journal_has(id, "started: plugin.wasm in the sandbox"));
  EXPECT_TRUE(journal_has(id, "echo.wasm: started"));  // its fd 2, in its journal
}

TEST_F(SandboxHost, EscouadeCallReachesTheHostAndItsAnswerComesBack) {
  auto id = load_wasm("dev.sandbox.wasmcall", "echo.wasm");
  // test/host is no method of Escouade's: the host's own router answers -32601, and the
  // plugin reads that answer from its escouade.call.
  auto r = call(id, "test/call", json::object{{"q", 1}});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->at("code"), 1);
  EXPECT_EQ(r->at("answer").at("code"), -32601);
  EXPECT_EQ(r->at("small"), 2);
  EXPECT_EQ(r->at("again"), 1);
  auto echo = call(id, "test/echo", 1);
  ASSERT_TRUE(echo);
  EXPECT_EQ(status(id).crashes, 0);
}

TEST_F(SandboxHost, AWasmTrapIsACrashAndANewInstanceIsMade) {
  auto id = load_wasm("dev.sandbox.wasmtrap", "echo.wasm");
  ASSERT_TRUE(call(id, "test/echo", 1));
  EXPECT_FALSE(call(id, "test/trap", json::object{}));
  auto again = call(id, "test/echo", 2);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->at("calls"), 2);  // a new instance: initialize, then this call
  EXPECT_EQ(status(id).crashes, 1);
  EXPECT_TRUE(journal_has(id, "crashed: its instance crashed: RuntimeError: unreachable"));
}

TEST_F(SandboxHost, AWasmModuleThatTrapsAtOnceIsStoppedAfterFourCrashes) {
  auto id = load_wasm("dev.sandbox.wasmtrapped", "trap.wasm");
  ASSERT_TRUE(host_->publish(typed_fact("agent.status", 1)));
  wait_state(id, supervisor::State::stopped);
  EXPECT_EQ(status(id).reason, "stopped after 4 crashes within 5 minutes");
  EXPECT_EQ(status(id).crashes, 4);
}

TEST_F(SandboxHost, AForbiddenWasmImportStopsItWithTheReasonAndNoRestart) {
  auto id = load_wasm("dev.sandbox.wasmimport", "forbidden_import.wasm");
  ASSERT_TRUE(host_->publish(typed_fact("agent.status", 1)));
  wait_state(id, supervisor::State::stopped);
  EXPECT_EQ(status(id).reason,
            "its module imports (\"wasi_snapshot_preview1\", \"path_open\"), which the sandbox "
            "does not serve: only its WASI subset and escouade.call (docs/sandbox.md)");
  EXPECT_EQ(status(id).crashes, 0);
  EXPECT_TRUE(journal_has(id, "stopped: its module imports"));
}

// The same through escouade-host, as the app drives it: the host's own router sends run.js to
// the sandbox.
TEST(SandboxEscouadeHost, ARunJsPluginRunsThroughEscouadeHost) {
  HostClient host;
  const fs::path folder = host.plugins_dir() / "echo";
  fs::copy(kFixtures / "echo", folder, fs::copy_options::recursive);
  auto loaded = host.call("host/load", json::object{{"folder", folder.string()}});
  ASSERT_TRUE(loaded.ok()) << loaded.error_message;
  EXPECT_EQ(loaded.result.at("run"), "js");
  EXPECT_EQ(loaded.result.at("runsAs"), "Runs inside Escouade, isolated");
  EXPECT_EQ(loaded.result.at("asks"), (json::array{"Sees the facts agent.status",
                                                   "Answers the agents' permission requests"}));
  auto id = host.load_and_enable(folder);
  auto echo = host.call_plugin(id, "test/echo", json::object{{"via", "escouade-host"}});
  EXPECT_EQ(echo.at("echo"), (json::object{{"via", "escouade-host"}}));
  EXPECT_FALSE(host.wait_journal(id, "started: plugin.mjs in the sandbox").empty());
  EXPECT_FALSE(host.wait_journal(id, "echo: started").empty());
  EXPECT_EQ(host.status(id).at("state"), "running");
  const int helper = static_cast<int>(host.status(id).at("pid").as_int64());
  EXPECT_TRUE(is_helper(helper));
  EXPECT_EQ(parent_of(helper), host.pid());
  auto shut = host.call("host/shutdown", json::object{});
  EXPECT_TRUE(shut.ok()) << shut.error_message;
  EXPECT_EQ(host.wait_exit(), 0);
  EXPECT_TRUE(eventually([&] { return !is_helper(helper); })) << "it ended with the host";
}

// The names of a process's threads now.
std::vector<std::string> thread_names(pid_t pid) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& task : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    std::getline(comm, name);
    names.push_back(name);
  }
  return names;
}
// The engine's helper threads, the helper's own (sandbox/spidermonkey/engine.hpp names them).
bool has_engine_threads(pid_t pid) {
  const auto names = thread_names(pid);
  return std::find(names.begin(), names.end(), "js-helper") != names.end();
}

// The host never starts the engine: its threads (the engine's helpers, the instance's) are the
// helper's, a child of escouade-host, and escouade-host has none of them, before or after.
TEST(SandboxEscouadeHost, TheHostNeverStartsTheEngineItsHelperDoes) {
  HostClient host;
  auto process = host.load_and_enable(make_plugin(host.plugins_dir(), {"dev.test.process-only"}));
  auto echo = host.call_plugin(process, "test/echo", json::object{{"n", 1}});
  EXPECT_EQ(echo, (json::object{{"n", 1}}));
  EXPECT_FALSE(thread_names(host.pid()).empty());
  EXPECT_FALSE(has_engine_threads(host.pid()));
  const fs::path folder = host.plugins_dir() / "echo";
  fs::copy(kFixtures / "echo", folder, fs::copy_options::recursive);
  auto id = host.load_and_enable(folder);
  auto js = host.call_plugin(id, "test/echo", json::object{{"n", 2}});
  EXPECT_EQ(js.at("echo"), (json::object{{"n", 2}}));
  EXPECT_FALSE(has_engine_threads(host.pid()));
  const int helper = static_cast<int>(host.status(id).at("pid").as_int64());
  EXPECT_EQ(parent_of(helper), host.pid());
  EXPECT_TRUE(has_engine_threads(helper));
  const auto names = thread_names(helper);
  EXPECT_NE(std::find(names.begin(), names.end(), "escouade-js"), names.end());
}

TEST(SandboxEscouadeHost, ARunWasmPluginRunsThroughEscouadeHost) {
  HostClient host;
  const fs::path folder = host.plugins_dir() / "echo-wasm";
  write_wasm_plugin(folder, "dev.test.sandbox-echo-wasm", "echo.wasm");
  auto id = host.load_and_enable(folder);
  auto echo = host.call_plugin(id, "test/echo", json::object{{"via", "escouade-host"}});
  EXPECT_EQ(echo.at("echo"), (json::object{{"via", "escouade-host"}}));
  EXPECT_FALSE(host.wait_journal(id, "started: plugin.wasm in the sandbox").empty());
  EXPECT_FALSE(host.wait_journal(id, "echo.wasm: started").empty());
  EXPECT_EQ(host.status(id).at("state"), "running");
  const int helper = static_cast<int>(host.status(id).at("pid").as_int64());
  const auto names = thread_names(helper);
  EXPECT_NE(std::find(names.begin(), names.end(), "escouade-wasm"), names.end());
  EXPECT_FALSE(has_engine_threads(host.pid()));
  auto shut = host.call("host/shutdown", json::object{});
  EXPECT_TRUE(shut.ok()) << shut.error_message;
  EXPECT_EQ(host.wait_exit(), 0);
}

}  // namespace
}  // namespace escouade::testing
