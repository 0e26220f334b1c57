// escouade-host driven as an app drives it, with real plugin processes (tests/fixtures).
// One test per behaviour of the spec's "When the program starts" to "The journal".

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include "host_client.hpp"

namespace escouade::testing {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

json::value decide_params(const std::string& command) {
  return json::object{
      {"request", json::object{{"id", "r1"},
                               {"kind", "command"},
                               {"tool", "Bash"},
                               {"input", json::object{{"command", command}}}}},
      {"project", json::object{{"id", "p1"}, {"name", "Project One"}, {"private", false}}}};
}

// A host/call. Except for permissions/decide, whose 500 ms delay is under test, calls get a
// delay of 30 s: on a loaded CI machine (ASan, two cores) a plugin's start must not fail a test
// that is not about time.
json::value call_params(const std::string& id, const std::string& method,
                        json::value params = json::object{}) {
  json::object o{{"id", id}, {"method", method}, {"params", std::move(params)}};
  if (method != "permissions/decide") o["timeoutMs"] = 30000;
  return o;
}

bool has_line(const std::vector<std::string>& lines, const std::string& text) {
  for (const auto& l : lines) {
    if (l.find(text) != std::string::npos) return true;
  }
  return false;
}

// 3. Starting.
TEST(HostStart, StartsAtTheFirstFactOfItsActivationWithItsThreeVariables) {
  HostClient host;
  auto folder = make_plugin(host.plugins_dir(), {"dev.test.starter"});
  auto id = host.load_and_enable(folder);
  EXPECT_EQ(host.status(id).at("state"), "idle");
  EXPECT_EQ(host.status(id).at("pid"), nullptr);

  auto published = host.call("host/publish", json::object{{"fact", fact("agent.status", 1)}});
  ASSERT_TRUE(published.ok()) << published.error_message;
  EXPECT_EQ(published.result.at("delivered"), json::parse(R"(["dev.test.starter"])"));
  host.wait_status(id, "running");

  auto env = host.call("host/call", call_params(id, "test/env"));
  ASSERT_TRUE(env.ok()) << env.error_message;
  EXPECT_EQ(env.result.at("ESCOUADE_PLUGIN_ID"), "dev.test.starter");
  EXPECT_EQ(env.result.at("ESCOUADE_PLUGIN_API"), "1");
  EXPECT_EQ(env.result.at("ESCOUADE_VERSION"), "2.2.0");
  EXPECT_EQ(std::filesystem::path(std::string(env.result.at("cwd").as_string())),
            std::filesystem::canonical(folder));
  EXPECT_EQ(host.status(id).at("pid"), env.result.at("pid"));
  auto facts = host.call("host/call", call_params(id, "test/facts"));
  EXPECT_EQ(facts.result, json::parse("[1]"));
  EXPECT_TRUE(has_line(host.journal(id), "started: pid"));
  EXPECT_TRUE(has_line(host.journal(id), "answered initialize: protocol 1"));
}

TEST(HostStart, AFactOutsideItsActivationDoesNotStartIt) {
  HostClient host;
  auto id = host.load_and_enable(make_plugin(
      host.plugins_dir(),
      {"dev.test.lazy", "good", {"event:ticket.column"}, {"agent.status", "ticket.*"}}));
  auto published = host.call("host/publish", json::object{{"fact", fact("agent.status", 1)}});
  EXPECT_EQ(published.result.at("delivered"), json::array{});
  EXPECT_EQ(host.status(id).at("state"), "idle");
  published = host.call("host/publish", json::object{{"fact", fact("ticket.column", 2)}});
  EXPECT_EQ(published.result.at("delivered"), json::parse(R"(["dev.test.lazy"])"));
  host.wait_status(id, "running");
}

TEST(HostStart, ACallStartsIt) {
  HostClient host;
  auto id = host.load_and_enable(make_plugin(host.plugins_dir(), {"dev.test.called"}));
  auto echo = host.call("host/call", call_params(id, "test/echo", json::parse(R"({"a":[1,2]})")));
  ASSERT_TRUE(echo.ok()) << echo.error_message;
  EXPECT_EQ(echo.result, json::parse(R"({"a":[1,2]})"));
}

TEST(HostStart, OneProcessServesEveryCall) {
  HostClient host;
  auto id = host.load_and_enable(make_plugin(host.plugins_dir(), {"dev.test.single"}));
  auto a = host.call("host/call", call_params(id, "test/env"));
  auto b = host.call("host/call", call_params(id, "test/env"));
  host.call("host/publish", json::object{{"fact", fact("agent.status", 5)}});
  auto c = host.call("host/call", call_params(id, "test/env"));
  EXPECT_EQ(a.result.at("pid"), b.result.at("pid"));
  EXPECT_EQ(a.result.at("pid"), c.result.at("pid"));
}

TEST(HostLoad, ACommandIsSaidToRunAProgramWithYourRightsAndWhatItAsks) {
  HostClient host;
  PluginSpec spec{"dev.test.words"};
  spec.secrets = {"token"};
  auto folder = make_plugin(host.plugins_dir(), spec);
  auto loaded = host.call("host/load", json::object{{"folder", folder.string()}});
  ASSERT_TRUE(loaded.ok()) << loaded.error_message;
  EXPECT_EQ(loaded.result.at("run"), "command");
  EXPECT_EQ(loaded.result.at("runsAs"), "Runs a program on your computer, with your rights");
  EXPECT_EQ(loaded.result.at("asks"),
            (json::array{"Sees the facts agent.status", "Answers the agents' permission requests",
                         "Reads its secrets token"}));
}

TEST(HostLoad, ABadManifestNamesTheField) {
  HostClient host;
  auto folder = make_plugin(host.plugins_dir(), {"dev.test.bad"});
  std::ofstream(folder / "escouade-plugin.json")
      << R"({"id":"Bad Id","version":"1.0.0","name":"x","run":{"command":["./plugin"]}})";
  auto loaded = host.call("host/load", json::object{{"folder", folder.string()}});
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(*loaded.error_code, -32602);
  EXPECT_EQ(loaded.error_message.rfind("id: ", 0), 0u) << loaded.error_message;
}

// The app's sha256 of host/load: checked by the schema, then against the module; a command has
// no module to check.
TEST(HostLoad, AFingerprintIsCheckedAndOnlyForAModule) {
  HostClient host;
  auto folder = make_plugin(host.plugins_dir(), {"dev.test.printed"});
  auto command = host.call(
      "host/load", json::object{{"folder", folder.string()}, {"sha256", std::string(64, 'a')}});
  ASSERT_FALSE(command.ok());
  EXPECT_EQ(*command.error_code, -32602);
  EXPECT_EQ(command.error_message,
            "sha256: only a run.js or run.wasm plugin has a module to check; dev.test.printed has "
            "none");
  auto malformed =
      host.call("host/load", json::object{{"folder", folder.string()}, {"sha256", "12"}});
  ASSERT_FALSE(malformed.ok());
  EXPECT_EQ(*malformed.error_code, -32602);

  const std::filesystem::path js = host.plugins_dir() / "js";
  std::filesystem::create_directories(js);
  std::ofstream(js / "plugin.mjs") << "import { createInterface } from 'node:readline';\n";
  std::ofstream(js / "escouade-plugin.json")
      << R"({"id":"dev.test.storejs","version":"1.0.0","name":"x","run":{"js":"plugin.mjs"}})";
  auto refused = host.call("host/load",
                           json::object{{"folder", js.string()}, {"sha256", std::string(64, 'b')}});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(*refused.error_code, -32602);
  EXPECT_NE(refused.error_message.find("the store's version.json says " + std::string(64, 'b')),
            std::string::npos)
      << refused.error_message;
  // Not loaded, yet its journal (which the app shows by its id) says why: read from the file,
  // which the journal's thread writes a moment later (a safety bound of 10 s).
  const std::filesystem::path log = host.data_dir() / "plugin-logs" / "dev.test.storejs.log";
  std::string text;
  for (int i = 0; i < 1000 && text.find("refused: its module plugin.mjs") == std::string::npos;
       ++i) {
    std::this_thread::sleep_for(10ms);
    std::stringstream bytes;
    bytes << std::ifstream(log).rdbuf();
    text = bytes.str();
  }
  EXPECT_NE(text.find("refused: its module plugin.mjs does not match"), std::string::npos) << text;
}

// 4. The handshake.
TEST(HostHandshake, AnotherVersionStopsItWithTheReason) {
  HostClient host;
  auto id = host.load_and_enable(make_plugin(host.plugins_dir(), {"dev.test.v2", "wrong-version"}));
  auto r = host.call("host/call", call_params(id, "test/echo"));
  EXPECT_FALSE(r.ok());
  auto st = host.wait_status(id, "stopped");
  EXPECT_EQ(st.at("reason"), "it speaks version 2 of the protocol; this Escouade speaks version 1");
  EXPECT_FALSE(host.wait_journal(id,
                                 "it speaks version 2 of the protocol; this Escouade speaks "
                                 "version 1")
                   .empty());
  // Stopped: it does not start by itself any more.
  auto again = host.call("host/publish", json::object{{"fact", fact("agent.status", 2)}});
  EXPECT_EQ(again.result.at("delivered"), json::array{});
}

TEST(HostHandshake, AnAnswerWithoutVersionStopsIt) {
  HostClient host;
  auto id = host.load_and_enable(make_plugin(host.plugins_dir(), {"dev.test.nov", "no-version"}));
  host.call("host/publish", json::object{{"fact", fact("agent.status", 1)}});
  auto st = host.wait_status(id, "stopped");
  EXPECT_NE(std::string(st.at("reason").as_string()).find("this Escouade speaks version 1"),
            std::string::npos);
}

TEST(HostHandshake, NoAnswerWithinTenSecondsStopsIt) {
  HostClient host;
  auto id = host.load_and_enable(make_plugin(host.plugins_dir(), {"dev.test.mute", "silent"}));
  host.call("host/publish", json::object{{"fact", fact("agent.status", 1)}});
  auto st = host.wait_status(id, "stopped", 40s);
  EXPECT_EQ(st.at("reason"), "it did not answer initialize within 10 s");
  EXPECT_FALSE(host.wait_journal(id, "initialize: no answer within 10000 ms").empty());
}

// 5. Delays.
TEST(HostDelays, ADecisionPastItsDelayIsAskAndTheLateAnswerIgnored) {
  HostClient host;
  auto id = host.load_and_enable(make_plugin(host.plugins_dir(), {"dev.test.late", "late"}));
  host.call("host/call", call_params(id, "test/echo"));  // started and running
  // Past its delay, the default answer applies: the user is asked.
  auto r = host.call("host/call", call_params(id, "permissions/decide", decide_params("ls")));
  ASSERT_TRUE(r.ok()) << r.error_message;
  EXPECT_EQ(r.result, json::parse(R"({"decision":"ask"})"));
  EXPECT_FALSE(host.wait_journal(id, "permissions/decide: no answer within 500 ms").empty());
  EXPECT_FALSE(host.wait_journal(id, "permissions/decide: an answer came").empty());
  // It goes on.
  EXPECT_TRUE(host.call("host/call", call_params(id, "test/echo")).ok());
}

TEST(HostDelays, ADecisionOfAStoppedPluginIsAsk) {
  HostClient host;
  auto id =
      host.load_and_enable(make_plugin(host.plugins_dir(), {"dev.test.gone", "wrong-version"}));
  host.call("host/publish", json::object{{"fact", fact("agent.status", 1)}});
  host.wait_status(id, "stopped");
  auto r = host.call("host/call", call_params(id, "permissions/decide", decide_params("ls")));
  ASSERT_TRUE(r.ok()) << r.error_message;
  EXPECT_EQ(r.result, json::parse(R"({"decision":"ask"})"));
}

TEST(HostDelays, ACallGetsItsOwnTimeout) {
  HostClient host;
  auto id = host.load_and_enable(make_plugin(host.plugins_dir(), {"dev.test.sleepy"}));
  auto params = call_params(id, "test/sleep", json::object{{"ms", 400}});
  params.as_object()["timeoutMs"] = 100;
  auto r = host.call("host/call", params);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error_message, "test/sleep: no answer within 100 ms");
}

