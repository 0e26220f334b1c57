// Hostile plugins (tests/fixtures/hostile_plugin.cpp) against a real escouade-host, beside an
// innocent one: each attack ends with a clear journal line, the host's memory stays bounded, and
// the innocent plugin is served throughout (docs/SECURITY.md lists the guards).

#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <boost/json.hpp>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "host_client.hpp"

namespace escouade::testing {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

const std::string kSecret = "hunter2-0123456789";
const std::string kMasked = "\u2022\u2022\u2022\u2022";

std::string hostile(HostClient& host, const std::string& id, const std::string& mode,
                    std::vector<std::string> secrets = {}) {
  PluginSpec spec{id, mode};
  spec.program = ESCOUADE_HOSTILE_PLUGIN;
  spec.secrets = std::move(secrets);
  return host.load_and_enable(make_plugin(host.plugins_dir(), spec));
}

json::value call_params(const std::string& id, const std::string& method,
                        json::value params = json::object{}) {
  return json::object{
      {"id", id}, {"method", method}, {"params", std::move(params)}, {"timeoutMs", 30000}};
}

// The innocent plugin answers an echo.
void expect_served(HostClient& host, const std::string& id, int n) {
  auto a = host.call("host/call", call_params(id, "test/echo", json::object{{"n", n}}));
  ASSERT_TRUE(a.ok()) << a.error_message;
  EXPECT_EQ(a.result, (json::object{{"n", n}}));
}

// The resident memory of a process, in MiB, from /proc/<pid>/status.
long rss_mib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6)) / 1024;
  }
  return -1;
}

int count_lines(const std::vector<std::string>& lines, const std::string& text) {
  int n = 0;
  for (const auto& l : lines)
    if (l.find(text) != std::string::npos) ++n;
  return n;
}

// The pids a hostile plugin wrote in `file` beside it (written whole, then renamed), once it
// has; empty at the safety bound.
std::vector<int> pids_written(HostClient& host, const std::string& id, const std::string& file) {
  const fs::path path = host.plugins_dir() / id / file;
  std::vector<int> pids;
  if (!eventually([&] { return fs::exists(path); })) return pids;
  std::ifstream in(path);
  for (int pid; in >> pid;)
    pids.push_back(pid);
  return pids;
}

// A plugin (a decider too) that never reads its input while it asks for files, woken, once the
// host said its input is full; its id. Empty, the test failed, when the journal never said so.
std::string flooder_with_its_input_full(HostClient& host) {
  PluginSpec spec{"dev.flood", "no-read-flood"};
  spec.program = ESCOUADE_HOSTILE_PLUGIN;
  const fs::path dir = make_plugin(host.plugins_dir(), spec);
  std::ofstream(dir / "big.txt") << std::string(200 * 1024, 'w');
  const std::string flooder = host.load_and_enable(dir);
  // Its activation: the call is never read, and times out.
  json::value wake = call_params(flooder, "test/echo");
  wake.as_object()["timeoutMs"] = 500;
  EXPECT_FALSE(host.call("host/call", wake).ok());
  if (host.wait_journal(flooder, "its input is full (").empty()) {
    ADD_FAILURE() << "its input never filled: " << ::testing::PrintToString(host.journal(flooder));
    return {};
  }
  return flooder;
}

// 1. A plugin that never reads its input while it asks for files: the host stops reading it.
TEST(Attack, APluginThatDoesNotReadItsInputCannotGrowTheHost) {
  HostClient host;
  const std::string innocent = host.load_and_enable(make_plugin(host.plugins_dir(), {"dev.ok"}));
  const std::string flooder = flooder_with_its_input_full(host);
  ASSERT_FALSE(flooder.empty());
  const long after_fill = rss_mib(host.pid());
  // Without the bound the host grew by about 200 MB a second here; with it, what it holds for
  // the flooder is its input's 4 MiB and its 128 calls in flight.
  for (int i = 0; i < 50; ++i)
    expect_served(host, innocent, i);
  const long later = rss_mib(host.pid());
  std::cout << "host: " << after_fill << " MiB resident once the flooder's input was full, "
            << later << " MiB after 50 calls of another plugin\n";
  EXPECT_LT(later, after_fill + 64) << "MiB before: " << after_fill << ", after: " << later;
  EXPECT_LT(later, 512);
  // It is stopped like any plugin, though it reads nothing.
  ASSERT_TRUE(host.call("host/shutdown", json::object{}).ok());
  EXPECT_EQ(host.wait_exit(), 0);
}

