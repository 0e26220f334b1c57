#include "protocol/encode.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
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