// 6. The queue.
TEST(HostQueue, WhileItStartsMessagesWaitInOrderAndAFullQueueLosesItsOldest) {
  HostClient host;
  auto folder = make_plugin(host.plugins_dir(), {"dev.test.slow", "slow-init"});
  auto id = host.load_and_enable(folder);
  for (int seq = 1; seq <= 300; ++seq) {
    host.call("host/publish", json::object{{"fact", fact("agent.status", seq)}});
  }
  std::ofstream(folder / "go") << "go\n";  // now it answers initialize
  host.wait_status(id, "running");
  auto facts = host.call("host/call", call_params(id, "test/facts"));
  ASSERT_TRUE(facts.ok()) << facts.error_message;
  const auto& seqs = facts.result.as_array();
  ASSERT_EQ(seqs.size(), 256u);
  for (std::size_t i = 0; i < seqs.size(); ++i)
    EXPECT_EQ(seqs[i].as_int64(), 45 + int(i));
  EXPECT_FALSE(
      host.wait_journal(id, "44 messages were lost from a full queue (256 at most)").empty());
}

// 7. Crashes and restarts.
TEST(HostCrashes, ThreeRestartsThenStoppedAfterFourCrashes) {
  HostClient host;
  auto id = host.load_and_enable(make_plugin(host.plugins_dir(), {"dev.test.crashy", "crash"}));
  host.call("host/publish", json::object{{"fact", fact("agent.status", 1)}});
  auto st = host.wait_status(id, "stopped", 40s);
  EXPECT_EQ(st.at("reason"), "stopped after 4 crashes within 5 minutes");
  auto journal = host.journal(id);
  int crashes = 0, starts = 0;
  for (const auto& l : journal) {
    crashes += l.find(
                   "crashed: exit code 3; last lines of stderr: loading rules | fatal: "
                   "rules.json is missing") != std::string::npos;
    starts += l.find("started: pid") != std::string::npos;
  }
  EXPECT_EQ(crashes, 4) << ::testing::PrintToString(journal);
  EXPECT_EQ(starts, 4);
  EXPECT_TRUE(has_line(journal, "stopped after 4 crashes within 5 minutes"));
  EXPECT_EQ(host.status(id).at("crashes"), 4);
  // It no longer starts by itself.
  auto published = host.call("host/publish", json::object{{"fact", fact("agent.status", 2)}});
  EXPECT_EQ(published.result.at("delivered"), json::array{});
}

