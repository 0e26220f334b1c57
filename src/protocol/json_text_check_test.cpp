// checked_object_members against is_json_text (Boost.JSON's own parser) and object_members.

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <random>
#include <string>

#include "protocol/json_text.hpp"
#include "support/json_number_bound.hpp"

namespace escouade::proto {
namespace {

// What is_json_text and object_members say of `text`, taken together, for comparison.
std::optional<std::size_t> two_passes(std::string_view text, std::span<MemberText> out) {
  if (!is_json_text(text, 64)) return std::nullopt;
  return object_members(text, out);
}

// Each of `values` as the value of a member, and alone in an array, nested: the one-pass check
// says what Boost.JSON's parser says, and finds the same members.
void expect_same(std::string_view value) {
  for (const std::string& text :
       {"{\"k\":" + std::string(value) + "}", " {\"a\":[" + std::string(value) + "], \"b\":1} ",
        "{\"a\":{\"b\":" + std::string(value) + "}}"}) {
    std::array<MemberText, 4> one, two;
    const auto got = checked_object_members(text, 64, one);
    const auto want = two_passes(text, two);
    ASSERT_EQ(got, want) << text;
    for (std::size_t i = 0; got && i < *got; ++i) {
      EXPECT_EQ(one[i].key, two[i].key) << text;
      EXPECT_EQ(one[i].value, two[i].value) << text;
    }
  }
}

TEST(JsonTextCheck, TakesAndRefusesAsBoostJsonDoes) {
  for (std::string_view v : {
           // taken
           R"("")",
           R"("plain ascii text longer than eight bytes")",
           R"("\"\\\/\b\f\n\r\t")",
           R"("\u0000\u00e9\uFFFF")",
           R"("\ud83d\ude00")",
           "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"",
           "\"\x7f\"",
           "0",
           "-0",
           "7",
           "-12.5e-3",
           "1E5",
           "1e+5",
           "0.000001",
           "123456789012345678901234",
           "true",
           "false",
           "null",
           "[]",
           "{}",
           "[1,[2,[3]]]",
           R"({"a":{"b":[{}]}})",
           " [ 1 , 2 ] ",
           // refused
           "",
           "\"",
           R"("\x")",
           R"("\u12")",
           R"("\u12g4")",
           R"("\ud83d")",
           R"("\ud83dx")",
           R"("\ud83d\u0041")",
           R"("\ude00")",
           R"("\ude00\ud83d")",
           "\"a\x01\"",
           "\"\x1f\"",
           "\"\xff\"",
           "\"\xc3\"",
           "\"\xc0\x80\"",
           "\"\xc1\xbf\"",
           "\"\xe0\x80\x80\"",
           "\"\xed\xa0\x80\"",
           "\"\xf0\x80\x80\x80\"",
           "\"\xf4\x90\x80\x80\"",
           "\"\xf5\x80\x80\x80\"",
           "\"\x80\"",
           "\"\xe2\x82\"",
           "01",
           "-",
           "-a",
           "1.",
           ".5",
           "1e",
           "1e+",
           "+1",
           "0x1",
           "1.5.3",
           "NaN",
           "Infinity",
           "-Infinity",
           "tru",
           "nul",
           "truex",
           "[1,]",
           "[,1]",
           "{,}",
           R"({"a"})",
           R"({"a":})",
           R"({"a":1,})",
           "{a:1}",
           "'a'",
           "/* c */ 1",
           "[1 2]",
           "1 2",
       }) {
    expect_same(v);
  }
}

TEST(JsonTextCheck, EveryEscapeAndByteAtEachPlaceOfTheEightByteBlocks) {
  // The fast path reads strings 8 bytes at a time: each special byte at each offset.
  for (std::string_view special : {"\"", "\\\"", "\\n", "\\u00e9", "\x01", "\xc3\xa9", "\xff"}) {
    for (std::size_t at = 0; at < 17; ++at) {
      std::string s = "\"" + std::string(at, 'x') + std::string(special) + std::string(9, 'y');
      if (special != "\"") s += "\"";
      expect_same(s);
    }
  }
}

TEST(JsonTextCheck, DepthIsBoundAsBoostJsonBindsIt) {
  std::array<MemberText, 2> m;
  std::string deep = "{\"a\":" + std::string(63, '[') + std::string(63, ']') + "}";
  EXPECT_EQ(checked_object_members(deep, 64, m), 1u);
  EXPECT_TRUE(is_json_text(deep, 64));
  deep = "{\"a\":" + std::string(64, '[') + std::string(64, ']') + "}";
  EXPECT_EQ(checked_object_members(deep, 64, m), std::nullopt);
  EXPECT_FALSE(is_json_text(deep, 64));
  EXPECT_EQ(checked_object_members("{\"a\":" + std::string(100000, '['), 64, m), std::nullopt);
}

// Numbers it does not vouch for: refused here, so that the Decoder decides, whether Boost.JSON
// reads them as infinity (refused) or not.
TEST(JsonTextCheck, NumbersPast1e300AreLeftToTheDecoder) {
  std::array<MemberText, 2> m;
  for (std::string_view n : {"1e400", "-1e400", "1e300", "1e-301", "0.5e301"}) {
    EXPECT_EQ(checked_object_members("{\"n\":" + std::string(n) + "}", 64, m), std::nullopt) << n;
  }
  EXPECT_EQ(checked_object_members("{\"n\":" + std::string(301, '9') + "}", 64, m), std::nullopt);
  EXPECT_EQ(checked_object_members("{\"n\":0." + std::string(301, '1') + "}", 64, m), std::nullopt);
  EXPECT_FALSE(is_json_text("{\"n\":1e400}", 64));
  for (std::string_view n : {"1e299", "-1.5e-300", "9e200", "12345e295"}) {
    EXPECT_EQ(checked_object_members("{\"n\":" + std::string(n) + "}", 64, m), 1u) << n;
  }
  EXPECT_EQ(checked_object_members("{\"n\":" + std::string(300, '9') + "}", 64, m), 1u);
}

TEST(JsonTextCheck, AnObjectsMembersAndThoseOfOneOfItsObjectsInOnePass) {
  std::array<MemberText, 4> top, inner;
  const std::string_view text =
      R"( {"id":1,"params":{"id":"p","params":{"deep":[{"x":"}"}]},"n":2},"more":{"a":1}} )";
  const auto n = checked_object_members(text, 64, top, "params", inner);
  ASSERT_TRUE(n);
  ASSERT_EQ(n->outer, 3u);
  ASSERT_EQ(n->inner, 3u);
  EXPECT_EQ(top[0].key, "id");
  EXPECT_EQ(top[0].value, "1");
  EXPECT_EQ(top[1].value, R"({"id":"p","params":{"deep":[{"x":"}"}]},"n":2})");
  EXPECT_EQ(top[2].value, R"({"a":1})");
  EXPECT_EQ(inner[0].value, R"("p")");
  EXPECT_EQ(inner[1].key, "params");
  EXPECT_EQ(inner[1].value, R"({"deep":[{"x":"}"}]})");
  EXPECT_EQ(inner[2].value, "2");
  // The outer members are object_members' too.
  std::array<MemberText, 4> scanned;
  ASSERT_EQ(object_members(text, scanned), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(top[i].key, scanned[i].key);
    EXPECT_EQ(top[i].value, scanned[i].value);
  }
  // No such member, or one that is not an object: no inner members.
  EXPECT_EQ(checked_object_members(R"({"params":[1]})", 64, top, "params", inner)->inner,
            std::nullopt);
  EXPECT_EQ(checked_object_members(R"({"x":{}})", 64, top, "params", inner)->inner, std::nullopt);
  // Too many members, at either level: none at all.
  EXPECT_EQ(checked_object_members(R"({"a":1,"b":2,"c":3,"d":4,"e":5})", 64, top), std::nullopt);
  EXPECT_EQ(checked_object_members(R"({"params":{"a":1,"b":2,"c":3,"d":4,"e":5}})", 64, top,
                                   "params", inner),
            std::nullopt);
  // Not an object at the top, or broken text (each a copy of its size, for AddressSanitizer).
  EXPECT_EQ(checked_object_members("[1]", 64, top), std::nullopt);
  EXPECT_EQ(checked_object_members(R"("{}")", 64, top), std::nullopt);
  for (std::string_view broken :
       {R"({"params":{)", R"({"params":{"a")", R"({"params":{"a":1})", R"({"params":{"a":1}})"}) {
    const std::string copy(broken);
    const auto got = checked_object_members(copy, 64, top, "params", inner);
    EXPECT_EQ(got.has_value(), broken == R"({"params":{"a":1}})") << broken;
  }
}

