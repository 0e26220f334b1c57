#include "runtime/program_session.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <optional>
#include <string>
#include <vector>

#include "protocol/gen/methods.hpp"
#include "runtime/memory_program.hpp"

namespace escouade::runtime {
namespace {

namespace json = boost::json;
using proto::Delivery;

// What the session sends reaches the program with the delivery of its message's method; the
// program's lines reach the session; a watcher sees each line sent, in order.
TEST(ProgramSession, TheSessionAndItsProgramAreWiredBothWays) {
  boost::asio::io_context io;
  MemoryProgramFactory factory(io.get_executor());
  ProgramSpec spec;
  spec.plugin_id = "dev.test.wired";
  auto program = factory.make(spec);
  std::vector<std::string> reports, seen;
  auto session = session_for(
      program.get(), io.get_executor(), [&](std::string_view s) { reports.emplace_back(s); },
      steady_clock(), [&](std::string_view line) { seen.emplace_back(line); });
  ProgramEvents events;
  feed_session(events, *session);
  ASSERT_TRUE(program->start(std::move(events)));
  MemoryPeer& peer = factory.last();
  peer.on_line = [&peer](std::string_view line) {
    if (line.find("test/echo") != std::string_view::npos) {
      peer.say(R"({"jsonrpc":"2.0","id":1,"result":{"echo":true}})");
    }
  };

  proto::Fact fact;
  fact.name = proto::FactName::agent_status;
  session->notify(*rpc::Outgoing::notification<proto::method::EventsFact>(fact));
  session->notify(*rpc::Outgoing::notification<proto::method::TimerFired>(proto::TimerParams{2}));
  std::optional<rpc::CallOutcome> got;
  session->call(*rpc::Outgoing::request_value("test/echo", json::object{}),
                std::chrono::seconds(30), [&](rpc::CallOutcome o) { got = std::move(o); });
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(10);  // a safety net
  while (!got && std::chrono::steady_clock::now() < limit)
    io.run_one_for(std::chrono::milliseconds(50));

  ASSERT_TRUE(got);
  ASSERT_TRUE(got->ok());
  EXPECT_EQ(got->result, json::parse(R"({"echo":true})"));
  EXPECT_EQ(peer.deliveries(),
            (std::vector<Delivery>{Delivery::droppable, Delivery::kept, Delivery::kept}));
  ASSERT_EQ(seen.size(), 3u);
  for (std::size_t i = 0; i < seen.size(); ++i)
    EXPECT_EQ(seen[i], peer.received()[i] + "\n");
  EXPECT_TRUE(reports.empty());
}

// A side whose program could not be made still has a session: its lines go nowhere, and its
// calls end by their delay or its closing, never by a crash.
TEST(ProgramSession, NoProgramMeansLinesGoNowhere) {
  boost::asio::io_context io;
  std::vector<std::string> seen;
  auto session = session_for(
      nullptr, io.get_executor(), [](std::string_view) {}, steady_clock(),
      [&](std::string_view line) { seen.emplace_back(line); });
  std::optional<rpc::CallOutcome> got;
  session->call(*rpc::Outgoing::request_value("test/echo", std::nullopt), std::chrono::seconds(30),
                [&](rpc::CallOutcome o) { got = std::move(o); });
  EXPECT_EQ(seen.size(), 1u);
  session->close();
  io.poll();
  ASSERT_TRUE(got);
  EXPECT_EQ(got->kind, rpc::CallOutcome::Kind::closed);
}

}  // namespace
}  // namespace escouade::runtime
