#include "protocol/decision_text.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

namespace escouade::proto {
namespace {

// What the values path gives for `text`: read_value over its parsed values.
std::optional<Decision> from_values(std::string_view text) {
  Decision d;
  ReadContext ctx;
  if (!read_value(boost::json::parse(text), d, ctx)) return std::nullopt;
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
}  // namespace escouade::proto
