#include "rpc/session.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <map>
#include <string>
#include <vector>

#include "base/manual_clock.hpp"
#include "protocol/gen/methods.hpp"

namespace escouade::rpc {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;

// A request or a notification by name, as the tests send them.
Outgoing request(std::string_view method, std::optional<json::value> params) {
  return params ? *Outgoing::request_value(method, *params)
                : *Outgoing::request_value(method, std::nullopt);
}
Outgoing notification(std::string_view method, std::optional<json::value> params) {
  return params ? *Outgoing::notification_value(method, *params)
                : *Outgoing::notification_value(method, std::nullopt);
}

class SessionTest : public ::testing::Test {
 protected:
  SessionTest()
      : session_(std::make_unique<Session>(
            io_.get_executor(), [this](std::string line) { lines_.push_back(std::move(line)); },
            [this](std::string_view s) { reports_.emplace_back(s); })) {}

  Session& session() { return *session_; }

  // The one line sent since the last call, parsed.
  json::value only_line() {
    EXPECT_EQ(lines_.size(), 1u);
    if (lines_.empty()) return nullptr;
    std::string line = lines_.front();
    lines_.clear();
    EXPECT_EQ(line.back(), '\n');
    return json::parse(line);
  }

  bool reported(std::string_view part) const {
    for (const auto& r : reports_) {
      if (r.find(part) != std::string::npos) return true;
    }
    return false;
  }

  // Runs the loop until `done` holds; the deadline is only a safety net.
  template <class P>
  void run_until(P done) {
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done() && std::chrono::steady_clock::now() < limit) {
      io_.restart();
      io_.run_one_for(std::chrono::milliseconds(50));
    }
    ASSERT_TRUE(done());
  }

  asio::io_context io_;
  std::vector<std::string> lines_;
  std::vector<std::string> reports_;
  std::unique_ptr<Session> session_;
};

// A notification goes as its method's delivery says: a fact to the droppable sink, a timer's
// firing (and any other) with the kept lines, whether made by name or from the generated types;
// the same message sent twice is the same line.
TEST_F(SessionTest, EachNotificationGoesTheWayItsMethodSays) {
  std::vector<std::string> droppable;
  session().set_droppable_sink([&](std::string line) { droppable.push_back(std::move(line)); });
  session().notify(notification("timer/fired", json::object{{"timer", 1}}));
  session().notify(notification("events/fact", json::object{{"name", "agent.status"}}));
  proto::ProcExitParams exit;
  exit.proc = 1;
  exit.code = 0;
  const Outgoing typed = *Outgoing::notification<proto::method::ProcExit>(exit);
  session().notify(typed);
  proto::Fact fact;
  fact.name = proto::FactName::agent_status;
  const Outgoing once = *Outgoing::notification<proto::method::EventsFact>(fact);
  session().notify(once);
  session().notify(once);
  session().notify(notification("no/such-method", std::nullopt));
  ASSERT_EQ(lines_.size(), 3u);
  EXPECT_NE(lines_[0].find("timer/fired"), std::string::npos);
  EXPECT_EQ(lines_[1], std::string(typed.notification_line()));
  EXPECT_NE(lines_[1].find(R"("method":"proc/exit")"), std::string::npos);
  EXPECT_EQ(lines_[2], R"({"jsonrpc":"2.0","method":"no/such-method"})"
                       "\n");
  ASSERT_EQ(droppable.size(), 3u);
  EXPECT_NE(droppable[0].find("events/fact"), std::string::npos);
  EXPECT_EQ(droppable[1], std::string(once.notification_line()));
  EXPECT_EQ(droppable[2], droppable[1]);
}

