// Every example of the JSON-RPC 2.0 specification's "Examples" section, answered by a small
// server written with this codec: decode the line, answer each call, encode the answer.

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <optional>
#include <string>
#include <vector>

#include "protocol/decode.hpp"
#include "protocol/encode.hpp"

namespace escouade::proto {
namespace {

namespace json = boost::json;

std::optional<Message> call(const Message& m) {
  auto answer = [&](json::value result) -> std::optional<Message> {
    if (m.kind == MessageKind::notification) return std::nullopt;
    return Message::response(m.id, std::move(result));
  };
  const json::value params = m.params ? *m.params : json::value();
  if (m.method == "subtract") {
    if (params.is_array()) return answer(params.at(0).as_int64() - params.at(1).as_int64());
    return answer(params.at("minuend").as_int64() - params.at("subtrahend").as_int64());
  }
  if (m.method == "sum") {
    std::int64_t total = 0;
    for (const auto& x : params.as_array())
      total += x.as_int64();
    return answer(total);
  }
  if (m.method == "get_data") return answer(json::parse(R"(["hello", 5])"));
  if (m.method == "update" || m.method == "notify_hello" || m.method == "notify_sum") {
    return answer(nullptr);
  }
  if (m.kind == MessageKind::notification) return std::nullopt;
  return Message::error_response(m.id, -32601, "Method not found");
}

std::optional<std::string> serve(std::string_view line) {
  Decoder decoder;
  Parsed parsed = decoder.decode(line);
  std::vector<Message> answers;
  for (auto& entry : parsed.entries) {
    if (auto* invalid = std::get_if<Invalid>(&entry)) {
      if (invalid->answer_due) answers.push_back(error_reply(*invalid));
    } else if (std::get<Message>(entry).is_answer()) {
      continue;  // an answer to a call this server never made: nothing to say
    } else if (auto a = call(std::get<Message>(entry))) {
      answers.push_back(std::move(*a));
    }
  }
  auto out = encode_answer(parsed.batch, answers);
  EXPECT_TRUE(out);
  return out ? *out : std::nullopt;
}

// Our error messages add the reason after the specification's words ("Invalid Request: ...");
// compare on the specification's words and drop the rest.
// A serialization with sorted keys, to compare answers whose members come in another order.
std::string canonical(const json::value& v) {
  if (!v.is_object()) return json::serialize(v);
  std::vector<std::string> members;
  for (const auto& m : v.as_object()) {
    members.push_back(json::serialize(json::value(m.key())) + ":" + canonical(m.value()));
  }
  std::sort(members.begin(), members.end());
  std::string out = "{";
  for (const auto& m : members)
    out += (out.size() > 1 ? "," : "") + m;
  return out + "}";
}

json::value normalize(json::value v) {
  if (v.is_array()) {
    std::vector<std::string> items;
    for (auto& x : v.as_array())
      items.push_back(canonical(normalize(x)));
    std::sort(items.begin(), items.end());  // answers may come in any order
    json::array out;
    for (auto& s : items)
      out.push_back(json::parse(s));
    return out;
  }
  if (auto* e = v.as_object().if_contains("error")) {
    auto& msg = e->as_object()["message"];
    std::string text(msg.as_string());
    for (const char* standard : {"Parse error", "Invalid Request", "Method not found"}) {
      if (text.rfind(standard, 0) == 0) msg = standard;
    }
  }
  return v;
}

void expect_answer(std::string_view request, std::optional<std::string_view> expected) {
  auto got = serve(request);
  if (!expected) {
    EXPECT_FALSE(got) << request << " was answered: " << *got;
    return;
  }
  ASSERT_TRUE(got) << request << " got no answer";
  EXPECT_EQ(got->back(), '\n');
  EXPECT_EQ(normalize(json::parse(*got)), normalize(json::parse(*expected))) << *got;
}

TEST(JsonRpcExamples, PositionalParameters) {
  expect_answer(R"({"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1})",
                R"({"jsonrpc": "2.0", "result": 19, "id": 1})");
  expect_answer(R"({"jsonrpc": "2.0", "method": "subtract", "params": [23, 42], "id": 2})",
                R"({"jsonrpc": "2.0", "result": -19, "id": 2})");
}

TEST(JsonRpcExamples, NamedParameters) {
  expect_answer(
      R"({"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 3})",
      R"({"jsonrpc": "2.0", "result": 19, "id": 3})");
  expect_answer(
      R"({"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 42, "subtrahend": 23}, "id": 4})",
      R"({"jsonrpc": "2.0", "result": 19, "id": 4})");
}

TEST(JsonRpcExamples, Notifications) {
  expect_answer(R"({"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]})", std::nullopt);
  expect_answer(R"({"jsonrpc": "2.0", "method": "foobar"})", std::nullopt);
}

TEST(JsonRpcExamples, NonExistentMethod) {
  expect_answer(
      R"({"jsonrpc": "2.0", "method": "foobar", "id": "1"})",
      R"({"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}, "id": "1"})");
}

TEST(JsonRpcExamples, InvalidJson) {
  expect_answer(
      R"({"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz])",
      R"({"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}, "id": null})");
}

TEST(JsonRpcExamples, InvalidRequestObject) {
  expect_answer(
      R"({"jsonrpc": "2.0", "method": 1, "params": "bar"})",
      R"({"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null})");
}

TEST(JsonRpcExamples, BatchInvalidJson) {
  expect_answer(
      R"([{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},{"jsonrpc": "2.0", "method")"
      R"(])",
      R"({"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}, "id": null})");
}

TEST(JsonRpcExamples, EmptyArray) {
  expect_answer(
      "[]",
      R"({"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null})");
}

TEST(JsonRpcExamples, InvalidBatchNotEmpty) {
  expect_answer(
      "[1]",
      R"([{"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null}])");
}

TEST(JsonRpcExamples, InvalidBatch) {
  expect_answer(
      "[1,2,3]",
      R"([{"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null},
                    {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null},
                    {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null}])");
}

TEST(JsonRpcExamples, Batch) {
  expect_answer(
      R"([{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},)"
      R"({"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},)"
      R"({"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"},)"
      R"({"foo": "boo"},)"
      R"({"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},)"
      R"({"jsonrpc": "2.0", "method": "get_data", "id": "9"}])",
      R"([{"jsonrpc": "2.0", "result": 7, "id": "1"},
          {"jsonrpc": "2.0", "result": 19, "id": "2"},
          {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null},
          {"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}, "id": "5"},
          {"jsonrpc": "2.0", "result": ["hello", 5], "id": "9"}])");
}

TEST(JsonRpcExamples, BatchOfNotificationsOnly) {
  expect_answer(R"([{"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]},)"
                R"({"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}])",
                std::nullopt);
}

TEST(JsonRpcRules, BatchOfOneIsAnsweredByAnArray) {
  auto got = serve(R"([{"jsonrpc":"2.0","method":"sum","params":[1],"id":1}])");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->front(), '[');
}

TEST(JsonRpcRules, AnswersAreNeverAnswered) {
  expect_answer(R"({"jsonrpc":"2.0","id":1,"result":1})", std::nullopt);
  expect_answer(R"({"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}})",
                std::nullopt);
  expect_answer(R"([{"jsonrpc":"2.0","id":1,"result":1},{"jsonrpc":"2.0","id":2,"error":5}])",
                std::nullopt);
}

}  // namespace
}  // namespace escouade::proto
