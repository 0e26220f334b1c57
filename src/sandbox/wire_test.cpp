// The records between the host and a helper: both ends' encodings, the reader fed in pieces of
// every size, and what the host makes of a helper that writes what is no record.

#include "sandbox/wire.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace escouade::sandbox::wire {
namespace {

struct Seen {
  char kind;
  std::string bytes;
  friend bool operator==(const Seen&, const Seen&) = default;
};

std::vector<Seen> read_all(RecordReader& reader, std::string_view stream, std::size_t piece) {
  std::vector<Seen> seen;
  for (std::size_t at = 0; at < stream.size(); at += piece) {
    reader.feed(stream.substr(at, piece), [&](char kind, std::string_view bytes) {
      seen.push_back({kind, std::string(bytes)});
    });
  }
  return seen;
}

TEST(Wire, RecordsComeWholeAndInOrderWhateverThePieces) {
  std::string stream;
  append_record(stream, 'L', "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\n");
  append_record(stream, 'H', count(2));
  append_record(stream, 'D', "");
  append_record(stream, 'L', std::string(70000, 'x'));
  const std::vector<Seen> expected{{'L', "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\n"},
                                   {'H', count(2)},
                                   {'D', ""},
                                   {'L', std::string(70000, 'x')}};
  for (std::size_t piece :
       {std::size_t{1}, std::size_t{3}, std::size_t{5}, std::size_t{4096}, stream.size()}) {
    RecordReader reader(1 << 20);
    EXPECT_EQ(read_all(reader, stream, piece), expected) << "pieces of " << piece;
    EXPECT_EQ(reader.buffered(), 0u);
  }
}

TEST(Wire, ARecordPastTheBoundStopsTheReader) {
  std::string stream;
  append_record(stream, 'E', "Cfine");
  append_record(stream, 'T', std::string(100, 's'));
  append_record(stream, 'E', "Cnever seen");
  RecordReader reader(99);
  const auto seen = read_all(reader, stream, 7);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].bytes, "Cfine");
  EXPECT_TRUE(reader.failed());
  // Its length alone says so: 4 GiB claimed in a header is refused before any byte of it.
  RecordReader huge(1 << 20);
  EXPECT_FALSE(huge.feed(std::string("T\xff\xff\xff\xff", 5), [](char, std::string_view) {}));
}

// The bytes after a record's kind and length, held as a helper holds them.
std::shared_ptr<const std::string> body_of(const std::string& record) {
  return std::make_shared<const std::string>(record.substr(kHeaderBytes));
}