// A fact for several peers is one line that each peer's queue shares, not a copy each; the
// last copy of a message nothing else shares gives its line away as before, and a kept
// notification never goes shared.
TEST_F(SessionTest, OneFactForSeveralPeersIsOneSharedLine) {
  std::vector<std::shared_ptr<const std::string>> shared_a, shared_b;
  std::vector<std::string> given;
  Session other(
      io_.get_executor(), [](std::string) {}, [](std::string_view) {});
  for (Session* s : {&session(), &other}) {
    s->set_droppable_sink([&](std::string line) { given.push_back(std::move(line)); });
  }
  session().set_shared_droppable_sink(
      [&](std::shared_ptr<const std::string> line) { shared_a.push_back(std::move(line)); });
  other.set_shared_droppable_sink(
      [&](std::shared_ptr<const std::string> line) { shared_b.push_back(std::move(line)); });

  proto::Fact fact;
  fact.name = proto::FactName::agent_status;
  Outgoing message = *Outgoing::notification<proto::method::EventsFact>(fact);
  const std::string text(message.notification_line());
  session().notify(message);         // a copy stays: shared
  other.notify(std::move(message));  // the last copy, but its line is queued by the first: shared
  ASSERT_EQ(shared_a.size(), 1u);
  ASSERT_EQ(shared_b.size(), 1u);
  EXPECT_EQ(shared_a[0].get(), shared_b[0].get()) << "one string for both";
  EXPECT_EQ(*shared_a[0], text);
  EXPECT_TRUE(given.empty());

  // A fact for one peer alone: its line is given away, as a string.
  session().notify(*Outgoing::notification<proto::method::EventsFact>(fact));
  ASSERT_EQ(given.size(), 1u);
  EXPECT_EQ(given[0], text);
  EXPECT_EQ(shared_a.size(), 1u);

  // A kept notification goes with the kept lines, shared or not.
  const Outgoing fired = notification("timer/fired", json::object{{"timer", 1}});
  session().notify(fired);
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_EQ(lines_[0], std::string(fired.notification_line()));
  EXPECT_EQ(shared_a.size(), 1u);
}

TEST_F(SessionTest, RequestIsAnsweredWithItsIdAndType) {
  session().handle("echo", [](const json::value* params, Reply<> reply) {
    reply.result(params ? *params : json::value(nullptr));
  });
  session().feed_line(R"({"jsonrpc":"2.0","id":"a7","method":"echo","params":{"x":1}})");
  auto v = only_line();
  EXPECT_EQ(v.at("id"), json::value("a7"));
  EXPECT_EQ(v.at("result"), json::parse(R"({"x":1})"));
  session().feed_line(R"({"jsonrpc":"2.0","id":7,"method":"echo"})");
  v = only_line();
  EXPECT_EQ(v.at("id"), json::value(7));
  EXPECT_TRUE(v.at("result").is_null());
}

TEST_F(SessionTest, UnservedMethodIsAnswered32601AndReported) {
  session().feed_line(R"({"jsonrpc":"2.0","id":3,"method":"files/delete","params":{}})");
  auto v = only_line();
  EXPECT_EQ(v.at("error").at("code"), json::value(-32601));
  EXPECT_EQ(v.at("id"), json::value(3));
  EXPECT_TRUE(reported("asked for files/delete, which is not served; answered -32601"));
}

TEST_F(SessionTest, UnservedNotificationIsReportedNotAnswered) {
  session().feed_line(R"({"jsonrpc":"2.0","method":"telemetry/ping"})");
  EXPECT_TRUE(lines_.empty());
  EXPECT_TRUE(reported("sent the notification telemetry/ping, which is not served"));
}

TEST_F(SessionTest, ReplyDroppedUnansweredSendsInternal) {
  session().handle("forgetful", [](const json::value*, Reply<>) {});
  session().feed_line(R"({"jsonrpc":"2.0","id":1,"method":"forgetful"})");
  auto v = only_line();
  EXPECT_EQ(v.at("error").at("code"), json::value(-32603));
  EXPECT_TRUE(reported("forgetful: the handler gave no answer"));
}

TEST_F(SessionTest, SecondAnswerIsIgnored) {
  session().handle("twice", [](const json::value*, Reply<> reply) {
    reply.result(1);
    reply.result(2);
    reply.error(proto::ErrorCode::failed, "no");
  });
  session().feed_line(R"({"jsonrpc":"2.0","id":1,"method":"twice"})");
  EXPECT_EQ(only_line().at("result"), json::value(1));
}