// Lines a plugin or an app could send, mutated byte by byte (a fixed seed): whatever it takes,
// Boost.JSON takes, with the same members; what it refuses that Boost.JSON takes holds a number
// it does not vouch for. AddressSanitizer watches the reads: each text is a copy of its size.
TEST(JsonTextCheck, MutatedLinesNeverTakenWhereBoostJsonRefuses) {
  const std::string seeds[] = {
      R"({"jsonrpc":"2.0","id":12,"result":{"decision":"deny","message":"no \u00e9 \"x\""}})",
      R"({"jsonrpc":"2.0","id":3,"method":"host/call","params":{"id":"dev.a","method":"test/echo","params":{"n":[1,2.5e3,-0,true,null],"s":"h\u00e9llo \ud83d\ude00"}}})",
      "{\"a\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 plain text of some "
      "length\",\"b\":[{},[],\"\"]}",
  };
  const char alphabet[] =
      "{}[]\":,\\u0123456789abcdefABCDEF.eE+-tnrl \t\r\n\x01\x7f\x80\xbf\xc3\xed\xf0\xff";
  std::mt19937 rng(12345);
  int taken = 0, refused = 0;
  for (const std::string& seed : seeds) {
    for (int round = 0; round < 4000; ++round) {
      std::string text = seed;
      const int edits = 1 + static_cast<int>(rng() % 3);
      for (int e = 0; e < edits; ++e) {
        const std::size_t at = rng() % text.size();
        const char c = alphabet[rng() % (sizeof alphabet - 1)];
        switch (rng() % 3) {
          case 0:
            text[at] = c;
            break;
          case 1:
            text.insert(text.begin() + static_cast<std::ptrdiff_t>(at), c);
            break;
          default:
            text.erase(at, 1);
            break;
        }
        if (text.empty()) text = "{";
      }
      std::array<MemberText, 16> one, two;
      const auto got = checked_object_members(text, 64, one);
      const auto want = two_passes(text, two);
      if (got) {
        ++taken;
        ASSERT_EQ(got, want) << text;
        for (std::size_t i = 0; i < *got; ++i) {
          ASSERT_EQ(one[i].key, two[i].key) << text;
          ASSERT_EQ(one[i].value, two[i].value) << text;
        }
      } else {
        ++refused;
        if (want && !escouade::testing::may_hold_a_number_past_1e300(text)) {
          ADD_FAILURE() << "refused what Boost.JSON takes: " << text;
        }
      }
    }
  }
  EXPECT_GT(taken, 100);  // the mutations leave enough lines whole to compare members
  EXPECT_GT(refused, 100);
}

}  // namespace
}  // namespace escouade::proto