TEST(HostCrashes, RestartByTheAppForgetsTheCrashes) {
  HostClient host;
  auto id = host.load_and_enable(make_plugin(host.plugins_dir(), {"dev.test.phoenix"}));
  for (int i = 0; i < 4; ++i) {
    host.call("host/call", call_params(id, "test/crash"));
    if (i < 3) host.wait_status(id, "restarting");
  }
  host.wait_status(id, "stopped");
  EXPECT_EQ(host.status(id).at("reason"), "stopped after 4 crashes within 5 minutes");
  ASSERT_TRUE(host.call("host/restart", json::object{{"id", id}}).ok());
  auto echo = host.call("host/call", call_params(id, "test/echo", json::object{{"back", true}}));
  ASSERT_TRUE(echo.ok()) << echo.error_message;
  EXPECT_EQ(host.status(id).at("state"), "running");
  EXPECT_EQ(host.status(id).at("crashes"), 0);
}

TEST(HostCrashes, CallsUnderWayFailAndAttachmentsAreGivenAgain) {
  HostClient host;
  auto id = host.load_and_enable(make_plugin(host.plugins_dir(), {"dev.test.attach"}));
  ASSERT_TRUE(host.call("host/call", call_params(id, "agent/attach",
                                                 json::object{{"agent", "a1"}, {"mode", "plan"}}))
                  .ok());
  ASSERT_TRUE(host.call("host/call", call_params(id, "agent/attach",
                                                 json::object{{"agent", "a2"}, {"mode", "code"}}))
                  .ok());
  ASSERT_TRUE(host.call("host/call", call_params(id, "agent/attach",
                                                 json::object{{"agent", "a1"}, {"mode", "code"}}))
                  .ok());
  // A decision under way when it crashes gets its default answer.
  host.send_line(R"({"jsonrpc":"2.0","id":"slow","method":"host/call","params":{"id":")" + id +
                 R"(","method":"test/sleep","params":{"ms":3000}}})");
  auto crash = host.call("host/call", call_params(id, "test/crash"));
  EXPECT_FALSE(crash.ok());
  host.wait_status(id, "running");
  auto attached = host.call("host/call", call_params(id, "test/attached"));
  ASSERT_TRUE(attached.ok()) << attached.error_message;
  // The last attachment of each agent, once each, before anything else.
  EXPECT_EQ(attached.result, json::parse(R"(["\"a1\"","\"a2\""])")) << [&] {
    std::string all;
    for (const auto& l : host.journal(id))
      all += l + "\n";
    return all;
  }();
}

