#include "journal/trace_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "base/temp_dir.hpp"

namespace escouade {
namespace {

TEST(TraceFile, EachLineHasItsTimeItsPluginAndItsDirectionMasked) {
  TempDir dir("escouade-trace");
  const auto path = dir.path() / "run.trace";
  auto trace = TraceFile::open(path);
  ASSERT_TRUE(trace) << trace.error().message;
  const auto mask = [](std::string& text) {
    for (auto at = text.find("s3cr3t"); at != std::string::npos; at = text.find("s3cr3t"))
      text.replace(at, 6, "\u2022\u2022\u2022\u2022");
  };
  (*trace)->write("dev.example.guard", TraceFile::Direction::to_plugin,
                  R"({"jsonrpc":"2.0","id":"g-1","result":{"value":"s3cr3t"}})"
                  "\n",
                  mask);
  (*trace)->write("", TraceFile::Direction::from_plugin, R"({"jsonrpc":"2.0","id":1,"result":1})");
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  const std::regex line(
      R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z dev\.example\.guard --> \{"jsonrpc":"2\.0","id":"g-1","result":\{"value":"\xe2\x80\xa2\xe2\x80\xa2\xe2\x80\xa2\xe2\x80\xa2"\}\}
\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z <-- \{"jsonrpc":"2\.0","id":1,"result":1\}
)");
  EXPECT_TRUE(std::regex_match(text.str(), line)) << text.str();
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ((*trace)->failures(), 0u);
}

TEST(TraceFile, ATraceThatCannotBeWrittenSaysWhy) {
  auto trace = TraceFile::open("/nonexistent-folder/run.trace");
  ASSERT_FALSE(trace);
  EXPECT_NE(trace.error().message.find("cannot write the trace /nonexistent-folder/run.trace: "),
            std::string::npos);
}

TEST(TraceFile, TheTimeIsUtcToTheMillisecond) {
  using namespace std::chrono;
  const auto t =
      sys_days{year{2026} / 12 / 4} + hours(22) + minutes(51) + seconds(12) + milliseconds(7);
  EXPECT_EQ(trace_time(t), "2026-12-04T22:51:12.007Z");
}

}  // namespace
}  // namespace escouade
