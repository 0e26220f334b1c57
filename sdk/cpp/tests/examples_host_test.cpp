// The example plugins (examples/), built with the SDK, run by the real escouade-host and driven
// as an app drives it (tests/integration/host_client).

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <filesystem>
#include <ostream>
#include <string>

#include "../../../tests/integration/host_client.hpp"

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using escouade::testing::HostClient;

const fs::path kExamples = ESCOUADE_EXAMPLES_DIR;

json::object project_one() {
  return {{"id", "p1"}, {"name", "Project One"}, {"private", false}};
}

json::value make_fact(std::string_view name, std::int64_t seq, json::object data,
                      std::optional<json::object> agent = std::nullopt,
                      std::optional<json::object> ticket = std::nullopt) {
  json::object f{{"name", name},
                 {"version", 1},
                 {"seq", seq},
                 {"at", "2026-11-29T10:00:00Z"},
                 {"project", project_one()},
                 {"data", std::move(data)}};
  if (agent) f["agent"] = std::move(*agent);
  if (ticket) f["ticket"] = std::move(*ticket);
  return f;
}

void publish(HostClient& host, json::value fact) {
  auto r = host.call("host/publish", json::object{{"fact", std::move(fact)}});
  ASSERT_TRUE(r.ok()) << r.error_message;
}

json::value decide(HostClient& host, std::string_view kind, std::string_view command) {
  json::object request{{"id", "r-1"}, {"kind", kind}, {"tool", "Bash"}};
  if (!command.empty()) request["input"] = json::object{{"command", command}};
  auto r = host.call("host/decide",
                     json::object{{"request", std::move(request)}, {"project", project_one()}});
  EXPECT_TRUE(r.ok()) << r.error_message;
  return r.result;
}

// One build of an example: its folder under <build>/examples, the id its manifest gives (the
// TypeScript twins have ids of their own) and how it runs, which names the test.
struct ExampleBuild {
  std::string folder;
  std::string id;
  std::string run;
};

void PrintTo(const ExampleBuild& build, std::ostream* os) {
  *os << build.folder;
}

std::string run_name(const ::testing::TestParamInfo<ExampleBuild>& info) {
  return info.param.run;
}

// The guard as a process (guard/) and as run.wasm in the sandbox (guard-wasm/, the same sources
// built for wasm32-wasi) decide alike; so does its TypeScript twin, one bundle run in the sandbox
// (guard-ts/) and by Node as a process (guard-ts-process/).
class GuardThroughHost : public ::testing::TestWithParam<ExampleBuild> {};

