// The supervisor on its seams: in-memory programs (runtime/memory_program.hpp) and a manual
// clock (base/manual_clock.hpp). No process starts and nothing sleeps: the 10 s handshake, the
// 5-minute crash window, the 1 s at closing and the memory period pass when the test says.

#include "supervisor/supervisor.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "base/manual_clock.hpp"
#include "base/temp_dir.hpp"
#include "platform/errors.hpp"
#include "protocol/gen/methods.hpp"
#include "runtime/memory_program.hpp"

namespace escouade::supervisor {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using runtime::MemoryPeer;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

// A notification and a request by name, as the tests send them.
rpc::Outgoing notification(std::string_view method, boost::json::value params) {
  return *rpc::Outgoing::notification_value(method, params);
}
rpc::Outgoing request(std::string_view method, boost::json::value params) {
  return *rpc::Outgoing::request_value(method, params);
}

// The one message of a line the supervisor wrote.
json::object message(const std::string& line) {
  return json::parse(line).as_object();
}

// A plugin that keeps to protocol 1: it answers initialize with version `version` (when set),
// shutdown with null (then, when `exits`, it ends), and echoes test/echo.
void keeps_to_protocol(MemoryPeer& peer, std::optional<int> version = 1, bool exits = true) {
  peer.on_line = [&peer, version, exits](std::string_view line) {
    const json::object m = message(std::string(line));
    const json::value* method = m.if_contains("method");
    const json::value* id = m.if_contains("id");
    if (!method || !id) return;
    json::object answer{{"jsonrpc", "2.0"}, {"id", *id}};
    if (*method == "initialize") {
      if (!version) return;
      answer["result"] = json::object{{"protocolVersion", *version}, {"capabilities", {}}};
    } else if (*method == "shutdown") {
      answer["result"] = nullptr;
      peer.say(json::serialize(answer));
      if (exits) peer.exit(0);
      return;
    } else if (*method == "test/echo") {
      answer["result"] = m.at("params");
    } else {
      return;  // silent on the rest
    }
    peer.say(json::serialize(answer));
  };
}

JournalOptions journal_options(const std::filesystem::path& dir) {
  JournalOptions o;
  o.dir = dir;
  o.plugin_id = "dev.test.supervised";
  return o;
}

class SupervisorTest : public ::testing::Test {
 protected:
  SupervisorTest() : programs_(io_.get_executor()) {
    programs_.prepare = [](MemoryPeer& peer) { keeps_to_protocol(peer); };
  }

  Supervisor& supervisor() {
    if (!supervisor_) {
      SupervisorConfig c;
      c.id = "dev.test.supervised";
      c.version = "1.0.0";
      c.escouade_version = "2.2.0";
      c.program.plugin_id = c.id;
      c.memory_limit_bytes = 1024ull * 1024 * 1024;
      supervisor_ = std::make_unique<Supervisor>(
          io_.get_executor(), c, programs_, journal_,
          [this](const Status& s) { states_.push_back(s.state); }, clock_);
    }
    return *supervisor_;
  }

  // Delivers what is posted now, without moving the clock.
  void settle() {
    for (int i = 0; i < 100 && io_.poll() > 0; ++i) {
      io_.restart();
    }
    io_.restart();
  }
  void advance(Clock::Duration d) {
    clock_.advance(d);
    settle();
  }

  bool journal_has(std::string_view text) const {
    for (const auto& line : journal_.tail(500)) {
      if (line.find(text) != std::string::npos) return true;
    }
    return false;
  }

  // Starts the plugin and answers its handshake.
  void run() {
    supervisor().activate();
    settle();
    ASSERT_EQ(supervisor().status().state, State::running);
  }

  // The methods of what the last program was given, in order.
  std::vector<std::string> methods_given() {
    std::vector<std::string> out;
    for (const auto& line : programs_.last().received()) {
      const json::object m = message(line);
      if (const json::value* method = m.if_contains("method")) {
        out.emplace_back(method->as_string());
      }
    }
    return out;
  }

