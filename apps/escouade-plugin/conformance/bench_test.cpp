// escouade-plugin test and check, run as a plugin author runs them: the real binary against
// fixture plugins (tests/fixtures/conformance/bench_fixture.cpp) in folders made for each test.

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "base/temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

const std::vector<std::string> kAllChecks = {
    "manifest", "starts", "handshake", "stdout",         "answers",   "batch", "notification",
    "decide",   "burst",  "facts",     "unknown-method", "malformed", "calls", "shutdown"};

struct Ran {
  int exit_code = -1;
  std::string out;
};

// Runs `binary` with `args`; its stdout, and its exit code.
Ran run_program(const std::string& program, const std::vector<std::string>& args) {
  int pipefd[2];
  if (::pipe(pipefd) != 0) return {};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(pipefd[1], STDOUT_FILENO);
    ::close(pipefd[0]);
    ::close(pipefd[1]);
    std::vector<char*> argv;
    std::string binary = program;
    argv.push_back(binary.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(pipefd[1]);
  Ran ran;
  char buf[4096];
  for (ssize_t n; (n = ::read(pipefd[0], buf, sizeof buf)) > 0;)
    ran.out.append(buf, static_cast<std::size_t>(n));
  ::close(pipefd[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ran.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return ran;
}

// Runs escouade-plugin with `args`.
Ran run_cli(const std::vector<std::string>& args) {
  return run_program(ESCOUADE_PLUGIN_BINARY, args);
}

// Both programs say their version, the protocols they speak and their sandbox's engine, and
// exit 0; a usage error exits 2, as docs/conformance.md says (CLI11's own codes are over 100).
TEST(Cli, BothProgramsSayTheirVersionAndAUsageErrorExitsTwo) {
  for (const std::string binary : {ESCOUADE_PLUGIN_BINARY, ESCOUADE_HOST_BINARY}) {
    const std::string name = fs::path(binary).filename().string();
    const Ran version = run_program(binary, {"--version"});
    EXPECT_EQ(version.exit_code, 0) << name;
    EXPECT_TRUE(std::regex_match(
        version.out,
        std::regex(name + R"( \d+\.\d+\.\d+\nplugin protocol 1, host protocol 1\n)"
                          R"(engine SpiderMonkey \d+\.\d+\.\d+ \(mozjs\), for run\.js )"
                          R"(and run\.wasm plugins\n)")))
        << version.out;
    EXPECT_EQ(run_program(binary, {"--no-such-option"}).exit_code, 2) << name;
    EXPECT_EQ(run_program(binary, {"--help"}).exit_code, 0) << name;
  }
  EXPECT_EQ(run_cli({}).exit_code, 2) << "no command";
  EXPECT_EQ(run_cli({"test"}).exit_code, 2) << "no folder";
}

// A plugin folder in a temporary folder: the fixture copied in as ./plugin, a rules.json, and a
// manifest that runs `./plugin <mode>`.
class PluginFolder {
 public:
  explicit PluginFolder(const std::string& mode, const std::string& permissions =
                                                     R"({"events":["agent.status","ticket.*"],
                                                          "decide":true,"secrets":["token"]})") {
    fs::copy_file(ESCOUADE_CONFORMANCE_FIXTURE, path_ / "plugin");
    write("rules.json", R"({"channels":["#dev"]})");
    write("escouade-plugin.json",
          R"({"id":"dev.bench.fixture","version":"1.0.0","name":"Bench fixture",
              "run":{"command":["./plugin",")" +
              mode + R"("]},"activation":["event:agent.status"],"permissions":)" + permissions +
              R"(,"contributes":{"settings":{"channel":{"type":"string","default":"#dev"},
                                             "retries":{"type":"number","default":3}}}})");
  }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name) << text;
  }
  const fs::path& path() const { return path_; }

 private:
  escouade::TempDir dir_{"bench-test"};
  const fs::path& path_ = dir_.path();
};