// A peer may have so many calls in flight; past that each is answered -32004 at once, and
// the journal hears of it twice per episode, not once per call.
TEST_F(SessionTest, CallsPastTheLimitInFlightAreRefusedAndCountedNotJournaledEach) {
  session().set_max_in_flight(2);
  std::vector<Reply<>> held;
  session().handle("hold",
                   [&](const json::value*, Reply<> reply) { held.push_back(std::move(reply)); });
  for (int i = 1; i <= 6; ++i) {
    session().feed_line(R"({"jsonrpc":"2.0","id":)" + std::to_string(i) + R"(,"method":"hold"})");
  }
  ASSERT_EQ(held.size(), 2u);
  ASSERT_EQ(lines_.size(), 4u);
  for (const auto& line : lines_) {
    const json::value v = json::parse(line);
    EXPECT_EQ(v.at("error").at("code"), json::value(-32004)) << line;
    EXPECT_NE(line.find("more than 2 calls in flight"), std::string::npos) << line;
  }
  lines_.clear();
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_EQ(reports_[0],
            "sent more calls than the 2 it may have in flight: 1 answered -32004 (those refused "
            "after these are counted until it is back under)");

  // Back under: the next line tells how many more were refused, once.
  for (auto& r : held)
    r.result(nullptr);
  held.clear();
  lines_.clear();
  session().feed_line(R"({"jsonrpc":"2.0","id":7,"method":"hold"})");
  ASSERT_EQ(reports_.size(), 2u);
  EXPECT_EQ(reports_[1], "refused 3 more of its calls while it had 2 in flight");
  EXPECT_EQ(held.size(), 1u);
  EXPECT_TRUE(lines_.empty());
}

TEST_F(SessionTest, AnswerMayComeLater) {
  session().handle("slow", [this](const json::value*, Reply<> reply) {
    asio::post(io_, [r = std::make_shared<Reply<>>(std::move(reply))] { r->result("done"); });
  });
  session().feed_line(R"({"jsonrpc":"2.0","id":9,"method":"slow"})");
  EXPECT_TRUE(lines_.empty());
  run_until([&] { return !lines_.empty(); });
  EXPECT_EQ(only_line().at("result"), json::value("done"));
}

TEST_F(SessionTest, BatchIsAnsweredByOneBatchOnceEveryAnswerIsIn) {
  std::vector<Reply<>> held;
  session().handle("hold",
                   [&](const json::value*, Reply<> reply) { held.push_back(std::move(reply)); });
  session().handle("now", [](const json::value*, Reply<> reply) { reply.result("now"); });
  session().handle_notification("note", [](const json::value*) {});
  session().feed_line(
      R"([{"jsonrpc":"2.0","id":1,"method":"hold"},{"jsonrpc":"2.0","method":"note"},)"
      R"({"jsonrpc":"2.0","id":2,"method":"now"},5,{"jsonrpc":"2.0","id":3,"method":"nope"}])");
  EXPECT_TRUE(lines_.empty()) << "a batch goes out whole";
  ASSERT_EQ(held.size(), 1u);
  held[0].result("held");
  auto v = only_line();
  ASSERT_TRUE(v.is_array());
  ASSERT_EQ(v.as_array().size(), 4u);  // hold, now, the invalid 5, nope
  std::map<std::string, json::value> by_id;
  for (auto& a : v.as_array())
    by_id[json::serialize(a.at("id"))] = a;
  EXPECT_EQ(by_id["1"].at("result"), json::value("held"));
  EXPECT_EQ(by_id["2"].at("result"), json::value("now"));
  EXPECT_EQ(by_id["3"].at("error").at("code"), json::value(-32601));
  EXPECT_EQ(by_id["null"].at("error").at("code"), json::value(-32600));
}

