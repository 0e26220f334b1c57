#include "protocol/framing.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace escouade::proto {
namespace {

struct Collected {
  std::vector<std::string> lines;
  std::vector<std::size_t> too_long;
};

void feed(LineFramer& f, Collected& c, std::string_view bytes) {
  f.feed(
      bytes, [&](std::string_view line) { c.lines.emplace_back(line); },
      [&](std::size_t limit) { c.too_long.push_back(limit); });
}

TEST(LineFramer, ManyLinesInOneRead) {
  LineFramer f;
  Collected c;
  feed(f, c, "{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n");
  EXPECT_EQ(c.lines, (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}", "{\"c\":3}"}));
  EXPECT_EQ(f.pending_bytes(), 0u);
}

TEST(LineFramer, OneLineAcrossManyReads) {
  LineFramer f;
  Collected c;
  const std::string line = R"({"jsonrpc":"2.0","method":"log","params":{"level":"info"}})";
  for (char ch : line) {
    feed(f, c, std::string_view(&ch, 1));
    EXPECT_TRUE(c.lines.empty());
  }
  feed(f, c, "\n");
  ASSERT_EQ(c.lines.size(), 1u);
  EXPECT_EQ(c.lines[0], line);
}

TEST(LineFramer, ReadThatCutsAUtf8Character) {
  LineFramer f;
  Collected c;
  const std::string line = "{\"m\":\"caf\xC3\xA9 \xE2\x80\xA2\xF0\x9F\x98\x80\"}";
  // Cut inside é, inside •, and inside the four-byte emoji.
  const std::size_t cuts[] = {10, 13, 17, line.size()};
  std::size_t at = 0;
  for (std::size_t cut : cuts) {
    feed(f, c, std::string_view(line).substr(at, cut - at));
    at = cut;
  }
  feed(f, c, "\n");
  ASSERT_EQ(c.lines.size(), 1u);
  EXPECT_EQ(c.lines[0], line);
}

TEST(LineFramer, EmptyLinesAreSkipped) {
  LineFramer f;
  Collected c;
  feed(f, c, "\n\n{}\n\r\n\n[]\n");
  EXPECT_EQ(c.lines, (std::vector<std::string>{"{}", "[]"}));
}

TEST(LineFramer, CarriageReturnBeforeNewlineIsDropped) {
  LineFramer f;
  Collected c;
  feed(f, c, "{\"a\":1}\r\n{\"b\":");
  feed(f, c, "2}\r");
  feed(f, c, "\n");
  EXPECT_EQ(c.lines, (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}"}));
}

TEST(LineFramer, LineOverTheMaximumInOneReadIsRefusedAndFramingGoesOn) {
  LineFramer f(16);
  Collected c;
  feed(f, c, "{}\n" + std::string(17, 'x') + "\n{\"ok\":1}\n");
  EXPECT_EQ(c.lines, (std::vector<std::string>{"{}", "{\"ok\":1}"}));
  EXPECT_EQ(c.too_long, (std::vector<std::size_t>{16}));
  EXPECT_EQ(f.dropped_lines(), 1u);
  EXPECT_EQ(f.dropped_bytes(), 17u);
}

TEST(LineFramer, ExactlyTheMaximumIsAccepted) {
  LineFramer f(16);
  Collected c;
  feed(f, c, std::string(16, 'y') + "\n");
  feed(f, c, std::string(10, 'z'));
  feed(f, c, std::string(6, 'z') + "\n");
  EXPECT_EQ(c.lines, (std::vector<std::string>{std::string(16, 'y'), std::string(16, 'z')}));
  EXPECT_TRUE(c.too_long.empty());
}

TEST(LineFramer, OversizedLineAcrossReadsIsNotBuffered) {
  LineFramer f(1024);
  Collected c;
  feed(f, c, std::string(1000, 'a'));
  EXPECT_EQ(f.pending_bytes(), 1000u);
  feed(f, c, std::string(100, 'a'));  // passes the limit: reported once, buffer released
  EXPECT_EQ(c.too_long.size(), 1u);
  EXPECT_TRUE(f.skipping());
  EXPECT_EQ(f.pending_bytes(), 0u);
  for (int i = 0; i < 100; ++i) {
    feed(f, c, std::string(4096, 'b'));  // the rest of the huge line is thrown away as it comes
    EXPECT_EQ(f.pending_bytes(), 0u);
  }
  EXPECT_EQ(c.too_long.size(), 1u);
  feed(f, c, "bbb\n{\"after\":true}\n");
  EXPECT_FALSE(f.skipping());
  EXPECT_EQ(c.lines, (std::vector<std::string>{"{\"after\":true}"}));
  EXPECT_EQ(f.dropped_lines(), 1u);
  EXPECT_EQ(f.dropped_bytes(), 1100u + 100u * 4096u + 3u);
}

TEST(LineFramer, TwoOversizedLinesAreEachReported) {
  LineFramer f(8);
  Collected c;
  feed(f, c, std::string(9, 'a') + "\n" + std::string(5, 'b'));
  feed(f, c, std::string(5, 'b') + "\nok\n");
  EXPECT_EQ(c.too_long.size(), 2u);
  EXPECT_EQ(c.lines, (std::vector<std::string>{"ok"}));
}

TEST(LineFramer, FinishGivesTheUnterminatedRest) {
  LineFramer f;
  Collected c;
  feed(f, c, "{\"a\":1}\n{\"b\"");
  EXPECT_EQ(f.finish(), "{\"b\"");
  EXPECT_EQ(f.pending_bytes(), 0u);
  EXPECT_EQ(f.finish(), "");
}

TEST(LineFramer, DefaultMaximumHoldsTheLargestProtocolMessage) {
  // A 32 MiB net/fetch body in base64, plus room for its envelope.
  const std::size_t base64_of_32_mib = (32u * 1024u * 1024u + 2u) / 3u * 4u;
  EXPECT_GT(kDefaultMaxLineBytes, base64_of_32_mib + 64u * 1024u);
  EXPECT_EQ(LineFramer().max_line_bytes(), kDefaultMaxLineBytes);
}

}  // namespace
}  // namespace escouade::proto
