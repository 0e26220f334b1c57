#include "rpc/outgoing.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/value_from.hpp>

#include "protocol/encode.hpp"
#include "protocol/gen/host_methods.hpp"
#include "protocol/gen/methods.hpp"

namespace escouade::rpc {
namespace {

namespace json = boost::json;
namespace method = proto::method;
using proto::Delivery;
using std::chrono::milliseconds;

proto::Fact a_fact() {
  proto::Fact f;
  f.name = proto::FactName::turn_ended;
  f.version = 1;
  f.seq = 42;
  f.at = "2026-12-04T10:00:00Z";
  f.data = json::object{{"turn", 3}, {"text", "é \"quoted\"\nline"}};
  return f;
}

// A message from the generated types writes the bytes the encoder writes for the same values:
// nothing changes on the wire, whichever way a message was made.
TEST(Outgoing, ItsLinesAreTheEncodersBytes) {
  const proto::Fact fact = a_fact();
  const auto note = Outgoing::notification<method::EventsFact>(fact);
  ASSERT_TRUE(note);
  EXPECT_FALSE(note->is_request());
  EXPECT_EQ(note->notification_line(),
            *proto::encode_notification(method::EventsFact::kName, json::value_from(fact)));

  proto::DecideParams decide;
  decide.request.id = "r1";
  decide.request.kind = "tool";
  decide.request.tool = "Bash";
  decide.request.input = json::object{{"command", "ls"}};
  decide.project.id = "p1";
  const auto call = Outgoing::request<method::PermissionsDecide>(decide);
  ASSERT_TRUE(call);
  EXPECT_TRUE(call->is_request());
  EXPECT_EQ(call->request_line(7),
            *proto::encode(proto::Message::request(7, std::string(method::PermissionsDecide::kName),
                                                   json::value_from(decide))));
  EXPECT_EQ(call->request_line(8).substr(0, 23), R"({"jsonrpc":"2.0","id":8)");
}

// By name with values, every kind of value and of method name gives the encoder's bytes, for
// every id; what is not UTF-8, in the method or the params, is refused as the encoder refuses it.
TEST(Outgoing, ByNameItIsTheEncodersLineForEveryId) {
  const std::optional<json::value> cases[] = {
      std::nullopt,
      json::parse(R"({"request":{"id":"r-1","input":{"command":"a\nb é \"q\" \\"}}})"),
      json::parse(R"([1,-2.5,null,true,"\u0001",{"":[]}])"), json::object{}, json::value(nullptr)};
  for (const auto& params : cases) {
    for (std::string_view name : {"test/echo", "a \"b\"\n"}) {
      const auto call = params ? Outgoing::request_value(name, *params)
                               : Outgoing::request_value(name, std::nullopt);
      ASSERT_TRUE(call);
      for (std::int64_t id : {std::int64_t{0}, std::int64_t{42}, INT64_MAX}) {
        EXPECT_EQ(call->request_line(id),
                  *proto::encode(proto::Message::request(id, std::string(name), params)));
      }
      const auto note = params ? Outgoing::notification_value(name, *params)
                               : Outgoing::notification_value(name, std::nullopt);
      ASSERT_TRUE(note);
      EXPECT_EQ(note->notification_line(),
                *proto::encode(proto::Message::notification(std::string(name), params)));
    }
  }
  for (const auto& [name, params] :
       {std::pair<std::string, std::optional<json::value>>{"bad\xFF", std::nullopt},
        {"ok", json::value({{"m", "\xC3"}})}}) {
    const auto refused = params ? Outgoing::request_value(name, *params)
                                : Outgoing::request_value(name, std::nullopt);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, proto::ErrorCode::internal);
    EXPECT_FALSE(proto::encode(proto::Message::request(1, name, params)));
  }
}

// A method whose params are null (shutdown) sends none: JSON-RPC 2.0 allows only an object or
// an array there.
TEST(Outgoing, NullParamsAreLeftOut) {
  const auto stop = Outgoing::request<method::Shutdown>(nullptr);
  ASSERT_TRUE(stop);
  EXPECT_EQ(stop->request_line(3), R"({"jsonrpc":"2.0","id":3,"method":"shutdown"})"
                                   "\n");
  EXPECT_EQ(stop->params_text(), "");
  const auto none = Outgoing::request_value("test/echo", std::nullopt);
  ASSERT_TRUE(none);
  EXPECT_EQ(none->request_line(1), R"({"jsonrpc":"2.0","id":1,"method":"test/echo"})"
                                   "\n");
}