struct Verdicts {
  int exit_code = -1;
  json::object report;
  std::string verdict(const std::string& name) const {
    for (const auto& c : report.at("checks").as_array()) {
      if (c.at("name") == name.c_str()) return std::string(c.at("verdict").as_string());
    }
    return "missing";
  }
  std::string reason(const std::string& name) const {
    for (const auto& c : report.at("checks").as_array()) {
      if (c.at("name") == name.c_str()) return std::string(c.at("reason").as_string());
    }
    return "";
  }
  std::vector<std::string> failed() const {
    std::vector<std::string> out;
    for (const auto& c : report.at("checks").as_array()) {
      if (c.at("verdict") == "fail") out.emplace_back(c.at("name").as_string());
    }
    return out;
  }
};

Verdicts bench(const PluginFolder& folder, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"test", folder.path().string(), "--json", "--secret",
                                   "token=s3cr3t-value"};
  args.insert(args.end(), extra.begin(), extra.end());
  Ran ran = run_cli(args);
  Verdicts v;
  v.exit_code = ran.exit_code;
  boost::system::error_code ec;
  json::value parsed = json::parse(ran.out, ec);
  EXPECT_FALSE(ec) << ran.out;
  if (!ec && parsed.is_object()) v.report = parsed.as_object();
  if (!v.report.contains("checks")) v.report["checks"] = json::array{};
  return v;
}

// `escouade-plugin test --json` of `folder`, which must exit 0 with no check failed; its
// report, or null when it did not read.
json::value passing_report(const fs::path& folder) {
  Ran ran = run_cli({"test", folder.string(), "--json"});
  EXPECT_EQ(ran.exit_code, 0) << ran.out;
  boost::system::error_code ec;
  json::value report = json::parse(ran.out, ec);
  EXPECT_FALSE(ec) << ran.out;
  if (ec || !report.is_object()) return nullptr;
  EXPECT_EQ(report.at("failed"), 0) << ran.out;
  return report;
}

// The sandbox's echo.wasm fixture as a run.wasm plugin in `folder`, its manifest ending with
// `members` (a JSON object's members, without braces).
void write_echo_wasm(const fs::path& folder, const std::string& members) {
  fs::create_directories(folder);
  fs::copy_file(fs::path(ESCOUADE_WASM_FIXTURES) / "echo.wasm", folder / "plugin.wasm");
  std::ofstream(folder / "Makefile") << "plugin.wasm: echo.c\n";
  std::ofstream(folder / "escouade-plugin.json")
      << R"({"id":"dev.test.sandbox-echo-wasm","version":"1.0.0","name":"Sandbox echo wasm",)"
      << R"("run":{"wasm":"Makefile"},"activation":["event:agent.status"],)" << members << "}";
}

// A sandboxed plugin's report: it started as `module` in the sandbox and kept to the handshake,
// decisions and shutdown.
void expect_ran_in_the_sandbox(const json::value& report, const std::string& module) {
  ASSERT_TRUE(report.is_object());
  for (const auto& c : report.at("checks").as_array()) {
    if (c.at("name") == "starts") {
      EXPECT_EQ(c.at("reason"), json::value("it started (" + module + " in the sandbox)"));
    }
    if (c.at("name") == "handshake" || c.at("name") == "shutdown" || c.at("name") == "decide") {
      EXPECT_EQ(c.at("verdict"), "pass") << json::serialize(c);
    }
  }
}

TEST(ConformanceBench, AGoodPluginPassesEveryCheck) {
  PluginFolder folder("good");
  Verdicts v = bench(folder, {"--setting", "channel=#ops", "--setting", "retries=5"});
  EXPECT_EQ(v.exit_code, 0);
  const auto& checks = v.report.at("checks").as_array();
  ASSERT_EQ(checks.size(), kAllChecks.size());
  for (std::size_t i = 0; i < checks.size(); ++i) {
    EXPECT_EQ(checks[i].at("name"), kAllChecks[i].c_str());
    EXPECT_EQ(checks[i].at("verdict"), "pass") << json::serialize(checks[i]);
  }
  EXPECT_EQ(v.report.at("passed"), 14);
  EXPECT_EQ(v.report.at("failed"), 0);
  EXPECT_EQ(v.report.at("skipped"), 0);
  EXPECT_EQ(v.report.at("plugin").at("id"), "dev.bench.fixture");
  // The calls it made were served with the values given on the command line, and the secret
  // shows nowhere, not even where the plugin wrote it on stderr.
  const std::string all = json::serialize(v.report);
  EXPECT_NE(all.find(R"(\"channel\":\"#ops\",\"retries\":5)"), std::string::npos) << all;
  EXPECT_NE(all.find("the secret is"), std::string::npos);
  EXPECT_EQ(all.find("s3cr3t-value"), std::string::npos);
  ASSERT_EQ(v.report.at("calls").as_array().size(), 4u);
}