TEST_F(SessionTest, BatchOfNotificationsGetsNoLine) {
  int heard = 0;
  session().handle_notification("note", [&](const json::value*) { ++heard; });
  session().feed_line(R"([{"jsonrpc":"2.0","method":"note"},{"jsonrpc":"2.0","method":"note"}])");
  EXPECT_EQ(heard, 2);
  EXPECT_TRUE(lines_.empty());
}

TEST_F(SessionTest, GarbageIsAnsweredAndQuotedIn200Characters) {
  const std::string garbage = "starting up... " + std::string(1000, 'x');
  session().feed_line(garbage);
  auto v = only_line();
  EXPECT_EQ(v.at("error").at("code"), json::value(-32700));
  EXPECT_TRUE(v.at("id").is_null());
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_NE(reports_[0].find("sent a line that is not JSON"), std::string::npos);
  EXPECT_NE(reports_[0].find(garbage.substr(0, 200) + "…"), std::string::npos);
  EXPECT_EQ(reports_[0].find(garbage.substr(0, 201)), std::string::npos);
}

TEST_F(SessionTest, BrokenAnswerIsReportedNotAnswered) {
  session().feed_line(R"({"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}})");
  EXPECT_TRUE(lines_.empty());
  EXPECT_TRUE(reported("not JSON-RPC 2.0"));
}

TEST_F(SessionTest, CallGetsItsResult) {
  std::optional<CallOutcome> got;
  auto id = session().call(request("initialize", json::parse(R"({"protocolVersion":1})")),
                           std::chrono::seconds(10), [&](CallOutcome o) { got = std::move(o); });
  auto sent = only_line();
  EXPECT_EQ(sent.at("id"), json::value(id));
  EXPECT_EQ(sent.at("method"), json::value("initialize"));
  EXPECT_EQ(session().calls_in_flight(), 1u);
  session().feed_line(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
                      R"(,"result":{"protocolVersion":1}})");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->kind, CallOutcome::Kind::result);
  EXPECT_EQ(got->result.at("protocolVersion"), json::value(1));
  EXPECT_EQ(session().calls_in_flight(), 0u);
}

TEST_F(SessionTest, CallGetsThePeersError) {
  std::optional<CallOutcome> got;
  auto id = session().call(request("x/y", std::nullopt), std::chrono::seconds(10),
                           [&](CallOutcome o) { got = std::move(o); });
  lines_.clear();
  session().feed_line(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
                      R"(,"error":{"code":-32601,"message":"nope"}})");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->kind, CallOutcome::Kind::error);
  EXPECT_EQ(got->error.code, -32601);
}

// The deadlines on a manual clock (base/manual_clock.hpp): the delays are the schema's, and
// nothing waits for them.
class SessionDeadlines : public SessionTest {
 protected:
  SessionDeadlines() {
    session_ = std::make_unique<Session>(
        io_.get_executor(), [this](std::string line) { lines_.push_back(std::move(line)); },
        [this](std::string_view s) { reports_.emplace_back(s); }, clock_);
  }
  void advance(std::chrono::milliseconds d) {
    clock_.advance(d);
    io_.restart();
    io_.poll();
  }
  ManualClock clock_;
};

TEST_F(SessionDeadlines, CallPastItsDelayTimesOutAndALateAnswerIsIgnored) {
  int calls = 0;
  std::optional<CallOutcome> got;
  auto id = session().call(request("permissions/decide", json::parse("{}")),
                           std::chrono::milliseconds(500), [&](CallOutcome o) {
                             ++calls;
                             got = std::move(o);
                           });
  advance(std::chrono::milliseconds(499));
  EXPECT_FALSE(got);
  advance(std::chrono::milliseconds(1));
  ASSERT_TRUE(got);
  EXPECT_EQ(got->kind, CallOutcome::Kind::timeout);
  EXPECT_EQ(got->elapsed, std::chrono::milliseconds(500));
  EXPECT_TRUE(reported("permissions/decide: no answer within 500 ms"));
  advance(std::chrono::milliseconds(250));
  session().feed_line(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
                      R"(,"result":{"decision":"deny"}})");
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(
      reported("permissions/decide: an answer came 750 ms after the call, past its "
               "delay; it was ignored"));
}

