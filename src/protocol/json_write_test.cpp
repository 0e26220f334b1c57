// write_json against its reference: every generated type written as text must give the bytes of
// json::serialize(json::value_from(x)), whatever its members hold.

#include "protocol/json_write.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <random>
#include <string>

#include "protocol/encode.hpp"
#include "protocol/gen/errors.hpp"
#include "protocol/gen/host_types.hpp"
#include "protocol/gen/types.hpp"

namespace escouade::proto {
namespace {

namespace json = boost::json;

template <class T>
std::string written(const T& x) {
  std::string out;
  write_json(out, x);
  return out;
}

// Read from `doc`, then written both ways.
template <class T>
void expect_same_bytes(std::string_view doc) {
  T x;
  ReadContext ctx;
  ASSERT_TRUE(read_value(json::parse(doc), x, ctx)) << doc << ": " << ctx.message("doc");
  EXPECT_EQ(written(x), json::serialize(json::value_from(x))) << doc;
}

TEST(WriteJson, EveryKindOfMemberAsValueFromWritesIt) {
  // Nested structs, optional ones present and absent, a free-form object.
  expect_same_bytes<DecideParams>(
      R"({"request":{"id":"r1","kind":"command","tool":"Bash","input":{"command":"rm -rf /",)"
      R"("n":[1,2.5,null,true,{"x":"y"}]}},"project":{"id":"p","name":"P","private":true},)"
      R"("ticket":{"id":"t","key":"K-1","title":"a \"quoted\" title"},"agent":{"id":"a","name":"Ada"}})");
  expect_same_bytes<DecideParams>(
      R"({"request":{"id":"","kind":"k"},"project":{"id":"p","name":"","private":false}})");
  // Unknown members kept and written last; an enum; 64-bit integers at both ends.
  expect_same_bytes<Fact>(
      R"({"name":"agent.status","version":9223372036854775807,"seq":-9223372036854775807,)"
      R"("at":"2026-11-29T10:00:00Z","data":{},"zz":1,"aa":{"b":[]}})");
  // A nullable member that is required: null, or a number.
  expect_same_bytes<ProcExitParams>(R"({"proc":3,"code":null})");
  expect_same_bytes<ProcExitParams>(R"({"proc":3,"code":-1})");
  // Maps of strings, present, empty and absent.
  expect_same_bytes<NetFetchParams>(
      R"({"url":"https://a.test/x?y=1","method":"POST","headers":{"b":"2","a":"1\n","":""},)"
      R"("body":"{}"})");
  expect_same_bytes<NetFetchParams>(R"({"url":"https://a.test/","headers":{}})");
  expect_same_bytes<NetFetchParams>(R"({"url":"https://a.test/"})");
  expect_same_bytes<NetFetchResult>(R"({"status":200,"headers":{"x":"y"},"body":"\u0000"})");
  // Doubles as Boost.JSON formats them.
  for (const char* ms : {"0", "1.5", "1E300", "-0.0", "12345678.9", "3.0000000000000004", "1e-7"}) {
    expect_same_bytes<TimerSetParams>(std::string(R"({"ms":)") + ms + "}");
  }
  // Arrays of structs with enums, of strings; optional booleans and integers.
  expect_same_bytes<FsListResult>(
      R"({"entries":[{"name":"a","kind":"file","bytes":3},{"name":"b","kind":"dir","bytes":0}],)"
      R"("truncated":false})");
  expect_same_bytes<FsListResult>(R"({"entries":[],"truncated":true})");
  expect_same_bytes<ProcSpawnParams>(
      R"({"command":"git","args":["log","--oneline",""],"dir":"project","env":{"HOME":"/h"}})");
  expect_same_bytes<EscouadeCapabilities>(R"({"batch":true,"secrets":false})");
  expect_same_bytes<EscouadeCapabilities>(R"({})");
  // Optional members before a required one and after it: what precedes each is known only
  // once a member that is always written went before.
  expect_same_bytes<FsWriteParams>(R"({"path":"p"})");
  expect_same_bytes<FsWriteParams>(R"({"path":"p","append":true})");
  expect_same_bytes<FsWriteParams>(R"({"agent":"a","path":"p","text":"t","append":false})");
  expect_same_bytes<FsReadResult>(R"({})");
  expect_same_bytes<FsReadResult>(R"({"dataBase64":"AA=="})");
  expect_same_bytes<FsStatResult>(R"({"kind":"file","bytes":1,"modified":1700000000000})");
  // The host protocol's: a member of the plugin protocol's types, a variant, an array of
  // structs, a free-form value.
  expect_same_bytes<host::PublishParams>(
      R"({"fact":{"name":"agent.status","version":1,"seq":2,"at":"t","data":{"s":"x"},"more":0}})");
  expect_same_bytes<host::DisableParams>(R"({"id":"a.b","project":"all"})");
  expect_same_bytes<host::DisableParams>(
      R"({"id":"a.b","project":{"id":"p","name":"n","private":false,"folder":"/r"}})");
  expect_same_bytes<host::HostDecision>(
      R"({"decision":"deny","message":"no","by":[{"id":"a","decision":"deny","message":"m"},)"
      R"({"id":"b","decision":"timeout","reason":"it did not answer within 500 ms"}]})");
  expect_same_bytes<host::CallParams>(
      R"({"id":"a","method":"x/y","params":[1,"2"],"timeoutMs":5})");
  expect_same_bytes<host::CallParams>(R"({"id":"a","method":"x/y","params":null})");
}

TEST(WriteJson, ResultsOfMethodsThatAreNotStructs) {
  const std::map<std::string, Scalar> settings{{"a", std::string("x\"")}, {"b", 2.5}, {"c", true}};
  EXPECT_EQ(written(settings), json::serialize(json::value_from(settings)));
  EXPECT_EQ(written(std::map<std::string, Scalar>{}), "{}");
  EXPECT_EQ(written(nullptr), "null");
  EXPECT_EQ(written(std::vector<std::string>{"a", "\x01"}), R"(["a","\u0001"])");
}

// Bytes from which the random strings below are made: every class the serializer treats apart
// (plain, quote, backslash, control characters, DEL, UTF-8 of 2, 3 and 4 bytes, bytes that are
// not UTF-8).
constexpr std::string_view kPalette[] = {
    "a",    "Z",    "0",           " ",        "\"",           "\\",
    "/",    "\n",   "\r",          "\t",       "\b",           "\f",
    "\x01", "\x1f", "\x7f",        "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
    "\xff", "\xc0", "\xed\xa0\x80"};

std::string random_text(std::mt19937& rng) {
  std::string s;
  const int n = std::uniform_int_distribution<int>(0, 40)(rng);
  for (int i = 0; i < n; ++i) {
    s += kPalette[std::uniform_int_distribution<std::size_t>(0, std::size(kPalette) - 1)(rng)];
  }
  return s;
}

TEST(WriteJson, StringsAreEscapedAsTheSerializerEscapesThem) {
  for (int b = 0; b < 256; ++b) {
    const std::string one(1, static_cast<char>(b));
    for (const std::string& s : {one, "ab" + one + "cd", one + one}) {
      EXPECT_EQ(written(std::string_view(s)), json::serialize(json::string(s))) << "byte " << b;
    }
  }
  std::mt19937 rng(12);
  for (int i = 0; i < 2000; ++i) {
    const std::string s = random_text(rng);
    EXPECT_EQ(written(std::string_view(s)), json::serialize(json::string(s)));
  }
}

// Whether a string needs escaping is read a byte, eight or sixteen bytes at a time by its size,
// the last block overlapping the one before: one byte of each class the serializer treats apart
// at every place of clean strings of 1 to 48 bytes.
TEST(WriteJson, AnEscapeAnywhereInAShortStringIsFound) {
  const unsigned char bytes[] = {0x00, 0x01, 0x08, 0x0a, 0x1f, '"',
                                 '\\', ' ',  '/',  0x7f, 0x80, 0xff};
  for (std::size_t size = 1; size <= 48; ++size) {
    for (std::size_t at = 0; at < size; ++at) {
      for (unsigned char b : bytes) {
        std::string s(size, 'x');
        s[at] = static_cast<char>(b);
        ASSERT_EQ(written(std::string_view(s)), json::serialize(json::string(s)))
            << "byte " << int{b} << " at " << at << " of " << size;
      }
    }
  }
}

// Long strings are written straight into the output (kLongString, 512 bytes): each byte at the
// start, in the middle and at the end of one, escapes close together and far apart, and every
// size around the words the clean runs are read by.
TEST(WriteJson, LongStringsAreEscapedAsTheSerializerEscapesThem) {
  const std::string filler(700, 'x');
  for (int b = 0; b < 256; ++b) {
    const std::string one(1, static_cast<char>(b));
    for (const std::string& s : {one + filler, filler + one, filler + one + filler + one + one,
                                 std::string(600, static_cast<char>(b))}) {
      EXPECT_EQ(written(std::string_view(s)), json::serialize(json::string(s))) << "byte " << b;
    }
  }
  std::mt19937 rng(32);
  for (int i = 0; i < 300; ++i) {
    std::string s;
    const int size = std::uniform_int_distribution<int>(500, 4000)(rng);
    const int every = std::uniform_int_distribution<int>(1, 80)(rng);  // one byte in `every`
    while (static_cast<int>(s.size()) < size) {
      if (std::uniform_int_distribution<int>(1, every)(rng) == 1)
        s += static_cast<char>(std::uniform_int_distribution<int>(0, 255)(rng));
      else
        s += static_cast<char>(std::uniform_int_distribution<int>('a', 'z')(rng));
    }
    EXPECT_EQ(written(std::string_view(s)), json::serialize(json::string(s))) << "case " << i;
  }
  // Inside a message: what comes before and after the long string stays in its place.
  const std::string text = "line 1: \"a\"\tb\n" + filler + "\x01\xc3\xa9";
  json::object o{{"a", 1}, {"text", text}, {"z", "end"}};
  EXPECT_EQ(written(json::value(o)), json::serialize(o));
}

json::value random_value(std::mt19937& rng, int depth) {
  const int kind = std::uniform_int_distribution<int>(0, depth > 6 ? 6 : 8)(rng);
  switch (kind) {
    case 0:
      return nullptr;
    case 1:
      return std::uniform_int_distribution<int>(0, 1)(rng) == 1;
    case 2:
      return std::uniform_int_distribution<std::int64_t>(INT64_MIN, INT64_MAX)(rng);
    case 3:
      return std::uniform_int_distribution<std::uint64_t>(0, UINT64_MAX)(rng);
    case 4:
      return std::uniform_real_distribution<double>(-1e300, 1e300)(rng);
    case 5:
    case 6:
      return json::string(random_text(rng));
    case 7: {
      json::array a;
      const int n = std::uniform_int_distribution<int>(0, 5)(rng);
      for (int i = 0; i < n; ++i)
        a.push_back(random_value(rng, depth + 1));
      return a;
    }
    default: {
      json::object o;
      const int n = std::uniform_int_distribution<int>(0, 5)(rng);
      for (int i = 0; i < n; ++i)
        o[random_text(rng)] = random_value(rng, depth + 1);
      return o;
    }
  }
}

TEST(WriteJson, ValuesAsTheSerializerWritesThem) {
  std::mt19937 rng(3);
  for (int i = 0; i < 3000; ++i) {
    const json::value v = random_value(rng, 0);
    ASSERT_EQ(written(v), json::serialize(v));
    if (v.is_object()) {
      ASSERT_EQ(written(v.get_object()), json::serialize(v));
    }
  }
  for (const json::value& v :
       {json::value(INT64_MIN), json::value(UINT64_MAX), json::value(-0.0), json::value(1e-300),
        json::value(json::array{}), json::value(json::object{}), json::value(json::string{})}) {
    EXPECT_EQ(written(v), json::serialize(v));
  }
  // Nested far deeper than a parsed line may be (a value built in code), both kinds.
  for (int n : {63, 64, 65, 200, 5000}) {
    json::value deep = json::array{1};
    for (int i = 0; i < n; ++i) {
      if (i % 2) {
        json::array a;
        a.push_back(std::move(deep));
        a.push_back("a\n");
        deep = std::move(a);
      } else {
        json::object o;
        o["k\""] = std::move(deep);
        deep = std::move(o);
      }
    }
    ASSERT_EQ(written(deep), json::serialize(deep)) << n;
  }
}

TEST(WriteJson, RandomRequestsAndFactsMatchValueFrom) {
  std::mt19937 rng(7);
  auto coin = [&] { return std::uniform_int_distribution<int>(0, 1)(rng) == 1; };
  for (int i = 0; i < 1000; ++i) {
    DecideParams p;
    p.request.id = random_text(rng);
    p.request.kind = random_text(rng);
    if (coin()) p.request.tool = random_text(rng);
    if (coin()) {
      json::object input;
      input[random_text(rng)] = random_text(rng);
      input["n"] = json::array{random_text(rng), i, 0.5 * i, nullptr, coin()};
      p.request.input = std::move(input);
    }
    p.project = {random_text(rng), random_text(rng), coin()};
    if (coin()) p.ticket = Ticket{random_text(rng), random_text(rng), random_text(rng)};
    if (coin()) p.agent = Agent{random_text(rng), random_text(rng)};
    ASSERT_EQ(written(p), json::serialize(json::value_from(p)));

    Fact f;
    f.name = FactName::agent_status;
    f.seq = i;
    f.at = random_text(rng);
    f.data[random_text(rng)] = random_text(rng);
    if (coin()) f.unknown[random_text(rng)] = random_text(rng);
    ASSERT_EQ(written(f), json::serialize(json::value_from(f)));
  }
}

// An unknown member under a member's name (put there by code, never by read_value): value_from
// keeps the member's, and so does write_json.
TEST(WriteJson, UnknownMembersNeverShadowTheSchemasMembers) {
  Fact f;
  f.name = FactName::agent_status;
  f.seq = 4;
  f.unknown["seq"] = "not this";
  f.unknown["name"] = 1;
  f.unknown["extra"] = true;
  EXPECT_EQ(written(f), json::serialize(json::value_from(f)));
  EXPECT_EQ(written(f).find("not this"), std::string::npos);
}

}  // namespace
}  // namespace escouade::proto
