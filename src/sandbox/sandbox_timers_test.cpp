// The run.js prelude's timers (setTimeout, clearTimeout, setInterval, clearInterval) with the
// real engine, the test playing the host's side of timer/*: it reads the prelude's timer/set
// and timer/cancel among the bundle's lines, answers them and sends timer/fired when it likes,
// so that every order of events is tested without a clock. No assertion is timed.

#include "protocol/limits.hpp"
#include "sandbox/sandbox_test_fixture.hpp"

namespace escouade::sandbox {
namespace {

class SandboxTimers : public Sandbox {
 protected:
  void start(const std::string& module) {
    runtime::ProgramSpec spec = spec_of("timers", module);
    spec.plugin_id = "dev.test.timers";
    Sandbox::start(spec);
  }
  void call(int id, std::string_view method, json::value params = json::object()) {
    Sandbox::call(id, method, std::move(params));
  }
  void answer_timer(const json::value& request, std::int64_t timer) {
    send(json::object{
        {"jsonrpc", "2.0"}, {"id", request.at("id")}, {"result", json::object{{"timer", timer}}}});
  }
  void fire(std::int64_t timer) {
    send(json::object{
        {"jsonrpc", "2.0"}, {"method", "timer/fired"}, {"params", json::object{{"timer", timer}}}});
  }

  std::optional<json::value> answer(int id) { return take("", json::value(id)); }
  std::size_t count(std::string_view method) const {
    std::size_t n = 0;
    for (const auto& l : out_) {
      const json::value v = json::parse(l);
      if (v.as_object().contains("method") && v.at("method") == json::value(method)) ++n;
    }
    return n;
  }
};

TEST_F(SandboxTimers, TimersFireWithTheirArgumentsAndThePreludeIdsAreItsOwn) {
  start("plugin.mjs");
  call(1, "test/after", json::object{{"ms", 10}, {"value", "v"}});
  auto late = take("timer/set");
  auto early = take("timer/set");
  ASSERT_TRUE(late && early);
  EXPECT_EQ(late->at("params").at("ms"), 30);
  EXPECT_EQ(early->at("params").at("ms"), 10);
  const std::string id(late->at("id").as_string());
  ASSERT_EQ(id.rfind("escouade-prelude:", 0), 0u) << id;
  EXPECT_NE(late->at("id"), early->at("id"));
  answer_timer(*late, 10);
  answer_timer(*early, 11);
  fire(11);
  fire(10);
  auto last = take("timer/set");  // the second callback set a timer of 0 ms
  ASSERT_TRUE(last);
  EXPECT_EQ(last->at("params").at("ms"), 1) << "0 is 1, as in Node; the host makes it 10";
  answer_timer(*last, 12);
  fire(12);
  auto done = answer(1);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->at("result"), json::parse(R"({"order":["early",["late","x",2]],"value":"v"})"));
  EXPECT_TRUE(err_.empty()) << err_.front();
}

// Its own calls to Escouade, with numeric ids, string ids, and ids made like the prelude's (its
// very prefix, which a bundle never sees), come back to the bundle while the prelude's own are
// in flight; so does a timer/fired of a timer the prelude did not set.
TEST_F(SandboxTimers, ThePluginsIdsAreNeverDisturbed) {
  start("plugin.mjs");
  call(1, "test/after", json::object{{"ms", 10}, {"value", "v"}});
  auto pending = take("timer/set");
  ASSERT_TRUE(pending && take("timer/set"));
  const std::string prelude_id(pending->at("id").as_string());
  const std::string prefix = prelude_id.substr(0, prelude_id.rfind(':') + 1);
  int call_id = 2;
  for (const json::value& id :
       {json::value(1), json::value(2), json::value("1"), json::value("escouade-prelude:x:1"),
        json::value(prefix + "99"), json::value(prefix), json::value(nullptr)}) {
    call(call_id, "test/ask",
         json::object{{"id", id}, {"method", "timer/set"}, {"params", json::object{{"ms", 10}}}});
    auto its_own = take("timer/set");
    ASSERT_TRUE(its_own);
    EXPECT_EQ(its_own->at("id"), id);
    answer_timer(*its_own, 500 + call_id);
    auto relayed = answer(call_id);
    ASSERT_TRUE(relayed) << json::serialize(id);
    EXPECT_EQ(relayed->at("result").at("got").at("id"), id);
    EXPECT_EQ(relayed->at("result").at("got").at("result").at("timer"), 500 + call_id);
    ++call_id;
  }
  fire(777);  // not a timer of the prelude's
  call(50, "test/echo", 1);
  ASSERT_TRUE(answer(50));
  EXPECT_TRUE(err_has("timers: its own timer/fired 777"));
  EXPECT_EQ(count("timer/cancel"), 0u);
}

TEST_F(SandboxTimers, AClearBeforeTheAnswerTakesTheTimerBackOnceItComes) {
  start("plugin.mjs");
  call(1, "test/clear");
  auto never = take("timer/set");
  auto later = take("timer/set");
  auto clearer = take("timer/set");
  auto last = take("timer/set");
  ASSERT_TRUE(never && later && clearer && last);
  EXPECT_EQ(count("timer/cancel"), 0u) << "nothing to cancel before the host named it";
  answer_timer(*never, 20);
  auto cancel = take("timer/cancel");
  ASSERT_TRUE(cancel);
  EXPECT_EQ(cancel->at("params").at("timer"), 20);
  EXPECT_FALSE(cancel->as_object().contains("id")) << "a notification";
  answer_timer(*later, 21);
  answer_timer(*clearer, 22);
  answer_timer(*last, 23);
  fire(20);  // crossed its cancel on the way: dropped
  fire(22);  // clears `later`
  cancel = take("timer/cancel");
  ASSERT_TRUE(cancel);
  EXPECT_EQ(cancel->at("params").at("timer"), 21);
  fire(21);  // crossed its cancel too
  fire(23);
  auto done = answer(1);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->at("result").at("fired"), "only the last");
  EXPECT_FALSE(err_has("its own timer/fired")) << "the crossed ones never reach the bundle";
}

