#include "journal/journal.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/utf8.hpp"

namespace escouade {
namespace {

namespace fs = std::filesystem;
using std::chrono::system_clock;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kEllipsis = "\xE2\x80\xA6";
const std::string kPrefix = "2026-11-29T23:40:01.123Z info  ";  // 31 bytes

system_clock::time_point sample_time() {
  using namespace std::chrono;
  return sys_days{year{2026} / 11 / 29} + hours{23} + minutes{40} + seconds{1} + milliseconds{123};
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> lines_of(const fs::path& path) {
  std::vector<std::string> lines;
  std::istringstream in(read_file(path));
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

// A text of `width` bytes that names line `i`: with kPrefix, a line of 32 + width bytes.
std::string numbered(int i, std::size_t width = 68) {
  std::string text = "line " + std::to_string(i) + " ";
  text.resize(width, 'x');
  return text;
}

// Each test gets a folder of its own under the system's temporary folder, removed after it; the
// journal's folder is `plugin-logs` inside it, made by the journal.
class JournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "escouade-journal-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    dir_ = root_ / "plugin-logs";
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(root_, ignored);
  }

  JournalOptions options(std::uint64_t max_bytes = 1024 * 1024) {
    JournalOptions o;
    o.dir = dir_;
    o.plugin_id = "dev.example.guard";
    o.max_bytes = max_bytes;
    o.clock = [this] { return now_; };
    return o;
  }

  fs::path log() const { return dir_ / "dev.example.guard.log"; }
  fs::path rotated() const { return dir_ / "dev.example.guard.log.1"; }

  fs::path root_;
  fs::path dir_;
  system_clock::time_point now_ = sample_time();
};

TEST_F(JournalTest, WritesOneLineInTheDocumentedFormat) {
  Journal journal(options());
  journal.info("plugin started");
  EXPECT_EQ(read_file(log()), "2026-11-29T23:40:01.123Z info  plugin started\n");
  EXPECT_THAT(journal.tail(), ElementsAre("2026-11-29T23:40:01.123Z info  plugin started"));
}

TEST_F(JournalTest, PadsEveryLevelAndKeepsMillisecondsOnly) {
  Journal journal(options());
  journal.debug("d");
  journal.info("i");
  now_ += std::chrono::microseconds{876'999};  // 123 ms + 876.999 ms: 999 ms, not the next second
  journal.warn("w");
  now_ = std::chrono::sys_days{std::chrono::year{1999} / 1 / 2} + std::chrono::milliseconds{7};
  journal.error("e");
  EXPECT_THAT(lines_of(log()),
              ElementsAre("2026-11-29T23:40:01.123Z debug d", "2026-11-29T23:40:01.123Z info  i",
                          "2026-11-29T23:40:01.999Z warn  w", "1999-01-02T00:00:00.007Z error e"));
}

TEST_F(JournalTest, UsesTheSystemClockByDefault) {
  JournalOptions o = options();
  o.clock = nullptr;
  Journal journal(std::move(o));
  journal.info("now");
  const std::regex format(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z info  now)");
  ASSERT_EQ(journal.tail().size(), 1u);
  EXPECT_TRUE(std::regex_match(journal.tail()[0], format)) << journal.tail()[0];
}

TEST_F(JournalTest, CreatesAMissingFolderAndNamesItsFiles) {
  dir_ = root_ / "data" / "plugin-logs";
  Journal journal(options());
  EXPECT_EQ(journal.path(), dir_ / "dev.example.guard.log");
  EXPECT_EQ(journal.rotated_path(), dir_ / "dev.example.guard.log.1");
  EXPECT_TRUE(fs::is_directory(dir_));
  journal.info("hello");
  EXPECT_EQ(lines_of(journal.path()).size(), 1u);
  EXPECT_FALSE(fs::exists(journal.rotated_path()));
  // The user's alone: what a plugin writes may quote what it was given.
  struct stat st {};
  ASSERT_EQ(::stat(journal.path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(dir_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::stat(dir_.parent_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST_F(JournalTest, AppendsAcrossTwoJournalsOnTheSameFile) {
  {
    Journal first(options());
    first.info("first run");
  }
  Journal second(options());
  second.info("second run");
  EXPECT_THAT(lines_of(log()), ElementsAre(kPrefix + "first run", kPrefix + "second run"));
}

TEST_F(JournalTest, EndsATornLineBeforeAppending) {
  fs::create_directories(dir_);
  std::ofstream(log(), std::ios::binary) << kPrefix << "cut by a cr";
  Journal journal(options());
  journal.info("after the restart");
  EXPECT_THAT(lines_of(log()), ElementsAre(kPrefix + "cut by a cr", kPrefix + "after the restart"));
  EXPECT_THAT(journal.tail(), ElementsAre(kPrefix + "cut by a cr", kPrefix + "after the restart"));
}

TEST_F(JournalTest, RotatesWhenTheFileWouldPassMaxBytes) {
  Journal journal(options(1000));
  for (int i = 0; i < 10; ++i)
    journal.info(numbered(i));  // 10 lines of 100 bytes: 1000 exactly
  EXPECT_EQ(fs::file_size(log()), 1000u);
  EXPECT_FALSE(fs::exists(rotated()));

  journal.info(numbered(10));  // would make 1100
  EXPECT_EQ(fs::file_size(rotated()), 1000u);
  EXPECT_THAT(lines_of(log()), ElementsAre(kPrefix + numbered(10)));
  EXPECT_EQ(lines_of(rotated()).front(), kPrefix + numbered(0));
  EXPECT_EQ(lines_of(rotated()).back(), kPrefix + numbered(9));
}

TEST_F(JournalTest, SecondRotationReplacesTheOlderFile) {
  Journal journal(options(1000));
  for (int i = 0; i < 21; ++i)
    journal.info(numbered(i));
  auto older = lines_of(rotated());
  ASSERT_EQ(older.size(), 10u);
  EXPECT_EQ(older.front(), kPrefix + numbered(10));
  EXPECT_EQ(older.back(), kPrefix + numbered(19));
  EXPECT_THAT(lines_of(log()), ElementsAre(kPrefix + numbered(20)));
  EXPECT_FALSE(fs::exists(dir_ / "dev.example.guard.log.2"));
}

TEST_F(JournalTest, MeasuresTheExistingSizeWhenItOpens) {
  {
    Journal first(options(1000));
    for (int i = 0; i < 9; ++i)
      first.info(numbered(i));
  }
  Journal second(options(1000));
  second.info(numbered(9));  // 1000 bytes: still fits
  EXPECT_FALSE(fs::exists(rotated()));
  second.info(numbered(10));
  EXPECT_EQ(lines_of(rotated()).size(), 10u);
  EXPECT_THAT(lines_of(log()), ElementsAre(kPrefix + numbered(10)));
}

TEST_F(JournalTest, RotatesPastTheDefaultOneMegabyte) {
  JournalOptions o = options();
  o.max_bytes = JournalOptions{}.max_bytes;
  ASSERT_EQ(o.max_bytes, 1024u * 1024u);
  Journal journal(std::move(o));
  // Lines of 1000 bytes: 1048 of them make 1 048 000 bytes, the 1049th would pass 1 048 576.
  for (int i = 0; i < 1100; ++i)
    journal.info(numbered(i, 968));
  EXPECT_EQ(fs::file_size(rotated()), 1'048'000u);
  const auto older = lines_of(rotated());
  ASSERT_EQ(older.size(), 1048u);
  EXPECT_EQ(older.back(), kPrefix + numbered(1047, 968));
  const auto current = lines_of(log());
  ASSERT_EQ(current.size(), 52u);
  EXPECT_EQ(current.front(), kPrefix + numbered(1048, 968));
  EXPECT_EQ(current.back(), kPrefix + numbered(1099, 968));
  EXPECT_EQ(journal.write_failures(), 0u);
}

TEST_F(JournalTest, TailSpansTheRotatedAndTheCurrentFile) {
  Journal journal(options(40'000));  // 400 lines of 100 bytes a file
  for (int i = 0; i < 700; ++i)
    journal.info(numbered(i));
  ASSERT_EQ(lines_of(rotated()).size(), 400u);
  ASSERT_EQ(lines_of(log()).size(), 300u);

  const auto tail = journal.tail(500);
  ASSERT_EQ(tail.size(), 500u);
  for (int k = 0; k < 500; ++k)
    ASSERT_EQ(tail[k], kPrefix + numbered(200 + k)) << k;
  EXPECT_THAT(journal.tail(2), ElementsAre(kPrefix + numbered(698), kPrefix + numbered(699)));
}

TEST_F(JournalTest, TailAfterReopeningReadsBothFiles) {
  {
    Journal journal(options(40'000));
    for (int i = 0; i < 700; ++i)
      journal.info(numbered(i));
  }
  Journal reopened(options(40'000));
  const auto tail = reopened.tail();
  ASSERT_EQ(tail.size(), 500u);
  for (int k = 0; k < 500; ++k)
    ASSERT_EQ(tail[k], kPrefix + numbered(200 + k)) << k;

  reopened.info(numbered(700));
  EXPECT_EQ(reopened.tail(500).front(), kPrefix + numbered(201));
  EXPECT_EQ(reopened.tail(500).back(), kPrefix + numbered(700));
}

TEST_F(JournalTest, TailAfterReopeningReadsLongFilesFromTheirEnd) {
  {
    // 1000-byte lines: the tail's 500 lines cross several of the reader's 64 KiB blocks.
    Journal journal(options());
    for (int i = 0; i < 1100; ++i)
      journal.info(numbered(i, 968));
  }
  Journal reopened(options());
  const auto tail = reopened.tail();
  ASSERT_EQ(tail.size(), 500u);
  for (int k = 0; k < 500; ++k)
    ASSERT_EQ(tail[k], kPrefix + numbered(600 + k, 968)) << k;
}

TEST_F(JournalTest, TailReturnsAtMostWhatItHolds) {
  JournalOptions o = options();
  o.tail_lines = 3;
  Journal journal(std::move(o));
  EXPECT_TRUE(journal.tail().empty());
  for (int i = 0; i < 5; ++i)
    journal.info(std::to_string(i));
  EXPECT_THAT(journal.tail(), ElementsAre(kPrefix + "2", kPrefix + "3", kPrefix + "4"));
  EXPECT_THAT(journal.tail(1), ElementsAre(kPrefix + "4"));
  EXPECT_TRUE(journal.tail(0).empty());
}

TEST_F(JournalTest, EscapesLineBreaksSoOneTextIsOneLine) {
  Journal journal(options());
  journal.error("first\nsecond\r\nthird\r");
  EXPECT_EQ(read_file(log()), "2026-11-29T23:40:01.123Z error first\\nsecond\\r\\nthird\\r\n");
}

TEST_F(JournalTest, EscapesControlBytesButKeepsTabs) {
  Journal journal(options());
  journal.info(std::string("a\0b\x1B[31mred\x7F\tend", 16));
  EXPECT_THAT(lines_of(log()), ElementsAre(kPrefix + "a\\x00b\\x1B[31mred\\x7F\tend"));
}

TEST_F(JournalTest, EscapesInvalidUtf8SoTheFileStaysValid) {
  Journal journal(options());
  journal.info("caf\xC3\xA9 \xE2\x80\xA2 ok");
  journal.info(
      "bad \xFF\xFE cut \xE2\x82 over \xC0\xAF"
      " end");
  const std::string text = read_file(log());
  EXPECT_TRUE(is_valid_utf8(text));
  EXPECT_THAT(lines_of(log()),
              ElementsAre(kPrefix + "caf\xC3\xA9 \xE2\x80\xA2 ok",
                          kPrefix + "bad \\xFF\\xFE cut \\xE2\\x82 over \\xC0\\xAF end"));
}

TEST_F(JournalTest, CapsAHundredKibEntry) {
  Journal journal(options());
  journal.warn(std::string(100 * 1024, 'a'));
  const auto lines = lines_of(log());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "2026-11-29T23:40:01.123Z warn  " + std::string(16 * 1024, 'a') + kEllipsis +
                          " (86016 more bytes)");
  EXPECT_EQ(journal.tail(), lines);
}

TEST_F(JournalTest, CapNeverCutsACharacterOrAnEscape) {
  Journal journal(options());
  journal.info(std::string(16383, 'a') + "\nrest");  // `\n` would take the 16385th byte
  std::string e;
  for (int i = 0; i < 10000; ++i)
    e += "\xC3\xA9";
  journal.info("x" + e);  // the 8192nd é would end at byte 16385
  const auto lines = lines_of(log());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], kPrefix + std::string(16383, 'a') + kEllipsis + " (5 more bytes)");
  EXPECT_EQ(lines[1], kPrefix + "x" + e.substr(0, 16382) + kEllipsis + " (3618 more bytes)");
  EXPECT_TRUE(is_valid_utf8(read_file(log())));
}

TEST_F(JournalTest, MaskerSeesTheWholeRawTextFirst) {
  Journal journal(options());
  std::vector<std::string> seen;
  journal.set_masker([&seen](std::string& text) {
    seen.push_back(text);
    for (auto at = text.find("s3cret"); at != std::string::npos; at = text.find("s3cret", at)) {
      text.replace(at, 6, "\xE2\x80\xA2\xE2\x80\xA2\xE2\x80\xA2\xE2\x80\xA2");
    }
  });
  const std::string long_text = std::string(16380, 'a') + "s3cret" + std::string(100, 'b');
  journal.info("token=s3cret\nnext s3cret");
  journal.info(long_text);  // the secret straddles the cap: masked before the cut
  EXPECT_THAT(seen, ElementsAre("token=s3cret\nnext s3cret", long_text));

  const std::string text = read_file(log());
  EXPECT_THAT(text, Not(HasSubstr("s3c")));
  const auto lines = lines_of(log());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], kPrefix +
                          "token=\xE2\x80\xA2\xE2\x80\xA2\xE2\x80\xA2\xE2\x80\xA2\\nnext "
                          "\xE2\x80\xA2\xE2\x80\xA2\xE2\x80\xA2\xE2\x80\xA2");
  EXPECT_EQ(lines[1],
            kPrefix + std::string(16380, 'a') + "\xE2\x80\xA2" + kEllipsis + " (109 more bytes)");
  EXPECT_EQ(journal.tail(), lines);
}

TEST_F(JournalTest, MaskerCoversEveryLineAcrossRotations) {
  Journal journal(options(500));
  int calls = 0;
  journal.set_masker([&calls](std::string& text) {
    ++calls;
    for (auto at = text.find("s3cret"); at != std::string::npos; at = text.find("s3cret", at)) {
      text.replace(at, 6, "****");
    }
  });
  for (int i = 0; i < 40; ++i)
    journal.info(numbered(i) + " key=s3cret");
  EXPECT_EQ(calls, 40);
  EXPECT_THAT(read_file(log()), Not(HasSubstr("s3cret")));
  EXPECT_THAT(read_file(rotated()), Not(HasSubstr("s3cret")));
  // The first line of the current file is the one whose write rotated the file.
  const auto current = lines_of(log());
  ASSERT_FALSE(current.empty());
  EXPECT_THAT(current.front(), HasSubstr("key=****"));
  const auto tail = journal.tail();
  ASSERT_EQ(tail.size(), 40u);
  for (const auto& line : tail)
    EXPECT_THAT(line, HasSubstr("key=****"));
  EXPECT_EQ(tail.back(), current.back());
}

TEST_F(JournalTest, MaskerThatThrowsWithholdsTheLine) {
  Journal journal(options());
  journal.set_masker([](std::string&) { throw std::runtime_error("no keychain"); });
  EXPECT_NO_THROW(journal.info("token=s3cret"));
  EXPECT_THAT(read_file(log()), Not(HasSubstr("s3cret")));
  EXPECT_THAT(journal.tail(),
              ElementsAre(kPrefix + "(a line was withheld: masking its secrets failed)"));
}

TEST_F(JournalTest, WriteFailureKeepsTheLineAndRecovers) {
  Journal journal(options());
  journal.info("before");
  // The folder is gone and a file holds its name: nothing can be opened there.
  fs::remove_all(dir_);
  std::ofstream(dir_) << "not a folder";

  EXPECT_NO_THROW(journal.info("while broken"));
  EXPECT_NO_THROW(journal.error("still broken"));
  EXPECT_EQ(journal.write_failures(), 2u);
  EXPECT_THAT(journal.tail(), ElementsAre(kPrefix + "before", kPrefix + "while broken",
                                          "2026-11-29T23:40:01.123Z error still broken"));

  fs::remove(dir_);
  fs::create_directory(dir_);
  journal.info("after");
  EXPECT_EQ(journal.write_failures(), 2u);
  EXPECT_THAT(lines_of(log()), ElementsAre(kPrefix + "after"));
  EXPECT_EQ(journal.tail().back(), kPrefix + "after");
}

TEST_F(JournalTest, RemovedFolderIsMadeAgain) {
  Journal journal(options());
  journal.info("before");
  fs::remove_all(dir_);
  journal.info("after");
  EXPECT_EQ(journal.write_failures(), 0u);
  EXPECT_THAT(lines_of(log()), ElementsAre(kPrefix + "after"));
}

TEST_F(JournalTest, UnusableFolderAtConstructionIsNotFatal) {
  fs::create_directories(root_);
  std::ofstream(dir_) << "not a folder";
  Journal journal(options());
  EXPECT_TRUE(journal.tail().empty());
  EXPECT_NO_THROW(journal.info("lost"));
  EXPECT_EQ(journal.write_failures(), 1u);
  EXPECT_THAT(journal.tail(), ElementsAre(kPrefix + "lost"));
}

TEST_F(JournalTest, MovedJournalKeepsWriting) {
  Journal first(options());
  first.info("one");
  Journal moved(std::move(first));
  moved.info("two");
  EXPECT_THAT(lines_of(log()), ElementsAre(kPrefix + "one", kPrefix + "two"));
}

}  // namespace
}  // namespace escouade
