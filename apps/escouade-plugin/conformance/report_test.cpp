#include "conformance/report.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <sstream>

namespace escouade::conformance {
namespace {

BenchReport sample() {
  BenchReport r;
  r.folder = "/tmp/p";
  r.plugin_id = "dev.example.guard";
  r.plugin_version = "1.2.0";
  r.checks.push_back({"manifest", Verdict::pass, "fine", {}});
  r.checks.push_back({"handshake", Verdict::fail, "it speaks version 2 <of> the \"protocol\"",
                      std::string(R"({"jsonrpc":"2.0","id":1,"result":{"protocolVersion":2}})")});
  r.checks.push_back({"batch", Verdict::skip, "it does not announce capabilities.batch", {}});
  return r;
}

TEST(ConformanceReport, CountsAndExitCode) {
  BenchReport r = sample();
  EXPECT_EQ(r.count(Verdict::pass), 1u);
  EXPECT_EQ(r.count(Verdict::fail), 1u);
  EXPECT_EQ(r.count(Verdict::skip), 1u);
  EXPECT_EQ(r.exit_code(), 1);
  r.checks[1].verdict = Verdict::pass;
  EXPECT_EQ(r.exit_code(), 0);
}

TEST(ConformanceReport, QuoteCutsAt200CharactersAndCleansBytes) {
  const std::string long_text(500, 'x');
  const std::string q = quote(long_text);
  EXPECT_EQ(q, std::string(200, 'x') + "\xE2\x80\xA6");
  // 300 two-byte characters are cut after 200 characters, never inside one.
  std::string accents;
  for (int i = 0; i < 300; ++i)
    accents += "\xC3\xA9";
  EXPECT_EQ(quote(accents).size(), 400u + 3u);
  EXPECT_EQ(quote("a\x01\xFF"
                  "b"),
            "a\\x01\xEF\xBF\xBD"
            "b");
}

TEST(ConformanceReport, TextHasOneLinePerCheckAndTheFooter) {
  std::ostringstream out;
  write_text(out, sample(), {});
  const std::string text = out.str();
  EXPECT_NE(text.find("dev.example.guard 1.2.0"), std::string::npos);
  EXPECT_NE(text.find("\xE2\x9C\x93 manifest"), std::string::npos);
  EXPECT_NE(text.find("\xE2\x9C\x97 handshake"), std::string::npos);
  EXPECT_NE(text.find("\xE2\x80\x93 batch"), std::string::npos);
  EXPECT_NE(text.find("> {\"jsonrpc\""), std::string::npos);
  EXPECT_NE(text.find("1 passed, 1 failed, 1 skipped"), std::string::npos);
  EXPECT_EQ(text.find("\x1b["), std::string::npos) << "no colour unless asked";
  std::ostringstream coloured;
  write_text(coloured, sample(), {.color = true, .verbose = false});
  EXPECT_NE(coloured.str().find("\x1b[31m"), std::string::npos);
}

TEST(ConformanceReport, JsonHasTheChecksAndCounts) {
  std::ostringstream out;
  write_json(out, sample());
  const auto v = boost::json::parse(out.str()).as_object();
  EXPECT_EQ(v.at("plugin").at("id"), "dev.example.guard");
  EXPECT_EQ(v.at("passed"), 1);
  EXPECT_EQ(v.at("failed"), 1);
  EXPECT_EQ(v.at("skipped"), 1);
  const auto& checks = v.at("checks").as_array();
  ASSERT_EQ(checks.size(), 3u);
  EXPECT_EQ(checks[1].at("name"), "handshake");
  EXPECT_EQ(checks[1].at("verdict"), "fail");
  EXPECT_TRUE(checks[1].as_object().contains("message"));
  EXPECT_FALSE(checks[0].as_object().contains("message"));
}

TEST(ConformanceReport, JunitEscapesWhatItQuotes) {
  std::ostringstream out;
  write_junit(out, sample());
  const std::string xml = out.str();
  EXPECT_NE(xml.find("tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\""), std::string::npos);
  EXPECT_NE(xml.find("message=\"it speaks version 2 &lt;of&gt; the &quot;protocol&quot;\""),
            std::string::npos);
  EXPECT_NE(xml.find("<skipped message=\"it does not announce capabilities.batch\"/>"),
            std::string::npos);
  EXPECT_EQ(xml.find("<of>"), std::string::npos);
}

}  // namespace
}  // namespace escouade::conformance