// A run.js plugin runs in the sandbox, as in the host: the echo fixture of the sandbox's tests
// keeps to the protocol.
TEST(ConformanceBench, ARunJsPluginRunsInTheSandbox) {
  escouade::TempDir dir("bench-js");
  fs::copy(fs::path(ESCOUADE_SANDBOX_FIXTURES) / "echo", dir.path() / "echo",
           fs::copy_options::recursive);
  expect_ran_in_the_sandbox(passing_report(dir.path() / "echo"), "plugin.mjs");
}

TEST(ConformanceBench, CheckSaysARunJsPluginRunsInsideEscouadeIsolated) {
  Ran ran = run_cli({"check", (fs::path(ESCOUADE_SANDBOX_FIXTURES) / "echo").string()});
  EXPECT_EQ(ran.exit_code, 0) << ran.out;
  EXPECT_NE(ran.out.find("The install window says:\n  Runs inside Escouade, isolated\n"),
            std::string::npos)
      << ran.out;
}

// The run.js example, from its source folder (it has nothing to build): every check it
// announces passes, its rules read through new URL and its timers served by the bench.
TEST(ConformanceBench, TheRunJsGuardExamplePassesInTheSandbox) {
  escouade::TempDir dir("bench-guard-js");
  fs::copy(fs::path(ESCOUADE_EXAMPLES_SOURCE) / "guard-js", dir.path() / "guard-js",
           fs::copy_options::recursive);
  const json::value report = passing_report(dir.path() / "guard-js");
  ASSERT_TRUE(report.is_object());
  for (const auto& c : report.at("checks").as_array()) {
    if (c.at("name") == "decide") {
      EXPECT_EQ(c.at("verdict"), "pass") << json::serialize(c);
      EXPECT_NE(json::serialize(c).find("deny"), std::string::npos) << "rm -rf / by its rules";
    }
  }
}

// The Slack example (run.js, examples/slack): the bench gives no network, and the plugin bears
// it (its fetch rejects with the bench's sentence, which it writes to its journal).
TEST(ConformanceBench, TheSlackExamplePassesWithoutANetwork) {
  escouade::TempDir dir("bench-slack");
  fs::copy(fs::path(ESCOUADE_EXAMPLES_SOURCE) / "slack", dir.path() / "slack",
           fs::copy_options::recursive);
  const json::value report = passing_report(dir.path() / "slack");
  ASSERT_TRUE(report.is_object());
}

// A decide handler that loops, in the sandbox: its turn has the 500 ms of a decision, and the
// stop is the decide check's fault, whichever check was running when the end came (issue 28:
// the facts check was blamed). The report names the limit and the message of the turn.
TEST(ConformanceBench, ALoopingDecisionIsStoppedAt500msAndTheDecideCheckIsBlamed) {
  escouade::TempDir dir("bench-js-loop");
  const fs::path folder = dir.path() / "echo";
  fs::copy(fs::path(ESCOUADE_SANDBOX_FIXTURES) / "echo", folder, fs::copy_options::recursive);
  std::stringstream text;
  text << std::ifstream(folder / "plugin.mjs").rdbuf();
  std::string source = text.str();
  const std::string loop = "command === 'spin forever'";
  ASSERT_NE(source.find(loop), std::string::npos);
  source.replace(source.find(loop), loop.size(), "command === 'rm -rf /'");
  std::ofstream(folder / "plugin.mjs") << source;

  Ran ran = run_cli({"test", folder.string(), "--json"});
  EXPECT_EQ(ran.exit_code, 1) << ran.out;
  Verdicts v;
  v.report = json::parse(ran.out).as_object();
  EXPECT_EQ(v.failed(), std::vector<std::string>{"decide"}) << ran.out;
  EXPECT_EQ(v.reason("decide"),
            "its instance was stopped in the turn that handled permissions/decide: a turn ran "
            "past 500 ms: Escouade stopped its instance");
  std::string message;
  for (const auto& c : v.report.at("checks").as_array())
    if (c.at("name") == "decide") message = json::serialize(c.at("message"));
  EXPECT_NE(message.find("the turn's message:"), std::string::npos) << message;
  EXPECT_NE(message.find("rm -rf /"), std::string::npos) << message;
  for (const char* later : {"facts", "malformed", "burst", "shutdown"}) {
    EXPECT_EQ(v.verdict(later), "skip") << later;
    EXPECT_EQ(v.reason(later),
              "because it exited during the decide check (a turn ran past 500 ms: Escouade "
              "stopped its instance)")
        << later;
  }
}

