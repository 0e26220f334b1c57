// `escouade-plugin run` as an author runs it: the real program, starting the real escouade-host,
// which runs fixture plugins as processes. Each test reads what it printed and its exit code.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/temp_dir.hpp"

extern char** environ;

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

const fs::path kTestdata = ESCOUADE_HARNESS_TESTDATA;

struct TempDir : escouade::TempDir {
  TempDir() : escouade::TempDir("escouade-harness") {}
};

struct Plugin {
  std::string id;
  std::string mode = "good";
  std::vector<std::string> secrets{};
  json::object settings{};  // contributes.settings
};

// <parent>/<id>/ with its manifest, the fixture as ./plugin and its mode.
fs::path make_plugin(const fs::path& parent, const Plugin& p) {
  const fs::path dir = parent / p.id;
  fs::create_directories(dir);
  fs::copy_file(ESCOUADE_FIXTURE_PLUGIN, dir / "plugin", fs::copy_options::overwrite_existing);
  std::ofstream(dir / "mode") << p.mode << "\n";
  json::object permissions{{"events", json::array{"agent.status"}}, {"decide", true}};
  if (!p.secrets.empty()) {
    json::array keys;
    for (const auto& k : p.secrets)
      keys.emplace_back(k);
    permissions["secrets"] = std::move(keys);
  }
  json::object manifest{{"id", p.id},
                        {"version", "1.0.0"},
                        {"name", "Fixture " + p.mode},
                        {"run", json::object{{"command", json::array{"./plugin"}}}},
                        {"activation", json::array{"event:agent.status"}},
                        {"permissions", std::move(permissions)}};
  if (!p.settings.empty()) manifest["contributes"] = json::object{{"settings", p.settings}};
  std::ofstream(dir / "escouade-plugin.json") << json::serialize(manifest);
  return dir;
}

struct Ran {
  int exit_code = -1;
  std::string out;

  bool has(const std::string& text) const { return out.find(text) != std::string::npos; }
  // Whether one line holds both texts.
  bool line_has(const std::string& a, const std::string& b) const {
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) {
      if (line.find(a) != std::string::npos && line.find(b) != std::string::npos) return true;
    }
    return false;
  }
  // Whether `first` comes before `second` in the output.
  bool before(const std::string& first, const std::string& second) const {
    const auto a = out.find(first);
    const auto b = out.find(second, a == std::string::npos ? 0 : a);
    return a != std::string::npos && b != std::string::npos;
  }
};

