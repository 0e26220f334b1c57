#pragma once

// A plugin's program run as a process of its own (`"run": {"command": [...]}`): three pipes
// read and written with Asio, a process group it leads, its whole tree ended with it, its exit
// learnt from a pidfd. See docs/processes.md for how the tree is kept whole.
//
// Thread: the host's thread (the executor given). Each start ignores SIGPIPE in the whole process
// when it is at its default: a write to a plugin that died is an error, not the host's end.

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <memory>
#include <set>
#include <string_view>

#include "base/lifeline.hpp"
#include "platform/reaper.hpp"
#include "protocol/framing.hpp"
#include "runtime/program.hpp"
#include "runtime/tree_ender.hpp"

namespace escouade::runtime {

// What every process program of one host shares: the watchdog that ends the trees if the host
// dies, and the pids the host started itself (which reaping adopted orphans must leave alone).
struct ProcessContext {
  platform::Reaper* reaper = nullptr;  // may be null: no watchdog
  std::set<int> known_children;
  // The longest line read from a plugin's stdout (runtime::kMaxPluginLineBytes).
  std::size_t max_line_bytes = kMaxPluginLineBytes;
  // Ends trees off the host's thread (tree_ender.hpp); null: on it, as tests of one program may.
  TreeEnder* ender = nullptr;
  // After its exit, how long its pipes may stay open (held by something out of its tree) before
  // what they hold is read without waiting and its end delivered anyway.
  std::chrono::milliseconds linger{2000};
  static constexpr std::size_t kMaxPluginLineBytes = runtime::kMaxPluginLineBytes;
};

class ProcessProgram final : public Program {
 public:
  ProcessProgram(boost::asio::any_io_executor executor, ProgramSpec spec, ProcessContext& context);
  // Ends the tree if it still runs, and reaps it.
  ~ProcessProgram() override;

  Result<void> start(ProgramEvents events) override;
  // Bytes its input gets before any line, not counted against its input's bound (what the host
  // holds for it): the sandbox's start record, which holds the plugin's module and may be larger
  // than the bound. Before any write.
  void write_first(std::string bytes);
  // A request of the host's that the pipe takes whole reads its answer at once when the plugin
  // already gave it: its lines are then handed on before write() returns (process_program.cpp).
  void write(std::string line, proto::Delivery delivery) override;
  void write_shared(std::shared_ptr<const std::string> line, proto::Delivery delivery) override;
  // Kept bytes that end with a request of the host's in a form write() cannot read as one (a
  // sandbox helper's records): written and answered at once as write() does a request line.
  void write_request(std::string bytes);
  // Bytes written to it and not yet taken by its input.
  std::size_t input_backlog() const override;
  void stop() override;
  std::optional<int> pid() const override;
  std::optional<std::uint64_t> memory_bytes() const override;
  // "pid 4120, ./guard --fast"; before the start, the command alone.
  std::string describe() const override;

  // What its asynchronous handlers share with it (process_program.cpp).
  struct State;

 private:
  Lifeline lifeline_;  // before state_, which is made with its token
  std::shared_ptr<State> state_;
};

// Whether a line is a request of the host's as rpc::Outgoing writes it, its id before its method
// (an answer or a notification is not).
bool is_request_line(std::string_view line);

// Requests written one after another to several programs (a decision asked of every plugin at
// once), on this thread: while one lives, a request that would be written at once is held, and
// when the outermost one ends the held requests are written together (platform::write_batch:
// one system call on Linux, so that no plugin a write wakes takes the core before the others
// are written). No answer is read as soon as its request is written: every request goes out,
// and the plugins work on them, before any answer is handed on (process_program.cpp).
class RequestBurst {
 public:
  RequestBurst() noexcept;
  ~RequestBurst();
  RequestBurst(const RequestBurst&) = delete;
  RequestBurst& operator=(const RequestBurst&) = delete;
};

class ProcessProgramFactory final : public ProgramFactory {
 public:
  ProcessProgramFactory(boost::asio::any_io_executor executor, ProcessContext& context)
      : executor_(std::move(executor)), context_(context) {}
  bool runs(RunKind kind) const override { return kind == RunKind::command; }
  std::unique_ptr<Program> make(const ProgramSpec& spec) override {
    return std::make_unique<ProcessProgram>(executor_, spec, context_);
  }
  ProcessContext* process_context() override { return &context_; }

 private:
  boost::asio::any_io_executor executor_;
  ProcessContext& context_;
};

}  // namespace escouade::runtime