TEST_F(SessionDeadlines, EveryCallKeepsItsOwnDeadline) {
  std::map<std::string, CallOutcome::Kind> got;
  auto record = [&](std::string name) { return [&, name](CallOutcome o) { got[name] = o.kind; }; };
  session().call(request("slow", std::nullopt), std::chrono::milliseconds(600), record("slow"));
  session().call(request("fast", std::nullopt), std::chrono::milliseconds(100), record("fast"));
  auto answered = session().call(request("answered", std::nullopt), std::chrono::seconds(30),
                                 record("answered"));
  session().feed_line(R"({"jsonrpc":"2.0","id":)" + std::to_string(answered) + R"(,"result":1})");
  EXPECT_EQ(got["answered"], CallOutcome::Kind::result);
  advance(std::chrono::milliseconds(100));
  EXPECT_EQ(got.count("fast"), 1u);
  EXPECT_EQ(got.count("slow"), 0u);
  advance(std::chrono::milliseconds(500));
  EXPECT_EQ(got["slow"], CallOutcome::Kind::timeout);
  // A call made after the others still gets its delay, from when it was made.
  session().call(request("later", std::nullopt), std::chrono::milliseconds(50), record("later"));
  advance(std::chrono::milliseconds(49));
  EXPECT_EQ(got.count("later"), 0u);
  advance(std::chrono::milliseconds(1));
  EXPECT_EQ(got["later"], CallOutcome::Kind::timeout);
  EXPECT_EQ(got.size(), 4u);
  EXPECT_TRUE(reported("fast: no answer within 100 ms"));
  EXPECT_TRUE(reported("slow: no answer within 600 ms"));
}

TEST_F(SessionDeadlines, AnAnswerInTimeLeavesNoTimerBehind) {
  std::optional<CallOutcome> got;
  auto id = session().call(request("echo", std::nullopt), std::chrono::milliseconds(100),
                           [&](CallOutcome o) { got = std::move(o); });
  session().feed_line(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"result":2})");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->kind, CallOutcome::Kind::result);
  advance(std::chrono::seconds(1));  // the shared deadline finds nothing due
  EXPECT_FALSE(reported("no answer within"));
}

TEST_F(SessionTest, AnswerToNothingIsReported) {
  session().feed_line(R"({"jsonrpc":"2.0","id":999,"result":1})");
  EXPECT_TRUE(lines_.empty());
  EXPECT_TRUE(reported("sent an answer to no call in flight (id 999)"));
}

// An error with id null is JSON-RPC's answer to a line whose id could not be read: told as a
// notice, never as an answer to no call; a result with id null is still a fault.
TEST_F(SessionTest, AnErrorWithIdNullIsANoticeNotAWarning) {
  std::vector<std::string> notices;
  session().set_notice([&](std::string_view s) { notices.emplace_back(s); });
  session().feed_line(
      R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}})");
  EXPECT_TRUE(lines_.empty());
  EXPECT_FALSE(reported("no call in flight"));
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices[0],
            "answered a line it could not read with the error -32700 (\"Parse error\")");
  session().feed_line(R"({"jsonrpc":"2.0","id":null,"result":1})");
  EXPECT_TRUE(reported("sent an answer to no call in flight (id null)"));
  EXPECT_EQ(notices.size(), 1u);
}

TEST_F(SessionTest, CloseCompletesCallsInFlightAndStopsEverything) {
  std::vector<CallOutcome::Kind> kinds;
  session().call(request("a", std::nullopt), std::chrono::seconds(10),
                 [&](CallOutcome o) { kinds.push_back(o.kind); });
  session().call(request("b", std::nullopt), std::chrono::seconds(10),
                 [&](CallOutcome o) { kinds.push_back(o.kind); });
  lines_.clear();
  session().close();
  EXPECT_EQ(kinds,
            (std::vector<CallOutcome::Kind>{CallOutcome::Kind::closed, CallOutcome::Kind::closed}));
  session().feed_line(R"({"jsonrpc":"2.0","id":1,"method":"x"})");
  session().notify(notification("log", std::nullopt));
  EXPECT_TRUE(lines_.empty());
  session().close();  // idempotent
  EXPECT_EQ(kinds.size(), 2u);
}