  boost::asio::io_context io_;
  ManualClock clock_;
  runtime::MemoryProgramFactory programs_;
  TempDir logs_{"escouade-supervisor"};
  Journal journal_{journal_options(logs_.path())};
  std::vector<State> states_;
  std::unique_ptr<Supervisor> supervisor_;
};

TEST_F(SupervisorTest, TheHandshakeIsTheFirstMessageAndWhatCameMeanwhileFollowsIt) {
  programs_.prepare = [](MemoryPeer& peer) { keeps_to_protocol(peer, std::nullopt); };
  supervisor().notify(notification("events/fact", json::object{{"n", 1}}), true);
  settle();
  EXPECT_EQ(supervisor().status().state, State::starting);
  ASSERT_EQ(methods_given(), std::vector<std::string>{"initialize"});
  const json::object init = message(programs_.last().received().front());
  EXPECT_EQ(init.at("params").at("escouade").at("version"), "2.2.0");
  EXPECT_EQ(init.at("params").at("capabilities").at("settings"), true);

  const json::value id = init.at("id");
  programs_.last().say(json::serialize(json::object{
      {"jsonrpc", "2.0"},
      {"id", id},
      {"result", json::object{{"protocolVersion", 1}, {"capabilities", json::object{}}}}}));
  settle();
  EXPECT_EQ(supervisor().status().state, State::running);
  EXPECT_EQ(methods_given(), (std::vector<std::string>{"initialize", "events/fact"}));
}

// Each message reaches its program with its method's delivery (protocol/delivery.hpp): a fact,
// queued or sent at once, made by name or from the generated types, may be dropped on the way; the
// handshake, a timer's firing, a call and every other notification are kept.
TEST_F(SupervisorTest, EachMessageReachesItsProgramWithItsMethodsDelivery) {
  programs_.prepare = [](MemoryPeer& peer) { keeps_to_protocol(peer); };
  supervisor().notify(notification("events/fact", json::object{{"n", 1}}),
                      true);  // queued while it starts
  settle();
  ASSERT_EQ(supervisor().status().state, State::running);
  supervisor().notify(notification("timer/fired", json::object{{"timer", 3}}), false);
  proto::Fact fact;
  fact.name = proto::FactName::agent_status;
  supervisor().notify(*rpc::Outgoing::notification<proto::method::EventsFact>(fact), false);
  supervisor().notify(notification("proc/exit", json::object{{"proc", 1}, {"code", 0}}), false);
  supervisor().call(request("test/echo", json::object{}), seconds(60), [](rpc::CallOutcome) {});
  settle();
  using proto::Delivery;
  EXPECT_EQ(methods_given(), (std::vector<std::string>{"initialize", "events/fact", "timer/fired",
                                                       "events/fact", "proc/exit", "test/echo"}));
  EXPECT_EQ(programs_.last().deliveries(),
            (std::vector<Delivery>{Delivery::kept, Delivery::droppable, Delivery::kept,
                                   Delivery::droppable, Delivery::kept, Delivery::kept}));
}

TEST_F(SupervisorTest, NoAnswerToInitializeWithinTenSecondsStopsIt) {
  programs_.prepare = [](MemoryPeer& peer) { keeps_to_protocol(peer, std::nullopt); };
  supervisor().activate();
  settle();
  advance(milliseconds(9999));
  EXPECT_EQ(supervisor().status().state, State::starting);
  advance(milliseconds(1));
  EXPECT_EQ(supervisor().status().state, State::stopped);
  EXPECT_EQ(supervisor().status().reason, "it did not answer initialize within 10 s");
  EXPECT_TRUE(journal_has("stopped: it did not answer initialize within 10 s"));
  EXPECT_GE(programs_.last().stops(), 1);
}

struct HandshakeCase {
  const char* name;
  std::string answer;  // the plugin's answer's members after the id
  std::string reason;
};

class SupervisorHandshake : public SupervisorTest,
                            public ::testing::WithParamInterface<HandshakeCase> {};

TEST_P(SupervisorHandshake, EachFailureStopsItWithItsSentence) {
  const HandshakeCase& c = GetParam();
  programs_.prepare = [&c](MemoryPeer& peer) {
    peer.on_line = [&peer, &c](std::string_view line) {
      const json::object m = message(std::string(line));
      if (m.at("method") != "initialize") return;
      peer.say(R"({"jsonrpc":"2.0","id":)" + json::serialize(m.at("id")) + "," + c.answer + "}");
    };
  };
  supervisor().activate();
  settle();
  const Status s = supervisor().status();
  EXPECT_EQ(s.state, State::stopped);
  EXPECT_EQ(s.reason, c.reason);
  EXPECT_EQ(s.crashes, 0);  // a refusal to talk is not a crash: no restart
  EXPECT_EQ(programs_.made().size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(
    Sentences, SupervisorHandshake,
    ::testing::Values(
        HandshakeCase{"another_version", R"("result":{"protocolVersion":2,"capabilities":{}})",
                      "it speaks version 2 of the protocol; this Escouade speaks version 1"},
        HandshakeCase{"no_version", R"("result":{"capabilities":{}})",
                      "its answer to initialize gives no protocol version; this Escouade speaks "
                      "version 1"},
        HandshakeCase{"a_version_that_is_not_a_number", R"("result":{"protocolVersion":"1"})",
                      "its answer to initialize gives no protocol version; this Escouade speaks "
                      "version 1"},
        HandshakeCase{"an_error", R"("error":{"code":-32603,"message":"not ready"})",
                      "it answered initialize with the error -32603: not ready"}),
    [](const auto& param) { return std::string(param.param.name); });

TEST_F(SupervisorTest, AnAnswerWithoutCapabilitiesRunsAndIsJournaled) {
  programs_.prepare = [](MemoryPeer& peer) {
    peer.on_line = [&peer](std::string_view line) {
      const json::object m = message(std::string(line));
      if (m.at("method") != "initialize") return;
      peer.say(R"({"jsonrpc":"2.0","id":)" + json::serialize(m.at("id")) +
               R"(,"result":{"protocolVersion":1}})");
    };
  };
  supervisor().activate();
  settle();
  EXPECT_EQ(supervisor().status().state, State::running);
  EXPECT_TRUE(journal_has("its answer to initialize has no capabilities object"));
}

TEST_F(SupervisorTest, FourCrashesWithinFiveMinutesStopIt) {
  run();
  for (int crash = 1; crash <= 3; ++crash) {
    programs_.last().exit(3);
    settle();
    EXPECT_EQ(supervisor().status().crashes, crash);
    EXPECT_EQ(supervisor().status().state, State::running) << "restarted after crash " << crash;
    advance(seconds(30));
  }
  programs_.last().exit(3);
  settle();
  const Status s = supervisor().status();
  EXPECT_EQ(s.state, State::stopped);
  EXPECT_EQ(s.reason, "stopped after 4 crashes within 5 minutes");
  EXPECT_EQ(programs_.made().size(), 4u);
  EXPECT_TRUE(journal_has("crashed: exit code 3"));
}

TEST_F(SupervisorTest, ACrashOlderThanFiveMinutesIsForgotten) {
  run();
  for (int crash = 1; crash <= 6; ++crash) {
    programs_.last().exit(3);
    settle();
    ASSERT_EQ(supervisor().status().state, State::running) << "after crash " << crash;
    EXPECT_LE(supervisor().status().crashes, 3);
    advance(minutes(2));  // the window keeps at most the last three
  }
  // Three quick ones: with the one of the last 5 minutes they make four.
  advance(minutes(1) + seconds(59));
  for (int quick = 0; quick < 3; ++quick) {
    programs_.last().exit(3);
    settle();
  }
  EXPECT_EQ(supervisor().status().state, State::stopped);
  EXPECT_EQ(supervisor().status().reason, "stopped after 4 crashes within 5 minutes");
}

TEST_F(SupervisorTest, TheAppsRestartForgetsTheCrashes) {
  run();
  for (int crash = 1; crash <= 4; ++crash) {
    programs_.last().exit(3);
    settle();
  }
  ASSERT_EQ(supervisor().status().state, State::stopped);
  supervisor().restart();
  settle();
  EXPECT_EQ(supervisor().status().state, State::running);
  EXPECT_EQ(supervisor().status().crashes, 0);
}

TEST_F(SupervisorTest, AFullQueueLosesItsOldestAndTheJournalSaysHowMany) {
  programs_.prepare = [](MemoryPeer& peer) { keeps_to_protocol(peer, std::nullopt); };
  for (int n = 0; n < 300; ++n)
    supervisor().notify(notification("events/fact", json::object{{"n", n}}), true);
  settle();
  EXPECT_TRUE(
      journal_has("the queue of 256 messages is full while it starts: the oldest "
                  "(events/fact) was lost"));
  const json::object init = message(programs_.last().received().front());
  programs_.last().say(R"({"jsonrpc":"2.0","id":)" + json::serialize(init.at("id")) +
                       R"(,"result":{"protocolVersion":1,"capabilities":{}}})");
  settle();
  const auto& given = programs_.last().received();
  ASSERT_EQ(given.size(), 1u + 256u);
  EXPECT_EQ(message(given[1]).at("params").at("n"), 44);  // the 44 oldest were lost
  EXPECT_EQ(message(given.back()).at("params").at("n"), 299);
  EXPECT_TRUE(
      journal_has("44 messages were lost from a full queue (256 at most) while it started"));
}

TEST_F(SupervisorTest, ACallWaitingInTheQueueKeepsItsDelayFromWhenItWasMade) {
  programs_.prepare = [](MemoryPeer& peer) { keeps_to_protocol(peer, std::nullopt); };
  std::optional<rpc::CallOutcome> outcome;
  supervisor().call(request("test/echo", json::object{}), milliseconds(300),
                    [&](rpc::CallOutcome o) { outcome = std::move(o); });
  settle();
  advance(milliseconds(300));
  ASSERT_TRUE(outcome);
  EXPECT_EQ(outcome->kind, rpc::CallOutcome::Kind::timeout);
  EXPECT_TRUE(journal_has("test/echo: no answer within 300 ms"));
}

TEST_F(SupervisorTest, ACallUnderWayWhenItCrashesFailsAsClosed) {
  programs_.prepare = [](MemoryPeer& peer) {
    keeps_to_protocol(peer);
    auto answer = std::move(peer.on_line);
    peer.on_line = [answer](std::string_view line) {
      if (line.find("test/hang") == std::string_view::npos) answer(line);
    };
  };
  run();
  std::optional<rpc::CallOutcome> outcome;
  supervisor().call(request("test/hang", json::object{}), seconds(5),
                    [&](rpc::CallOutcome o) { outcome = std::move(o); });
  settle();
  programs_.last().exit(1);
  settle();
  ASSERT_TRUE(outcome);
  EXPECT_EQ(outcome->kind, rpc::CallOutcome::Kind::closed);
}

TEST_F(SupervisorTest, PastItsMemoryLimitItIsStoppedWithoutARestart) {
  run();
  programs_.last().memory = 1100ull * 1024 * 1024;
  advance(milliseconds(2000));
  const Status s = supervisor().status();
  EXPECT_EQ(s.state, State::stopped);
  EXPECT_EQ(s.reason, "stopped: 1100 MB of memory, past the limit of 1024 MB");
  EXPECT_EQ(programs_.made().size(), 1u);
}

// Less than a megabyte past the limit is still more than the limit, in the words too.
TEST_F(SupervisorTest, ABytePastItsMemoryLimitIsSaidAsTheNextMegabyte) {
  run();
  programs_.last().memory = 1024ull * 1024 * 1024 + 1;
  advance(milliseconds(2000));
  const Status s = supervisor().status();
  EXPECT_EQ(s.state, State::stopped);
  EXPECT_EQ(s.reason, "stopped: 1025 MB of memory, past the limit of 1024 MB");
}

TEST_F(SupervisorTest, WithinItsMemoryLimitItRunsOn) {
  run();
  programs_.last().memory = 1024ull * 1024 * 1024;
  advance(milliseconds(2000));
  advance(milliseconds(2000));
  EXPECT_EQ(supervisor().status().state, State::running);
}

TEST_F(SupervisorTest, ShutdownIsAnsweredThenItEnds) {
  run();
  bool closed = false;
  supervisor().shutdown(clock_.now() + seconds(1), [&] { closed = true; });
  settle();
  EXPECT_TRUE(closed);
  EXPECT_EQ(supervisor().status().state, State::stopped);
  EXPECT_EQ(supervisor().status().reason, "Escouade closed");
  EXPECT_TRUE(journal_has("answered shutdown"));
  EXPECT_EQ(programs_.last().stops(), 0);
}

TEST_F(SupervisorTest, ShutdownEscalatesPastItsSecond) {
  programs_.prepare = [](MemoryPeer& peer) { keeps_to_protocol(peer, 1, false); };
  run();
  bool closed = false;
  supervisor().shutdown(clock_.now() + seconds(1), [&] { closed = true; });
  settle();
  EXPECT_FALSE(closed);  // it answered but did not exit
  advance(milliseconds(999));
  EXPECT_FALSE(closed);
  EXPECT_EQ(programs_.last().stops(), 0);
  advance(milliseconds(1));
  EXPECT_EQ(programs_.last().stops(), 1);
  EXPECT_TRUE(closed);
  EXPECT_TRUE(journal_has("did not end within the second given at closing"));
}

// The app's restart of a running plugin asks it to end first, as closing does: shutdown, then
// its second to answer and exit; a new program only once it has.
TEST_F(SupervisorTest, ARestartSendsShutdownAndWaitsItsSecond) {
  run();
  supervisor().restart();
  settle();
  EXPECT_TRUE(journal_has("answered shutdown"));
  EXPECT_EQ(programs_.made().size(), 2u);  // it exited by itself: the new one started
  EXPECT_EQ(programs_.made().front()->stops(), 0);
  EXPECT_NE(programs_.made().front()->received().back().find(R"("method":"shutdown")"),
            std::string::npos);
  EXPECT_EQ(supervisor().status().state, State::running);
}

TEST_F(SupervisorTest, ARestartEndsAPluginThatDoesNotExitAfterItsSecond) {
  programs_.prepare = [](MemoryPeer& peer) { keeps_to_protocol(peer, 1, false); };
  run();
  supervisor().restart();
  settle();
  EXPECT_EQ(programs_.made().size(), 1u);  // it answered but did not exit
  advance(milliseconds(999));
  EXPECT_EQ(programs_.last().stops(), 0);
  advance(milliseconds(1));
  settle();
  EXPECT_EQ(programs_.made().front()->stops(), 1);
  EXPECT_TRUE(journal_has(
      "did not end within a second of shutdown for its restart: its processes were ended"));
  EXPECT_EQ(programs_.made().size(), 2u);
  EXPECT_EQ(supervisor().status().crashes, 0);
}

TEST_F(SupervisorTest, ARestartGivesEachAgentsLastAttachmentFirst) {
  run();
  supervisor().attach("agent-1",
                      request("agent/attach", json::object{{"agent", "agent-1"}, {"mode", "plan"}}),
                      [](rpc::CallOutcome) {});
  supervisor().attach("agent-2",
                      request("agent/attach", json::object{{"agent", "agent-2"}, {"mode", "plan"}}),
                      [](rpc::CallOutcome) {});
  supervisor().attach("agent-1",
                      request("agent/attach", json::object{{"agent", "agent-1"}, {"mode", "edit"}}),
                      [](rpc::CallOutcome) {});
  settle();
  programs_.last().exit(3);
  settle();
  ASSERT_EQ(supervisor().status().state, State::running);
  const auto methods = methods_given();
  ASSERT_GE(methods.size(), 3u);
  EXPECT_EQ(methods[0], "initialize");
  EXPECT_EQ(methods[1], "agent/attach");
  EXPECT_EQ(methods[2], "agent/attach");
  std::map<std::string, std::string> mode_of;  // by agent: what the new process was given
  for (std::size_t i = 1; i < 3; ++i) {
    const json::object m = message(programs_.last().received()[i]);
    mode_of[std::string(m.at("params").at("agent").as_string())] =
        std::string(m.at("params").at("mode").as_string());
  }
  EXPECT_EQ(mode_of,
            (std::map<std::string, std::string>{{"agent-1", "edit"}, {"agent-2", "plan"}}));
}

TEST_F(SupervisorTest, AStartThatFailsCountsAsACrash) {
  programs_.prepare = [](MemoryPeer& peer) {
    peer.start_failure = Error{boost::system::error_code{}, "cannot start ./plugin: no such file"};
  };
  supervisor().activate();
  settle();
  EXPECT_TRUE(journal_has("could not start: cannot start ./plugin: no such file"));
  EXPECT_GE(supervisor().status().crashes, 1);
}

TEST_F(SupervisorTest, AStartTheSystemHasNoRoomForIsTriedAgainAndIsNotACrash) {
  // A fork bomb in another plugin takes every process slot: this one's starts fail with EAGAIN.
  int failures_left = 3;
  programs_.prepare = [&failures_left](MemoryPeer& peer) {
    keeps_to_protocol(peer);
    if (failures_left-- > 0) {
      peer.start_failure = Error{platform::Errc::exhausted,
                                 "cannot start ./plugin: Resource temporarily unavailable"};
    }
  };
  std::optional<rpc::CallOutcome> echoed;
  supervisor().call(request("test/echo", json::object{{"n", 1}}), seconds(60),
                    [&](rpc::CallOutcome o) { echoed = std::move(o); });
  settle();
  EXPECT_EQ(supervisor().status().state, State::restarting);
  EXPECT_TRUE(journal_has("trying again in 1 s (not counted as a crash)"));
  advance(seconds(1));
  EXPECT_TRUE(journal_has("trying again in 2 s (not counted as a crash)"));
  advance(seconds(1));
  EXPECT_EQ(programs_.made().size(), 2u);  // not before its 2 s
  advance(seconds(1));
  EXPECT_TRUE(journal_has("trying again in 4 s (not counted as a crash)"));
  advance(seconds(4));
  EXPECT_EQ(supervisor().status().state, State::running);
  EXPECT_EQ(supervisor().status().crashes, 0);
  EXPECT_EQ(programs_.made().size(), 4u);
  // The call that waited through it was delivered once it ran.
  ASSERT_TRUE(echoed);
  ASSERT_TRUE(echoed->ok());
  EXPECT_EQ(echoed->result, (json::object{{"n", 1}}));
}

TEST_F(SupervisorTest, TheWaitBeforeAnotherTryStopsGrowingAtThirtySeconds) {
  programs_.prepare = [](MemoryPeer& peer) {
    peer.start_failure = Error{platform::Errc::exhausted, "cannot start ./plugin: no room"};
  };
  supervisor().activate();
  settle();
  for (int wait : {1, 2, 4, 8, 16, 30, 30}) {
    EXPECT_TRUE(journal_has("trying again in " + std::to_string(wait) + " s")) << wait;
    advance(seconds(wait));
  }
  EXPECT_EQ(supervisor().status().crashes, 0);
  EXPECT_EQ(supervisor().status().state, State::restarting);
}

TEST_F(SupervisorTest, ClosingWhileItWaitsForRoomStartsNothingMore) {
  programs_.prepare = [](MemoryPeer& peer) {
    peer.start_failure = Error{platform::Errc::exhausted, "cannot start ./plugin: no room"};
  };
  supervisor().activate();
  settle();
  bool closed = false;
  supervisor().shutdown(clock_.now() + seconds(1), [&] { closed = true; });
  EXPECT_TRUE(closed);
  advance(seconds(60));
  EXPECT_EQ(programs_.made().size(), 1u);
  EXPECT_EQ(supervisor().status().state, State::stopped);
}

// journald's default budget: 10,000 lines in each 30 s window; past it the rest of the window
// is counted, and the count journaled when the window ends.
TEST_F(SupervisorTest, AStderrFloodPastTenThousandLinesIsCountedNotJournaled) {
  run();
  const int lines = static_cast<int>(StderrLog::kWindowLines) + 50;
  for (int i = 1; i <= lines; ++i)
    programs_.last().say_error("l" + std::to_string(i));
  settle();
  const auto tail = journal_.tail(500);
  ASSERT_FALSE(tail.empty());
  EXPECT_NE(tail.back().find("stderr: l10000"), std::string::npos) << tail.back();
  EXPECT_FALSE(journal_has("stderr: l10001"));
  EXPECT_FALSE(journal_has("lines of stderr dropped"));
  advance(StderrLog::kWindow);
  EXPECT_TRUE(
      journal_has("50 lines of stderr dropped (300 bytes): it wrote more than its journal keeps "
                  "(10,000 lines or 512 KiB in 30 s)"));
  // A new window, a new budget.
  programs_.last().say_error("after the flood");
  settle();
  EXPECT_TRUE(journal_has("stderr: after the flood"));
}

// The bytes of a window are bounded too (512 KiB, half a journal file): a flood of long lines
// cannot rotate the journal's history away within seconds.
TEST_F(SupervisorTest, AFloodOfLongStderrLinesKeepsTheJournalsHistory) {
  run();
  const std::string kilobyte(1000, 'x');
  for (int i = 0; i < 600; ++i)
    programs_.last().say_error(kilobyte);
  settle();
  advance(StderrLog::kWindow);
  // 524 lines of 1000 bytes fit in 512 KiB; the 76 others were counted.
  EXPECT_TRUE(journal_has("76 lines of stderr dropped (76000 bytes)"));
  std::stringstream file;
  file << std::ifstream(logs_.path() / "dev.test.supervised.log").rdbuf();
  EXPECT_NE(file.str().find("started: in memory, dev.test.supervised"), std::string::npos);
  EXPECT_FALSE(fs::exists(logs_.path() / "dev.test.supervised.log.1"));  // never rotated
}

TEST_F(SupervisorTest, ACrashReportQuotesItsLastStderrLinesEvenWhenTheyWereDropped) {
  run();
  for (int i = 1; i <= 10100; ++i)
    programs_.last().say_error("line " + std::to_string(i));
  programs_.last().exit(3);
  settle();
  // The count comes at its end, without waiting for the window's end.
  EXPECT_TRUE(journal_has("100 lines of stderr dropped ("));
  EXPECT_TRUE(journal_has("last lines of stderr: line 10091 | "));
  EXPECT_TRUE(journal_has(" | line 10100"));
}

TEST_F(SupervisorTest, ItsWordsReachTheStatusMasked) {
  journal_.set_masker([](std::string& text) {
    for (auto at = text.find("hunter2"); at != std::string::npos; at = text.find("hunter2"))
      text.replace(at, 7, "\u2022\u2022\u2022\u2022");
  });
  programs_.prepare = [](MemoryPeer& peer) {
    peer.on_line = [&peer](std::string_view line) {
      const json::object m = message(std::string(line));
      if (m.at("method") != "initialize") return;
      peer.say(R"({"jsonrpc":"2.0","id":)" + json::serialize(m.at("id")) +
               R"(,"error":{"code":-32603,"message":"the token hunter2 is refused"}})");
    };
  };
  std::vector<std::string> reasons;
  supervisor_ = std::make_unique<Supervisor>(
      io_.get_executor(), supervisor().config(), programs_, journal_,
      [&](const Status& s) { reasons.push_back(s.reason); }, clock_);
  supervisor().activate();
  settle();
  const Status s = supervisor().status();
  EXPECT_EQ(s.state, State::stopped);
  EXPECT_EQ(s.reason,
            "it answered initialize with the error -32603: the token \u2022\u2022\u2022\u2022 is "
            "refused");
  ASSERT_FALSE(reasons.empty());
  for (const auto& r : reasons)
    EXPECT_EQ(r.find("hunter2"), std::string::npos) << r;
}

TEST_F(SupervisorTest, ARefusalStopsItWithoutARestart) {
  run();
  programs_.last().end(runtime::ProgramEnd{
      runtime::ProgramEnd::Kind::refusal, "its bundle imports node:child_process", {}, {}});
  settle();
  const Status s = supervisor().status();
  EXPECT_EQ(s.state, State::stopped);
  EXPECT_EQ(s.reason, "its bundle imports node:child_process");
  EXPECT_EQ(s.crashes, 0);
  EXPECT_EQ(programs_.made().size(), 1u);
}

TEST_F(SupervisorTest, TheProgramIsToldHowManyDecisionsItHolds) {
  programs_.prepare = [](MemoryPeer& peer) {
    keeps_to_protocol(peer);
    auto answer = std::move(peer.on_line);
    peer.on_line = [answer](std::string_view line) {
      if (line.find("permissions/decide") == std::string_view::npos) answer(line);
    };
  };
  run();
  int done = 0;
  for (int i = 0; i < 2; ++i) {
    supervisor().call(request("permissions/decide", json::object{}), milliseconds(500),
                      [&](rpc::CallOutcome) { ++done; });
  }
  settle();
  EXPECT_EQ(programs_.last().decisions_held(), 2u);
  advance(milliseconds(500));
  EXPECT_EQ(done, 2);
  EXPECT_EQ(programs_.last().decisions_held(), 0u);
}

TEST_F(SupervisorTest, TheStartedLineDescribesTheProgram) {
  run();
  EXPECT_TRUE(journal_has("started: in memory, dev.test.supervised"));
}

}  // namespace
}  // namespace escouade::supervisor
