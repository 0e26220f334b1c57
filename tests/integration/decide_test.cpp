// Decisions and facts through escouade-host, with several real plugin processes: who is asked,
// who hears, and how their answers make one decision.

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <fstream>

#include "host_client.hpp"

namespace escouade::testing::decide_tests {
namespace {

namespace json = boost::json;

// Waits for a journal line of `id` holding `text`; fails the test when none comes.
void expect_journal(HostClient& host, const std::string& id, const std::string& text) {
  EXPECT_FALSE(host.wait_journal(id, text).empty()) << id << " never journaled: " << text;
}

// A plugin that decides as `decision` says (the fixture's decider mode).
std::string decider(HostClient& host, const std::string& id, const json::object& decision,
                    bool decide = true) {
  PluginSpec spec;
  spec.id = id;
  spec.mode = "decider";
  spec.decide = decide;
  const auto dir = make_plugin(host.plugins_dir(), spec);
  std::ofstream(dir / "decision.json") << json::serialize(decision);
  return host.load_and_enable(dir);
}

json::value request(std::string_view command, std::string_view project = "p1") {
  return json::object{
      {"request", json::object{{"id", "r1"},
                               {"kind", "command"},
                               {"tool", "Bash"},
                               {"input", json::object{{"command", command}}}}},
      {"project", json::object{{"id", project}, {"name", "Project"}, {"private", false}}},
      {"agent", json::object{{"id", "a1"}, {"name", "Claude"}}}};
}

json::object by_id(const json::value& verdict) {
  json::object out;
  for (const auto& b : verdict.at("by").as_array())
    out[b.at("id").as_string()] = b;
  return out;
}

TEST(Decide, ARefusalWinsAndSaysWhoAndWhy) {
  HostClient host;
  decider(host, "dev.allow", {{"decision", "allow"}});
  decider(host, "dev.deny", {{"decision", "deny"}, {"message", "no pushes to main"}});
  decider(host, "dev.ask", {{"decision", "ask"}});
  auto a = host.call("host/decide", request("git push origin main"));
  ASSERT_TRUE(a.ok()) << a.error_message;
  EXPECT_EQ(a.result.at("decision"), "deny");
  EXPECT_EQ(a.result.at("message"), "no pushes to main");
  const auto by = by_id(a.result);
  ASSERT_EQ(by.size(), 3u);
  EXPECT_EQ(by.at("dev.allow").at("decision"), "allow");
  EXPECT_EQ(by.at("dev.deny").at("decision"), "deny");
  EXPECT_EQ(by.at("dev.ask").at("decision"), "ask");
  expect_journal(host, "dev.deny", R"(permissions/decide "r1" (command): deny: no pushes to main)");
}

// The same request asked of one plugin through host/call: its journal says it as host/decide
// does (issue 28), and an answer that does not hold is said as well.
TEST(Decide, ADecisionAskedThroughHostCallIsJournaledLikeHostDecide) {
  HostClient host;
  decider(host, "dev.deny", {{"decision", "deny"}, {"message", "no pushes to main"}});
  auto a = host.call("host/call", json::object{{"id", "dev.deny"},
                                               {"method", "permissions/decide"},
                                               {"params", request("git push origin main")}});
  ASSERT_TRUE(a.ok()) << a.error_message;
  EXPECT_EQ(a.result.at("decision"), "deny");
  expect_journal(host, "dev.deny", R"(permissions/decide "r1" (command): deny: no pushes to main)");
  decider(host, "dev.wrong", {{"decision", "perhaps"}});
  host.call("host/call",
            json::object{
                {"id", "dev.wrong"}, {"method", "permissions/decide"}, {"params", request("ls")}});
  expect_journal(host, "dev.wrong", R"(permissions/decide "r1" (command): error: its answer )");
}

TEST(Decide, AllowedOnlyWhenEveryPluginAllows) {
  HostClient host;
  decider(host, "dev.one", {{"decision", "allow"}});
  decider(host, "dev.two", {{"decision", "allow"}, {"message", "reads are fine"}});
  auto a = host.call("host/decide", request("ls"));
  ASSERT_TRUE(a.ok()) << a.error_message;
  EXPECT_EQ(a.result.at("decision"), "allow");
  EXPECT_FALSE(a.result.as_object().contains("message"));
  EXPECT_EQ(by_id(a.result).at("dev.two").at("message"), "reads are fine");

  // One asking leaves it to the user.
  decider(host, "dev.three", {{"decision", "ask"}});
  a = host.call("host/decide", request("ls"));
  EXPECT_EQ(a.result.at("decision"), "ask");
}

TEST(Decide, ALatePluginCountsAsAskAndIsJournaled) {
  HostClient host;
  decider(host, "dev.quick", {{"decision", "allow"}});
  decider(host, "dev.slow", {{"decision", "deny"}, {"delayMs", 1500}});
  auto a = host.call("host/decide", request("npm test"));
  ASSERT_TRUE(a.ok()) << a.error_message;
  // The slow plugin's refusal comes after the delay: ignored, its part is a timeout.
  EXPECT_EQ(a.result.at("decision"), "ask");
  const auto by = by_id(a.result);
  EXPECT_EQ(by.at("dev.quick").at("decision"), "allow");
  EXPECT_EQ(by.at("dev.slow").at("decision"), "timeout");
  expect_journal(host, "dev.slow", "permissions/decide: no answer within 500 ms");
  // Its late answer is noted, and it still answers what comes next.
  expect_journal(host, "dev.slow", "past its delay; it was ignored");
  EXPECT_EQ(host.call_plugin("dev.slow", "test/echo", "still here"), "still here");
}

TEST(Decide, AnAnswerThatDoesNotHoldIsAnErrorAndAsks) {
  HostClient host;
  PluginSpec spec;
  spec.id = "dev.broken";
  spec.mode = "decider";  // no decision.json: it answers {"decision":"maybe"}
  host.load_and_enable(make_plugin(host.plugins_dir(), spec));
  decider(host, "dev.ok", {{"decision", "allow"}});
  auto a = host.call("host/decide", request("ls"));
  ASSERT_TRUE(a.ok()) << a.error_message;
  EXPECT_EQ(a.result.at("decision"), "ask");
  const auto by = by_id(a.result);
  EXPECT_EQ(by.at("dev.broken").at("decision"), "error");
  EXPECT_NE(std::string(by.at("dev.broken").at("reason").as_string()).find("does not hold"),
            std::string::npos);
  expect_journal(host, "dev.broken", R"({"decision":"maybe"})");
}

TEST(Decide, OnlyDecidingPluginsOnForTheProjectAreAsked) {
  HostClient host;
  decider(host, "dev.here", {{"decision", "allow"}});
  decider(host, "dev.nodecide", {{"decision", "deny"}}, /*decide=*/false);
  // On for another, private project only.
  PluginSpec other;
  other.id = "dev.elsewhere";
  other.mode = "decider";
  const auto dir = make_plugin(host.plugins_dir(), other);
  std::ofstream(dir / "decision.json") << R"({"decision":"deny","message":"elsewhere"})";
  ASSERT_TRUE(host.call("host/load", json::object{{"folder", dir.string()}}).ok());
  host.enable("dev.elsewhere", "p2", /*is_private=*/true);

  auto a = host.call("host/decide", request("rm -rf build"));
  ASSERT_TRUE(a.ok()) << a.error_message;
  EXPECT_EQ(a.result.at("decision"), "allow");
  ASSERT_EQ(a.result.at("by").as_array().size(), 1u);
  EXPECT_EQ(a.result.at("by").as_array()[0].at("id"), "dev.here");

  a = host.call("host/decide", request("rm -rf build", "p2"));
  EXPECT_EQ(a.result.at("decision"), "deny");
  EXPECT_EQ(a.result.at("message"), "elsewhere");
  ASSERT_EQ(a.result.at("by").as_array().size(), 1u);
}

TEST(Decide, NoDecidingPluginLeavesItToTheUser) {
  HostClient host;
  auto a = host.call("host/decide", request("ls"));
  ASSERT_TRUE(a.ok()) << a.error_message;
  EXPECT_EQ(a.result, json::parse(R"({"decision":"ask","by":[]})"));
}

TEST(Decide, AStoppedPluginIsAnErrorWithItsReason) {
  HostClient host;
  PluginSpec spec;
  spec.id = "dev.crashy";
  spec.mode = "crash-at-start";
  host.load_and_enable(make_plugin(host.plugins_dir(), spec));
  decider(host, "dev.ok", {{"decision", "allow"}});
  // Each decision starts it again, until it is stopped after its fourth crash.
  for (int i = 0; i < 4; ++i)
    host.call("host/decide", request("ls"));
  host.wait_status("dev.crashy", "stopped");
  auto a = host.call("host/decide", request("ls"));
  const auto by = by_id(a.result);
  EXPECT_EQ(a.result.at("decision"), "ask");
  EXPECT_EQ(by.at("dev.crashy").at("decision"), "error");
  EXPECT_EQ(by.at("dev.crashy").at("reason"),
            "it is stopped: stopped after 4 crashes within 5 minutes");
}

TEST(Decide, APluginThatCannotRunIsAnErrorNeverAnAllowance) {
  HostClient host;
  PluginSpec spec;
  spec.id = "dev.dormant";
  spec.activation = {};  // no activation: it never runs
  host.load_and_enable(make_plugin(host.plugins_dir(), spec));
  decider(host, "dev.ok", {{"decision", "allow"}});
  auto a = host.call("host/decide", request("ls"));
  ASSERT_TRUE(a.ok()) << a.error_message;
  EXPECT_EQ(a.result.at("decision"), "ask");
  const auto by = by_id(a.result);
  EXPECT_EQ(by.at("dev.dormant").at("decision"), "error");
  EXPECT_NE(std::string(by.at("dev.dormant").at("reason").as_string()).find("does not run"),
            std::string::npos);
}

TEST(Decide, ParamsThatDoNotHoldAreRefused) {
  HostClient host;
  auto a = host.call("host/decide", json::object{{"request", json::object{{"id", "r"}}}});
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(*a.error_code, -32602);
  EXPECT_NE(a.error_message.find("kind"), std::string::npos) << a.error_message;
}

// --- facts -------------------------------------------------------------------------------------

json::value fact_for(std::string_view name, std::int64_t seq, std::string_view project,
                     bool is_private) {
  json::value f = fact(name, seq, project);
  f.at("project").as_object()["private"] = is_private;
  return f;
}

json::value heard(HostClient& host, const std::string& id) {
  return host.call_plugin(id, "test/facts", nullptr);
}

TEST(Facts, APrivateProjectsFactsReachOnlyItsPlugins) {
  HostClient host;
  PluginSpec a{"dev.a"}, b{"dev.b"};
  host.load_and_enable(make_plugin(host.plugins_dir(), a));  // on for p1
  ASSERT_TRUE(
      host.call("host/load", json::object{{"folder", make_plugin(host.plugins_dir(), b).string()}})
          .ok());
  host.enable("dev.b", "secret-project", /*is_private=*/true);

  auto d = host.call("host/publish",
                     json::object{{"fact", fact_for("agent.status", 1, "secret-project", true)}});
  ASSERT_TRUE(d.ok()) << d.error_message;
  EXPECT_EQ(d.result.at("delivered"), json::array{"dev.b"});
  d = host.call("host/publish", json::object{{"fact", fact_for("agent.status", 2, "p1", false)}});
  EXPECT_EQ(d.result.at("delivered"), json::array{"dev.a"});

  EXPECT_EQ(heard(host, "dev.a"), json::array{2});
  EXPECT_EQ(heard(host, "dev.b"), json::array{1});
}

TEST(Facts, OnlyFactsOfPermissionsEventsAreHeardAndActivationStarts) {
  HostClient host;
  PluginSpec spec{"dev.tickets"};
  spec.activation = {"event:agent.status"};
  spec.events = {"ticket.*"};
  host.load_and_enable(make_plugin(host.plugins_dir(), spec));

  // Its activation starts it, but the fact is not one it may hear.
  auto d = host.call("host/publish", json::object{{"fact", fact("agent.status", 1)}});
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d.result.at("delivered").as_array().empty());
  host.wait_status("dev.tickets", "running");
  d = host.call("host/publish", json::object{{"fact", fact("ticket.column", 2)}});
  EXPECT_EQ(d.result.at("delivered"), json::array{"dev.tickets"});
  d = host.call("host/publish", json::object{{"fact", fact("turn.ended", 3)}});
  EXPECT_TRUE(d.result.at("delivered").as_array().empty());
  EXPECT_EQ(heard(host, "dev.tickets"), json::array{2});
}

TEST(Facts, UnknownFieldsPassThroughUntouched) {
  HostClient host;
  host.load_and_enable(make_plugin(host.plugins_dir(), PluginSpec{"dev.a"}));
  json::value f = fact("agent.status", 7);
  f.as_object()["futureField"] = json::object{{"nested", json::array{1, "two", nullptr}}};
  f.at("data").as_object()["extra"] = 1.5;
  ASSERT_TRUE(host.call("host/publish", json::object{{"fact", f}}).ok());
  host.wait_status("dev.a", "running");
  EXPECT_TRUE(
      eventually([&] { return host.call_plugin("dev.a", "test/last-fact", nullptr) == f; }));
}

}  // namespace
}  // namespace escouade::testing::decide_tests