// check compiles a sandboxed module as the host does at its load, running none of it, and says
// the host's own sentence for what it refuses; it lists the settings.
TEST(ConformanceBench, CheckCompilesTheModuleWithoutRunningItAndSaysWhatTheHostWouldRefuse) {
  escouade::TempDir dir("bench-check-js");
  const fs::path echo = dir.path() / "echo";
  fs::copy(fs::path(ESCOUADE_SANDBOX_FIXTURES) / "echo", echo, fs::copy_options::recursive);
  Ran good = run_cli({"check", echo.string()});
  EXPECT_EQ(good.exit_code, 0) << good.out;
  EXPECT_NE(good.out.find("Module: plugin.mjs compiles; its imports (node:fs, node:readline at "
                          "most) and exports (none) are as the sandbox wants them; nothing of it "
                          "was run\n"),
            std::string::npos)
      << good.out;
  EXPECT_NE(good.out.find("Settings: none\n"), std::string::npos) << good.out;
  // The bundle's body never ran: it writes "echo: started" on its stderr when it does.
  EXPECT_EQ(good.out.find("echo: started"), std::string::npos) << good.out;
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"imports_child_process.mjs",
       "its bundle imports \"node:child_process\" (plugin.mjs:1), which a sandboxed plugin may "
       "not: only node:fs and node:readline"},
      {"exports.mjs",
       "its bundle exports \"answer\", which a sandboxed plugin may not: its bundle has no "
       "exports"},
      {"sdk_0_2.mjs", "which does not run in the sandbox: rebuild it with @escouade-dev/plugin"},
  };
  for (const auto& [fixture, sentence] : refused) {
    fs::copy_file(fs::path(ESCOUADE_SANDBOX_FIXTURES) / "hostile" / fixture, echo / "plugin.mjs",
                  fs::copy_options::overwrite_existing);
    Ran r = run_cli({"check", echo.string()});
    EXPECT_EQ(r.exit_code, 1) << fixture << ": " << r.out;
    EXPECT_NE(r.out.find("Module: plugin.mjs refused\n  "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(sentence), std::string::npos) << fixture << ": " << r.out;
  }
  std::ofstream(echo / "plugin.mjs") << "let x = ;\n";
  Ran syntax = run_cli({"check", echo.string()});
  EXPECT_EQ(syntax.exit_code, 1);
  EXPECT_NE(syntax.out.find("its bundle does not compile: SyntaxError: "), std::string::npos)
      << syntax.out;
}

