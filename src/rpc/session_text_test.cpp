// Calls whose result comes back as JSON text (ResultForm::text): what escouade-host forwards to
// the app. The text is the plugin's as it came when the line is a plain answer the decoder would
// take; any other line goes the decoder's way, and a result it built is written again.

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/manual_clock.hpp"
#include "rpc/session.hpp"

namespace escouade::rpc {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

class SessionText : public ::testing::Test {
 protected:
  SessionText()
      : session_(
            io_.get_executor(), [this](std::string line) { lines_.push_back(std::move(line)); },
            [this](std::string_view s) { reports_.emplace_back(s); }, clock_) {}

  // A call of `form` whose outcome lands in `got`; returns its id.
  std::int64_t call(std::optional<CallOutcome>& got, ResultForm form = ResultForm::text) {
    return session_.call(*Outgoing::request_value("test/echo", json::parse(R"({"a":1})"), form),
                         5000ms, [&got](CallOutcome o) { got = std::move(o); });
  }
  std::string answer(std::int64_t id, std::string_view result) {
    return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"result":)" +
           std::string(result) + "}";
  }
  bool reported(std::string_view part) const {
    for (const auto& r : reports_) {
      if (r.find(part) != std::string::npos) return true;
    }
    return false;
  }
  void advance(std::chrono::milliseconds d) {
    clock_.advance(d);
    io_.restart();
    io_.poll();
  }

  boost::asio::io_context io_;
  ManualClock clock_;
  std::vector<std::string> lines_;
  std::vector<std::string> reports_;
  Session session_;
};

TEST_F(SessionText, APlainAnswerGivesItsResultAsItCame) {
  std::optional<CallOutcome> got;
  const auto id = call(got);
  const std::string result = R"( {"b" : [1, 2.5, "é\u00e9", {"c":null}], "d":"]}\"" } )";
  session_.feed_line(answer(id, result));
  ASSERT_TRUE(got);
  EXPECT_EQ(got->kind, CallOutcome::Kind::result);
  EXPECT_EQ(got->result_text, R"({"b" : [1, 2.5, "é\u00e9", {"c":null}], "d":"]}\"" })");
  EXPECT_TRUE(got->result.is_null());
  EXPECT_TRUE(reports_.empty());
  EXPECT_EQ(session_.calls_in_flight(), 0u);
}

TEST_F(SessionText, MembersInAnyOrderAndUnknownOnesAreAnAnswerStill) {
  std::optional<CallOutcome> got;
  const auto id = call(got);
  session_.feed_line(R"({"result":[true],"x-trace":{"t":1},"id":)" + std::to_string(id) +
                     R"(,"jsonrpc":"2.0"})");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->result_text, "[true]");
}

// Lines the text path leaves to the decoder: the result is then built, and written again.
TEST_F(SessionText, AnAnswerTheDecoderReadsGivesItsResultWrittenAgain) {
  for (std::string_view line : {
           R"({"jsonrpc":"2.0","id":ID,"r\u0065sult":{"k":"v"}})",        // a key with an escape
           "{\"jsonrpc\":\"2.0\",\"id\":ID,\"result\":{\"k\":\r\"v\"}}",  // "\r" between tokens
       }) {
    std::optional<CallOutcome> got;
    const auto id = call(got);
    std::string l(line);
    l.replace(l.find("ID"), 2, std::to_string(id));
    session_.feed_line(l);
    ASSERT_TRUE(got) << line;
    EXPECT_EQ(got->kind, CallOutcome::Kind::result);
    EXPECT_EQ(got->result_text, R"({"k":"v"})");
  }
  EXPECT_TRUE(reports_.empty());
}

// A batch of answers is the decoder's to read: each text call among them still gets its result
// as text, a call of values its values.
TEST_F(SessionText, AnswersInABatchAreReadByTheDecoderAndStillGivenAsText) {
  std::optional<CallOutcome> text, value;
  const auto t = call(text);
  const auto v = call(value, ResultForm::value);
  lines_.clear();  // the two requests
  session_.feed_line("[" + answer(t, R"({"a" : [1]})") + "," + answer(v, R"({"b":2})") + "]");
  ASSERT_TRUE(text && value);
  EXPECT_EQ(text->kind, CallOutcome::Kind::result);
  EXPECT_EQ(text->result_text, R"({"a":[1]})");  // written again from its values
  EXPECT_EQ(value->result, json::parse(R"({"b":2})"));
  EXPECT_TRUE(lines_.empty());  // answers are never answered
  EXPECT_TRUE(reports_.empty());
}