// 1. The same plugin asked to decide beside two that answer: a decision's requests go to all of
// them together (platform::write_batch), the flooder's input is full and takes its line later
// or never, and nothing waits for it: each decision ends with its delay (500 ms), the others'
// votes in it and the flooder's a timeout, and the innocent is served between them.
TEST(Attack, ADecidingPluginThatDoesNotReadHoldsNeitherADecisionNorTheHost) {
  HostClient host;
  const std::string innocent = host.load_and_enable(make_plugin(host.plugins_dir(), {"dev.ok"}));
  const std::string other = host.load_and_enable(make_plugin(host.plugins_dir(), {"dev.ok2"}));
  const std::string flooder = flooder_with_its_input_full(host);
  ASSERT_FALSE(flooder.empty());
  const json::value request = json::object{
      {"request", json::object{{"id", "r1"},
                               {"kind", "command"},
                               {"tool", "Bash"},
                               {"input", json::object{{"command", "npm test"}}}}},
      {"project", json::object{{"id", "p1"}, {"name", "Project"}, {"private", false}}}};
  for (int i = 0; i < 5; ++i) {
    auto a = host.call("host/decide", request);
    ASSERT_TRUE(a.ok()) << a.error_message;
    json::object by;
    for (const auto& b : a.result.at("by").as_array())
      by[b.at("id").as_string()] = b;
    EXPECT_EQ(by.at(innocent).at("decision"), "allow") << a.result;
    EXPECT_EQ(by.at(other).at("decision"), "allow") << a.result;
    EXPECT_EQ(by.at(flooder).at("decision"), "timeout") << a.result;
    EXPECT_EQ(a.result.at("decision"), "ask");
    expect_served(host, innocent, i);
  }
  ASSERT_TRUE(host.call("host/shutdown", json::object{}).ok());
  EXPECT_EQ(host.wait_exit(), 0);
}

// 1. The same towards the app: an app that sends and does not read its answers makes the host
// stop reading it, not grow (each answer here is a journal of about 12 KiB: 60 MB in all, four
// times what the host may hold for the app).
TEST(Attack, AnAppThatDoesNotReadItsAnswersCannotGrowTheHost) {
  HostClient host;
  const std::string id = hostile(host, "dev.noisy", "stderr-flood");
  expect_served(host, id, 1);
  EXPECT_FALSE(host.wait_journal(id, "stderr: flood 9999").empty());  // its 10,000th
  const std::size_t kRequests = 5000;
  std::atomic<std::size_t> sent{0};
  std::thread app([&] {
    const std::string params = json::serialize(json::object{{"id", id}});
    for (std::size_t i = 0; i < kRequests; ++i) {
      host.send_line(R"({"jsonrpc":"2.0","id":"j)" + std::to_string(i) +
                     R"(","method":"host/journal","params":)" + params + "}");
      sent = i + 1;
    }
  });
  // Until the host stops taking its lines (a safety bound of 60 s).
  std::size_t before = 0;
  for (int i = 0; i < 600 && sent < kRequests; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (sent == before && sent > 0) break;
    before = sent;
  }
  const long stalled = rss_mib(host.pid());
  std::cout << "host: " << stalled << " MiB resident once it stopped reading, after " << sent.load()
            << " of " << kRequests << " requests\n";
  EXPECT_LT(sent.load(), kRequests) << "the host read every request without holding back";
  EXPECT_LT(stalled, 200) << "MiB while the app read nothing";
  // Nothing is lost: every answer comes once the app reads.
  EXPECT_EQ(host.read_answers(kRequests, std::chrono::seconds(120)), kRequests);
  app.join();
  // (Its memory after the 5,000 answers is the allocator's, not a bound: AddressSanitizer's
  // quarantine alone keeps 256 MB of what was freed.)
  expect_served(host, id, 2);
}