// A plugin.wasm: its imports, memory and exports checked and its code compiled; one older than
// its build file is said by check and by test.
TEST(ConformanceBench, CheckAndTestSayAPluginWasmOlderThanItsBuildFile) {
  escouade::TempDir dir("bench-check-wasm");
  const fs::path folder = dir.path() / "w";
  write_echo_wasm(folder, R"("contributes":{"settings":{"verbose":{"type":"boolean",)"
                          R"("default":false,"description":"Log each fact"}}})");
  const auto now = fs::file_time_type::clock::now();
  fs::last_write_time(folder / "plugin.wasm", now - std::chrono::hours(1));
  fs::last_write_time(folder / "Makefile", now);
  const std::string warning =
      "plugin.wasm is older than Makefile, its build file: build it again, or what runs is not "
      "what you last wrote";
  Ran checked = run_cli({"check", folder.string()});
  EXPECT_EQ(checked.exit_code, 0) << checked.out;
  EXPECT_NE(checked.out.find("Warning: " + warning), std::string::npos) << checked.out;
  EXPECT_NE(checked.out.find("  verbose (boolean, default false): Log each fact\n"),
            std::string::npos)
      << checked.out;
  EXPECT_NE(checked.out.find("Module: plugin.wasm compiles"), std::string::npos) << checked.out;
  Ran tested = run_cli({"test", folder.string(), "--json"});
  EXPECT_NE(tested.out.find("warning: " + warning), std::string::npos) << tested.out;

  fs::copy_file(fs::path(ESCOUADE_WASM_FIXTURES) / "forbidden_import.wasm", folder / "plugin.wasm",
                fs::copy_options::overwrite_existing);
  Ran refused = run_cli({"check", folder.string()});
  EXPECT_EQ(refused.exit_code, 1) << refused.out;
  EXPECT_NE(refused.out.find("Module: plugin.wasm refused\n  its module imports"),
            std::string::npos)
      << refused.out;
}

// test --trace: every line both ways with its time, a secret masked, and lint reads it whole.
TEST(ConformanceBench, ATraceHoldsEveryLineBothWaysAndLintReadsIt) {
  PluginFolder folder("good");
  escouade::TempDir dir("bench-trace");
  const fs::path trace = dir.path() / "bench.trace";
  Ran ran = run_cli({"test", folder.path().string(), "--json", "--secret", "token=s3cr3t-value",
                     "--trace", trace.string()});
  EXPECT_EQ(ran.exit_code, 0) << ran.out;
  std::stringstream text;
  text << std::ifstream(trace).rdbuf();
  const std::string lines = text.str();
  EXPECT_NE(lines.find(R"(--> {"jsonrpc":"2.0","id":1,"method":"initialize")"), std::string::npos)
      << lines.substr(0, 2000);
  EXPECT_NE(lines.find(R"(<-- {"jsonrpc":"2.0","id":1,"result":)"), std::string::npos);
  EXPECT_NE(lines.find("Z --> "), std::string::npos);
  EXPECT_EQ(lines.find("s3cr3t-value"), std::string::npos) << "a secret in the trace";
  EXPECT_NE(lines.find("\u2022\u2022\u2022\u2022"), std::string::npos);
  Ran linted = run_cli({"lint", trace.string(), "--quiet"});
  EXPECT_NE(linted.out.find("bench.trace: "), std::string::npos) << linted.out;
  // The malformed check's lines are in it, as sent: lint names them.
  EXPECT_NE(linted.out.find("not JSON"), std::string::npos) << linted.out;
  // An unwritable trace is a usage error.
  Ran refused = run_cli({"test", folder.path().string(), "--trace", "/nonexistent/x.trace"});
  EXPECT_EQ(refused.exit_code, 2) << refused.out;
}

TEST(ConformanceBench, ARunWasmPluginRunsInTheSandbox) {
  escouade::TempDir dir("bench-wasm");
  const fs::path folder = dir.path() / "echo-wasm";
  write_echo_wasm(folder, R"("permissions":{"events":["agent.status"],"decide":true})");
  expect_ran_in_the_sandbox(passing_report(folder), "plugin.wasm");
}

TEST(ConformanceBench, AMinimalPluginSkipsWhatItDoesNotAnnounce) {
  PluginFolder folder("minimal", "{}");
  Verdicts v = bench(folder);
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_TRUE(v.failed().empty());
  for (const char* skipped : {"batch", "decide", "burst", "facts", "calls"})
    EXPECT_EQ(v.verdict(skipped), "skip") << skipped;
  EXPECT_EQ(v.verdict("shutdown"), "pass");
}

// Each bad fixture and the checks it must fail: the check that names its fault first.
struct Fault {
  std::string mode;
  std::vector<std::string> fails;
};

void PrintTo(const Fault& f, std::ostream* os) {
  *os << f.mode;
}

