#pragma once

// Inside a sandbox helper (escouade-sandbox): the instance's ends of its pipes to the host. Its
// input is the records the host writes on its stdin (sandbox/wire.hpp: the start, the lines it is
// sent, the decisions it holds); its output goes to its stdout and stderr as it writes them, raw,
// for the host to split as it splits a process's; how it ended, and what it reads ahead while it
// waits, go to the host on descriptor 3. It also keeps the instance's turns of work (which the
// watchdog measures), its memory (the account, the GC heap, a wasm memory), and why it must stop.
//
// Thread: the instance's thread calls everything but check_turn(), which the watchdog's thread
// calls; stop() and the control records may come from either.

#include <time.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "runtime/line_queue.hpp"
#include "runtime/program.hpp"
#include "sandbox/memory_account.hpp"
#include "sandbox/status_page.hpp"
#include "sandbox/wire.hpp"

namespace escouade::sandbox {

class Watchdog;

// Why an instance must stop before it ends by itself.
enum class StopCause : std::uint8_t { none, turn_too_long, out_of_memory, compile_too_long };

// The descriptors of a helper: its pipes and its control pipe.
struct HelperFds {
  int in = 0;
  int out = 1;
  int err = 2;
  int control = 3;
};

class Channel : public std::enable_shared_from_this<Channel> {
 public:
  Channel(HelperFds fds, StatusPage* status, runtime::ProgramLimits limits,
          std::shared_ptr<Watchdog> watchdog);

  // --- its input
  // The start record, first on its input, read whole before anything else; nullopt when the
  // input ended or began with something else.
  std::optional<wire::Start> read_start();
  // The next line of its input ('\n' included), waiting for it outside any turn; nullopt at the
  // end of its input, or at once when it must stop.
  std::optional<std::string> next_input();
  // The first line of its input for which `wanted` holds, waiting for it; the lines before and
  // around it stay queued, in order, for next_input (escouade.call waits so for its answer).
  // What waits so is bounded: past kInputBacklog bytes, notifications are dropped, the oldest
  // first, and the host hears that its input is full, then that it drained. `wanted` runs once
  // a line. nullopt at the end of its input.
  std::optional<std::string> next_input_where(const std::function<bool(std::string_view)>& wanted);
  // Waits `duration` (a sleep of the instance: no CPU charged); false at once when it must stop.
  bool sleep_for(std::chrono::nanoseconds duration);

  // --- its output
  // Its standard output and error, written through as they come. A write waits while the host
  // does not read (its pipe is full): no CPU is charged meanwhile.
  void write_out(std::string_view bytes);
  void write_err(std::string_view bytes, bool at_end = false);
  // Nothing is held back: kept for the engine's code, which says when an instance ends.
  void flush() {}
  // Its module is compiled or decoded and nothing of it has run yet (wire::ToHost::ready).
  void ready();
  // A control record for the host.
  void send(wire::ToHost kind, std::string_view bytes);
  // It ended: the last record. Both kinds of instance end with these words.
  void ended(const runtime::ProgramEnd& end);

  // --- its turns and limits
  // A turn of work begins or ends: the watchdog measures the CPU time between them. Its budget
  // is set when it begins (500 ms when it holds a decision then, 2000 ms otherwise) and kept
  // until it ends; `compile` begins a compile's turn, with kCompileBudget. `message` is the line
  // of input the turn handles (empty: none); a turn stopped past its budget names it in its end
  // (wire::Ended::turn), cut to kTurnMessageBytes. Without one, the turn goes on with the last
  // (a wasm guest resumed after a wait, an exception told after the turn that threw it).
  void turn_begins(bool compile = false, std::optional<std::string_view> message = std::nullopt);
  void turn_ends();
  StopCause stop_cause() const noexcept { return cause_.load(); }
  // It must stop now: its next interrupt check ends it. If it has not ended kStopGrace later
  // (the engine busy where it does not look), the watchdog ends the helper with the reason.
  void stop(StopCause cause);
  // The sentence of the end the stop asked for ("a turn ran past 2000 ms: Escouade stopped its
  // instance", "its instance ran past 64 MB of memory: Escouade stopped it", "its module does
  // not compile within 64 MB of memory" when a compile took it there); nullopt when no stop was
  // asked.
  std::optional<std::string> stop_reason() const;
  // Whether that end is a refusal (a compile past its budget or its memory never fits), not a
  // crash.
  bool stop_is_refusal() const noexcept {
    return cause_.load() == StopCause::compile_too_long || stopped_compiling_.load();
  }
  long long over_budget_ms() const noexcept { return over_budget_ms_.load(); }
  // How the engine interrupts the instance's thread from another thread; set once its context
  // exists, cleared before it is destroyed.
  void set_interrupter(std::function<void()> interrupter);
  // The GC heap's size, as the instance last said it; counted with its account's blocks.
  void gc_bytes(std::uint64_t bytes) noexcept;
  std::uint64_t gc_bytes() const noexcept { return gc_bytes_.load(); }
  void account(memory::Account account) noexcept { account_.store(account); }
  memory::Account account() const noexcept { return account_.load(); }
  // A wasm instance's linear memory, as it last said it: counted with the rest.
  void wasm_memory_bytes(std::uint64_t bytes) noexcept;
  // What it holds: its GC heap, its wasm memory and what its account charges.
  std::uint64_t memory_bytes() const noexcept;
  // Past its memory limit it is stopped (out_of_memory); whether it was.
  bool check_memory();
  const runtime::ProgramLimits& limits() const noexcept { return limits_; }
  void set_limits(const runtime::ProgramLimits& limits) noexcept { limits_ = limits; }

