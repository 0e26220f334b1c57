#pragma once

// One Supervisor per plugin: it starts the plugin's program at its first activation, holds the
// handshake, queues what comes while it starts, gives every call its delay, restarts it after a
// crash (3 times within 5 minutes), watches its memory, and closes it. It journals each of
// these, and reports each change of state.
//
// Thread: the host's thread (the executor given); no method may be called from another.

#include <boost/asio/any_io_executor.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.hpp"
#include "base/lifeline.hpp"
#include "journal/journal.hpp"
#include "journal/trace_file.hpp"
#include "rpc/session.hpp"
#include "runtime/program.hpp"
#include "services/run_scope.hpp"
#include "supervisor/stderr_log.hpp"

namespace escouade::supervisor {

// A harness's attachment of an agent (spec: "What each agent had attached to it ... is given
// again to the new process before any other message"): a call the app makes, remembered per
// agent; not a method of the schema.
inline constexpr std::string_view kAttachMethod = "agent/attach";

enum class State { idle, starting, running, restarting, stopped, disabled };
std::string_view to_string(State s) noexcept;

struct Status {
  std::string id;
  State state = State::idle;
  std::optional<int> pid;
  int crashes = 0;     // within the crash window
  std::string reason;  // why it stopped (or the last crash), in English
};

struct SupervisorConfig {
  std::string id;
  std::string version;
  // What to run; `runnable` false (no run, or no activation): it never starts and calls get
  // their default answers.
  runtime::ProgramSpec program;
  bool runnable = true;
  std::string escouade_version;
  std::string lang = "en";
  std::uint64_t memory_limit_bytes = 1024ull * 1024 * 1024;
  std::chrono::milliseconds memory_period{2000};
  std::size_t queue_limit = 256;
  int restarts_allowed = 3;  // a crash restarts it this many times within the window
  std::chrono::seconds crash_window{300};
  // Every line both ways, masked, when given (escouade-host --trace).
  std::shared_ptr<TraceFile> trace;
};

class Supervisor {
 public:
  using StatusChanged = std::function<void(const Status&)>;
  // Binds the host's handlers on each new session with the plugin (one per run): what the host
  // serves it, the log notification included. What they open for the plugin goes to the run's
  // scope, which ends when the program does.
  using Binder = std::function<void(rpc::Session&, services::RunScope&)>;

  // `clock` keeps every delay, the crash window and the memory period; it and `programs`
  // outlive the supervisor.
  Supervisor(boost::asio::any_io_executor executor, SupervisorConfig config,
             runtime::ProgramFactory& programs, Journal& journal, StatusChanged on_status,
             Clock& clock = steady_clock());
  ~Supervisor();
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  void set_binder(Binder binder) { binder_ = std::move(binder); }

  // A notification (`message` is one, made once for every plugin it goes to). When the program
  // does not run: `start` (an activation) starts it and the notification waits in the queue;
  // otherwise it is not delivered. Returns whether it was sent or queued.
  bool notify(rpc::Outgoing message, bool start);
  // An activation that brings no message for it (a fact of its activation it does not hear):
  // starts the program when it is idle. Returns whether it started it.
  bool activate();
  // A call (`message` is a request), with its delay counted from now (the time in the queue
  // included). Starts the program when it does not run. `done` is called once, with the result
  // in the message's ResultForm; on timeout, a crash or a stopped plugin, the caller applies its
  // default answer. An answer already there when the request is written is given before call()
  // returns (rpc::Session::call).
  void call(rpc::Outgoing message, std::chrono::milliseconds timeout, rpc::CallDone done);
  // agent/attach: sent like a call, and remembered per agent (`agent`) so that a new process
  // gets the last one of each agent again before any other message.
  void attach(const std::string& agent, rpc::Outgoing message, rpc::CallDone done);