TEST_P(GuardThroughHost, DecidesFromItsRules) {
  HostClient host;
  const std::string id = host.load_and_enable(kExamples / GetParam().folder);
  ASSERT_EQ(id, GetParam().id);
  // Started by its activation, then its rules read with files/read before any decision.
  publish(host, make_fact("agent.status", 1, {{"status", "working"}}));
  host.wait_status(id, "running");
  ASSERT_NE(host.wait_journal(id, "rules loaded: 3 refusals, 6 commands allowed"), "");

  auto rm = decide(host, "command", "rm -rf /");
  EXPECT_EQ(rm.at("decision"), "deny");
  EXPECT_EQ(rm.at("message"), "rm -rf is never allowed");
  auto push = decide(host, "command", "git push origin main");
  EXPECT_EQ(push.at("decision"), "deny");
  EXPECT_EQ(push.at("message"),
            "no pushes to main or master: push a branch and open a pull request");
  EXPECT_EQ(decide(host, "command", "git push origin HEAD:master").at("decision"), "deny");
  EXPECT_EQ(decide(host, "command", "git push origin feature/login").at("by").at(0).at("decision"),
            "ask");
  auto ls = decide(host, "command", "ls -la src");
  EXPECT_EQ(ls.at("decision"), "allow");
  EXPECT_EQ(ls.at("by").at(0).at("message"), "ls only reads");
  EXPECT_EQ(decide(host, "command", "git diff --stat").at("decision"), "allow");
  // White space other than single spaces: the words are what the rules see.
  EXPECT_EQ(decide(host, "command", "rm\t-rf  /").at("decision"), "deny");
  EXPECT_EQ(decide(host, "command", "  git   push origin refs/heads/main ").at("decision"), "deny");
  auto spaced = decide(host, "command", " git\tstatus  -s");
  EXPECT_EQ(spaced.at("decision"), "allow");
  EXPECT_EQ(spaced.at("by").at(0).at("message"), "git status only reads");
  EXPECT_EQ(decide(host, "command", "git statusx").at("by").at(0).at("decision"), "ask");
  EXPECT_EQ(decide(host, "command", "git").at("by").at(0).at("decision"), "ask");
  EXPECT_EQ(decide(host, "read", "").at("decision"), "allow");
  auto chained = decide(host, "command", "cat notes.txt; curl example.org");
  EXPECT_EQ(chained.at("decision"), "ask");
  EXPECT_EQ(chained.at("by").at(0).at("decision"), "ask");
  auto npm = decide(host, "command", "npm install");
  EXPECT_EQ(npm.at("by").at(0).at("decision"), "ask");
  EXPECT_EQ(npm.at("by").at(0).at("message"), "no rule of the guard covers: npm install");

  // A method the guard does not serve: the SDK answers -32601, which the app gets as it is.
  auto unknown = host.call(
      "host/call", json::object{{"id", id}, {"method", "custom/none"}, {"params", nullptr}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(*unknown.error_code, -32601);
}

INSTANTIATE_TEST_SUITE_P(Builds, GuardThroughHost,
                         ::testing::Values(ExampleBuild{"guard", "dev.example.guard", "process"},
                                           ExampleBuild{"guard-wasm", "dev.example.guard", "wasm"}),
                         run_name);
INSTANTIATE_TEST_SUITE_P(
    TypeScript, GuardThroughHost,
    ::testing::Values(ExampleBuild{"guard-ts", "dev.example.guard-ts", "sandbox"},
                      ExampleBuild{"guard-ts-process", "dev.example.guard-ts", "process"}),
    run_name);

// The same rules, in plain JavaScript, run inside the host (examples/guard-js).
TEST(ExamplesThroughHost, GuardJsDecidesFromItsRulesInTheSandbox) {
  HostClient host;
  const std::string id = host.load_and_enable(kExamples / "guard-js");
  ASSERT_EQ(id, "dev.example.guard-js");
  publish(host, make_fact("agent.status", 1, {{"status", "working"}}));
  host.wait_status(id, "running");
  ASSERT_NE(host.wait_journal(id, "started: dist/plugin.mjs in the sandbox"), "");
  // Read with readFileSync(new URL('../rules.json', globalThis._importMeta_.url)).
  ASSERT_NE(host.wait_journal(id, "rules loaded: 3 refusals, 6 commands allowed"), "");

  auto rm = decide(host, "command", "rm -rf /");
  EXPECT_EQ(rm.at("decision"), "deny");
  EXPECT_EQ(rm.at("message"), "rm -rf is never allowed");
  EXPECT_EQ(decide(host, "command", "git push origin HEAD:master").at("decision"), "deny");
  auto ls = decide(host, "command", "ls -la src");
  EXPECT_EQ(ls.at("decision"), "allow");
  EXPECT_EQ(ls.at("by").at(0).at("message"), "ls only reads");
  EXPECT_EQ(decide(host, "read", "").at("decision"), "allow");
  auto npm = decide(host, "command", "npm install");
  EXPECT_EQ(npm.at("by").at(0).at("message"), "no rule of the guard covers: npm install");
  // Its setTimeout, over the host's timer/*: a line once a quiet second has passed (how many
  // it counts depends on how fast the decisions came, so only the line is awaited).
  ASSERT_NE(host.wait_journal(id, "decided "), "");
}

TEST(ExamplesThroughHost, FactJournalSummarizesEachProject) {
  HostClient host;
  const std::string id = host.load_and_enable(kExamples / "fact-journal");
  auto set = host.call("host/settings/set", json::object{{"id", id}, {"values", {{"every", 2}}}});
  ASSERT_TRUE(set.ok()) << set.error_message;
  json::object ada{{"id", "a1"}, {"name", "Ada"}};
  json::object bob{{"id", "a2"}, {"name", "Bob"}};
  json::object ticket{{"id", "t1"}, {"key", "ESC-12"}, {"title", "Fix login"}};
  publish(host, make_fact("agent.status", 1, {{"status", "working"}, {"was", "idle"}}, ada));
  publish(host,
          make_fact("ticket.column", 2, {{"from", "todo"}, {"to", "doing"}}, std::nullopt, ticket));
  publish(host, make_fact("agent.status", 3, {{"status", "idle"}, {"was", "working"}}, bob));
  publish(host, make_fact("turn.ended", 4, {{"end", "done"}}, ada));
  EXPECT_NE(host.wait_journal(id,
                              "summary of Project One (p1): 2 facts: agent.status 1, "
                              "ticket.column 1; agents: Ada working"),
            "");
  const std::string four =
      "summary of Project One (p1): 4 facts: agent.status 2, ticket.column 1, turn.ended 1; "
      "agents: Ada working, Bob idle";
  EXPECT_NE(host.wait_journal(id, four), "");

  // At shutdown, the summary of every project once more, before the answer.
  auto down = host.call("host/shutdown", nullptr);
  ASSERT_TRUE(down.ok());
  EXPECT_EQ(host.wait_exit(), 0);
  const std::string journal = host.journal_file(id);
  const auto first = journal.find(four);
  ASSERT_NE(first, std::string::npos);
  EXPECT_NE(journal.find(four, first + 1), std::string::npos) << journal;
}

// The notifier as a process (notifier/), and its TypeScript twin in the sandbox (notifier-ts/) and
// by Node (notifier-ts-process/): the secret set by the app, the setting, the same journal. The
// secrets are in the test host's file store (HostClient), never the machine's keychain.
class NotifierThroughHost : public ::testing::TestWithParam<ExampleBuild> {};

TEST_P(NotifierThroughHost, UsesItsSecretAndSettingAndNeverJournalsTheToken) {
  HostClient host;
  const std::string id = host.load_and_enable(kExamples / GetParam().folder);
  ASSERT_EQ(id, GetParam().id);
  const std::string token = "xoxb-4242-very-secret";
  auto secret =
      host.call("host/secrets/set", json::object{{"id", id}, {"key", "token"}, {"value", token}});
  ASSERT_TRUE(secret.ok()) << secret.error_message;
  json::object ticket{{"id", "t1"}, {"key", "ESC-12"}, {"title", "Fix login"}};
  publish(host, make_fact("ticket.column", 1, {{"from", "todo"}, {"to", "review"}}, std::nullopt,
                          ticket));
  publish(host, make_fact("ticket.column", 2, {{"from", "review"}, {"to", "done"}}, std::nullopt,
                          ticket));
  EXPECT_NE(host.wait_journal(id,
                              "would post to #dev: ESC-12 \"Fix login\" is done in Project One "
                              "(authorized with the token, 21 characters)"),
            "");

  auto set =
      host.call("host/settings/set", json::object{{"id", id}, {"values", {{"channel", "#ops"}}}});
  ASSERT_TRUE(set.ok()) << set.error_message;
  publish(host, make_fact("ticket.column", 3, {{"from", "review"}, {"to", "done"}}, std::nullopt,
                          ticket));
  EXPECT_NE(host.wait_journal(id, "would post to #ops: ESC-12"), "");

  const std::string journal = host.journal_file(id);
  EXPECT_EQ(journal.find(token), std::string::npos);
  // Nothing the notifier wrote needed masking: it never wrote the token at all.
  EXPECT_EQ(journal.find("\xE2\x80\xA2\xE2\x80\xA2\xE2\x80\xA2\xE2\x80\xA2"), std::string::npos)
      << journal;
  // The fact to review prepared nothing: one message per fact to done.
  std::size_t posts = 0;
  for (auto at = journal.find("would post"); at != std::string::npos;
       at = journal.find("would post", at + 1))
    ++posts;
  EXPECT_EQ(posts, 2u);
}

INSTANTIATE_TEST_SUITE_P(Builds, NotifierThroughHost,
                         ::testing::Values(ExampleBuild{"notifier", "dev.example.notifier",
                                                        "process"}),
                         run_name);
INSTANTIATE_TEST_SUITE_P(
    TypeScript, NotifierThroughHost,
    ::testing::Values(ExampleBuild{"notifier-ts", "dev.example.notifier-ts", "sandbox"},
                      ExampleBuild{"notifier-ts-process", "dev.example.notifier-ts", "process"}),
    run_name);

}  // namespace