// Delivery and delay come from the method, for the generated types and by name alike.
TEST(Outgoing, DeliveryAndDelayAreTheMethods) {
  proto::TimerParams t;
  t.timer = 1;
  const auto fired = Outgoing::notification<method::TimerFired>(t);
  ASSERT_TRUE(fired);
  EXPECT_EQ(fired->delivery(), Delivery::kept);
  EXPECT_EQ(Outgoing::notification<method::EventsFact>(a_fact())->delivery(), Delivery::droppable);
  EXPECT_EQ(Outgoing::notification_value("events/fact", json::object{})->delivery(),
            Delivery::droppable);
  EXPECT_EQ(Outgoing::notification_value("net/chunk", json::object{})->delivery(), Delivery::kept);
  EXPECT_EQ(Outgoing::notification_value("no/such-thing", std::nullopt)->delivery(),
            Delivery::kept);
  proto::host::StatusChange change;
  change.id = "p";
  change.state = proto::host::PluginState::running;
  EXPECT_EQ(Outgoing::notification<proto::host::method::HostStatusChanged>(change)->delivery(),
            Delivery::droppable);

  proto::DecideParams decide;
  EXPECT_EQ(Outgoing::request<method::PermissionsDecide>(decide)->default_delay(),
            milliseconds(500));
  EXPECT_EQ(Outgoing::request_text("permissions/decide", "{}")->default_delay(), milliseconds(500));
  EXPECT_EQ(Outgoing::request_text("initialize", "{}")->default_delay(), milliseconds(10000));
  EXPECT_EQ(Outgoing::request_text("test/echo", "{}")->default_delay(),
            milliseconds(proto::kDefaultTimeoutMs));
  EXPECT_EQ(Outgoing::request<method::Shutdown>(nullptr)->default_delay(), milliseconds(1000));
  EXPECT_EQ(Outgoing::request_text("agent/attach", "{}")->default_delay(),
            milliseconds(proto::kDefaultTimeoutMs));
}

// How the result comes back is the caller's choice, carried with the message.
TEST(Outgoing, ItCarriesItsResultForm) {
  EXPECT_EQ(Outgoing::request_text("test/echo", "[1]")->form(), ResultForm::text);
  EXPECT_EQ(Outgoing::request_text("test/echo", "[1]", ResultForm::value)->form(),
            ResultForm::value);
  EXPECT_EQ(Outgoing::request_value("test/echo", json::array{1})->form(), ResultForm::value);
  EXPECT_EQ(Outgoing::request<method::PermissionsDecide>({}, ResultForm::text)->form(),
            ResultForm::text);
}

// Text handed on as it came is spliced unchanged, and can be read back; a method's name is
// escaped, so no name can break the line or add a member.
TEST(Outgoing, TextIsHandedOnAsItCame) {
  const std::string payload = R"({ "b" : [1, 2.50, "x"], "a":{} })";
  const auto call = Outgoing::request_text("weird\"name\n", payload);
  ASSERT_TRUE(call);
  EXPECT_EQ(call->params_text(), payload);
  EXPECT_EQ(call->method(), "weird\"name\n");
  const std::string line = call->request_line(5);
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  const json::value v = json::parse(line);
  EXPECT_EQ(v.at("method"), json::value("weird\"name\n"));
  EXPECT_EQ(v.at("params"), json::parse(payload));
}

// What could not be a line is refused with the method's name, before it reaches any queue.
TEST(Outgoing, WhatCannotBeALineIsRefused) {
  const auto broken = Outgoing::request_text("test/echo", "{\"a\":\"\xff\"}");
  ASSERT_FALSE(broken);
  EXPECT_EQ(broken.error().code, proto::ErrorCode::internal);
  EXPECT_NE(broken.error().message.find("test/echo: "), std::string::npos);
  EXPECT_NE(broken.error().message.find("UTF-8"), std::string::npos);
  EXPECT_FALSE(Outgoing::request_text("test/echo", "{\"a\":\n1}"));
  proto::Fact fact = a_fact();
  fact.at = "\xc3";
  EXPECT_FALSE(Outgoing::notification<method::EventsFact>(fact));
}

// The last copy gives its line away to the one who sends it; while another copy exists, each
// send is a copy and the message stays whole.
TEST(Outgoing, TheLastCopyGivesItsLineAway) {
  auto call = Outgoing::request_value("test/echo", json::object{{"a", 1}});
  ASSERT_TRUE(call);
  const std::string expected = call->request_line(9);
  Outgoing kept = *call;
  EXPECT_EQ(call->line_to_send(9), expected);  // two copies: copied
  EXPECT_EQ(kept.params_text(), R"({"a":1})");
  call = Outgoing::request_value("x", std::nullopt);  // `kept` is the last copy now
  EXPECT_EQ(kept.line_to_send(9), expected);          // given away
  EXPECT_EQ(kept.params_text(), "");
  EXPECT_EQ(kept.method(), "test/echo");  // what it says stays

  proto::TimerParams t;
  t.timer = 3;
  auto fired = Outgoing::notification<method::TimerFired>(t);
  ASSERT_TRUE(fired);
  const std::string line = fired->notification_line();
  EXPECT_EQ(fired->line_to_send(), line);
  EXPECT_EQ(line, R"({"jsonrpc":"2.0","method":"timer/fired","params":{"timer":3}})"
                  "\n");
}

// A copy is the same message; another made from the same values is not.
TEST(Outgoing, ACopyIsTheSameMessage) {
  const auto a = Outgoing::request_text("agent/attach", R"({"agent":"a1"})");
  const auto b = Outgoing::request_text("agent/attach", R"({"agent":"a1"})");
  ASSERT_TRUE(a && b);
  const Outgoing copy = *a;
  EXPECT_TRUE(copy.same_as(*a));
  EXPECT_FALSE(b->same_as(*a));
  EXPECT_EQ(b->request_line(1), a->request_line(1));
}

}  // namespace
}  // namespace escouade::rpc
