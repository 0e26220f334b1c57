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

std::vector<std::string> lines_of(const fs::path& path) {
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
  const auto in_a = lines_of(log("dev.a"));
  const auto in_b = lines_of(log("dev.b"));
  ASSERT_EQ(in_a.size(), 2000u);
  ASSERT_EQ(in_b.size(), 2000u);
  for (int i = 0; i < 2000; ++i) {
    EXPECT_THAT(in_a[i], ::testing::EndsWith(" a " + std::to_string(i)));
    EXPECT_THAT(in_b[i], ::testing::EndsWith(" b " + std::to_string(i)));
  }
  EXPECT_EQ(writer->dropped(), 0u);
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

  const auto lines = lines_of(log("dev.slow"));
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
  const auto lines = lines_of(log("dev.end"));
  ASSERT_EQ(lines.size(), 101u);
  EXPECT_THAT(lines.front(), HasSubstr("queued 0"));
  EXPECT_THAT(lines.back(), HasSubstr("still written"));
}

}  // namespace
}  // namespace escouade