  // --- the watchdog's thread
  // Whether it needs watching (in a turn, or stopping); past its budget it is stopped
  // (turn_too_long, compile_too_long), past its memory limit too (out_of_memory), and past the
  // grace of a stop the helper ends.
  bool check_turn();

  // Past this many bytes read ahead and not yet taken, notifications are dropped.
  static constexpr std::size_t kInputBacklog = 4u * 1024u * 1024u;
  // A record longer than this on its input is not the host's: the input ends there.
  static constexpr std::size_t kMaxRecordBytes = 64u * 1024u * 1024u;
  // The start record's bound: a bundle (8 MiB), its stencil (CompileCache::kMaxStencilBytes,
  // 96 MiB) and its root files.
  static constexpr std::size_t kMaxStartBytes = 128u * 1024u * 1024u;
  // The CPU a compile may take (a bundle compiled at the start, or a module): a bundle that
  // needs more never will run.
  static constexpr std::chrono::milliseconds kCompileBudget{10000};
  static constexpr std::size_t kTurnMessageBytes = 300;
  // How long an instance asked to stop has to end before its helper is ended.
  static constexpr std::chrono::milliseconds kStopGrace{1000};

 private:
  // Reads what comes on its input into the queue: false at its end.
  bool read_more();
  void queue(std::string line, proto::Delivery delivery);
  std::string take(std::size_t at);
  void interrupt_locked();
  // The helper ends now, with the stop's reason (the watchdog, past kStopGrace).
  [[noreturn]] void end_helper();

  HelperFds fds_;
  StatusPage* status_;
  runtime::ProgramLimits limits_;
  std::shared_ptr<Watchdog> watchdog_;

  // The instance's thread only: its input.
  wire::RecordReader records_{kMaxRecordBytes};
  runtime::LineQueue input_{kInputBacklog};
  bool input_ended_ = false;
  bool input_full_ = false;
  std::atomic<std::size_t> decisions_{0};

  std::mutex control_mutex_;  // the records of the instance's and the watchdog's threads

  std::mutex mutex_;
  std::condition_variable stopped_;  // sleep_for's wait
  std::function<void()> interrupter_;
  bool in_turn_ = false;
  bool compiling_ = false;
  long long budget_ms_ = 0;
  std::string turn_message_;  // the line of the turn in progress (or the last), cut
  // The thread's CPU time (ns) the turn in progress is counted from, set by the watchdog's
  // first look at it (check_turn) to the time it read at its look before, which the turn began
  // after: found there, not read at each turn's start, which was a system call a turn.
  long long turn_start_ns_ = 0;
  bool turn_start_read_ = false;
  std::optional<long long> last_look_ns_;  // the thread's CPU time at the watchdog's last look
  clockid_t clock_{};
  bool has_clock_ = false;
  std::chrono::steady_clock::time_point stop_at_{};

  std::atomic<StopCause> cause_{StopCause::none};
  std::atomic<bool> stopped_compiling_{false};  // the stop came during a compile's turn
  std::atomic<long long> over_budget_ms_{0};
  std::atomic<std::uint64_t> gc_bytes_{0};
  std::atomic<memory::Account> account_{0};
  std::atomic<std::uint64_t> wasm_bytes_{0};
};

}  // namespace escouade::sandbox
