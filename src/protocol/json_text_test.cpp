#include "protocol/json_text.hpp"

#include <gtest/gtest.h>

#include <array>
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>
#include <string>

#include "protocol/decode.hpp"

namespace escouade::proto {
namespace {

namespace json = boost::json;

// What the Decoder says of the same text, as a whole line: JSON it takes or not.
bool decoder_takes(std::string_view text) {
  const Parsed p = Decoder().decode(text);
  if (p.entries.size() != 1 || p.batch) return true;  // a batch: it was JSON
  const auto* i = std::get_if<Invalid>(&p.entries[0]);
  return !i || i->code != -32700;
}

TEST(JsonText, TakesWhatTheDecoderTakes) {
  for (std::string_view text : {
           R"({})",
           R"([])",
           R"("x")",
           R"(1)",
           R"(-0.5e3)",
           R"(null)",
           R"(true)",
           R"( {"a" : [1, 2, {"b": "c\"}"}] } )",
           R"({"k":"\u00e9\ud83d\ude00"})",
           "{\"a\":\t\r1}",
           R"({"a":1,"a":2})",
           R"([[[[[[[[[[1]]]]]]]]]])",
       }) {
    EXPECT_TRUE(is_json_text(text, 64)) << text;
    EXPECT_TRUE(decoder_takes(text)) << text;
  }
}

TEST(JsonText, RefusesWhatTheDecoderRefuses) {
  for (std::string_view text : {
           "",
           " ",
           "{",
           "}",
           R"({"a":})",
           R"({"a":1,})",
           R"([1,])",
           R"({} {})",
           R"({}x)",
           R"({"a":1}])",
           R"('a')",
           R"({a:1})",
           R"(01)",
           R"(1.)",
           R"(.5)",
           R"(NaN)",
           R"(Infinity)",
           R"(1e400)",
           R"(-1e400)",
           R"({"a":[1e999]})",
           R"(/* c */ 1)",
           R"("\x")",
           R"("\u12")",
           "\"a\x01\"",
           "\"\xff\"",
           "\"\xc3\"",
           "\"\xed\xa0\x80\"",
           R"(tru)",
           R"(nul)",
       }) {
    EXPECT_FALSE(is_json_text(text, 64)) << text;
    EXPECT_FALSE(decoder_takes(text)) << text;
  }
}

// The one line the two see differently: a number too large for a double, hidden from the
// decoder by a later member of the same name (its DOM keeps the last). The text is refused, and
// the line goes the decoder's way.
TEST(JsonText, ANumberTooLargeIsRefusedEvenWhereTheDecoderDropsIt) {
  const std::string_view text = R"({"jsonrpc":"2.0","id":2,"result":-1e400,"result":0})";
  EXPECT_FALSE(is_json_text(text, 64));
  EXPECT_TRUE(decoder_takes(text));
}

TEST(JsonText, DepthIsBoundAsTheDecoders) {
  std::string deep(64, '[');
  deep += std::string(64, ']');
  EXPECT_TRUE(is_json_text(deep, 64));
  EXPECT_TRUE(decoder_takes(deep));
  const std::string deeper = "[" + deep + "]";
  EXPECT_FALSE(is_json_text(deeper, 64));
  EXPECT_FALSE(decoder_takes(deeper));
  EXPECT_FALSE(is_json_text(std::string(100000, '['), 64));
}

TEST(JsonText, MembersAsWritten) {
  std::array<MemberText, 8> m;
  const std::string_view text =
      R"( { "jsonrpc" : "2.0", "id":7,"result" : {"a":[1,"]}",{"b":null}]} ,"x\"y":"}" } )";
  ASSERT_TRUE(is_json_text(text, 64));
  const auto n = object_members(text, m);
  ASSERT_EQ(n, 4u);
  EXPECT_EQ(m[0].key, "jsonrpc");
  EXPECT_EQ(m[0].value, R"("2.0")");
  EXPECT_EQ(m[1].key, "id");
  EXPECT_EQ(m[1].value, "7");
  EXPECT_EQ(m[2].key, "result");
  EXPECT_EQ(m[2].value, R"({"a":[1,"]}",{"b":null}]})");
  EXPECT_EQ(json::parse(m[2].value), json::parse(R"({"a":[1,"]}",{"b":null}]})"));
  EXPECT_EQ(m[3].key, R"(x\"y)");
  EXPECT_EQ(m[3].value, R"("}")");
  const std::span<const MemberText> found(m.data(), *n);
  EXPECT_EQ(member(found, "result"), m[2].value);
  EXPECT_EQ(member(found, "error"), std::nullopt);
  EXPECT_TRUE(has_escaped_key(found));  // x\"y
  EXPECT_FALSE(has_escaped_key(found.first(3)));
}

