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