  // The app's restart: crashes forgotten, the program (re)started now. A plugin running past
  // its handshake is sent shutdown first, and given kEndGrace to answer and exit, as at
  // closing, before its tree is ended.
  void restart();
  static constexpr std::chrono::seconds kEndGrace{1};
  // Switched off (disabled: stopped, refuses everything) or on again (idle until activated).
  void set_enabled(bool enabled);
  // Stops the program, not as a crash, and leaves the plugin idle: the next activation starts
  // a new one with the manifest and permissions of now (switched off for one project).
  void recycle(std::string reason);
  // Sends shutdown and waits for the answer and the exit until `deadline`, then ends the
  // program's tree. `done` is called once it no longer runs.
  void shutdown(Clock::TimePoint deadline, std::function<void()> done);

  Status status() const;
  const SupervisorConfig& config() const noexcept { return config_; }

 private:
  struct CallState;
  // A message waiting for the program to start: a notification, or a call with its state.
  struct Queued {
    rpc::Outgoing message;
    std::shared_ptr<CallState> call;  // null for a notification
  };
  enum class Intent { none, stop, restart, shutdown, disable, recycle };

  void call_queued(Queued q, std::chrono::milliseconds timeout, rpc::CallDone done);
  bool start();
  bool accept_notification(Queued q, bool start_it);
  void begin_handshake();
  void handshake_done(rpc::CallOutcome outcome);
  void send_queued(Queued q);
  void send_now(Queued q, std::chrono::milliseconds left, std::chrono::milliseconds named,
                rpc::CallDone done);
  void enqueue(Queued q);
  void program_exited(const runtime::ProgramEnd& end);
  // One more (+1) or one fewer (-1) permissions/decide call sent and not yet ended.
  void held_decisions(int change);
  void stop_program(Intent intent, std::string reason);
  // Ends the program's tree if it still runs at `deadline`, journaling `late` then; its exit
  // comes to program_exited with `intent_` as it is.
  void end_at(Clock::TimePoint deadline, std::string late);
  // Sends shutdown, its answer awaited until `deadline`.
  void send_shutdown(Clock::TimePoint deadline);
  void set_state(State s, std::string reason = {});
  void arm_memory_timer();
  void check_memory();
  void fail_queue(rpc::CallOutcome::Kind kind);
  // Journals how many messages a full queue lost since the last report, if any.
  void report_lost();
  void finish(const std::shared_ptr<CallState>& c, rpc::CallOutcome outcome);
  int recent_crashes(std::chrono::steady_clock::time_point now);

  boost::asio::any_io_executor executor_;
  SupervisorConfig config_;
  runtime::ProgramFactory& programs_;
  Journal& journal_;
  StatusChanged on_status_;
  Binder binder_;

  State state_ = State::idle;
  std::string reason_;
  std::unique_ptr<runtime::Program> program_;
  std::unique_ptr<rpc::Session> session_;
  std::unique_ptr<services::RunScope> run_;  // of the program that runs, with session_
  std::deque<Queued> queue_;
  std::size_t lost_ = 0;  // messages dropped from a full queue since the last report
  std::deque<std::chrono::steady_clock::time_point> crashes_;
  StderrLog stderr_;
  // The last agent/attach of each agent, and the calls waiting for it to be sent again.
  std::map<std::string, rpc::Outgoing> attachments_;
  std::size_t decisions_held_ = 0;  // permissions/decide calls under way in this run
  Intent intent_ = Intent::none;
  std::string intent_reason_;
  std::function<void()> shutdown_done_;
  Clock& clock_;
  std::unique_ptr<Timer> memory_timer_;
  std::unique_ptr<Timer> shutdown_timer_;
  std::unique_ptr<Timer> retry_timer_;   // the next try at a start the system had no room for
  std::chrono::seconds retry_delay_{0};  // the last wait before such a try; 0 once one ran
  // Every handler that reaches `this` is guarded by it (docs/lifetimes.md).
  Lifeline lifeline_;
};

}  // namespace escouade::supervisor
