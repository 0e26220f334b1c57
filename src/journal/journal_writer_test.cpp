// The journals' writer thread: order, batches, a full queue and what it tells, the end.

#include "journal/journal_writer.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "base/temp_dir.hpp"
#include "journal/journal.hpp"

namespace escouade {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::vector<std::string> read_lines(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

class JournalWriterTest : public ::testing::Test {
 protected:
  JournalOptions options(const std::string& id, std::shared_ptr<JournalWriter> writer) {
    JournalOptions o;
    o.dir = dir_.path() / "plugin-logs";
    o.plugin_id = id;
    o.writer = std::move(writer);
    return o;
  }
  fs::path log(const std::string& id) const { return dir_.path() / "plugin-logs" / (id + ".log"); }

  TempDir dir_{"journal_writer"};
};

TEST_F(JournalWriterTest, EachJournalKeepsItsOrderAcrossBatches) {
  auto writer = std::make_shared<JournalWriter>();
  Journal a(options("dev.a", writer));
  Journal b(options("dev.b", writer));
  for (int i = 0; i < 2000; ++i) {
    a.info("a " + std::to_string(i));
    b.info("b " + std::to_string(i));
  }
  writer->flush();
  const auto in_a = read_lines(log("dev.a"));
  const auto in_b = read_lines(log("dev.b"));
  ASSERT_EQ(in_a.size(), 2000u);
  ASSERT_EQ(in_b.size(), 2000u);
  for (int i = 0; i < 2000; ++i) {
    EXPECT_THAT(in_a[i], ::testing::EndsWith(" a " + std::to_string(i)));
    EXPECT_THAT(in_b[i], ::testing::EndsWith(" b " + std::to_string(i)));
  }
  EXPECT_EQ(writer->dropped(), 0u);
}

// One batch of many lines for one file (queued while the writer was held) that starts after a
// torn line and crosses the file's size: the torn line is ended first, the line that would pass
// the size starts the new file, and no line is lost or split between the two.
TEST_F(JournalWriterTest, ABatchThatCrossesTheSizeRotatesBetweenTwoLines) {
  auto writer = std::make_shared<JournalWriter>();
  JournalOptions o = options("dev.batch", writer);
  o.max_bytes = 2000;
  fs::create_directories(log("dev.batch").parent_path());
  {
    std::ofstream torn(log("dev.batch"), std::ios::binary);
    torn << "a line cut short";
  }
  Journal journal(std::move(o));
  writer->hold();
  for (int i = 0; i < 80; ++i)
    journal.info("batched line " + std::to_string(i));
  writer->release();
  writer->flush();

  auto rotated = read_lines(log("dev.batch").string() + ".1");
  const auto current = read_lines(log("dev.batch"));
  ASSERT_FALSE(rotated.empty());
  ASSERT_FALSE(current.empty());
  EXPECT_EQ(rotated.front(), "a line cut short");
  EXPECT_LE(fs::file_size(log("dev.batch").string() + ".1"), 2000u);
  rotated.erase(rotated.begin());
  std::vector<std::string> all = rotated;
  all.insert(all.end(), current.begin(), current.end());
  ASSERT_EQ(all.size(), 80u);
  for (int i = 0; i < 80; ++i)
    EXPECT_THAT(all[i], ::testing::EndsWith("info  batched line " + std::to_string(i)));
  EXPECT_EQ(journal.write_failures(), 0u);
}

// A disk that does not keep up: past the queue's bound a line is refused, counted, and the
// journal's next line that reaches the file says how many were lost. The in-memory tail, which
// the app reads, has them all.
TEST_F(JournalWriterTest, AFullQueueLosesLinesAndSaysHowMany) {
  auto writer = std::make_shared<JournalWriter>(400);  // a few lines of 70 bytes
  Journal journal(options("dev.slow", writer));
  writer->hold();
  for (int i = 0; i < 20; ++i)
    journal.info("line " + std::to_string(i));
  ASSERT_GT(journal.write_failures(), 0u);
  const std::uint64_t lost = journal.write_failures();
  ASSERT_LT(lost, 20u);
  writer->release();
  writer->flush();
  journal.info("after");
  writer->flush();

  const auto lines = read_lines(log("dev.slow"));
  ASSERT_EQ(lines.size(), 20 - lost + 2);
  EXPECT_THAT(lines[lines.size() - 2],
              HasSubstr("warn  " + std::to_string(lost) +
                        " journal lines were lost: they came faster than the disk took them"));
  EXPECT_THAT(lines.back(), HasSubstr("info  after"));
  const auto tail = journal.tail();
  EXPECT_EQ(tail.size(), 22u);  // every line, and the note once
}

// Ending: everything queued is written before the thread ends, even while held; the writer
// lives as long as the last journal that uses it.
TEST_F(JournalWriterTest, TheLastOwnerWritesEverythingQueuedBeforeItEnds) {
  auto writer = std::make_shared<JournalWriter>();
  auto journal = std::make_unique<Journal>(options("dev.end", writer));
  writer->hold();
  for (int i = 0; i < 100; ++i)
    journal->info("queued " + std::to_string(i));
  writer.reset();  // the journal still holds it
  journal->info("still written");
  journal.reset();  // the last owner: drains, joins
  const auto lines = read_lines(log("dev.end"));
  ASSERT_EQ(lines.size(), 101u);
  EXPECT_THAT(lines.front(), HasSubstr("queued 0"));
  EXPECT_THAT(lines.back(), HasSubstr("still written"));
}

}  // namespace
}  // namespace escouade