TEST_F(SessionText, AnErrorAnswerIsAnError) {
  std::optional<CallOutcome> got;
  const auto id = call(got);
  session_.feed_line(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
                     R"(,"error":{"code":-32004,"message":"no"}})");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->kind, CallOutcome::Kind::error);
  EXPECT_EQ(got->error.message, "no");
  EXPECT_TRUE(got->result_text.empty());
}

// Shaped as an answer to the call, but not a line the decoder takes: reported as such, and the
// call still waits (then times out), as with any call.
TEST_F(SessionText, ABrokenLineShapedAsTheAnswerIsReportedNotTaken) {
  std::optional<CallOutcome> got;
  const auto id = call(got);
  for (std::string bad : {
           answer(id, R"({"n":1e400})"),  // a number no JSON carries back out
           answer(id, "\"\xff\""),        // not UTF-8
           answer(id, R"({"a":tru})"),    // not JSON
           answer(id, "1") + "x",         // something after it
           answer(id, std::string(70, '[') + std::string(70, ']')),  // deeper than 64
       }) {
    session_.feed_line(bad);
    EXPECT_FALSE(got);
  }
  EXPECT_TRUE(reported("sent a line that is not JSON"));
  EXPECT_EQ(session_.calls_in_flight(), 1u);
  advance(5000ms);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->kind, CallOutcome::Kind::timeout);
}

TEST_F(SessionText, AnIdThatIsNotTheCallsIsNoAnswerToIt) {
  std::optional<CallOutcome> got;
  const auto id = call(got);
  for (std::string other : {std::to_string(id) + ".0", "\"" + std::to_string(id) + "\"",
                            std::to_string(id + 1), std::string("-0")}) {
    session_.feed_line(R"({"jsonrpc":"2.0","id":)" + other + R"(,"result":1})");
  }
  EXPECT_FALSE(got);
  EXPECT_TRUE(reported("sent an answer to no call in flight"));
  session_.feed_line(answer(id, "2"));
  ASSERT_TRUE(got);
  EXPECT_EQ(got->result_text, "2");
}

TEST_F(SessionText, AMemberGivenTwiceIsTheDecodersToRead) {
  std::optional<CallOutcome> got;
  const auto id = call(got);
  session_.feed_line(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
                     R"(,"result":1,"method":"x"})");
  EXPECT_FALSE(got);  // a call with a result: not an answer
  EXPECT_TRUE(reported("not JSON-RPC 2.0"));
  session_.feed_line(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
                     R"(,"result":1,"method":"x","method":"y"})");
  EXPECT_FALSE(got);  // nor with its method given twice
  session_.feed_line(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
                     R"(,"result":1,"result":2})");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->kind, CallOutcome::Kind::result);
  EXPECT_TRUE(got->result_text == "1" || got->result_text == "2") << got->result_text;
}

TEST_F(SessionText, CallsOfValuesBesideThemGetValues) {
  std::optional<CallOutcome> text, value;
  const auto t = call(text);
  const auto v = call(value, ResultForm::value);
  session_.feed_line(answer(v, R"({"x": [1]})"));
  session_.feed_line(answer(t, R"({"x": [1]})"));
  ASSERT_TRUE(text && value);
  EXPECT_EQ(value->result, json::parse(R"({"x":[1]})"));
  EXPECT_TRUE(value->result_text.empty());
  EXPECT_EQ(text->result_text, R"({"x": [1]})");
}

TEST_F(SessionText, ALateAnswerAfterATimeoutIsIgnoredAndReported) {
  std::optional<CallOutcome> got;
  const auto id = call(got);
  advance(5000ms);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->kind, CallOutcome::Kind::timeout);
  got.reset();
  session_.feed_line(answer(id, "1"));
  EXPECT_FALSE(got);
  EXPECT_TRUE(reported("test/echo: an answer came 5000 ms after the call"));
}

TEST_F(SessionText, ClosingEndsTextCallsAsClosed) {
  std::optional<CallOutcome> got;
  const auto id = call(got);
  session_.close();
  ASSERT_TRUE(got);
  EXPECT_EQ(got->kind, CallOutcome::Kind::closed);
  session_.feed_line(answer(id, "1"));  // nothing reads it any more
  EXPECT_EQ(got->kind, CallOutcome::Kind::closed);
}

}  // namespace
}  // namespace escouade::rpc
