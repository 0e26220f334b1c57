#include "protocol/decode.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <string>

namespace escouade::proto {
namespace {

namespace json = boost::json;

Parsed decode(std::string_view line) {
  return Decoder().decode(line);
}

Message only_message(const Parsed& p) {
  EXPECT_FALSE(p.batch);
  EXPECT_EQ(p.entries.size(), 1u);
  const auto* m = std::get_if<Message>(&p.entries.at(0));
  if (!m)
    ADD_FAILURE() << "expected a valid message, got: " << std::get<Invalid>(p.entries[0]).reason;
  static const Message kNone;
  return m ? *m : kNone;
}

Invalid only_invalid(const Parsed& p) {
  EXPECT_FALSE(p.batch);
  EXPECT_EQ(p.entries.size(), 1u);
  const auto* i = std::get_if<Invalid>(&p.entries.at(0));
  if (!i) ADD_FAILURE() << "expected an invalid entry";
  static const Invalid kNone;
  return i ? *i : kNone;
}

TEST(Decode, Request) {
  auto p = decode(R"({"jsonrpc":"2.0","id":7,"method":"echo","params":{"a":1}})");
  const Message m = only_message(p);
  EXPECT_EQ(m.kind, MessageKind::request);
  EXPECT_EQ(m.id, json::value(7));
  EXPECT_EQ(m.method, "echo");
  ASSERT_TRUE(m.params);
  EXPECT_EQ(*m.params, json::parse(R"({"a":1})"));
}

TEST(Decode, AMessageKeepsItsLineMemoryInsteadOfCopyingIt) {
  // The values of a message stay in the arena of their line (adopt); a copy goes where it is
  // told to (json::value's copy constructor would keep the arena too).
  Decoder d;
  Parsed p = d.decode(R"({"jsonrpc":"2.0","id":1,"result":{"a":[1,"two",{"b":null}]}})");
  auto* m = std::get_if<Message>(&p.entries.at(0));
  ASSERT_NE(m, nullptr);
  EXPECT_FALSE(m->result.storage() == json::storage_ptr());
  EXPECT_EQ(m->result, json::parse(R"({"a":[1,"two",{"b":null}]})"));
  json::value kept(m->result, json::storage_ptr());  // a copy in the default memory
  EXPECT_TRUE(kept.storage() == json::storage_ptr());
  json::value taken;
  adopt(taken, std::move(m->result));
  EXPECT_FALSE(taken.storage() == json::storage_ptr());
  p = Parsed{};  // the decoder's own reference and the message are gone: the arena lives on
  EXPECT_EQ(taken, kept);
}

TEST(Decode, IdKeepsItsType) {
  EXPECT_TRUE(only_message(decode(R"({"jsonrpc":"2.0","id":"7","method":"m"})")).id.is_string());
  EXPECT_TRUE(only_message(decode(R"({"jsonrpc":"2.0","id":7,"method":"m"})")).id.is_int64());
  EXPECT_TRUE(only_message(decode(R"({"jsonrpc":"2.0","id":7.5,"method":"m"})")).id.is_double());
  const Message null_id = only_message(decode(R"({"jsonrpc":"2.0","id":null,"method":"m"})"));
  EXPECT_EQ(null_id.kind, MessageKind::request);  // a null id is a request still, if discouraged
  EXPECT_TRUE(null_id.id.is_null());
}

TEST(Decode, Notification) {
  const Message m = only_message(decode(R"({"jsonrpc":"2.0","method":"log","params":[1,2]})"));
  EXPECT_EQ(m.kind, MessageKind::notification);
  ASSERT_TRUE(m.params);
  EXPECT_TRUE(m.params->is_array());
}

TEST(Decode, ParamsMayBeLeftOutOrNull) {
  EXPECT_FALSE(only_message(decode(R"({"jsonrpc":"2.0","id":1,"method":"shutdown"})")).params);
  EXPECT_FALSE(
      only_message(decode(R"({"jsonrpc":"2.0","id":1,"method":"shutdown","params":null})")).params);
}

TEST(Decode, ResponseAndErrorResponse) {
  const Message r = only_message(decode(R"({"jsonrpc":"2.0","id":"x","result":null})"));
  EXPECT_EQ(r.kind, MessageKind::response);
  EXPECT_TRUE(r.result.is_null());
  const Message e = only_message(decode(
      R"({"jsonrpc":"2.0","id":3,"error":{"code":-32001,"message":"not yours","data":{"k":1}}})"));
  EXPECT_EQ(e.kind, MessageKind::error_response);
  EXPECT_EQ(e.error.code, -32001);
  EXPECT_EQ(e.error.message, "not yours");
  ASSERT_TRUE(e.error.data);
  EXPECT_EQ(*e.error.data, json::parse(R"({"k":1})"));
}

TEST(Decode, UnknownMembersAreIgnored) {
  const Message m = only_message(decode(R"({"jsonrpc":"2.0","id":1,"method":"m","x-trace":"t"})"));
  EXPECT_EQ(m.method, "m");
}

TEST(Decode, ParseErrorHasNullId) {
  for (const char* line : {"{", "not json", R"({"jsonrpc":"2.0",})", "{} {}", "\"unterminated",
                           "{\"a\":\"\xC3\"}", "\xFF\xFE"}) {
    const Invalid i = only_invalid(decode(line));
    EXPECT_EQ(i.code, -32700) << line;
    EXPECT_TRUE(i.id.is_null()) << line;
    EXPECT_TRUE(i.answer_due) << line;
  }
}

TEST(Decode, DepthPastTheLimitIsAParseError) {
  std::string deep(100, '[');
  deep += std::string(100, ']');
  EXPECT_EQ(only_invalid(decode(deep)).code, -32700);
  Decoder shallow(DecodeOptions{4});
  EXPECT_EQ(only_invalid(shallow.decode(R"({"a":{"b":{"c":{"d":{}}}}})")).code, -32700);
}

TEST(Decode, NumberPastWhatADoubleHoldsIsAParseError) {
  // It would come back out as "Infinity", which is not JSON.
  for (const char* line :
       {R"({"jsonrpc":"2.0","id":1e400,"method":"m"})", R"(["x",{"jsonrpc":"2.0","id":-1e400}])",
        R"({"jsonrpc":"2.0","method":"timer/set","params":{"ms":1e999}})",
        R"({"jsonrpc":"2.0","method":"m","params":[[{"x":[1,"s",null,{},-1e400]}]]})",
        R"({"jsonrpc":"2.0","method":"m","params":{"a":[],"b":{"c":[0.5,[2e308]]}}})"}) {
    const Invalid i = only_invalid(decode(line));
    EXPECT_EQ(i.code, -32700) << line;
    EXPECT_TRUE(i.id.is_null()) << line;
  }
  // Large but finite numbers are fine.
  EXPECT_EQ(only_message(decode(R"({"jsonrpc":"2.0","id":1e300,"method":"m"})")).id,
            json::value(1e300));
  EXPECT_TRUE(
      only_message(decode(R"({"jsonrpc":"2.0","method":"m","params":[[{"x":[1.7e308,-1e-400]}]]})"))
          .params);
}

TEST(Decode, NotAnObjectNorAnArrayIsInvalidRequest) {
  for (const char* line : {"1", "\"text\"", "null", "true"}) {
    const Invalid i = only_invalid(decode(line));
    EXPECT_EQ(i.code, -32600) << line;
    EXPECT_TRUE(i.id.is_null());
  }
}

TEST(Decode, EmptyBatchIsOneInvalidRequest) {
  const Invalid i = only_invalid(decode("[]"));
  EXPECT_EQ(i.code, -32600);
  EXPECT_TRUE(i.answer_due);
}

struct InvalidCase {
  const char* line;
  bool id_kept;  // the answer carries the message's id
  bool answer_due;
};

TEST(Decode, InvalidRequests) {
  const InvalidCase cases[] = {
      {R"({"id":1,"method":"m"})", true, true},                  // no jsonrpc
      {R"({"jsonrpc":"1.0","id":1,"method":"m"})", true, true},  // wrong version
      {R"({"jsonrpc":2.0,"id":1,"method":"m"})", true, true},    // version not a string
      {R"({"jsonrpc":"2.0","id":1,"method":5})", true, true},    // method not a string
      {R"({"jsonrpc":"2.0","id":1,"method":"m","params":5})", true, true},
      {R"({"jsonrpc":"2.0","id":1,"method":"m","params":"s"})", true, true},
      {R"({"jsonrpc":"2.0","id":1,"method":"m","params":true})", true, true},
      {R"({"jsonrpc":"2.0","id":{},"method":"m"})", false, true},    // id an object
      {R"({"jsonrpc":"2.0","id":[1],"method":"m"})", false, true},   // id an array
      {R"({"jsonrpc":"2.0","id":true,"method":"m"})", false, true},  // id a boolean
      {R"({"jsonrpc":"2.0","id":1})", true, true},                   // neither call nor answer
      {R"({"jsonrpc":"2.0","id":1,"method":"m","result":1})", true, true},
      {R"({"jsonrpc":"2.0","method":1,"params":"bar"})", false, true},  // the spec's example
      // Shaped as answers: refused, never answered.
      {R"({"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}})", true, false},
      {R"({"jsonrpc":"2.0","result":1})", false, false},  // answer without id
      {R"({"jsonrpc":"2.0","id":1,"error":"bad"})", true, false},
      {R"({"jsonrpc":"2.0","id":1,"error":{"message":"m"}})", true, false},
      {R"({"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}})", true, false},
      {R"({"jsonrpc":"2.0","id":1,"error":{"code":"1","message":"m"}})", true, false},
      {R"({"jsonrpc":"2.0","id":1,"error":{"code":99999999999,"message":"m"}})", true, false},
      {R"({"jsonrpc":"2.0","id":1,"error":{"code":1}})", true, false},
      {R"({"jsonrpc":"2.0","id":1,"error":{"code":1,"message":7}})", true, false},
      {R"({"id":1,"result":1})", true, false},
  };
  for (const auto& c : cases) {
    const Invalid i = only_invalid(decode(c.line));
    EXPECT_EQ(i.code, -32600) << c.line;
    EXPECT_FALSE(i.reason.empty()) << c.line;
    EXPECT_EQ(i.answer_due, c.answer_due) << c.line;
    if (c.id_kept) {
      EXPECT_EQ(i.id, json::value(1)) << c.line;
    } else {
      EXPECT_TRUE(i.id.is_null()) << c.line;
    }
  }
}