// 2. A batch of invalid elements: linear, one journal line for the whole batch, and a batch
// longer than 1000 messages refused whole (its answers would be 50 times its size).
TEST(Attack, ABatchOfInvalidElementsCostsOneJournalLine) {
  HostClient host;
  const std::string id = hostile(host, "dev.batch", "invalid-batch");
  expect_served(host, id, 1);
  const std::string line = host.wait_journal(id, "sent a batch of 1000 elements");
  EXPECT_NE(line.find("1000 of them not valid (not JSON-RPC 2.0 (a message must be a JSON "
                      "object); "),
            std::string::npos)
      << line;
  const std::string whole = host.wait_journal(id, "more than the 1000 one may hold");
  EXPECT_NE(whole.find("a batch of 200000 messages"), std::string::npos) << whole;
  EXPECT_EQ(count_lines(host.journal(id), "not JSON-RPC"), 2);
  expect_served(host, id, 2);
}

// 3. A stderr flood is counted, and the journal's history is not rotated away.
TEST(Attack, AStderrFloodIsSummarisedInsteadOfRotatingTheJournal) {
  HostClient host;
  const auto began = std::chrono::steady_clock::now();
  const std::string innocent = host.load_and_enable(make_plugin(host.plugins_dir(), {"dev.ok"}));
  const std::string id = hostile(host, "dev.noisy", "stderr-flood");
  expect_served(host, id, 1);  // answered after its 200,000 lines
  expect_served(host, innocent, 2);
  host.call("host/call", call_params(id, "test/crash"));
  const std::string summary = host.wait_journal(id, "lines of stderr dropped (");
  ASSERT_FALSE(summary.empty());
  const auto journal = host.journal(id);
  // journald's budget: 10,000 lines in its 30 s window, which host/journal's 500 cannot show
  // whole, so the file is read.
  std::ifstream file(host.data_dir() / "plugin-logs" / (id + ".log"));
  std::string line;
  int flood = 0;
  int loaded = 0;
  while (std::getline(file, line)) {
    flood += line.find(" stderr: flood ") != std::string::npos &&
             line.find("crashed") == std::string::npos;
    loaded += line.find("loaded: version 1.0.0") != std::string::npos;
  }
  EXPECT_GT(flood, 256);  // more than the old budget's burst: each line counts
  // 10,000 a window, and as many windows as this test's time spans (a slow machine's too).
  const auto windows = 1 + (std::chrono::steady_clock::now() - began) / std::chrono::seconds(30);
  EXPECT_LE(flood, 10000 * windows);
  EXPECT_EQ(loaded, 1);  // its history is all there
  EXPECT_FALSE(fs::exists(host.data_dir() / "plugin-logs" / (id + ".log.1")));
  EXPECT_LT(fs::file_size(host.data_dir() / "plugin-logs" / (id + ".log")), 1024u * 1024);
}

// The escape plugin's grandchild, running, once it has served a call; 0 if it is not there.
int escaped_grandchild(HostClient& host, const std::string& id) {
  expect_served(host, id, 1);
  const auto escaped = pids_written(host, id, "escaped.pid");
  return escaped.size() == 1 && process_alive(escaped[0]) ? escaped[0] : 0;
}

// 4. What it starts ends with it, whatever it does to its session, group and environment.
TEST(Attack, AGrandchildThatLeftItsSessionAndClearedItsEnvironmentEndsWithItsPlugin) {
  HostClient host;
  const std::string id = hostile(host, "dev.escape", "escape");
  const int pid = escaped_grandchild(host, id);
  ASSERT_GT(pid, 0);
  std::ifstream environ("/proc/" + std::to_string(pid) + "/environ");
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(environ)), {}), "");
  EXPECT_NE(::getsid(pid), ::getsid(host.pid()));  // a session of its own

  host.call("host/call", call_params(id, "test/crash"));
  EXPECT_TRUE(eventually([&] { return !process_alive(pid); })) << pid << " outlived its plugin";
}

TEST(Attack, AnEscapedGrandchildEndsWhenTheHostCloses) {
  HostClient host;
  const std::string id = hostile(host, "dev.escape", "escape");
  const int pid = escaped_grandchild(host, id);
  ASSERT_GT(pid, 0);
  EXPECT_EQ(host.close_and_wait(), 0);
  EXPECT_TRUE(eventually([&] { return !process_alive(pid); })) << pid << " outlived the host";
}