TEST(Wire, AStartRecordKeepsEverythingItHolds) {
  const std::string source("import 'node:fs';\n\0binary", 25);
  const std::string stencil(1000, '\xee');
  Start s;
  s.kind = Start::Kind::js;
  s.memory_bytes = 16ull << 20;
  s.turn_ms = 300;
  s.turn_deciding_ms = 50;
  s.net_bytes = 5 * 1024 * 1024;
  s.name = "dist/plugin.mjs";
  s.url = "file:///plugin/dist/plugin.mjs";
  s.folder = "/plugin";
  s.source = source;
  s.stencil = stencil;
  s.root_files = {{"rules.json", "{}"}, {"b.json", ""}};
  const std::string bytes = start_record(s);
  // One record: its kind, its length, and nothing after.
  std::vector<std::string> records;
  RecordReader reader(1 << 20);
  EXPECT_TRUE(reader.feed(bytes, [&](char kind, std::string_view b) {
    EXPECT_EQ(kind, 'S');
    records.emplace_back(b);
  }));
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0], bytes.substr(kHeaderBytes));

  auto back = decode_start(body_of(bytes));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->kind, s.kind);
  EXPECT_EQ(back->memory_bytes, s.memory_bytes);
  EXPECT_EQ(back->turn_ms, 300u);
  EXPECT_EQ(back->turn_deciding_ms, 50u);
  EXPECT_EQ(back->net_bytes, 5u * 1024 * 1024);
  EXPECT_EQ(back->name, s.name);
  EXPECT_EQ(back->url, s.url);
  EXPECT_EQ(back->folder, s.folder);
  EXPECT_EQ(back->source, source);
  EXPECT_EQ(back->stencil, stencil);
  EXPECT_EQ(back->root_files, s.root_files);
  // The stencil begins at a multiple of 8 from the body's start, whatever comes before it.
  for (const std::string name : {"a", "ab", "abc.mjs", "dist/plugin.mjs"}) {
    Start t = s;
    t.name = name;
    const auto body = body_of(start_record(t));
    const auto decoded = decode_start(body);
    ASSERT_TRUE(decoded) << name;
    EXPECT_EQ(static_cast<std::size_t>(decoded->stencil.data() - body->data()) % 8, 0u) << name;
    EXPECT_EQ(decoded->stencil, stencil);
  }
  // What it views is its own: moved, it still reads the same.
  const Start moved = *std::move(back);
  EXPECT_EQ(moved.source, source);
  EXPECT_EQ(moved.stencil, stencil);
  // Cut anywhere, or with a byte more, it is no start.
  const std::string body = bytes.substr(kHeaderBytes);
  for (std::size_t cut = 0; cut < body.size(); cut += 97)
    EXPECT_FALSE(decode_start(std::make_shared<const std::string>(body.substr(0, cut)))) << cut;
  EXPECT_FALSE(decode_start(std::make_shared<const std::string>(body + "x")));
  EXPECT_FALSE(decode_start(std::make_shared<const std::string>("\x09" + body.substr(1))));
  EXPECT_FALSE(decode_start(nullptr));
}

TEST(Wire, AnEndIsReadAsTheHostReadsAHelpersWords) {
  const auto crash = decode_ended(encode(Ended{false, "its instance crashed: TypeError: x", ""}));
  ASSERT_TRUE(crash);
  EXPECT_FALSE(crash->refusal);
  EXPECT_EQ(crash->reason, "its instance crashed: TypeError: x");
  const auto refused = decode_ended(encode(Ended{true, "its bundle imports \"node:net\"", ""}));
  ASSERT_TRUE(refused);
  EXPECT_TRUE(refused->refusal);
  // A reason of a megabyte is cut at kMaxReasonBytes, on a character's end.
  std::string long_reason = "x" + std::string(kMaxReasonBytes, '\xc3');
  for (std::size_t i = 2; i < long_reason.size(); i += 2)
    long_reason[i] = '\xa9';  // é after é
  const auto cut = decode_ended(encode(Ended{false, long_reason, long_reason}));
  ASSERT_TRUE(cut);
  EXPECT_LE(cut->reason.size(), kMaxReasonBytes);
  EXPECT_GT(cut->reason.size(), kMaxReasonBytes - 4);
  EXPECT_EQ(cut->turn, cut->reason);
  // A turn stopped past its budget names the line it handled.
  const auto turn = decode_ended(
      encode(Ended{false, "a turn ran past 500 ms: Escouade stopped its instance", "{\"id\":3}"}));
  ASSERT_TRUE(turn);
  EXPECT_EQ(turn->turn, "{\"id\":3}");
  // Not UTF-8, no kind, cut short or with a byte more: not an end.
  EXPECT_FALSE(decode_ended(encode(Ended{false, "\xff", ""})));
  EXPECT_FALSE(decode_ended(encode(Ended{false, "x", "\xff"})));
  const std::string good = encode(Ended{false, "reason", "turn"});
  for (std::size_t n = 0; n < good.size(); ++n)
    EXPECT_FALSE(decode_ended(good.substr(0, n))) << n;
  EXPECT_FALSE(decode_ended(good + "x"));
  EXPECT_FALSE(decode_ended("X" + good.substr(1)));
}

TEST(Wire, ACountIsEightBytes) {
  EXPECT_EQ(count_of(count(0)), 0u);
  EXPECT_EQ(count_of(count(4u << 20)), 4u << 20);
  EXPECT_FALSE(count_of("1234567"));
  EXPECT_FALSE(count_of("123456789"));
}

}  // namespace
}  // namespace escouade::sandbox::wire
