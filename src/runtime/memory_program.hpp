#pragma once

// The twin of ProcessProgram for tests: a Program with no process behind it, driven by the test
// through its MemoryPeer. What the supervisor writes is kept; what the test makes the program
// say (stdout, stderr), how it ends, its memory and whether it starts at all are the test's.
// Every event is posted to the executor, as a real program's come from its pipes: never inline,
// in order; the test runs its loop (io.poll()) to deliver them.
//
// Thread: the test's, which runs the loop.

#include <boost/asio/any_io_executor.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/lifeline.hpp"
#include "runtime/program.hpp"

namespace escouade::runtime {

// The test's end of one in-memory program.
class MemoryPeer : public std::enable_shared_from_this<MemoryPeer> {
 public:
  // --- set before the start
  // Its start fails with this error.
  std::optional<Error> start_failure;
  // stop() ends it, killed by SIGKILL, as a process tree ends (else it lingers until end()).
  bool ends_when_stopped = true;
  // Called with each line it is given (without its '\n'), to answer as a scripted plugin does:
  // say() from here queues the answer after the line.
  std::function<void(std::string_view line)> on_line;

  // --- what happened
  const ProgramSpec& spec() const noexcept { return spec_; }
  bool started() const noexcept { return started_; }
  bool ended() const noexcept { return ended_; }
  int stops() const noexcept { return stops_; }
  // The lines it was given, in order, without their '\n'.
  const std::vector<std::string>& received() const noexcept { return received_; }
  // How each of them was sent (Program::write), in the same order.
  const std::vector<proto::Delivery>& deliveries() const noexcept { return deliveries_; }
  // What its supervisor last said of the permissions/decide calls it holds.
  std::size_t decisions_held() const noexcept { return decisions_held_; }

  // --- what the test makes it do
  // A line on its stdout (without '\n'), a line on its stderr.
  void say(std::string line);
  void say_error(std::string line);
  // It ends: a crash with this reason, or a refusal; after what it said before.
  void end(ProgramEnd end);
  void exit(int code) { end(ProgramEnd::of_process(ExitStatus{code, std::nullopt})); }
  // Its memory, as memory_bytes() reads it; none: it cannot be read.
  std::optional<std::uint64_t> memory;

 private:
  friend class MemoryProgram;
  void deliver(std::function<void(ProgramEvents&)> event);

  ProgramSpec spec_;
  boost::asio::any_io_executor executor_;
  ProgramEvents events_;
  bool started_ = false;
  bool ended_ = false;
  int stops_ = 0;
  std::vector<std::string> received_;
  std::vector<proto::Delivery> deliveries_;
  std::size_t decisions_held_ = 0;
  Lifeline::Token program_alive_{Lifeline().token()};
};

class MemoryProgram final : public Program {
 public:
  MemoryProgram(boost::asio::any_io_executor executor, ProgramSpec spec,
                std::shared_ptr<MemoryPeer> peer);
  ~MemoryProgram() override;

  Result<void> start(ProgramEvents events) override;
  // Every line is kept, whatever its delivery (which the peer records): a memory peer reads
  // whatever it is sent.
  void write(std::string line, proto::Delivery delivery) override;
  void stop() override;
  std::optional<int> pid() const override { return std::nullopt; }
  std::optional<std::uint64_t> memory_bytes() const override { return peer_->memory; }
  std::string describe() const override { return "in memory, " + peer_->spec_.plugin_id; }
  void decisions_held(std::size_t count) override { peer_->decisions_held_ = count; }
  bool counts_decisions() const override { return true; }

 private:
  Lifeline lifeline_;
  std::shared_ptr<MemoryPeer> peer_;
};

// Makes a MemoryProgram for each start, and keeps each one's peer, in the order they were made:
// the test reaches the running program through last(). `prepare`, when set, sets each new peer
// up before its start (a start failure, an auto-answer).
class MemoryProgramFactory final : public ProgramFactory {
 public:
  explicit MemoryProgramFactory(boost::asio::any_io_executor executor)
      : executor_(std::move(executor)) {}
  bool runs(RunKind) const override { return true; }
  std::unique_ptr<Program> make(const ProgramSpec& spec) override;

  std::function<void(MemoryPeer&)> prepare;
  const std::vector<std::shared_ptr<MemoryPeer>>& made() const noexcept { return made_; }
  MemoryPeer& last() { return *made_.back(); }

 private:
  boost::asio::any_io_executor executor_;
  std::vector<std::shared_ptr<MemoryPeer>> made_;
};

}  // namespace escouade::runtime
