#include "policy/decisions.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace escouade::policy {
namespace {

using K = Vote::Kind;
using proto::DecisionDecision;

Vote vote(const char* id, K kind, std::optional<std::string> message = std::nullopt) {
  Vote v;
  v.id = id;
  v.kind = kind;
  v.message = std::move(message);
  return v;
}

TEST(Decision, NobodyTakingPartLeavesItToTheUser) {
  const auto v = combine({});
  EXPECT_EQ(v.decision, DecisionDecision::ask);
  EXPECT_TRUE(v.by.empty());
}

TEST(Decision, ARefusalWinsOverEverything) {
  const auto v = combine({vote("a", K::allow), vote("b", K::timeout), vote("c", K::ask),
                          vote("d", K::deny, "no pushes to main"), vote("e", K::error)});
  EXPECT_EQ(v.decision, DecisionDecision::deny);
  ASSERT_TRUE(v.message);
  EXPECT_EQ(*v.message, "no pushes to main");
  ASSERT_EQ(v.by.size(), 5u);
  EXPECT_EQ(v.by[3].id, "d");
}

TEST(Decision, TheFirstRefusalWithAMessageGivesIt) {
  const auto v =
      combine({vote("a", K::deny), vote("b", K::deny, "second"), vote("c", K::deny, "third")});
  EXPECT_EQ(v.decision, DecisionDecision::deny);
  EXPECT_EQ(v.message.value_or(""), "second");
}

TEST(Decision, AllowedOnlyWhenEveryoneAllows) {
  EXPECT_EQ(combine({vote("a", K::allow), vote("b", K::allow)}).decision, DecisionDecision::allow);
  EXPECT_EQ(combine({vote("a", K::allow), vote("b", K::ask)}).decision, DecisionDecision::ask);
  EXPECT_EQ(combine({vote("a", K::allow), vote("b", K::timeout)}).decision, DecisionDecision::ask);
  EXPECT_EQ(combine({vote("a", K::allow), vote("b", K::error)}).decision, DecisionDecision::ask);
}

TEST(Decision, AnAllowanceCarriesNoMessageToTheAgent) {
  const auto v = combine({vote("a", K::allow, "reads are fine")});
  EXPECT_EQ(v.decision, DecisionDecision::allow);
  EXPECT_FALSE(v.message);
  EXPECT_EQ(v.by[0].message.value_or(""), "reads are fine");
}

TEST(Decision, EachPluginKeepsItsPartInLoadOrder) {
  Vote late = vote("dev.late", K::timeout);
  Vote broken = vote("dev.broken", K::error);
  broken.reason = "it is stopped: stopped after 4 crashes within 5 minutes";
  const auto v = combine({vote("dev.guard", K::deny, "rm -rf is refused"), late, broken});
  EXPECT_EQ(v.decision, DecisionDecision::deny);
  EXPECT_EQ(v.message.value_or(""), "rm -rf is refused");
  ASSERT_EQ(v.by.size(), 3u);
  EXPECT_EQ(v.by[0].id, "dev.guard");
  EXPECT_EQ(to_string(v.by[1].kind), "timeout");
  EXPECT_EQ(to_string(v.by[2].kind), "error");
  EXPECT_EQ(v.by[2].reason, "it is stopped: stopped after 4 crashes within 5 minutes");
}

}  // namespace
}  // namespace escouade::policy

namespace escouade::policy {
namespace {

// What the values path gives for `text`: read_value over its parsed values.
std::optional<proto::Decision> from_values(std::string_view text) {
  proto::Decision d;
  proto::ReadContext ctx;
  if (!proto::read_value(boost::json::parse(text), d, ctx)) return std::nullopt;
  return d;
}

TEST(DecisionText, TheUsualAnswersReadAsTheirValuesRead) {
  for (std::string_view text : {
           R"({"decision":"allow"})",
           R"({"decision":"deny","message":"no pushes to main"})",
           R"( { "message" : "later, in \u00e9 order" , "decision" : "ask" } )",
           "{\"decision\":\"deny\",\"message\":\"caf\xc3\xa9 \xf0\x9f\x98\x80\"}",
           R"({"decision":"allow","message":""})",
           R"({"decision":"allow","extra":{"decision":"deny"},"n":[1,{"message":2}]})",
       }) {
    const auto got = decision_of_text(text);
    if (!got) {  // an escape in a taken value: left to the values path, which is allowed
      EXPECT_NE(std::string_view(text).find('\\'), std::string_view::npos) << text;
      continue;
    }
    EXPECT_EQ(got, from_values(text)) << text;
  }
  EXPECT_EQ(decision_of_text(R"({"decision":"deny","message":"no pushes to main"})")->message,
            "no pushes to main");
}

// Anything else goes the values path's way, which reads it or says why it does not hold.
TEST(DecisionText, AnythingElseIsLeftToTheValues) {
  for (std::string_view text : {
           R"({"decision":"maybe"})",  // not one of the three: an error, said there
           R"({"decision":"ALLOW"})",  //
           R"({})",                    // no decision
           R"({"message":"x"})",       //
           R"({"decision":1})",        // not a string
           R"({"decision":null})",     //
           R"({"decision":"allow","message":3})", R"({"decision":"allow","message":null})",
           R"({"decision":"deny","message":"say \"no\""})",  // an escape: the values unescape it
           R"({"decision":"\u0061llow"})",
           R"({"d\u0065cision":"deny","decision":"allow"})",  // a key written with an escape
           R"({"decision":"allow","decision":"deny"})",  // given twice: the values keep the last
           R"({"decision":"deny","message":"a","message":"b"})", R"("allow")", R"(["allow"])",
           R"({"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"decision":"allow"})",  // past 8
       }) {
    EXPECT_EQ(decision_of_text(text), std::nullopt) << text;
  }
}

}  // namespace
}  // namespace escouade::policy