TEST_F(SandboxTimers, AnIntervalAsksForItsNextTimerEachTimeUntilCleared) {
  start("plugin.mjs");
  call(1, "test/interval", json::object{{"times", 3}});
  for (int i = 0; i < 3; ++i) {
    auto set = take("timer/set");
    ASSERT_TRUE(set) << i;
    EXPECT_EQ(set->at("params").at("ms"), 10);
    answer_timer(*set, 30 + i);
    fire(30 + i);
  }
  auto after = take("timer/set");  // the answer's timer of 50 ms; the interval asks no more
  ASSERT_TRUE(after);
  EXPECT_EQ(after->at("params").at("ms"), 50);
  answer_timer(*after, 40);
  fire(40);
  auto done = answer(1);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->at("result").at("n"), 3);
  EXPECT_EQ(count("timer/set"), 0u);
}

TEST_F(SandboxTimers, The65thThrowsAndOneClearedBeforeItsAnswerMakesRoomOnceTakenBack) {
  start("plugin.mjs");
  call(1, "test/limit");
  std::vector<json::value> sets;
  for (int i = 0; i < 64; ++i) {
    auto set = take("timer/set");
    ASSERT_TRUE(set) << i;
    sets.push_back(*set);
  }
  // The 64th was cleared before its answer and a new one started: the host still holds 64, so
  // the new one waits until the 64th is taken back.
  EXPECT_EQ(count("timer/set"), 0u);
  for (int i = 0; i < 63; ++i)
    answer_timer(sets[i], 100 + i);
  answer_timer(sets[63], 163);
  auto cancel = take("timer/cancel");
  ASSERT_TRUE(cancel);
  EXPECT_EQ(cancel->at("params").at("timer"), 163);
  auto room = take("timer/set");
  ASSERT_TRUE(room) << "asked for once the host has room";
  EXPECT_EQ(room->at("params").at("ms"), 10);
  answer_timer(*room, 200);
  fire(200);
  auto done = answer(1);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->at("result").at("refused").at("name"), "RangeError");
  // The prelude's number is the host's (protocol/limits.hpp), the spec's 64.
  static_assert(proto::kTimersAtOnce == 64);
  EXPECT_EQ(done->at("result").at("refused").at("message").as_string(),
            std::to_string(proto::kTimersAtOnce) +
                " timers are already active, the most a sandboxed plugin may have at once: one "
                "must fire or be cleared first");
  EXPECT_EQ(done->at("result").at("handle"), "object");
  EXPECT_EQ(done->at("result").at("primitive"), true);
  EXPECT_EQ(count("timer/cancel"), 63u) << "the rest cleared";
}

