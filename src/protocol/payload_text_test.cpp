#include "protocol/payload_text.hpp"

#include <gtest/gtest.h>

#include <string>

namespace escouade::proto {
namespace {

std::optional<std::string_view> payload(std::string_view line) {
  return params_member_text(line, "host/call", "params");
}

TEST(PayloadText, OneRequestsPayloadIsTakenAsItCame) {
  const std::string line =
      R"({"jsonrpc":"2.0","id":1,"method":"host/call","params":{"id":"p","method":"m","params":{ "a" : [1, 2.50] }}})";
  const auto p = payload(line);
  ASSERT_TRUE(p);
  EXPECT_EQ(*p, R"({ "a" : [1, 2.50] })");
  EXPECT_GE(p->data(), line.data());  // a view into the line
  EXPECT_TRUE(
      payload(R"({"method":"host/call","params":{"params":[1]},"id":"x","jsonrpc":"2.0"})"));
}

TEST(PayloadText, AnythingElseIsLeftToTheDecoder) {
  const char* others[] = {
      // another method, a notification, a batch, no payload, a payload that is no structure
      R"({"jsonrpc":"2.0","id":1,"method":"host/status","params":{"params":{}}})",
      R"({"jsonrpc":"2.0","method":"host/call","params":{"params":{}}})",
      R"([{"jsonrpc":"2.0","id":1,"method":"host/call","params":{"params":{}}}])",
      R"({"jsonrpc":"2.0","id":1,"method":"host/call","params":{"id":"p"}})",
      R"({"jsonrpc":"2.0","id":1,"method":"host/call","params":{"params":"text"}})",
      // keys with an escape, a member twice, "\r" inside, not JSON, not UTF-8
      R"({"jsonrpc":"2.0","id":1,"method":"host/call","params":{"p\u0061rams":{}}})",
      R"({"jsonrpc":"2.0","id":1,"m\u0065thod":"host/call","params":{"params":{}}})",
      R"({"jsonrpc":"2.0","id":1,"method":"host/call","params":{"params":{},"params":[]}})",
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"host/call\",\"params\":{\"params\":{\"a\":\r1}}}",
      R"({"jsonrpc":"2.0","id":1,"method":"host/call","params":{"params":{}})",
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"host/call\",\"params\":{\"params\":[\"\xff\"]}}",
      R"({"jsonrpc":"1.0","id":1,"method":"host/call","params":{"params":{}}})",
  };
  for (const char* line : others)
    EXPECT_FALSE(payload(line)) << line;
}

}  // namespace
}  // namespace escouade::proto
