#pragma once

// The channel between the host's thread and one instance's thread: the lines the host sends
// (the instance's stdin), what the instance writes (its stdout and stderr, posted to the host's
// executor as ProgramEvents), its turns of work (which the watchdog measures), and why it must
// stop, when it must.
//
// Thread: the host's thread calls push(), close_input(), stop() and decisions(); the instance's
// thread calls the rest; the watchdog's thread calls check_turn(). Events reach the host only
// through the executor, checked there against the SandboxProgram's lifeline token: none is
// delivered once the program's destructor has begun.

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <ctime>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "base/lifeline.hpp"
#include "protocol/framing.hpp"
#include "runtime/process_program.hpp"
#include "runtime/program.hpp"
#include "runtime/stderr_lines.hpp"
#include "sandbox/memory_account.hpp"

namespace escouade::sandbox {

class Watchdog;

// Why an instance must stop before it ends by itself.
enum class StopCause : std::uint8_t { none, stopped, turn_too_long, out_of_memory };

class Channel : public std::enable_shared_from_this<Channel> {
 public:
  Channel(boost::asio::any_io_executor executor, runtime::ProgramEvents events,
          Lifeline::Token owner, runtime::ProgramLimits limits, std::shared_ptr<Watchdog> watchdog);

  // --- the host's thread
  // A line for its input ('\n' included). A droppable one (a notification) is dropped, the
  // oldest first, while its input holds more than kInputBacklog bytes.
  void push(std::string line, bool droppable);
  // Its input ends: the instance reads the end once it took what was queued.
  void close_input();
  // It must stop now: its next interrupt check ends it, a wait for input ends.
  void stop(StopCause cause);
  void decisions(std::size_t held) noexcept { decisions_.store(held); }

  // --- the instance's thread
  // The next line for its input, waiting for it; nullopt at the end of its input or when it
  // must stop.
  std::optional<std::string> next_input();
  // The first line of its input for which `wanted` holds, waiting for it; the lines before and
  // around it stay queued, in order, under the same bound (escouade.call waits so for its
  // answer). `wanted` runs under the channel's lock, once a line. nullopt as next_input().
  std::optional<std::string> next_input_where(const std::function<bool(std::string_view)>& wanted);
  // Waits `duration` (a sleep of the instance: no CPU charged); false at once when it must stop,
  // as a stop ends the wait.
  bool sleep_for(std::chrono::nanoseconds duration);
  // Its standard output and error, split into lines as a process's are (proto::LineFramer,
  // runtime::StderrLines): a partial line kept until its end; `at_end` delivers it.
  void write_out(std::string_view bytes);
  void write_err(std::string_view bytes, bool at_end = false);
  // What is left of a partial line goes out as a line: at its end.
  void flush();
  // A turn of work begins or ends: the watchdog measures the CPU time between them.
  void turn_begins();
  void turn_ends();
  StopCause stop_cause() const noexcept { return cause_.load(); }
  // The sentence of the end the stop asked for ("a turn ran past 2000 ms: Escouade stopped its
  // instance", "its instance ran past 64 MB of memory: Escouade stopped it", "stopped by
  // Escouade"); nullopt when no stop was asked. Both kinds of instance end with these words.
  std::optional<std::string> stop_reason() const;
  // The budget of the turn that ran too long, in ms.
  long long over_budget_ms() const noexcept { return over_budget_ms_.load(); }
  // How the engine interrupts the instance's thread from another thread; set once its context
  // exists, cleared before it is destroyed. Called under the channel's lock.
  void set_interrupter(std::function<void()> interrupter);
  // The GC heap's size, as the instance last said it; counted with its account's blocks.
  void gc_bytes(std::uint64_t bytes) noexcept;
  std::uint64_t gc_bytes() const noexcept { return gc_bytes_.load(); }
  // The memory account that its thread's allocations are charged to (memory_account.hpp), once
  // the instance opened it.
  void account(memory::Account account) noexcept { account_.store(account); }
  // A wasm instance's linear memory, as it last said it: counted with the rest against the
  // memory limit (its maximum leaves an eighth of the limit to the rest, docs/sandbox.md).
  void wasm_memory_bytes(std::uint64_t bytes) noexcept { wasm_bytes_.store(bytes); }
  // What it holds: its GC heap, its wasm memory and what its account charges (0 without one).
  std::uint64_t memory_bytes() const noexcept;
  // Past its memory limit it is stopped (out_of_memory); whether it was.
  bool check_memory();
  const runtime::ProgramLimits& limits() const noexcept { return limits_; }
  // It ended: posted last, after every line it wrote.
  void ended(runtime::ProgramEnd end);

  // --- the watchdog's thread
  // Whether it is in a turn; past its budget, it is stopped (turn_too_long), and past its
  // memory limit too (out_of_memory).
  bool check_turn();

  // Past this many bytes not yet taken, notifications are dropped (as a process's input is).
  static constexpr std::size_t kInputBacklog = 4u * 1024u * 1024u;
  // A line of its output longer than this is dropped (the same as a process's,
  // runtime::ProcessContext::kMaxPluginLineBytes).
  static constexpr std::size_t kMaxLineBytes = runtime::ProcessContext::kMaxPluginLineBytes;
  // Past this many bytes of its output posted to the host and not yet delivered, the instance
  // waits for the host to take them.
  static constexpr std::size_t kOutputBacklog = 8u * 1024u * 1024u;

 private:
  // Posts an event; `bytes` of output it carries count against kOutputBacklog until it ran.
  template <class F>
  void post(F f, std::size_t bytes = 0);
  void wait_for_room();
  void interrupt_locked();

  boost::asio::any_io_executor executor_;
  runtime::ProgramEvents events_;  // used on the host's thread only, from posted handlers
  Lifeline::Token owner_;
  runtime::ProgramLimits limits_;
  std::shared_ptr<Watchdog> watchdog_;

  std::mutex mutex_;
  std::condition_variable input_ready_;
  std::condition_variable output_room_;
  std::size_t posted_bytes_ = 0;
  struct Queued {
    std::string line;
    bool droppable;
    std::uint64_t seq;  // counts every line pushed: next_input_where's cursor
  };
  // Takes input_[at] out; under the lock. Whether the host must now hear that it drained.
  std::optional<std::size_t> take_locked(std::size_t at, std::string& line);
  std::deque<Queued> input_;
  std::uint64_t pushed_ = 0;
  std::size_t input_bytes_ = 0;
  bool input_closed_ = false;
  bool input_full_ = false;
  std::size_t dropped_ = 0;
  std::function<void()> interrupter_;
  bool in_turn_ = false;
  timespec turn_start_{};
  clockid_t clock_{};
  bool has_clock_ = false;

  std::atomic<StopCause> cause_{StopCause::none};
  std::atomic<long long> over_budget_ms_{0};
  std::atomic<std::size_t> decisions_{0};
  std::atomic<std::uint64_t> gc_bytes_{0};
  std::atomic<memory::Account> account_{0};
  std::atomic<std::uint64_t> wasm_bytes_{0};

  // The instance's thread only.
  // Its stdout and stderr are split as a process's are.
  proto::LineFramer out_lines_{kMaxLineBytes};
  runtime::StderrLines err_lines_;
};

}  // namespace escouade::sandbox