TEST_F(SandboxTimers, ACallbacksPromiseJobsRunInItsTurn) {
  start("plugin.mjs");
  call(1, "test/jobs");
  auto set = take("timer/set");
  ASSERT_TRUE(set);
  answer_timer(*set, 1);
  fire(1);
  auto done = answer(1);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->at("result").at("job"), 7);
}

TEST_F(SandboxTimers, AnExceptionInACallbackIsACrash) {
  start("plugin.mjs");
  call(1, "test/throwLater");
  auto set = take("timer/set");
  ASSERT_TRUE(set);
  answer_timer(*set, 1);
  fire(1);
  const ProgramEnd& end = ended();
  EXPECT_EQ(end.kind, ProgramEnd::Kind::crash);
  EXPECT_EQ(end.reason.rfind("its instance crashed: Error: boom in a timer (plugin.mjs:", 0), 0u)
      << end.reason;
}

TEST_F(SandboxTimers, AnEndlessLoopInACallbackIsStoppedAsALinesIs) {
  start("plugin.mjs");
  call(1, "test/spinLater");
  auto set = take("timer/set");
  ASSERT_TRUE(set);
  answer_timer(*set, 1);
  fire(1);
  EXPECT_EQ(ended().reason, "a turn ran past 2000 ms: Escouade stopped its instance");
}

// Half a line of the bundle's, then a timer: the prelude's timer/set waits for the end of the
// bundle's line instead of cutting it: every line it wrote parses.
TEST_F(SandboxTimers, ThePreludesLinesNeverCutTheBundles) {
  start("plugin.mjs");
  call(1, "test/split");
  auto split = answer(1);
  ASSERT_TRUE(split);
  EXPECT_EQ(split->at("result").at("split"), true);
  auto set = take("timer/set");
  ASSERT_TRUE(set);
  answer_timer(*set, 1);
  fire(1);
  auto after = answer(1);
  ASSERT_TRUE(after);
  EXPECT_EQ(after->at("result").at("after"), "the split line");
  for (const auto& l : out_) {
    boost::system::error_code ec;
    (void)json::parse(l, ec);
    EXPECT_FALSE(ec) << "a line cut: " << l;
  }
}

// It reads no input: a pending timer keeps it alive, and once none is (fired, or cleared and
// taken back), it has nothing left to do.
TEST_F(SandboxTimers, PendingTimersKeepItAliveAndItEndsWhenNoneIs) {
  start("alone.mjs");
  auto set = take("timer/set");
  ASSERT_TRUE(set);
  answer_timer(*set, 1);
  fire(1);
  auto inner = take("timer/set");  // set and cleared in the callback, before its answer
  ASSERT_TRUE(inner) << (end_ ? end_->reason : "");
  ASSERT_FALSE(end_) << end_->reason;
  answer_timer(*inner, 2);
  auto cancel = take("timer/cancel");
  ASSERT_TRUE(cancel);
  EXPECT_EQ(cancel->at("params").at("timer"), 2);
  EXPECT_EQ(ended().reason,
            "its instance ended: it has nothing left to do and reads no more input");
  EXPECT_TRUE(err_has("alone: fired"));
  EXPECT_FALSE(err_has("alone: never"));
}

}  // namespace
}  // namespace escouade::sandbox