TEST(JsonText, AnEmptyObjectHasNoMembers) {
  std::array<MemberText, 2> m;
  EXPECT_EQ(object_members(" { } ", m), 0u);
}

TEST(JsonText, NotAnObjectOrTooManyMembersIsNone) {
  std::array<MemberText, 2> m;
  EXPECT_EQ(object_members(R"([1,2])", m), std::nullopt);
  EXPECT_EQ(object_members(R"("{}")", m), std::nullopt);
  EXPECT_EQ(object_members(R"({"a":1,"b":2,"c":3})", m), std::nullopt);
  EXPECT_EQ(object_members(R"({"a":1,"b":2})", m), 2u);
}

TEST(JsonText, AKeyGivenTwiceIsLeftToTheDecoder) {
  std::array<MemberText, 4> m;
  const auto n = object_members(R"({"result":1,"result":2})", m);
  ASSERT_EQ(n, 2u);
  EXPECT_EQ(member(std::span<const MemberText>(m.data(), *n), "result"), std::nullopt);
}

// Text that is not JSON: the scan stays inside it whatever it holds (AddressSanitizer watches
// each case: the text is a copy of exactly its size).
TEST(JsonText, MembersOfBrokenTextStayInside) {
  std::array<MemberText, 4> m;
  for (std::string_view text : {
           "{",         "{\"",         "{\"a",        "{\"a\"",     "{\"a\":",
           "{\"a\":\"", "{\"a\":\"\\", "{\"a\":{",    "{\"a\":[[[", "{\"a\":1",
           "{\"a\":1,", "{\"a\":1,\"", "{\"a\":}}}}", "{\"\\\"}",   "{\"a\":\"x\\\"}",
           "{\"a\" 1}", "{\"a\":1 2}", "{1:2}",       "{\"a\":]}",  "{\"a\":1,}",
       }) {
    const std::string copy(text);
    (void)object_members(copy, m);
  }
  EXPECT_EQ(object_members("{\"a\":1", m), std::nullopt);
  EXPECT_EQ(object_members("{\"a\":\"\\", m), std::nullopt);
  EXPECT_EQ(object_members("{\"a\":[[[", m), std::nullopt);
}

TEST(JsonText, CheckedTextIsBuiltInTheStorageGiven) {
  alignas(std::max_align_t) unsigned char scratch[512];
  json::monotonic_resource arena(scratch, sizeof scratch);
  const std::string_view text = R"({"decision":"deny","message":"no \u00e9 \"x\"","n":[1,2.5]})";
  const json::value v = parse_checked(text, json::storage_ptr(&arena));
  EXPECT_EQ(v, json::parse(text));
  EXPECT_EQ(v.at("message"), json::value("no \u00e9 \"x\""));
  EXPECT_EQ(v.storage().get(), &arena);  // built there, not copied out
  EXPECT_TRUE(parse_checked("{", json::storage_ptr(&arena)).is_null());
}

TEST(JsonText, IntegersWrittenPlainly) {
  EXPECT_EQ(integer_text("0"), 0);
  EXPECT_EQ(integer_text("7"), 7);
  EXPECT_EQ(integer_text("-12"), -12);
  EXPECT_EQ(integer_text("9223372036854775807"), INT64_MAX);
  EXPECT_EQ(integer_text("-9223372036854775808"), INT64_MIN);
  for (std::string_view not_one : {"", "-", "-0", "01", "1.0", "1e2", "9223372036854775808",
                                   "\"1\"", "1 ", "+1", "null", "0x1"}) {
    EXPECT_EQ(integer_text(not_one), std::nullopt) << not_one;
  }
}

}  // namespace
}  // namespace escouade::proto
