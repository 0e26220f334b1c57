#include "runtime/memory_program.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <csignal>
#include <string>
#include <vector>

namespace escouade::runtime {
namespace {

ProgramSpec spec() {
  ProgramSpec s;
  s.plugin_id = "dev.test.memory";
  return s;
}

struct Seen {
  std::vector<std::string> out, err;
  std::optional<ProgramEnd> end;
};

ProgramEvents recorder(Seen& seen) {
  ProgramEvents e;
  e.output_line = [&seen](std::string_view l) { seen.out.emplace_back(l); };
  e.error_line = [&seen](std::string_view l) { seen.err.emplace_back(l); };
  e.exited = [&seen](const ProgramEnd& end) { seen.end = end; };
  return e;
}

TEST(MemoryProgram, LinesInAndOutStderrAndTheEndComeInOrderNeverInline) {
  boost::asio::io_context io;
  MemoryProgramFactory factory(io.get_executor());
  auto program = factory.make(spec());
  Seen seen;
  ASSERT_TRUE(program->start(recorder(seen)));
  MemoryPeer& peer = factory.last();
  program->write("{\"a\":1}\n", proto::Delivery::kept);
  EXPECT_EQ(peer.received(), std::vector<std::string>{"{\"a\":1}"});
  peer.say("one");
  peer.say_error("trace");
  peer.exit(3);
  peer.say("after the end");  // a program that ended says nothing more
  EXPECT_TRUE(seen.out.empty());
  io.poll();
  EXPECT_EQ(seen.out, std::vector<std::string>{"one"});
  EXPECT_EQ(seen.err, std::vector<std::string>{"trace"});
  ASSERT_TRUE(seen.end);
  EXPECT_EQ(seen.end->reason, "exit code 3");
}

TEST(MemoryProgram, AScriptedPluginAnswersWhatItIsGiven) {
  boost::asio::io_context io;
  MemoryProgramFactory factory(io.get_executor());
  factory.prepare = [](MemoryPeer& peer) {
    peer.on_line = [&peer](std::string_view line) { peer.say("echo " + std::string(line)); };
  };
  auto program = factory.make(spec());
  Seen seen;
  ASSERT_TRUE(program->start(recorder(seen)));
  program->write("ping\n", proto::Delivery::kept);
  io.poll();
  EXPECT_EQ(seen.out, std::vector<std::string>{"echo ping"});
}

TEST(MemoryProgram, StopEndsItAsAKilledTreeUnlessItLingers) {
  boost::asio::io_context io;
  MemoryProgramFactory factory(io.get_executor());
  auto program = factory.make(spec());
  Seen seen;
  ASSERT_TRUE(program->start(recorder(seen)));
  program->stop();
  io.poll();
  ASSERT_TRUE(seen.end);
  EXPECT_EQ(seen.end->status->signal, SIGKILL);
  EXPECT_EQ(factory.last().stops(), 1);

  factory.prepare = [](MemoryPeer& peer) { peer.ends_when_stopped = false; };
  auto stubborn = factory.make(spec());
  Seen second;
  ASSERT_TRUE(stubborn->start(recorder(second)));
  stubborn->stop();
  io.poll();
  EXPECT_FALSE(second.end);
}

TEST(MemoryProgram, AStartFailureAndTheMemoryAreTheTests) {
  boost::asio::io_context io;
  MemoryProgramFactory factory(io.get_executor());
  factory.prepare = [](MemoryPeer& peer) {
    peer.start_failure = Error{boost::system::error_code{}, "cannot start ./plugin: boom"};
  };
  auto program = factory.make(spec());
  Seen seen;
  auto started = program->start(recorder(seen));
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error().message, "cannot start ./plugin: boom");
  factory.last().memory = 1234;
  EXPECT_EQ(program->memory_bytes(), 1234u);
}

TEST(MemoryProgram, NothingIsDeliveredOnceTheProgramIsDestroyed) {
  boost::asio::io_context io;
  MemoryProgramFactory factory(io.get_executor());
  auto program = factory.make(spec());
  Seen seen;
  ASSERT_TRUE(program->start(recorder(seen)));
  factory.last().say("late");
  program.reset();
  io.poll();
  EXPECT_TRUE(seen.out.empty());
}

}  // namespace
}  // namespace escouade::runtime
