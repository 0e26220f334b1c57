#include "harness/scenario.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

namespace escouade::harness {
namespace {

namespace json = boost::json;

const ParseContext kOne{{"dev.example.guard"}};
const ParseContext kTwo{{"dev.example.guard", "dev.example.audit"}};

Step parsed(std::string_view line, const ParseContext& ctx = kOne) {
  auto r = parse_step(line, ctx);
  EXPECT_TRUE(r) << line << ": " << (r ? "" : r.error().message);
  EXPECT_TRUE(r && *r) << line;
  return r && *r ? **r : Step{};
}

std::string error_of(std::string_view line, const ParseContext& ctx = kOne) {
  auto r = parse_step(line, ctx);
  EXPECT_FALSE(r) << line;
  return r ? std::string() : r.error().message;
}

TEST(Scenario, BlankAndHashLinesAreNothing) {
  for (const char* line : {"", "   ", "# a note", "  # indented"}) {
    auto r = parse_step(line, kOne);
    ASSERT_TRUE(r);
    EXPECT_FALSE(*r) << line;
  }
}

TEST(Scenario, JsonFact) {
  Step s = parsed(R"({"fact": {"name": "agent.status", "data": {"status": "working"}}})");
  EXPECT_EQ(s.kind, StepKind::fact);
  EXPECT_EQ(s.arg.at("name"), "agent.status");
  EXPECT_FALSE(s.expect);
}

TEST(Scenario, JsonDecideWithExpectation) {
  Step s = parsed(
      R"({"decide": {"kind": "command", "tool": "Bash", "input": {"command": "rm -rf /"}}, "expect": "deny"})");
  EXPECT_EQ(s.kind, StepKind::decide);
  ASSERT_TRUE(s.expect);
  EXPECT_EQ(*s.expect, "deny");
}

TEST(Scenario, CallTakesTheOnlyPluginWhenNoIdIsGiven) {
  Step s = parsed(R"({"call": {"method": "test/echo", "params": {"a": 1}}})");
  EXPECT_EQ(s.arg.at("id"), "dev.example.guard");
  EXPECT_NE(error_of(R"({"call": {"method": "test/echo"}})", kTwo).find("several plugins"),
            std::string::npos);
}

TEST(Scenario, JsonStepsOfEveryKind) {
  EXPECT_EQ(parsed(R"({"restart": "dev.example.guard"})").kind, StepKind::restart);
  EXPECT_EQ(parsed(R"({"status": null})").kind, StepKind::status);
  EXPECT_EQ(parsed(R"({"kill": "dev.example.guard"})").kind, StepKind::kill);
  EXPECT_EQ(parsed(R"({"wait": 300})").arg, 300);
  Step j = parsed(R"({"journal": {"id": "dev.example.guard", "lines": 10}})");
  EXPECT_EQ(j.arg.at("lines"), 10);
  EXPECT_EQ(parsed(R"({"journal": "dev.example.guard"})").arg.at("lines"), 20);
  EXPECT_EQ(parsed(R"({"secret": {"key": "token", "value": "s3"}})").arg.at("id"),
            "dev.example.guard");
  EXPECT_EQ(parsed(R"({"settings": {"values": {"channel": "#x"}}})").kind, StepKind::settings);
  Step agent = parsed(
      R"({"agent": {"key": "a1", "project": "p1", "roots": {"agentRepo": "/w/repo"}, "env": {"PATH": "/usr/bin"}}})");
  EXPECT_EQ(agent.kind, StepKind::agent);
  EXPECT_EQ(agent.arg.at("roots").at("agentRepo"), "/w/repo");
  EXPECT_NE(error_of(R"({"agent": {"key": "a1", "project": "p1"}})", kTwo).find("agent.roots"),
            std::string::npos);
  EXPECT_EQ(parsed(R"({"comment": "The guard"})").arg, "The guard");
  EXPECT_EQ(parsed(R"({"await": {"state": "running"}})").arg.at("id"), "dev.example.guard");
}

TEST(Scenario, RefusalsNameWhatIsWrong) {
  EXPECT_NE(error_of(R"({"fcat": {}})").find("unknown step \"fcat\""), std::string::npos);
  EXPECT_NE(error_of(R"({"fact": {"data": {}}})").find("fact.name"), std::string::npos);
  EXPECT_NE(error_of(R"({"wait": -1})").find("wait"), std::string::npos);
  EXPECT_NE(error_of(R"({"fact": {"name": "x"}, "call": {"method": "m"}})").find("one step"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"status": null, "expect": "deny"})").find("no expectation"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"decide": {"kind": "command"}, "expect": "maybe"})").find("expect"),
            std::string::npos);
  EXPECT_NE(error_of("{not json").find("not JSON"), std::string::npos);
  EXPECT_NE(error_of("dance now").find("unknown step \"dance\""), std::string::npos);
}

TEST(Scenario, ShortForms) {
  Step f = parsed(R"(fact agent.status {"status":"working"})");
  EXPECT_EQ(f.kind, StepKind::fact);
  EXPECT_EQ(f.arg.at("data").at("status"), "working");

  Step c = parsed("decide command rm -rf /");
  EXPECT_EQ(c.arg.at("kind"), "command");
  EXPECT_EQ(c.arg.at("tool"), "Bash");
  EXPECT_EQ(c.arg.at("input").at("command"), "rm -rf /");

  Step e = parsed("decide edit src/main.cpp");
  EXPECT_EQ(e.arg.at("input").at("file_path"), "src/main.cpp");
  Step w = parsed("decide fetch https://example.org");
  EXPECT_EQ(w.arg.at("input").at("url"), "https://example.org");

  Step call = parsed(R"(call dev.example.audit test/echo {"a":1})", kTwo);
  EXPECT_EQ(call.arg.at("id"), "dev.example.audit");
  EXPECT_EQ(call.arg.at("method"), "test/echo");
  EXPECT_EQ(call.arg.at("params").at("a"), 1);
  EXPECT_EQ(parsed("call test/echo").arg.at("id"), "dev.example.guard");

  EXPECT_EQ(parsed("kill").arg, "dev.example.guard");
  EXPECT_EQ(parsed("status").arg, nullptr);
  EXPECT_EQ(parsed("wait 250").arg, 250);
  EXPECT_EQ(parsed("journal 5").arg.at("lines"), 5);
  EXPECT_EQ(parsed("await running").arg.at("state"), "running");
  EXPECT_EQ(parsed("help").kind, StepKind::help);
  EXPECT_EQ(parsed("comment Crashes").arg, "Crashes");

  Step secret = parsed("secret dev.example.audit:account:work=abc", kTwo);
  EXPECT_EQ(secret.arg.at("id"), "dev.example.audit");
  EXPECT_EQ(secret.arg.at("key"), "account:work");
  EXPECT_EQ(secret.arg.at("value"), "abc");
  Step setting = parsed("setting limit=42");
  EXPECT_EQ(setting.arg.at("values").at("limit"), 42);

  EXPECT_NE(error_of("decide dance now").find("command, edit or fetch"), std::string::npos);
  EXPECT_NE(error_of("wait soon").find("expected a number"), std::string::npos);
}

TEST(Scenario, Assignments) {
  auto a = parse_assignment("account:work=xyz", {"dev.example.guard"});
  ASSERT_TRUE(a);
  EXPECT_EQ(a->id, "dev.example.guard");
  EXPECT_EQ(a->name, "account:work");
  EXPECT_FALSE(parse_assignment("token=x", {"a.b.c", "d.e.f"}));
  EXPECT_FALSE(parse_assignment("novalue", {"a.b.c"}));
  EXPECT_EQ(setting_value("true"), true);
  EXPECT_EQ(setting_value("#dev"), "#dev");
  EXPECT_EQ(setting_value("\"7\""), "7");
  EXPECT_EQ(setting_value("null"), nullptr);
}

TEST(Scenario, Expectations) {
  const json::value verdict = json::parse(R"({"decision":"deny","message":"no"})");
  EXPECT_EQ(check_expectation(StepKind::decide, "deny", verdict), "");
  EXPECT_EQ(check_expectation(StepKind::decide, "allow", verdict), "expected allow, got deny");
  EXPECT_EQ(check_expectation(StepKind::decide, json::parse(R"({"message":"yes"})"), verdict),
            R"(expected the message "yes", got "no")");

  const json::value result = json::parse(R"({"result":{"a":1}})");
  const json::value error = json::parse(R"({"error":{"code":-32601,"message":"nope"}})");
  EXPECT_EQ(check_expectation(StepKind::call, "ok", result), "");
  EXPECT_NE(check_expectation(StepKind::call, "ok", error), "");
  EXPECT_EQ(check_expectation(StepKind::call, json::parse(R"({"error":-32601})"), error), "");
  EXPECT_NE(check_expectation(StepKind::call, json::parse(R"({"result":{"a":2}})"), result), "");

  const json::value delivered = json::parse(R"({"delivered":["b","a"]})");
  EXPECT_EQ(check_expectation(StepKind::fact, json::parse(R"(["a","b"])"), delivered), "");
  EXPECT_EQ(check_expectation(StepKind::fact, json::parse(R"(["a"])"), delivered),
            "expected delivery to [a], got [a, b]");
}

}  // namespace
}  // namespace escouade::harness
