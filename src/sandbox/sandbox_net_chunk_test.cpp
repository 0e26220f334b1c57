// A stream's pieces through a real helper: the test answers the prelude's net/stream as the host
// would and sends net/chunk lines exactly as the host writes them (rpc::Outgoing), which the
// helper reads itself (sandbox/net_chunk.hpp), and lines of another shape, which the prelude
// reads; the bundle gets the same bytes either way, its credits in steps of 64 KiB, and the
// lines of a stream not the prelude's as they came.

#include <string>

#include "base/base64.hpp"
#include "protocol/gen/methods.hpp"
#include "rpc/outgoing.hpp"
#include "sandbox/sandbox_test_fixture.hpp"

namespace escouade::sandbox {
namespace {

class SandboxNetChunk : public Sandbox {
 protected:
  std::size_t count(std::string_view method) const {
    std::size_t n = 0;
    for (const auto& l : out_) {
      const json::value v = json::parse(l);
      if (v.as_object().contains("method") && v.at("method") == json::value(method)) ++n;
    }
    return n;
  }
  // Answers the prelude's next net/stream with `stream`.
  void open(std::int64_t stream) {
    auto asked = take("net/stream");
    ASSERT_TRUE(asked);
    send(json::object{
        {"jsonrpc", "2.0"},
        {"id", asked->at("id")},
        {"result",
         json::object{{"stream", stream}, {"status", 200}, {"headers", json::object()}}}});
  }
  // A net/chunk as the host writes it.
  void chunk(std::int64_t stream, std::optional<std::string> data,
             std::optional<std::string> bytes = std::nullopt) {
    proto::NetChunkParams p;
    p.stream = stream;
    p.data = std::move(data);
    if (bytes) p.data_base64 = base64_encode(*bytes);
    auto message = rpc::Outgoing::notification<proto::method::NetChunk>(p);
    ASSERT_TRUE(message);
    program_->write(message->notification_line(), proto::Delivery::kept);
  }
  void end(std::int64_t stream) {
    send(json::object{
        {"jsonrpc", "2.0"}, {"method", "net/end"}, {"params", json::object{{"stream", stream}}}});
  }
};

TEST_F(SandboxNetChunk, APiecesBytesAreWhatTheHostSentWhicheverWayTheLineIsRead) {
  start("net", "lines.mjs");
  call(1, "test/read", json::object{{"url", "https://chat.example.com/a"}, {"as", "bytes"}});
  open(5);
  chunk(5, "caf");
  chunk(5, "\xc3\xa9 \xe2\x98\x83 \"q\" \\ \n\x01 \xf0\x9f\x98\x80");
  chunk(5, std::nullopt, std::string("\xff\x00\x80", 3));
  chunk(6, "not the prelude's");  // a stream the bundle would have opened itself
  // The same piece in another shape (its members in another order): the prelude reads it.
  program_->write(R"({"method":"net/chunk","jsonrpc":"2.0","params":{"data":"\u00e9!","stream":5}})"
                  "\n",
                  proto::Delivery::kept);
  end(5);
  auto read = take("", 1);
  ASSERT_TRUE(read) << (err_.empty() ? "" : err_.back());
  const std::string sent =
      std::string("caf\xc3\xa9 \xe2\x98\x83 \"q\" \\ \n\x01 \xf0\x9f\x98\x80") +
      std::string("\xff\x00\x80", 3) + "\xc3\xa9!";
  json::array expected;
  for (unsigned char c : sent)
    expected.push_back(c);
  EXPECT_EQ(read->at("result").at("bytes"), expected);
  auto seen = take("test/seen");
  ASSERT_TRUE(seen);
  EXPECT_EQ(
      seen->at("params").at("line"),
      R"({"jsonrpc":"2.0","method":"net/chunk","params":{"stream":6,"data":"not the prelude's"}})");
  EXPECT_EQ(count("test/seen"), 0u);
}

TEST_F(SandboxNetChunk, TextIsTheTextSentAndBytesMixedInAreDecoded) {
  start("net", "lines.mjs");
  call(1, "test/read", json::object{{"url", "https://chat.example.com/a"}, {"as", "text"}});
  open(7);
  chunk(7, "caf");
  chunk(7, "\xc3\xa9 au lait \xef\xbb\xbf");  // a BOM inside stays
  end(7);
  auto text = take("", 1);
  ASSERT_TRUE(text);
  EXPECT_EQ(text->at("result").at("text"), "caf\xc3\xa9 au lait \xef\xbb\xbf");

  call(2, "test/read", json::object{{"url", "https://chat.example.com/b"}, {"as", "text"}});
  open(8);
  chunk(8, "caf");
  chunk(8, std::nullopt, "\xc3");  // a character cut, its start as bytes
  chunk(8, std::nullopt, "\xa9");
  end(8);
  text = take("", 2);
  ASSERT_TRUE(text);
  EXPECT_EQ(text->at("result").at("text"), "caf\xc3\xa9");
}

TEST_F(SandboxNetChunk, WhatIsReadIsCreditedBackInStepsOf64KiB) {
  start("net", "lines.mjs");
  call(1, "test/read", json::object{{"url", "https://chat.example.com/a"}, {"as", "count"}});
  open(9);
  for (int i = 0; i < 5; ++i)
    chunk(9, std::string(20000, 'y'));
  end(9);
  auto read = take("", 1);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->at("result").at("count"), 100000);
  // 80000 once four pieces were read; the last 20000 with no credit, the stream ended.
  auto credit = take("net/credit");
  ASSERT_TRUE(credit);
  EXPECT_EQ(credit->at("params"), (json::object{{"stream", 9}, {"bytes", 80000}}));
  EXPECT_EQ(count("net/credit"), 0u);
}

}  // namespace
}  // namespace escouade::sandbox
