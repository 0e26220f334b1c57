// host/call through escouade-host, whose payload goes to the plugin and whose result comes back
// to the app as JSON text, never built into values on the way (docs/PERFORMANCE.md): what the
// app and the plugin get is the same as before, for the lines that path takes and for those it
// leaves to the decoder.

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <string>

#include "host_client.hpp"

namespace escouade::testing {
namespace {

namespace json = boost::json;

// A host/call line of test/echo with `payload` written as it is, and the answer to it.
HostClient::Answer echo_raw(HostClient& host, const std::string& id, const std::string& call_id,
                            const std::string& payload) {
  host.send_line(R"({"jsonrpc":"2.0","id":")" + call_id +
                 R"(","method":"host/call","params":{"id":")" + id +
                 R"(","method":"test/echo","timeoutMs":30000,"params":)" + payload + "}}");
  return host.answer_to(json::value(call_id));
}

// The plugin's answer written as `line` (its ID replaced by the call's id).
HostClient::Answer answered_as(HostClient& host, const std::string& id, const std::string& line,
                               int timeout_ms = 30000) {
  return host.call("host/call", json::object{{"id", id},
                                             {"method", "test/answer-raw"},
                                             {"timeoutMs", timeout_ms},
                                             {"params", json::object{{"line", line}}}});
}

TEST(HostCall, APayloadReachesThePluginAsTheAppWroteIt) {
  HostClient host;
  const auto id = host.load_and_enable(make_plugin(host.plugins_dir(), {"dev.test.payload"}));
  const std::string payload =
      R"({"s" : "\u00e9\"x\\ é", "n":[1, 2.5e3, -0, 1e-2, 18446744073709551615],)"
      R"( "o":{"k":{"l":[[], {}]}}, "t":true, "z":null})";
  const auto a = echo_raw(host, id, "c1", payload);
  ASSERT_TRUE(a.ok()) << a.error_message;
  EXPECT_EQ(a.result, json::parse(payload));
  const auto b = echo_raw(host, id, "c2", R"([1, "two", [3]])");
  ASSERT_TRUE(b.ok()) << b.error_message;
  EXPECT_EQ(b.result, json::parse(R"([1,"two",[3]])"));
}

TEST(HostCall, AResultReachesTheAppAsThePluginWroteIt) {
  HostClient host;
  const auto id = host.load_and_enable(make_plugin(host.plugins_dir(), {"dev.test.result"}));
  const std::string result = R"({"b" : [1, 2.50, "\u00e9"], "n":1.0e2, "e":{}})";
  const auto a = answered_as(host, id, R"({"jsonrpc":"2.0","id":ID,"result":)" + result + "}");
  ASSERT_TRUE(a.ok()) << a.error_message;
  EXPECT_NE(a.line.find(R"("result":)" + result), std::string::npos) << a.line;
  EXPECT_EQ(a.result, json::parse(result));
}

// Lines of the app's the text path leaves to the decoder: answered as they always were.
TEST(HostCall, AppLinesLeftToTheDecoderAreServedTheSame) {
  HostClient host;
  const auto id = host.load_and_enable(make_plugin(host.plugins_dir(), {"dev.test.decoded"}));
  const std::string body = R"("method":"host/call","params":{"id":")" + id +
                           R"(","method":"test/echo","timeoutMs":30000,)";
  // A key written with an escape: still the payload.
  host.send_line(R"({"jsonrpc":"2.0","id":"k","method":"host/call","params":{"id":")" + id +
                 R"(","method":"test/echo","timeoutMs":30000,"p\u0061rams":{"a":1}}})");
  auto a = host.answer_to(json::value("k"));
  ASSERT_TRUE(a.ok()) << a.error_message;
  EXPECT_EQ(a.result, json::parse(R"({"a":1})"));
  // "\r" between the payload's tokens: a line break to the plugin's line, so it is rewritten.
  a = echo_raw(host, id, "r", "{\"a\":\r[1,\r2]}");
  ASSERT_TRUE(a.ok()) << a.error_message;
  EXPECT_EQ(a.result, json::parse(R"({"a":[1,2]})"));
  EXPECT_EQ(a.line.find('\r'), std::string::npos);
  // No payload, or null: the plugin gets none.
  a = echo_raw(host, id, "n", "null");
  ASSERT_TRUE(a.ok()) << a.error_message;
  EXPECT_TRUE(a.result.is_null());
  // Two host/calls in a batch: one batch answers them.
  host.send_line(R"([{"jsonrpc":"2.0","id":"b1",)" + body + R"("params":{"x":1}}},)" +
                 R"({"jsonrpc":"2.0","id":"b2",)" + body + R"("params":{"x":2}}}])");
  EXPECT_EQ(host.answer_to(json::value("b1")).result, json::parse(R"({"x":1})"));
  EXPECT_EQ(host.answer_to(json::value("b2")).result, json::parse(R"({"x":2})"));
  // Nested past the 64 levels a line may hold: a parse error (its id unread: null), as before.
  host.send_line(R"({"jsonrpc":"2.0","id":"deep",)" + body + R"("params":)" + std::string(70, '[') +
                 std::string(70, ']') + "}}");
  a = host.answer_to(json::value(nullptr));
  EXPECT_EQ(a.error_code.value_or(0), -32700);
  EXPECT_TRUE(echo_raw(host, id, "after", "{}").ok());
}

// Answers of the plugin's that the text path leaves to the decoder reach the app all the same;
// a line that is no JSON is journaled and the call gets no answer from it.
TEST(HostCall, PluginAnswersLeftToTheDecoderReachTheAppTheSame) {
  HostClient host;
  const auto id = host.load_and_enable(make_plugin(host.plugins_dir(), {"dev.test.answers"}));
  auto a = answered_as(host, id, "{\"jsonrpc\":\"2.0\",\"id\":ID,\"result\":{\"k\":\r[1]}}");
  ASSERT_TRUE(a.ok()) << a.error_message;
  EXPECT_EQ(a.result, json::parse(R"({"k":[1]})"));
  EXPECT_EQ(a.line.find('\r'), std::string::npos);
  a = answered_as(host, id, R"({"jsonrpc":"2.0","id":ID,"r\u0065sult":"escaped key"})");
  ASSERT_TRUE(a.ok()) << a.error_message;
  EXPECT_EQ(a.result, json::value("escaped key"));
  a = answered_as(host, id, R"({"jsonrpc":"2.0","id":ID,"error":{"code":-32004,"message":"no"}})");
  EXPECT_EQ(a.error_code.value_or(0), -32004);
  EXPECT_EQ(a.error_message, "no");
  a = answered_as(host, id, R"({"jsonrpc":"2.0","id":ID,"result":{"n":1e400}})", 1000);
  EXPECT_EQ(a.error_code.value_or(0), -32004);
  EXPECT_EQ(a.error_message, "test/answer-raw: no answer within 1000 ms");
  EXPECT_FALSE(host.wait_journal(id, "a number too large to be represented").empty());
  EXPECT_TRUE(host.call("host/call", json::object{{"id", id},
                                                  {"method", "test/echo"},
                                                  {"timeoutMs", 30000},
                                                  {"params", json::object{{"still", true}}}})
                  .ok());
}

}  // namespace
}  // namespace escouade::testing