class ConformanceBadPlugin : public ::testing::TestWithParam<Fault> {};

TEST_P(ConformanceBadPlugin, IsCaughtByTheCheckThatNamesItsFault) {
  const Fault& f = GetParam();
  PluginFolder folder(f.mode);
  Verdicts v = bench(folder, {"--initialize-timeout-ms", "1000"});
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_EQ(v.failed(), f.fails) << json::serialize(v.report);
}

INSTANTIATE_TEST_SUITE_P(
    Faults, ConformanceBadPlugin,
    ::testing::Values(Fault{"no-init", {"handshake"}}, Fault{"wrong-version", {"handshake"}},
                      Fault{"exit-at-start", {"starts"}}, Fault{"stdout-noise", {"stdout"}},
                      Fault{"bad-decision", {"answers", "decide"}},
                      Fault{"id-type", {"answers", "decide", "burst"}},
                      Fault{"batch-lines", {"batch"}},
                      Fault{"answer-notification", {"batch", "notification", "burst", "facts"}},
                      Fault{"slow-decide", {"decide", "burst"}},
                      Fault{"die-unknown-fact", {"facts"}}, Fault{"burst-die", {"burst"}},
                      Fault{"burst-mute", {"burst"}}, Fault{"unknown-result", {"unknown-method"}},
                      Fault{"die-malformed", {"malformed"}}, Fault{"undeclared-secret", {"calls"}},
                      Fault{"answer-answers", {"calls"}}, Fault{"ignore-shutdown", {"shutdown"}},
                      Fault{"leave-child", {"shutdown"}},
                      // A plugin that asks for its secret and is gone before the answer comes
                      // back from the worker (docs/lifetimes.md).
                      Fault{"secret-then-exit", {"answers", "unknown-method"}},
                      Fault{"secret-then-crash", {"answers", "unknown-method"}},
                      Fault{"secret-before-init", {"handshake"}}),
    [](const auto& param_info) {
      std::string name = param_info.param.mode;
      for (auto& c : name)
        c = c == '-' ? '_' : c;
      return name;
    });

TEST(ConformanceBench, NoHandshakeSkipsWhatDependsOnIt) {
  PluginFolder folder("no-init");
  Verdicts v = bench(folder, {"--initialize-timeout-ms", "1000"});
  EXPECT_EQ(v.reason("handshake"), "it did not answer initialize within 1 s");
  for (const char* name : {"stdout", "answers", "decide", "calls", "shutdown"}) {
    EXPECT_EQ(v.verdict(name), "skip");
    EXPECT_EQ(v.reason(name), "because handshake failed");
  }
}

TEST(ConformanceBench, AWrongVersionIsToldInTheSpecsWords) {
  PluginFolder folder("wrong-version");
  Verdicts v = bench(folder);
  EXPECT_EQ(v.reason("handshake"),
            "it speaks version 2 of the protocol; this Escouade speaks version 1");
}

TEST(ConformanceBench, AChildLeftBehindIsNamedAndEnded) {
  PluginFolder folder("leave-child");
  Verdicts v = bench(folder);
  const std::string reason = v.reason("shutdown");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(reason, m, std::regex("left 1 process running: pid ([0-9]+)")))
      << reason;
  const int pid = std::stoi(m[1]);
  // The bench ended it before returning: gone, or a zombie its new parent has yet to reap.
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  EXPECT_TRUE(text.empty() || (close != std::string::npos && text.substr(close + 2, 1) == "Z"))
      << text;
}

TEST(ConformanceBench, AManifestWhoseRunTargetIsMissingOrNotExecutable) {
  PluginFolder missing("good");
  fs::remove(missing.path() / "plugin");
  Verdicts v = bench(missing);
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_EQ(v.failed(), std::vector<std::string>{"manifest"});
  EXPECT_EQ(v.reason("manifest"),
            R"(run.command[0]: "./plugin": no such file in the plugin's folder)");
  EXPECT_EQ(v.reason("starts"), "because the manifest does not hold");

  PluginFolder plain("good");
  fs::permissions(plain.path() / "plugin", fs::perms::owner_read | fs::perms::owner_write);
  Verdicts w = bench(plain);
  EXPECT_EQ(w.failed(), std::vector<std::string>{"manifest"});
  EXPECT_EQ(w.reason("manifest"), R"(run.command[0]: "./plugin": not executable)");

  Ran check = run_cli({"check", plain.path().string()});
  EXPECT_EQ(check.exit_code, 1);
  EXPECT_NE(check.out.find("not executable"), std::string::npos) << check.out;
}