TEST_F(SessionTest, ReplyOutlivingItsSessionIsHarmless) {
  std::optional<Reply<>> held;
  session().handle("hold",
                   [&](const json::value*, Reply<> reply) { held.emplace(std::move(reply)); });
  session().feed_line(R"({"jsonrpc":"2.0","id":1,"method":"hold"})");
  session_.reset();
  held->result(1);
  EXPECT_TRUE(lines_.empty());
}

// The bench's fault under load (docs/lifetimes.md): a reply still queued when its session and
// the session's owner are gone is dropped later, by whoever destroys the queue. Its report
// would reach into the dead owner; it must reach nothing.
TEST_F(SessionTest, ReplyDroppedAfterItsSessionReportsNothing) {
  std::optional<Reply<>> held;
  session().handle("hold",
                   [&](const json::value*, Reply<> reply) { held.emplace(std::move(reply)); });
  session().feed_line(R"({"jsonrpc":"2.0","id":1,"method":"hold"})");
  const std::size_t reports_before = reports_.size();
  session_.reset();
  held.reset();
  EXPECT_TRUE(lines_.empty());
  EXPECT_EQ(reports_.size(), reports_before);
}

TEST_F(SessionTest, ReplyDroppedAfterCloseReportsNothing) {
  std::optional<Reply<>> held;
  session().handle("hold",
                   [&](const json::value*, Reply<> reply) { held.emplace(std::move(reply)); });
  session().feed_line(R"({"jsonrpc":"2.0","id":1,"method":"hold"})");
  const std::size_t reports_before = reports_.size();
  session().close();
  held.reset();
  EXPECT_TRUE(lines_.empty());
  EXPECT_EQ(reports_.size(), reports_before);
}

TEST_F(SessionTest, ReplyDroppedWhileOpenIsStillReported) {
  std::optional<Reply<>> held;
  session().handle("hold",
                   [&](const json::value*, Reply<> reply) { held.emplace(std::move(reply)); });
  session().feed_line(R"({"jsonrpc":"2.0","id":1,"method":"hold"})");
  held.reset();
  EXPECT_TRUE(reported("hold: the handler gave no answer; answered -32603"));
  EXPECT_EQ(only_line().at("error").at("code"), json::value(-32603));
}

TEST_F(SessionTest, TypedHandlerChecksParamsAgainstTheSchema) {
  std::vector<std::string> keys;
  session().serve<proto::method::SecretsGet>(
      [&](const proto::SecretsGetParams& p, Reply<proto::method::SecretsGet> reply) {
        keys.push_back(p.key);
        reply.result(std::nullopt);
      });
  session().feed_line(
      R"({"jsonrpc":"2.0","id":1,"method":"secrets/get","params":{"key":"token"}})");
  EXPECT_TRUE(only_line().at("result").is_null());
  session().feed_line(R"({"jsonrpc":"2.0","id":2,"method":"secrets/get","params":{"key":5}})");
  auto v = only_line();
  EXPECT_EQ(v.at("error").at("code"), json::value(-32602));
  EXPECT_EQ(v.at("error").at("message"),
            json::value("params.key: expected a string, got an integer"));
  EXPECT_EQ(keys, std::vector<std::string>{"token"});
}

