#include "lint.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace escouade::cli {
namespace {

LintSummary run(const std::string& text, std::string& report) {
  std::istringstream in(text);
  std::ostringstream out;
  auto s = lint(in, "test", out, LintOptions{});
  report = out.str();
  return s;
}

LintSummary run_file(const std::string& name, std::string& report) {
  std::ifstream in(std::string(ESCOUADE_TRANSCRIPTS) + "/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return run(text.str(), report);
}

TEST(Lint, TheSampleSessionHoldsToTheProtocol) {
  std::string report;
  auto s = run_file("session.jsonl", report);
  EXPECT_EQ(s.problems, 0u) << report;
  EXPECT_EQ(s.lines, 17u);
  EXPECT_EQ(s.messages, 20u);
  EXPECT_EQ(s.batches, 2u);
  EXPECT_NE(report.find("everything holds to protocol 1"), std::string::npos);
}

// A trace of escouade-plugin test or run --trace: a time before each arrow, and the plugin's id
// when there are several, each plugin's requests and answers matched on their own.
TEST(Lint, ATraceOfSeveralPluginsIsReadPluginByPlugin) {
  std::string report;
  auto s = run(
      R"(2026-12-04T22:51:12.123Z dev.a --> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"escouade":{"version":"2.2.0"},"plugin":{"id":"dev.a","version":"1.0.0"},"lang":"en","capabilities":{}}}
2026-12-04T22:51:12.124Z dev.b --> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"escouade":{"version":"2.2.0"},"plugin":{"id":"dev.b","version":"1.0.0"},"lang":"en","capabilities":{}}}
2026-12-04T22:51:12.130Z dev.b <-- {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"capabilities":{}}}
2026-12-04T22:51:12.131Z dev.a <-- {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"capabilities":{}}}
2026-12-04T22:51:12.140Z dev.a <-- {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"capabilities":{}}}
2026-12-04T22:51:12.150Z --> {"jsonrpc":"2.0","method":"events/fact","params":{}}
)",
      report);
  EXPECT_EQ(s.lines, 6u);
  EXPECT_EQ(s.answers, 3u);
  EXPECT_EQ(s.problems, 2u) << report;  // dev.a's second answer; the fact's params
  EXPECT_NE(report.find("dev.b: response initialize #1"), std::string::npos) << report;
  EXPECT_NE(report.find("dev.a: response initialize #1"), std::string::npos) << report;
  EXPECT_NE(report.find("dev.a: response #1"), std::string::npos) << report;
  EXPECT_NE(report.find("answers no request in flight with id 1"), std::string::npos) << report;
}

TEST(Lint, EachFaultIsNamed) {
  std::string report;
  auto s = run_file("faults.jsonl", report);
  const char* expected[] = {
      "the line is not JSON",
      "result.capabilities: required field is missing",
      "params.level: \"fatal\" is not one of debug, info, warn, error",
      "params.key: required field is missing",
      "result.decision: \"maybe\" is not one of allow, deny, ask",
      "answers no request in flight with id \"2\"",
      "\"jsonrpc\" must be \"2.0\"",
      "an empty batch",
      "a message must be a JSON object",
      "events/fact goes from Escouade to the plugin only",
  };
  for (const char* e : expected)
    EXPECT_NE(report.find(e), std::string::npos) << e << "\n" << report;
  EXPECT_EQ(s.problems, 10u) << report;
}

TEST(Lint, DirectionComesFromTheMethodWithoutPrefixes) {
  std::string report;
  auto s = run(R"({"jsonrpc":"2.0","id":1,"method":"secrets/get","params":{"key":"k"}})"
               "\n"
               R"({"jsonrpc":"2.0","id":1,"result":"v"})"
               "\n",
               report);
  EXPECT_EQ(s.problems, 0u) << report;
  EXPECT_NE(report.find("<--    request secrets/get #1"), std::string::npos) << report;
  EXPECT_NE(report.find("-->    response secrets/get #1"), std::string::npos) << report;
}

TEST(Lint, NotificationWithAnIdAndRequestWithoutOne) {
  std::string report;
  auto s = run(R"({"jsonrpc":"2.0","method":"secrets/get","params":{"key":"k"}})"
               "\n"
               R"({"jsonrpc":"2.0","id":3,"method":"log","params":{"level":"info","message":"m"}})"
               "\n",
               report);
  EXPECT_EQ(s.problems, 2u) << report;
  EXPECT_NE(report.find("secrets/get expects an answer: it needs an id"), std::string::npos);
  EXPECT_NE(report.find("log is a notification: it carries no id"), std::string::npos);
}

}  // namespace
}  // namespace escouade::cli