TEST(Decode, BatchKeepsOrderAndFlagsEachInvalidElement) {
  auto p = decode(R"([{"jsonrpc":"2.0","id":1,"method":"a"},1,{"jsonrpc":"2.0","method":"n"},)"
                  R"({"foo":"boo"},{"jsonrpc":"2.0","id":"2","result":4}])");
  ASSERT_TRUE(p.batch);
  ASSERT_EQ(p.entries.size(), 5u);
  EXPECT_EQ(std::get<Message>(p.entries[0]).method, "a");
  EXPECT_EQ(std::get<Invalid>(p.entries[1]).code, -32600);
  EXPECT_EQ(std::get<Message>(p.entries[2]).kind, MessageKind::notification);
  EXPECT_EQ(std::get<Invalid>(p.entries[3]).code, -32600);
  EXPECT_EQ(std::get<Message>(p.entries[4]).kind, MessageKind::response);
}

TEST(Decode, ABatchOfMoreThanItsBoundIsRefusedWhole) {
  auto line = [](std::size_t n) {
    std::string s = "[1";
    for (std::size_t i = 1; i < n; ++i)
      s += ",1";
    return s + "]";
  };
  const DecodeOptions options;
  auto at_bound = decode(line(options.max_batch));
  EXPECT_TRUE(at_bound.batch);
  EXPECT_EQ(at_bound.entries.size(), options.max_batch);

  auto past = decode(line(options.max_batch + 1));
  EXPECT_FALSE(past.batch);
  const Invalid& whole = only_invalid(past);
  EXPECT_EQ(whole.code, -32600);
  EXPECT_TRUE(whole.answer_due);
  EXPECT_TRUE(whole.id.is_null());
  EXPECT_EQ(whole.reason, "a batch of 1001 messages, more than the 1000 one may hold");

  Decoder small(DecodeOptions{.max_batch = 2});
  EXPECT_EQ(only_invalid(small.decode(R"([{"jsonrpc":"2.0","method":"a"},1,2])")).reason,
            "a batch of 3 messages, more than the 2 one may hold");
}

TEST(Decode, NestedBatchElementIsInvalid) {
  auto p = decode(R"([[{"jsonrpc":"2.0","method":"n"}]])");
  ASSERT_TRUE(p.batch);
  ASSERT_EQ(p.entries.size(), 1u);
  EXPECT_EQ(std::get<Invalid>(p.entries[0]).code, -32600);
}

TEST(Decode, DecoderIsReusableAfterAnError) {
  Decoder d;
  EXPECT_EQ(only_invalid(d.decode("{oops")).code, -32700);
  EXPECT_EQ(only_message(d.decode(R"({"jsonrpc":"2.0","method":"ok"})")).method, "ok");
}

TEST(Decode, Utf8InStringsSurvives) {
  const Message& m = only_message(
      decode("{\"jsonrpc\":\"2.0\",\"method\":\"log\",\"params\":{\"m\":\"\xE2\x80\xA2\"}}"));
  EXPECT_EQ(m.params->at("m").as_string(), "\xE2\x80\xA2");
  // A lone surrogate written as an escape is not text.
  EXPECT_EQ(
      only_invalid(decode(R"({"jsonrpc":"2.0","method":"log","params":{"m":"\ud800"}})")).code,
      -32700);
}

}  // namespace
}  // namespace escouade::proto