TEST(ConformanceBench, CheckSummarizesAManifestThatHolds) {
  PluginFolder folder("good");
  Ran ran = run_cli({"check", folder.path().string()});
  EXPECT_EQ(ran.exit_code, 0);
  EXPECT_EQ(ran.out.rfind("OK dev.bench.fixture 1.0.0", 0), 0u) << ran.out;
  EXPECT_NE(ran.out.find("activation: event:agent.status"), std::string::npos) << ran.out;
  EXPECT_NE(ran.out.find("decide"), std::string::npos);
  EXPECT_NE(ran.out.find("secret token"), std::string::npos);
  EXPECT_NE(ran.out.find("The install window says:\n"
                         "  Runs a program on your computer, with your rights\n"),
            std::string::npos)
      << ran.out;
  EXPECT_NE(ran.out.find("  - Answers the agents' permission requests\n"), std::string::npos)
      << ran.out;
  EXPECT_NE(ran.out.find("  - Reads its secrets token\n"), std::string::npos) << ran.out;
}

TEST(ConformanceBench, ATimeScaleIsSaidInTheSentenceThatNamesTheDelay) {
  // It never answers again: no time of the machine's decides the verdict, only the sentence.
  PluginFolder folder("burst-mute");
  Verdicts v = bench(folder, {"--time-scale", "2"});
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_EQ(v.reason("burst"),
            "it did not answer permissions/decide within 1 s (500 ms x 2, --time-scale) after a "
            "burst of 1,000 facts")
      << json::serialize(v.report);
}

TEST(ConformanceBench, JunitHasOneTestcasePerCheck) {
  PluginFolder folder("slow-decide");
  const fs::path xml = folder.path() / "report.xml";
  Ran ran = run_cli({"test", folder.path().string(), "--junit", xml.string()});
  EXPECT_EQ(ran.exit_code, 1);
  EXPECT_NE(ran.out.find("failed"), std::string::npos) << "the text report still goes to stdout";
  std::ifstream in(xml);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(text.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>", 0), 0u) << text;
  std::size_t cases = 0;
  for (std::size_t at = text.find("<testcase "); at != std::string::npos;
       at = text.find("<testcase ", at + 1))
    ++cases;
  EXPECT_EQ(cases, kAllChecks.size());
  for (const auto& name : kAllChecks)
    EXPECT_NE(text.find("name=\"" + name + "\""), std::string::npos) << name;
  EXPECT_NE(text.find("<failure message=\"it did not answer permissions/decide for Bash `npm "
                      "test` within 500 ms\">"),
            std::string::npos)
      << text;
  // Well-formed: every testcase that opens is closed, the suite and the root too.
  const auto count = [&](const std::string& s) {
    std::size_t n = 0;
    for (std::size_t at = text.find(s); at != std::string::npos; at = text.find(s, at + 1))
      ++n;
    return n;
  };
  EXPECT_EQ(count("<failure "), count("</failure>"));
  EXPECT_EQ(count("<testcase ") - count("/>\n") + count("<skipped "), count("</testcase>"));
  EXPECT_EQ(count("<testsuite "), 1u);
  EXPECT_EQ(count("</testsuite>"), 1u);
  EXPECT_EQ(count("</testsuites>"), 1u);
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
}

TEST(ConformanceBench, UsageErrorsExitWith2) {
  PluginFolder folder("good");
  EXPECT_EQ(run_cli({"test", folder.path().string(), "--setting", "retries=many"}).exit_code, 2);
  EXPECT_EQ(run_cli({"test", folder.path().string(), "--setting", "nosuch=1"}).exit_code, 2);
  EXPECT_EQ(run_cli({"test", folder.path().string(), "--secret", "novalue"}).exit_code, 2);
}

}  // namespace