TEST(Attack, AHundredChildrenInGroupsOfTheirOwnEndWithTheirPlugin) {
  HostClient host;
  const std::string innocent = host.load_and_enable(make_plugin(host.plugins_dir(), {"dev.ok"}));
  const std::string id = hostile(host, "dev.many", "many-children");
  expect_served(host, id, 1);
  const auto pids = pids_written(host, id, "children.pids");
  ASSERT_EQ(pids.size(), 100u);
  host.call("host/call", call_params(id, "test/crash"));
  expect_served(host, innocent, 2);  // ending them does not hold the host's thread
  EXPECT_TRUE(eventually([&] {
    for (int pid : pids)
      if (process_alive(pid)) return false;
    return true;
  }));
}

// 6. Secrets are refused until its handshake is done.
TEST(Attack, ASecretAskedBeforeTheHandshakeIsRefused) {
  HostClient host;
  const std::string id = hostile(host, "dev.early", "secret-before-init", {"token"});
  ASSERT_TRUE(
      host.call("host/secrets/set", json::object{{"id", id}, {"key", "token"}, {"value", kSecret}})
          .ok());
  auto a = host.call("host/call", call_params(id, "test/early"));
  ASSERT_TRUE(a.ok()) << a.error_message;
  const json::object& got = a.result.as_object();
  ASSERT_TRUE(got.contains("error")) << json::serialize(got);
  EXPECT_EQ(got.at("error").at("code"), -32003);
  EXPECT_EQ(json::serialize(got).find(kSecret), std::string::npos);
}

// 6. Whatever it says that quotes a secret it was given reaches the app masked.
TEST(Attack, ItsWordsReachTheAppMaskedWhereverTheyGo) {
  HostClient host;
  const std::string id = hostile(host, "dev.quote", "quote-secret", {"token"});
  ASSERT_TRUE(
      host.call("host/secrets/set", json::object{{"id", id}, {"key", "token"}, {"value", kSecret}})
          .ok());
  auto stolen = host.call("host/call", call_params(id, "test/steal"));
  ASSERT_TRUE(stolen.ok()) << stolen.error_message;
  // It got the secret (known.txt has it); what it sends back to the app is masked, as every
  // text of a plugin's that reaches the app.
  EXPECT_EQ(stolen.result.at("result"), json::value(kMasked));

  // An error of a call.
  auto failed = host.call("host/call", call_params(id, "test/fail"));
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error_message.find(kSecret), std::string::npos) << failed.error_message;
  EXPECT_NE(failed.error_message.find(kMasked), std::string::npos) << failed.error_message;

  // A vote's reason.
  auto verdict = host.call(
      "host/decide",
      json::object{{"request", json::object{{"id", "r1"},
                                            {"kind", "command"},
                                            {"tool", "Bash"},
                                            {"input", json::object{{"command", "ls"}}}}},
                   {"project", json::object{{"id", "p1"}, {"name", "Project"}, {"private", false}}},
                   {"agent", json::object{{"id", "a1"}, {"name", "Claude"}}}});
  ASSERT_TRUE(verdict.ok()) << verdict.error_message;
  const std::string said = json::serialize(verdict.result);
  EXPECT_EQ(said.find(kSecret), std::string::npos) << said;
  EXPECT_NE(said.find(kMasked), std::string::npos) << said;

  // Its answer to initialize, in the status and its notification.
  ASSERT_TRUE(host.call("host/restart", json::object{{"id", id}}).ok());
  const json::value stopped = host.wait_status(id, "stopped");
  const std::string status = json::serialize(host.status(id));
  EXPECT_EQ(status.find(kSecret), std::string::npos) << status;
  EXPECT_NE(status.find(kMasked), std::string::npos) << status;
  EXPECT_EQ(json::serialize(stopped).find(kSecret), std::string::npos);
  EXPECT_EQ(host.journal_file(id).find(kSecret), std::string::npos);
}

}  // namespace
}  // namespace escouade::testing
