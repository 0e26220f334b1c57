#include "protocol/encode.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <string>
#include <vector>

#include "protocol/decode.hpp"
#include "protocol/gen/errors.hpp"

namespace escouade::proto {
namespace {

namespace json = boost::json;

TEST(Encode, RequestLine) {
  auto line = encode(Message::request(7, "echo", json::parse(R"({"a":1})")));
  ASSERT_TRUE(line);
  EXPECT_EQ(*line, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"echo\",\"params\":{\"a\":1}}\n");
}

TEST(Encode, NotificationHasNoId) {
  auto line = encode(Message::notification("log"));
  ASSERT_TRUE(line);
  EXPECT_EQ(*line, "{\"jsonrpc\":\"2.0\",\"method\":\"log\"}\n");
}

TEST(Encode, ResponsesEchoTheIdWithItsType) {
  EXPECT_EQ(*encode(Message::response("7", 1)),
            "{\"jsonrpc\":\"2.0\",\"id\":\"7\",\"result\":1}\n");
  EXPECT_EQ(*encode(Message::response(nullptr, nullptr)),
            "{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":null}\n");
  EXPECT_EQ(*encode(Message::error_response(3, -32601, "Method not found")),
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32601,\"message\":\"Method not "
            "found\"}}\n");
  EXPECT_EQ(*encode(Message::error_response(3, -32000, "x", json::value(true))),
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32000,\"message\":\"x\",\"data\":"
            "true}}\n");
}

TEST(Encode, LineBreaksInTextAreEscaped) {
  json::object params{{"message", "one\ntwo\r\nthree\x01\u2028"}};
  auto line = encode(Message::notification("log\nx", json::value(params)));
  ASSERT_TRUE(line);
  EXPECT_EQ(line->find('\n'), line->size() - 1);
  EXPECT_EQ(line->find('\r'), std::string::npos);
  // And it reads back the same.
  Decoder d;
  auto p = d.decode(std::string_view(*line).substr(0, line->size() - 1));
  const auto& m = std::get<Message>(p.entries.at(0));
  EXPECT_EQ(m.method, "log\nx");
  EXPECT_EQ(m.params->at("message").as_string(), "one\ntwo\r\nthree\x01\u2028");
}

TEST(Encode, InvalidUtf8IsRefused) {
  auto bad_params = encode(Message::notification("log", json::value({{"m", "\xC3"}})));
  ASSERT_FALSE(bad_params);
  EXPECT_EQ(bad_params.error().code, ErrorCode::internal);
  EXPECT_NE(bad_params.error().message.find("UTF-8"), std::string::npos);
  EXPECT_FALSE(encode(Message::request(1, "bad\xFF")));
  EXPECT_FALSE(encode(Message::error_response(1, 1, "\xED\xA0\x80")));  // a surrogate
  EXPECT_FALSE(encode(Message::response(json::value("\x80"), 1)));
}

// A JSON string of at least `bytes`, with the escapes a source file has.
std::string long_json_text(std::size_t bytes) {
  std::string text = "\"";
  while (text.size() < bytes)
    text += "line\\t of a file\\n with a \\\"quote\\\" ";
  return text + '"';
}

// A result given as text past 16 KiB (a file's, 256 KiB) is written straight into a line of its
// size: the same line as a short one's, with the same checks.
TEST(Encode, ALongResultGivenAsTextIsTheSameLineWithTheSameChecks) {
  const std::string text = long_json_text(256 * 1024);
  for (const auto& id : {json::value(7), json::value("a-string-id")}) {
    auto line = encode(Message::response_text(id, text));
    ASSERT_TRUE(line);
    EXPECT_EQ(*line,
              R"({"jsonrpc":"2.0","id":)" + json::serialize(id) + R"(,"result":)" + text + "}\n");
    EXPECT_LT(line->capacity(), line->size() + 1024);  // made at its size, not by doubling
    Decoder d;
    const auto p = d.decode(std::string_view(*line).substr(0, line->size() - 1));
    ASSERT_EQ(p.entries.size(), 1u);
    ASSERT_TRUE(std::holds_alternative<Message>(p.entries[0]));
    EXPECT_EQ(std::get<Message>(p.entries[0]).result, json::parse(text));
  }
  // What a short line may not hold, a long one may not either.
  auto broken = encode(Message::response_text(1, "\"" + std::string(20000, 'a') + "\n\""));
  ASSERT_FALSE(broken);
  EXPECT_NE(broken.error().message.find("line break"), std::string::npos);
  auto bad = encode(Message::response_text(1, "\"" + std::string(20000, 'a') + "\xC3\""));
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("UTF-8"), std::string::npos);
}

// A single long answer's line is made in its result's own buffer: the line encode() makes.
TEST(Encode, ALongAnswerIsMadeInItsOwnBufferAsEncodeMakesIt) {
  const std::string text = long_json_text(64 * 1024);
  for (const auto& id : {json::value(12), json::value("r-7")}) {
    Message answer = Message::response_text(id, text);
    answer.result_text.reserve(text.size() + 256);
    const char* buffer = answer.result_text.data();
    const auto expected = encode(answer);
    ASSERT_TRUE(expected);
    auto line = take_long_answer_line(answer);
    ASSERT_TRUE(line);
    EXPECT_EQ(*line, *expected);
    EXPECT_EQ(line->data(), buffer);  // no new buffer: the envelope went in front of the text
  }
  // Not for a short result, an error, a request, nor one encode() refuses: those stay whole.
  Message short_one = Message::response_text(1, R"("short")");
  EXPECT_FALSE(take_long_answer_line(short_one));
  EXPECT_EQ(short_one.result_text, R"("short")");
  Message request = Message::request(1, "fs/read", json::object{{"path", std::string(20000, 'a')}});
  EXPECT_FALSE(take_long_answer_line(request));
  Message error = Message::error_response(1, -32000, std::string(20000, 'e'));
  EXPECT_FALSE(take_long_answer_line(error));
  for (const char* bad : {"\n", "\xC3", "\r"}) {
    const std::string result = "\"" + std::string(20000, 'a') + bad + "\"";
    Message refused = Message::response_text(1, result);
    EXPECT_FALSE(take_long_answer_line(refused));
    EXPECT_EQ(refused.result_text, result);
    EXPECT_FALSE(encode(refused));
  }
}

TEST(Encode, NotificationWithoutCopyingItsParams) {
  const json::value params = json::parse(R"({"name":"agent.status","seq":3,"data":{"x":"\n"}})");
  auto line = encode_notification("events/fact", params);
  ASSERT_TRUE(line);
  EXPECT_EQ(*line, *encode(Message::notification("events/fact", params)));
  EXPECT_FALSE(encode_notification("log", json::value("\xC3")));
}

TEST(Encode, BatchIsOneArrayLine) {
  std::vector<Message> batch{Message::response(1, 2), Message::notification("n")};
  auto line = encode_batch(batch);
  ASSERT_TRUE(line);
  EXPECT_EQ(
      *line,
      "[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":2},{\"jsonrpc\":\"2.0\",\"method\":\"n\"}]\n");
  EXPECT_FALSE(encode_batch({}));
}

TEST(Encode, RoundTripThroughTheDecoder) {
  const std::vector<Message> messages = {
      Message::request(json::value(-5), "permissions/decide",
                       json::parse(R"({"request":{"id":"r","kind":"command"}})")),
      Message::request(json::value("id-1"), "shutdown"),
      Message::notification("events/fact", json::parse(R"([1,2,3])")),
      Message::response(json::value(2.5), json::parse(R"({"deep":[{"x":null}]})")),
      Message::error_response(json::value(), -32700, "Parse error"),
  };
  Decoder d;
  for (const auto& m : messages) {
    auto line = encode(m);
    ASSERT_TRUE(line);
    auto p = d.decode(std::string_view(*line).substr(0, line->size() - 1));
    ASSERT_EQ(p.entries.size(), 1u);
    ASSERT_TRUE(std::holds_alternative<Message>(p.entries[0])) << *line;
    EXPECT_EQ(std::get<Message>(p.entries[0]), m) << *line;
  }
}

TEST(Encode, ErrorReplyToAnInvalidLine) {
  Decoder d;
  auto p = d.decode("{oops");
  auto reply = encode(error_reply(std::get<Invalid>(p.entries.at(0))));
  ASSERT_TRUE(reply);
  auto v = json::parse(*reply);
  EXPECT_TRUE(v.at("id").is_null());
  EXPECT_EQ(v.at("error").at("code"), -32700);
  EXPECT_NE(v.at("error").at("message").as_string().find("Parse error"), json::string::npos);
}

}  // namespace
}  // namespace escouade::proto