TEST_F(SessionTest, TypedNotificationWithBadParamsIsReported) {
  std::vector<std::string> messages;
  session().serve_notification<proto::method::Log>(
      [&](const proto::LogParams& p) { messages.push_back(p.message); });
  session().feed_line(
      R"({"jsonrpc":"2.0","method":"log","params":{"level":"info","message":"hi"}})");
  session().feed_line(
      R"({"jsonrpc":"2.0","method":"log","params":{"level":"loud","message":"x"}})");
  EXPECT_EQ(messages, std::vector<std::string>{"hi"});
  EXPECT_TRUE(lines_.empty());
  EXPECT_TRUE(reported("log: params.level: \"loud\" is not one of debug, info, warn, error"));
}

TEST_F(SessionTest, AnswerThatIsNotUtf8BecomesInternal) {
  session().handle("bytes", [](const json::value*, Reply<> reply) { reply.result("\xC3"); });
  session().feed_line(R"({"jsonrpc":"2.0","id":1,"method":"bytes"})");
  EXPECT_EQ(only_line().at("error").at("code"), json::value(-32603));
}

TEST_F(SessionTest, CoroutineCall) {
  std::optional<CallOutcome> got;
  asio::co_spawn(
      io_,
      [&]() -> asio::awaitable<void> {
        got = co_await session().async_call(request("settings/get", json::parse("{}")),
                                            std::chrono::seconds(10), asio::use_awaitable);
      },
      asio::detached);
  run_until([&] { return !lines_.empty(); });
  auto sent = only_line();
  session().feed_line(R"({"jsonrpc":"2.0","id":)" + json::serialize(sent.at("id")) +
                      R"(,"result":{"a":1}})");
  run_until([&] { return got.has_value(); });
  EXPECT_EQ(got->result.at("a"), json::value(1));
}

// A peer whose answer is read while the call's line is written (a process program reads it at
// once, runtime/process_program.cpp): the call completes before call() returns, its record is
// gone, and the next call is answered as well.
TEST_F(SessionTest, ACallAnsweredWhileItsLineIsWrittenCompletesBeforeCallReturns) {
  Session answering(
      io_.get_executor(),
      [&](std::string line) {
        const auto id = json::serialize(json::parse(line).at("id"));
        answering.feed_line(R"({"jsonrpc":"2.0","id":)" + id + R"(,"result":)" + id + "}");
      },
      [this](std::string_view s) { reports_.emplace_back(s); });
  for (int i = 1; i <= 3; ++i) {
    std::optional<CallOutcome> got;
    const auto id = answering.call(request("test/echo", std::nullopt), std::chrono::seconds(10),
                                   [&](CallOutcome o) { got = std::move(o); });
    ASSERT_TRUE(got.has_value());
    EXPECT_TRUE(got->ok());
    EXPECT_EQ(got->result, json::value(id));
    EXPECT_EQ(answering.calls_in_flight(), 0u);
  }
  EXPECT_TRUE(reports_.empty());
}

// Asio's promise holds for async_call all the same: its handler never runs within the
// initiation, even when the answer came while the line was written.
TEST_F(SessionTest, ACoroutineCallAnsweredAtOnceIsHandedOnThroughTheExecutor) {
  Session answering(
      io_.get_executor(),
      [&](std::string line) {
        const auto id = json::serialize(json::parse(line).at("id"));
        answering.feed_line(R"({"jsonrpc":"2.0","id":)" + id + R"(,"result":{"a":1}})");
      },
      [](std::string_view) {});
  std::optional<CallOutcome> got;
  answering.async_call(request("test/echo", std::nullopt), std::chrono::seconds(10),
                       [&](CallOutcome o) { got = std::move(o); });
  EXPECT_FALSE(got.has_value());
  run_until([&] { return got.has_value(); });
  EXPECT_EQ(got->result.at("a"), json::value(1));

  std::optional<CallOutcome> awaited;
  asio::co_spawn(
      io_,
      [&]() -> asio::awaitable<void> {
        awaited = co_await answering.async_call(request("test/echo", std::nullopt),
                                                std::chrono::seconds(10), asio::use_awaitable);
      },
      asio::detached);
  run_until([&] { return awaited.has_value(); });
  EXPECT_EQ(awaited->result.at("a"), json::value(1));
}

}  // namespace
}  // namespace escouade::rpc
