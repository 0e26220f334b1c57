// The net/chunk lines a helper reads itself (sandbox/net_chunk.hpp): every line the host writes
// gives back the bytes it was made of, and anything of another shape is left to the prelude.

#include "sandbox/net_chunk.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "base/base64.hpp"
#include "base/utf8.hpp"
#include "protocol/gen/methods.hpp"
#include "rpc/outgoing.hpp"

namespace escouade::sandbox {
namespace {

// The line the host writes for these params (services/net.cpp's chunk()).
std::string host_line(std::int64_t stream, std::optional<std::string> data,
                      std::optional<std::string> base64) {
  proto::NetChunkParams p;
  p.stream = stream;
  p.data = std::move(data);
  p.data_base64 = std::move(base64);
  auto message = rpc::Outgoing::notification<proto::method::NetChunk>(p);
  EXPECT_TRUE(message.has_value());
  return message ? message->notification_line() : std::string();
}

struct Read {
  bool ok = false;
  NetChunkLine chunk;
  std::string bytes;
};
Read read(std::string_view line) {
  Read r;
  r.ok = read_net_chunk(line, r.chunk, r.bytes);
  return r;
}

TEST(NetChunkLine, TextComesBackAsTheBytesTheHostSent) {
  const std::string texts[] = {
      "",
      "hello",
      std::string(70000, 'y'),
      "caf\xc3\xa9 au lait \xe2\x82\xac \xf0\x9f\x98\x80",     // two, three, four bytes
      "\"quoted\" \\ back/slash \b\f\n\r\t \x01\x1f\x7f end",  // every escape JSON has
      std::string("nul \0 inside", 12),                        // \u0000
      "\xe2\x80\xa8 \xe2\x80\xa9 \xef\xbb\xbf",                // U+2028, U+2029, a BOM
  };
  for (const std::string& text : texts) {
    const std::string line = host_line(7, text, std::nullopt);
    const Read r = read(line);
    ASSERT_TRUE(r.ok) << line;
    EXPECT_EQ(r.chunk.stream, 7);
    EXPECT_TRUE(r.chunk.text);
    EXPECT_EQ(r.bytes, text);
  }
}

TEST(NetChunkLine, RandomTextAndBytesRoundTrip) {
  std::mt19937 random(32);
  const std::string alphabet[] = {"a",    "Z",    " ",        "\"",           "\\",
                                  "\n",   "\x01", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
                                  "\x7f", "/"};
  for (int round = 0; round < 300; ++round) {
    std::string text;
    const int n = static_cast<int>(random() % 200);
    for (int i = 0; i < n; ++i)
      text += alphabet[random() % std::size(alphabet)];
    const Read t = read(host_line(round + 1, text, std::nullopt));
    ASSERT_TRUE(t.ok) << text;
    EXPECT_EQ(t.bytes, text);
    EXPECT_EQ(t.chunk.stream, round + 1);

    std::string bytes;
    for (int i = 0; i < n; ++i)
      bytes += static_cast<char>(random() % 256);
    const Read b = read(host_line(3, std::nullopt, base64_encode(bytes)));
    ASSERT_TRUE(b.ok);
    EXPECT_FALSE(b.chunk.text);
    EXPECT_EQ(b.bytes, bytes);
  }
}

TEST(NetChunkLine, EscapedTextDecodesAsJsonDoes) {
  const std::string start =
      R"({"jsonrpc":"2.0","method":"net/chunk","params":{"stream":12,"data":")";
  Read r = read(start + R"(\u00e9\u20AC\ud83d\ude00\/\u0041")" + "}}\n");
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.chunk.stream, 12);
  EXPECT_EQ(r.bytes, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80/A");
  // No '\n' at its end is the same line.
  EXPECT_TRUE(read(start + R"(x")" + "}}").ok);
}

TEST(NetChunkLine, AnythingElseIsLeftToThePrelude) {
  const std::string start = R"({"jsonrpc":"2.0","method":"net/chunk","params":{"stream":)";
  const std::string refused[] = {
      "",
      "\n",
      R"({"jsonrpc":"2.0","method":"net/end","params":{"stream":1}})",
      R"({"jsonrpc":"2.0","method":"net/chunk","params":{"data":"x","stream":1}})",   // order
      R"({"jsonrpc":"2.0", "method":"net/chunk","params":{"stream":1,"data":"x"}})",  // a space
      R"({"jsonrpc":"2.0","id":1,"method":"net/chunk","params":{"stream":1,"data":"x"}})",
      start + R"(,"data":"x"}})",                       // no stream
      start + R"(01,"data":"x"}})",                     // a leading zero
      start + R"(-1,"data":"x"}})",                     // a sign
      start + R"(1.5,"data":"x"}})",                    // not an integer
      start + R"(1234567890123456,"data":"x"}})",       // past what a number holds exactly
      start + R"(1,"data":"x"})",                       // cut
      start + R"(1,"data":"x"}} )",                     // more after it
      start + R"(1,"data":"x"},"id":2})",               // more members
      start + R"(1,"data":"x","dataBase64":"AA=="}})",  // both
      start + R"(1,"data":x}})",                        // not a string
      start + R"(1,"data":"x)",                         // no closing quote
      start + "1,\"data\":\"a\tb\"}}",                  // a control character unescaped
      start + R"(1,"data":"\x"}})",                     // no such escape
      start + R"(1,"data":"\u12"}})",                   // a short \u
      start + R"(1,"data":"\ud83d"}})",                 // a lone high surrogate
      start + R"(1,"data":"\ude00"}})",                 // a lone low surrogate
      start + R"(1,"data":"\ud83d\u0041"}})",           // a high one, then no low one
      start + "1,\"data\":\"\xc3\"}}",                  // not UTF-8
      start + "1,\"data\":\"\xed\xa0\x80\"}}",          // a surrogate in UTF-8
      start + R"(1,"dataBase64":"AAA"}})",              // base64 of a wrong length
      start + R"(1,"dataBase64":"A?=="}})",             // outside its alphabet
      start + R"(1,"dataBase64":"AB=="}})",             // bits left over
      start + R"(1,"dataBase64":"AA=="} })",
  };
  for (const std::string& line : refused)
    EXPECT_FALSE(read(line).ok) << line;
}

TEST(NetChunkLine, TheLargestStreamNumberTaken) {
  const Read r = read(
      R"({"jsonrpc":"2.0","method":"net/chunk","params":{"stream":999999999999999,"dataBase64":""}})");
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.chunk.stream, 999999999999999);
  EXPECT_FALSE(r.chunk.text);
  EXPECT_EQ(r.bytes, "");
}

}  // namespace
}  // namespace escouade::sandbox