// Runs `escouade-plugin run ARGS`, its stdin a pipe fed with `input` then closed; stderr goes
// with stdout. The deadline is a safety net against a hang, not a measure.
Ran run(std::vector<std::string> args, const std::string& input = "") {
  int in[2], out[2];
  EXPECT_EQ(::pipe2(in, O_CLOEXEC), 0);
  EXPECT_EQ(::pipe2(out, O_CLOEXEC), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, out[1], 2);
  args.insert(args.begin(), {ESCOUADE_PLUGIN_BINARY, "run", "--host", ESCOUADE_HOST_BINARY});
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  Ran r;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(in[0]);
  ::close(out[1]);
  if (spawned != 0) {
    ADD_FAILURE() << "cannot start escouade-plugin";
    return r;
  }
  ::signal(SIGPIPE, SIG_IGN);
  if (!input.empty()) {
    EXPECT_EQ(::write(in[1], input.data(), input.size()), ssize_t(input.size()));
  }
  ::close(in[1]);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  char buf[65536];
  for (;;) {
    pollfd p{out[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, 100);
    if (ready < 0 && errno == EINTR) continue;
    if (ready > 0) {
      const ssize_t n = ::read(out[0], buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      r.out.append(buf, static_cast<std::size_t>(n));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << "escouade-plugin run did not end; its output:\n" << r.out;
      ::kill(pid, SIGKILL);
      break;
    }
  }
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

class HarnessRun : public ::testing::Test {
 protected:
  TempDir plugins_;
};

TEST_F(HarnessRun, PlaysAScenarioFileToTheEnd) {
  const fs::path guard = make_plugin(plugins_.path(), {"dev.test.guard"});
  Ran r = run({guard.string(), "--scenario", (kTestdata / "guard.jsonl").string()});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(r.has("a demo file store, not a keychain")) << r.out;
  EXPECT_TRUE(
      r.has("    the install window says: Runs a program on your computer, with your "
            "rights\n    - Sees the facts agent.status\n"))
      << r.out;
  EXPECT_TRUE(r.has("== A fact, then two permission requests ==")) << r.out;
  EXPECT_TRUE(r.line_has("fact agent.status #1", "\"status\":\"working\"")) << r.out;
  EXPECT_TRUE(r.has("delivered to dev.test.guard")) << r.out;
  EXPECT_TRUE(r.has("  deny: rm -rf is never allowed\n")) << r.out;
  EXPECT_TRUE(r.has("    dev.test.guard: deny: rm -rf is never allowed\n")) << r.out;
  EXPECT_TRUE(r.has("    dev.test.guard: allow\n")) << r.out;
  EXPECT_TRUE(r.has("ok: expected \"deny\"")) << r.out;
  EXPECT_TRUE(r.has("* dev.test.guard: running")) << r.out;
  // The plugin's stderr, through its journal, as the harness follows it.
  EXPECT_TRUE(r.line_has("| dev.test.guard", "hello from the guard")) << r.out;
  EXPECT_TRUE(r.line_has("dev.test.guard: running, pid", "crashes 0")) << r.out;
  EXPECT_TRUE(r.has("> shutdown")) << r.out;
  EXPECT_TRUE(r.has("none failed")) << r.out;
  EXPECT_FALSE(r.has("FAILED")) << r.out;
}

TEST_F(HarnessRun, AFailedExpectationEndsWithOneAndSaysWhy) {
  const fs::path guard = make_plugin(plugins_.path(), {"dev.test.guard"});
  Ran r = run({guard.string(), "--scenario", (kTestdata / "wrong_expectation.jsonl").string()});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(r.has("FAILED: expected allow, got deny")) << r.out;
  EXPECT_TRUE(r.has("FAILED: expected the result {\"a\":2}, got {\"a\":1}")) << r.out;
  EXPECT_TRUE(r.has("FAILED: 2 of 4 steps failed")) << r.out;  // load and enable count
  // The host was still shut down.
  EXPECT_TRUE(r.has("> shutdown")) << r.out;
}

TEST_F(HarnessRun, AKillShowsTheCrashAndTheRestart) {
  const fs::path guard = make_plugin(plugins_.path(), {"dev.test.guard"});
  Ran r = run({guard.string(), "--scenario", (kTestdata / "crash.jsonl").string()});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(r.has("SIGKILL to pid ")) << r.out;
  EXPECT_TRUE(r.has("* dev.test.guard: restarting: crashed: killed by signal 9 (SIGKILL)"))
      << r.out;
  EXPECT_TRUE(r.before("* dev.test.guard: restarting", "* dev.test.guard: running")) << r.out;
  EXPECT_TRUE(r.has("the host saw it: restarting")) << r.out;
  EXPECT_TRUE(r.has("result: {\"n\":2}")) << r.out;
  EXPECT_TRUE(r.line_has("dev.test.guard: running, pid", "crashes 1")) << r.out;
}

// The sandbox's echo fixture, copied to `parent`: a run.js plugin with permissions.decide.
fs::path sandboxed_echo(const fs::path& parent) {
  fs::copy(fs::path(ESCOUADE_SANDBOX_FIXTURES) / "echo", parent / "echo",
           fs::copy_options::recursive);
  return parent / "echo";
}

// A sandboxed instance killed by the scenario is a crash, as a process's is: an author rehearses
// the restart of a run.js plugin the same way.
TEST_F(HarnessRun, AKillEndsASandboxedInstanceAsACrash) {
  const fs::path echo = sandboxed_echo(plugins_.path());
  Ran r = run({echo.string()},
              "call test/echo {\"n\":1}\nkill\nawait dev.test.sandbox-echo running\n"
              "call test/echo {\"n\":2}\nstatus\n");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  // The install window's sentence of its kind, as host/load says it.
  EXPECT_TRUE(r.has("    the install window says: Runs inside Escouade, isolated\n")) << r.out;
  EXPECT_TRUE(r.has("the host saw it: restarting")) << r.out;
  EXPECT_TRUE(r.line_has("* dev.test.sandbox-echo: restarting: crashed:", "")) << r.out;
  EXPECT_TRUE(r.line_has("dev.test.sandbox-echo: running", "crashes 1")) << r.out;
}

// A bundle the sandbox refuses: a decision asked of it says why, not that it is starting; and
// each journal line is shown once, in order. The decision waits its 500 ms for the start's
// outcome: on a loaded machine (scripts/stress.sh: one core, busy loops, AddressSanitizer) the
// helper's start and the refusal took 700 ms and more, and the decision then says "timeout",
// which is the spec's answer; the journal then shows the refusal after the decision's
// warning, never before it.
TEST_F(HarnessRun, ADecisionAskedOfARefusedBundleSaysTheRefusal) {
  const fs::path echo = sandboxed_echo(plugins_.path());
  fs::copy_file(fs::path(ESCOUADE_SANDBOX_FIXTURES) / "hostile" / "imports_child_process.mjs",
                echo / "plugin.mjs", fs::copy_options::overwrite_existing);
  Ran r = run({echo.string()}, "decide command ls\nawait dev.test.sandbox-echo stopped\nstatus\n");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_FALSE(r.has("it is starting")) << r.out;
  const std::string late = "warn  permissions/decide: no answer within 500 ms";
  if (r.has(late)) {
    EXPECT_TRUE(r.has("    dev.test.sandbox-echo: timeout\n")) << r.out;
    EXPECT_TRUE(r.before(late, "error stopped: its bundle imports")) << r.out;
  } else {
    EXPECT_TRUE(r.line_has("dev.test.sandbox-echo: error (it is stopped: its bundle imports",
                           "node:child_process"))
        << r.out;
    EXPECT_TRUE(r.before("error stopped: its bundle", "\n  ask\n")) << r.out;
  }
  // Each journal line once, and those the host wrote before the decision's outcome before it.
  std::istringstream lines(r.out);
  int refusals = 0;
  for (std::string line; std::getline(lines, line);)
    refusals += line.find("| dev.test.sandbox-echo") != std::string::npos &&
                line.find("error stopped: its bundle imports") != std::string::npos;
  EXPECT_EQ(refusals, 1) << r.out;
  EXPECT_TRUE(r.before("info  started: plugin.mjs in the sandbox", "error stopped: its bundle"))
      << r.out;
  EXPECT_TRUE(r.line_has("dev.test.sandbox-echo: stopped, crashes 0, its bundle imports",
                         "node:child_process"))
      << r.out;
}

// run --trace: the host writes each plugin's lines both ways, with its id, in lint's form.
TEST_F(HarnessRun, ATraceHoldsEachPluginsLinesAndLintReadsIt) {
  const fs::path guard = make_plugin(plugins_.path(), {"dev.test.guard"});
  const fs::path trace = plugins_.path() / "run.trace";
  Ran r = run({guard.string(), "--trace", trace.string()}, "call test/echo {\"x\":1}\n");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(r.has("trace in ")) << r.out;
  std::stringstream text;
  text << std::ifstream(trace).rdbuf();
  EXPECT_NE(text.str().find(R"(dev.test.guard --> {"jsonrpc":"2.0","id":1,"method":"initialize")"),
            std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find(R"(dev.test.guard <-- {"jsonrpc":"2.0","id":)"), std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find(R"("method":"test/echo","params":{"x":1})"), std::string::npos);
}

TEST_F(HarnessRun, ShortFormsFromAPipe) {
  const fs::path guard = make_plugin(plugins_.path(), {"dev.test.guard"});
  Ran r = run({guard.string(), "--no-journal"},
              "fact agent.status {\"status\":\"working\"}\n"
              "decide command rm -rf /\n"
              "decide edit src/main.cpp\n"
              "call test/echo {\"x\":1}\n"
              "comment typed\n"
              "wait 10\n");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(r.has("delivered to dev.test.guard")) << r.out;
  EXPECT_TRUE(r.has("> decide command: rm -rf /")) << r.out;
  EXPECT_TRUE(r.has("    dev.test.guard: deny: rm -rf is never allowed")) << r.out;
  EXPECT_TRUE(r.has("> decide edit: src/main.cpp")) << r.out;
  EXPECT_TRUE(r.has("result: {\"x\":1}")) << r.out;
  EXPECT_TRUE(r.has("== typed ==")) << r.out;
  EXPECT_FALSE(r.has("| dev.test.guard")) << r.out;  // --no-journal
  // A pipe is not a terminal: no prompt, no colour.
  EXPECT_FALSE(r.has("run> ")) << r.out;
  EXPECT_FALSE(r.has("\x1b[")) << r.out;
}

TEST_F(HarnessRun, AMistypedLineFailsAndTheRestGoesOn) {
  const fs::path guard = make_plugin(plugins_.path(), {"dev.test.guard"});
  Ran r = run({guard.string()}, "dance now\ndecide command ls\n");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(r.has("stdin:1: dance now")) << r.out;
  EXPECT_TRUE(r.has("FAILED: unknown step \"dance\"")) << r.out;
  EXPECT_TRUE(r.has("    dev.test.guard: allow")) << r.out;
}

TEST_F(HarnessRun, TwoPluginsEachWithItsPart) {
  const fs::path guard = make_plugin(plugins_.path(), {"dev.test.guard"});
  const fs::path decider = make_plugin(plugins_.path(), {"dev.test.decider", "decider"});
  std::ofstream(decider / "decision.json") << R"({"decision":"ask","message":"let me see"})";
  Ran r = run(
      {guard.string(), decider.string(), "--scenario", (kTestdata / "two_plugins.jsonl").string()});
  // The call to an unknown method, without an expectation, fails the run.
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(r.has("    dev.test.guard: allow\n    dev.test.decider: ask: let me see\n")) << r.out;
  EXPECT_TRUE(r.has("ok: expected {\"decision\":\"deny\",\"message\":\"rm -rf is never allowed\"}"))
      << r.out;
  EXPECT_TRUE(r.has("FAILED: error -32601")) << r.out;
  EXPECT_TRUE(r.has("1 of ")) << r.out;
}

TEST_F(HarnessRun, ARefusedLoadFails) {
  const fs::path broken = plugins_.path() / "broken";
  fs::create_directories(broken);
  std::ofstream(broken / "escouade-plugin.json") << R"({"id": "Broken", "version": "1.0.0"})";
  Ran r = run({broken.string()}, "status\n");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(r.has("FAILED: refused: ")) << r.out;
  EXPECT_TRUE(r.has("no plugin")) << r.out;
}

TEST_F(HarnessRun, SecretsAndSettingsFromTheCommandLine) {
  const fs::path guard = make_plugin(plugins_.path(), {"dev.test.guard", "good", {"token"}});
  Ran r = run({guard.string(), "--secret", "token=abc123", "--secret", "dev.test.guard:other=x"},
              "call test/ask {\"method\":\"secrets/get\",\"params\":{\"key\":\"token\"}}\n");
  EXPECT_EQ(r.exit_code, 1) << r.out;  // "other" is not one of its secrets
  EXPECT_TRUE(r.has("> secret dev.test.guard:token")) << r.out;
  // The plugin got it (the fixture relays it in hex); the harness, like every screen of the
  // app's, shows the plugin's words with its secrets masked.
  EXPECT_TRUE(r.has("\"resultHex\":\"616263313233\"")) << r.out;
  EXPECT_FALSE(r.has("\"abc123\"")) << r.out;
  EXPECT_TRUE(r.has("\u2022\u2022\u2022\u2022")) << r.out;
  EXPECT_TRUE(r.before("> secret dev.test.guard:other", "FAILED: ")) << r.out;
  EXPECT_TRUE(r.has("1 of ")) << r.out;
}

TEST_F(HarnessRun, SettingsFromTheCommandLineAndTheProjectsFile) {
  Plugin p{"dev.test.settings"};
  p.settings = {{"channel", json::object{{"type", "string"}, {"default", "#dev"}}},
                {"limit", json::object{{"type", "number"}, {"default", 10}}}};
  const fs::path dir = make_plugin(plugins_.path(), p);
  TempDir project;
  std::ofstream(project.path() / ".escouade.yml")
      << "plugins:\n  dev.test.settings:\n    limit: 42\n";
  Ran r =
      run({dir.string(), "--setting", "channel=#ops", "--project-folder", project.path().string()},
          "call test/ask {\"method\":\"settings/get\",\"params\":{}}\n"
          "call test/ask {\"method\":\"settings/get\",\"params\":{\"project\":\"demo\"}}\n");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  // The user's value over the default; then the project's file over both.
  EXPECT_TRUE(r.has(R"({"channel":"#ops","limit":10})")) << r.out;
  EXPECT_TRUE(r.has(R"({"channel":"#ops","limit":42})")) << r.out;
}

TEST_F(HarnessRun, AScenarioThatIsMissingIsAUsageError) {
  const fs::path guard = make_plugin(plugins_.path(), {"dev.test.guard"});
  Ran r = run({guard.string(), "--scenario", (plugins_.path() / "nope.jsonl").string()});
  EXPECT_NE(r.exit_code, 0) << r.out;
}

}  // namespace