// 8. Memory.
TEST(HostMemory, PastTheLimitItIsStoppedWithoutRestart) {
  HostClient host({"--memory-limit-mb", "100"});
  auto id = host.load_and_enable(make_plugin(host.plugins_dir(), {"dev.test.hog", "memory-hog"}));
  host.call("host/publish", json::object{{"fact", fact("agent.status", 1)}});
  auto st = host.wait_status(id, "stopped", 30s);
  const std::string reason(st.at("reason").as_string());
  std::smatch m;
  ASSERT_TRUE(std::regex_match(
      reason, m, std::regex(R"(stopped: (\d+) MB of memory, past the limit of 100 MB)")))
      << reason;
  EXPECT_GT(std::stoi(m[1]), 100);
  EXPECT_FALSE(host.wait_journal(id, reason).empty());
  EXPECT_EQ(host.status(id).at("crashes"), 0);
}

// 9. Closing.
TEST(HostClosing, ShutdownThenExitIsNotACrashAndTheStubbornAreEnded) {
  HostClient host;
  auto good = host.load_and_enable(make_plugin(host.plugins_dir(), {"dev.test.polite"}));
  auto stubborn = host.load_and_enable(
      make_plugin(host.plugins_dir(), {"dev.test.stubborn", "ignore-shutdown"}));
  auto good_pid = host.call("host/call", call_params(good, "test/env")).result.at("pid").as_int64();
  auto bad_pid =
      host.call("host/call", call_params(stubborn, "test/env")).result.at("pid").as_int64();
  auto bye = host.call("host/shutdown", json::object{});
  ASSERT_TRUE(bye.ok()) << bye.error_message;
  EXPECT_EQ(host.wait_exit(), 0);
  EXPECT_FALSE(process_alive(static_cast<int>(good_pid)));
  EXPECT_FALSE(process_alive(static_cast<int>(bad_pid)));
  // The journals on disk say what happened.
  auto read = [&](const std::string& id) {
    std::ifstream in(host.data_dir() / "plugin-logs" / (id + ".log"));
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  EXPECT_NE(read(good).find("answered shutdown"), std::string::npos);
  EXPECT_EQ(read(good).find("crashed"), std::string::npos);
  EXPECT_NE(read(stubborn).find("did not end within the second given at closing"),
            std::string::npos);
}

TEST(HostClosing, ClosingTheInputIsAShutdown) {
  HostClient host;
  auto id = host.load_and_enable(make_plugin(host.plugins_dir(), {"dev.test.eof"}));
  auto pid = host.call("host/call", call_params(id, "test/env")).result.at("pid").as_int64();
  EXPECT_EQ(host.close_and_wait(), 0);
  EXPECT_FALSE(process_alive(static_cast<int>(pid)));
}

// Its input may be a file, which epoll cannot wait for (reading one never blocks): every
// request is answered, and the file's end is a shutdown.
TEST(HostClosing, RequestsFromAFileAreAnsweredAndItsEndIsAShutdown) {
  TempDir dir;
  const auto requests = dir.path() / "requests.jsonl";
  std::ofstream(requests) << R"({"jsonrpc":"2.0","id":1,"method":"host/status","params":{}})"
                          << "\n"
                          << R"({"jsonrpc":"2.0","id":2,"method":"host/nope","params":{}})"
                          << "\n"
                          << R"({"jsonrpc":"2.0","id":3,"method":"host/status","params":{}})";
  int from_host[2];
  ASSERT_EQ(::pipe2(from_host, O_CLOEXEC), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, requests.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, from_host[1], 1);
  std::vector<std::string> args{ESCOUADE_HOST_BINARY, "--data-dir", (dir.path() / "data").string(),
                                "--keychain", "file:" + (dir.path() / "keychain").string()};
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, args[0].c_str(), &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  ::close(from_host[1]);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(from_host[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    ASSERT_GT(n, 0);
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(from_host[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  std::vector<json::value> answers;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);)
    answers.push_back(json::parse(line));
  ASSERT_EQ(answers.size(), 3u) << out;
  EXPECT_EQ(answers[0].at("id"), 1);
  EXPECT_TRUE(answers[0].at("result").is_array());
  EXPECT_EQ(answers[1].at("id"), 2);
  EXPECT_EQ(answers[1].at("error").at("code"), -32601);
  EXPECT_EQ(answers[2].at("id"), 3);  // the last line, without its '\n', is read at the end
}

// escouade-host run with `args` and an empty input: its exit status and what it wrote on stderr.
std::pair<int, std::string> run_host_alone(std::vector<std::string> args) {
  int from_host[2];
  if (::pipe2(from_host, O_CLOEXEC) != 0) return {-1, "pipe"};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, from_host[1], 2);
  args.insert(args.begin(), ESCOUADE_HOST_BINARY);
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, args[0].c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(from_host[1]);
  std::string err;
  char buf[4096];
  for (ssize_t n; spawned == 0 && (n = ::read(from_host[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    err.append(buf, static_cast<std::size_t>(n));
  }
  ::close(from_host[0]);
  int status = 0;
  if (spawned != 0 || ::waitpid(pid, &status, 0) != pid) return {-1, "spawn"};
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, err};
}

// --proxy and --ca-file that cannot be used stop escouade-host at its start, with the reason;
// good ones let it run (and close at the end of its input).
TEST(HostNetworkSettings, SettingsThatCannotBeUsedStopTheHostWithTheReason) {
  escouade::TempDir dir("escouade-host-net");
  std::ofstream(dir.path() / "empty.pem") << "no certificate here\n";
  const std::vector<std::string> base{"--data-dir", (dir.path() / "data").string(), "--keychain",
                                      "file:" + (dir.path() / "keychain").string()};
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"--proxy", "socks5://proxy.example:1080"},
       "escouade-host: the proxy socks5://proxy.example:1080 is not http://HOST:PORT"},
      {{"--proxy", "http://proxy.example"},
       "escouade-host: the proxy http://proxy.example is not http://HOST:PORT"},
      {{"--ca-file", (dir.path() / "missing.pem").string()},
       "escouade-host: the certificates of " + (dir.path() / "missing.pem").string() +
           " cannot be read: there is no such file"},
      {{"--ca-file", (dir.path() / "empty.pem").string()},
       "escouade-host: the certificates of " + (dir.path() / "empty.pem").string() +
           " cannot be read: it holds no PEM certificate"},
  };
  for (const auto& [extra, reason] : cases) {
    auto args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    const auto [code, err] = run_host_alone(args);
    EXPECT_EQ(code, 2) << err;
    EXPECT_NE(err.find(reason), std::string::npos) << err;
  }
  auto good = base;
  good.insert(good.end(), {"--proxy", "http://127.0.0.1:3128"});
  EXPECT_EQ(run_host_alone(good).first, 0);
}

TEST(HostClosing, SigtermClosesThePluginsPolitely) {
  HostClient host;
  auto id = host.load_and_enable(make_plugin(host.plugins_dir(), {"dev.test.term"}));
  auto pid = host.call("host/call", call_params(id, "test/env")).result.at("pid").as_int64();
  ::kill(host.pid(), SIGTERM);
  EXPECT_EQ(host.wait_exit(), 0);
  EXPECT_FALSE(process_alive(static_cast<int>(pid)));
  std::ifstream in(host.data_dir() / "plugin-logs" / (id + ".log"));
  std::string journal((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(journal.find("answered shutdown"), std::string::npos) << journal;
}

// 3. Everything it started ends with it, even a grandchild in a session of its own, even when
// the host itself is killed.
TEST(HostTrees, ASetsidGrandchildEndsWithThePlugin) {
  HostClient host;
  auto id =
      host.load_and_enable(make_plugin(host.plugins_dir(), {"dev.test.tree", "setsid-grandchild"}));
  host.call("host/call", call_params(id, "test/echo"));
  auto line = host.wait_journal(id, "stderr: grandchild ");
  ASSERT_FALSE(line.empty());
  const int grandchild = std::stoi(line.substr(line.find("grandchild ") + 11));
  EXPECT_TRUE(process_alive(grandchild));
  host.call("host/call", call_params(id, "test/crash"));  // the plugin dies on its own
  EXPECT_TRUE(eventually([&] { return !process_alive(grandchild); }));
}

TEST(HostTrees, KillingTheHostEndsThePluginsAndWhatTheyStarted) {
  HostClient host;
  auto id = host.load_and_enable(
      make_plugin(host.plugins_dir(), {"dev.test.orphans", "setsid-grandchild"}));
  auto pid = host.call("host/call", call_params(id, "test/env")).result.at("pid").as_int64();
  auto line = host.wait_journal(id, "stderr: grandchild ");
  ASSERT_FALSE(line.empty());
  const int grandchild = std::stoi(line.substr(line.find("grandchild ") + 11));
  host.kill_host();
  EXPECT_TRUE(eventually([&] { return !process_alive(static_cast<int>(pid)); }));
  EXPECT_TRUE(eventually([&] { return !process_alive(grandchild); }));
}

// 10. Stdout is for the protocol.
TEST(HostStdout, AGarbageLineIsNotedAndTheHostGoesOn) {
  HostClient host;
  auto id = host.load_and_enable(make_plugin(host.plugins_dir(), {"dev.test.noisy", "garbage"}));
  EXPECT_TRUE(host.call("host/call", call_params(id, "test/echo")).ok());
  auto line = host.wait_journal(id, "sent a line that is not JSON");
  EXPECT_NE(line.find("Starting plugin... (this line is not JSON-RPC)"), std::string::npos) << line;
}

TEST(HostStdout, AHugeLineIsDroppedAndTheHostGoesOn) {
  HostClient host;
  auto id = host.load_and_enable(make_plugin(host.plugins_dir(), {"dev.test.huge", "huge-line"}));
  // It writes 50 MiB before it reads anything: a generous delay, not a measure of speed.
  auto params = call_params(id, "test/echo");
  params.as_object()["timeoutMs"] = 60000;
  EXPECT_TRUE(host.call("host/call", params, 90s).ok());
  EXPECT_FALSE(host.wait_journal(id, "sent a line longer than 8388608 bytes").empty());
}

TEST(HostStdout, AFloodOfLogsIsJournaledAndDecisionsStillCome) {
  HostClient host;
  auto id = host.load_and_enable(make_plugin(host.plugins_dir(), {"dev.test.flood", "flood"}));
  // Its delay here is generous: the point is that it still answers, not how fast on a busy CI.
  auto params = call_params(id, "permissions/decide", decide_params("rm -rf /"));
  params.as_object()["timeoutMs"] = 60000;
  auto d = host.call("host/call", params, 90s);
  ASSERT_TRUE(d.ok()) << d.error_message;
  EXPECT_EQ(d.result.at("decision"), "deny");
  EXPECT_FALSE(host.wait_journal(id, "log: flood 19999").empty());
}

TEST(HostStdout, AMethodTheHostDoesNotServeIsAnswered32601AndNoted) {
  HostClient host;
  auto id = host.load_and_enable(make_plugin(host.plugins_dir(), {"dev.test.caller", "caller"}));
  host.call("host/call", call_params(id, "test/echo"));
  EXPECT_FALSE(host.wait_journal(id, "asked for files/delete, which is not served").empty());
  auto answers = host.call("host/call", call_params(id, "test/answers"));
  ASSERT_EQ(answers.result.as_array().size(), 1u);
  EXPECT_EQ(answers.result.at(0).at("id"), "c1");
  EXPECT_EQ(answers.result.at(0).at("error").at("code"), -32601);
}

TEST(HostApp, StatusOfEveryPluginAndUnknownIds) {
  HostClient host;
  host.load_and_enable(make_plugin(host.plugins_dir(), {"dev.test.one"}));
  host.load_and_enable(make_plugin(host.plugins_dir(), {"dev.test.two"}));
  auto all = host.call("host/status", json::object{});
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all.result.as_array().size(), 2u);
  EXPECT_EQ(all.result.at(0).at("id"), "dev.test.one");
  EXPECT_EQ(all.result.at(1).at("id"), "dev.test.two");
  auto unknown = host.call("host/status", json::object{{"id", "dev.nope"}});
  EXPECT_EQ(*unknown.error_code, -32602);
  auto bad = host.call("host/nope", json::object{});
  EXPECT_EQ(*bad.error_code, -32601);
  host.send_line("this is not JSON");
  EXPECT_TRUE(host.call("host/status", json::object{}).ok());
}

TEST(HostApp, SwitchedOffItStopsAndRefuses) {
  HostClient host;
  auto id = host.load_and_enable(make_plugin(host.plugins_dir(), {"dev.test.off"}));
  auto pid = host.call("host/call", call_params(id, "test/env")).result.at("pid").as_int64();
  ASSERT_TRUE(host.call("host/disable", json::object{{"id", id}, {"project", "p1"}}).ok());
  host.wait_status(id, "disabled");
  EXPECT_TRUE(eventually([&] { return !process_alive(static_cast<int>(pid)); }));
  auto published = host.call("host/publish", json::object{{"fact", fact("agent.status", 3)}});
  EXPECT_EQ(published.result.at("delivered"), json::array{});
}

}  // namespace
}  // namespace escouade::testing
