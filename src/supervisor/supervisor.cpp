#include "supervisor/supervisor.hpp"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <utility>

#include "platform/errors.hpp"
#include "protocol/gen/methods.hpp"
#include "protocol/gen/types.hpp"
#include "runtime/process_program.hpp"
#include "runtime/program_session.hpp"
#include "supervisor/handshake.hpp"

namespace escouade::supervisor {

namespace asio = boost::asio;
namespace json = boost::json;
using rpc::CallOutcome;

namespace {

// The plugin's calls that may wait for their answers at once (rpc::Session::set_max_in_flight):
// each holds a worker's work or its answer, files/read's up to 256 KiB.
constexpr std::size_t kCallsInFlight = 128;
// The longest wait before another try at a start the system had no room for.
constexpr std::chrono::seconds kLongestRetry{30};

}  // namespace

std::string_view to_string(State s) noexcept {
  switch (s) {
    case State::idle:
      return "idle";
    case State::starting:
      return "starting";
    case State::running:
      return "running";
    case State::restarting:
      return "restarting";
    case State::stopped:
      return "stopped";
    case State::disabled:
      return "disabled";
  }
  return "unknown";
}

// One call from Escouade to the plugin, from the moment it is made to its one outcome.
struct Supervisor::CallState {
  rpc::Outgoing message;
  std::chrono::milliseconds timeout;
  Clock::TimePoint start;
  rpc::CallDone done;
  // Armed only while it waits in the queue: a call sent at once has the session's deadline.
  std::unique_ptr<Timer> deadline;
  bool sent = false;
  bool finished = false;

  void stop_waiting() {
    if (deadline) deadline->cancel();
  }
};

Supervisor::Supervisor(asio::any_io_executor executor, SupervisorConfig config,
                       runtime::ProgramFactory& programs, Journal& journal, StatusChanged on_status,
                       Clock& clock)
    : executor_(executor),
      config_(std::move(config)),
      programs_(programs),
      journal_(journal),
      on_status_(std::move(on_status)),
      stderr_(executor, journal, clock),
      clock_(clock),
      memory_timer_(clock.make_timer(executor)),
      shutdown_timer_(clock.make_timer(executor)),
      retry_timer_(clock.make_timer(executor)) {}

Supervisor::~Supervisor() {
  // Calls under way and queued get their default answers while the supervisor still stands
  // (their callers may read its status); from then on nothing of it runs.
  memory_timer_->cancel();
  shutdown_timer_->cancel();
  retry_timer_->cancel();
  if (session_) session_->close();
  run_.reset();
  fail_queue(CallOutcome::Kind::closed);
  lifeline_.end();
  if (program_) program_->stop();
}

Status Supervisor::status() const {
  Status s;
  s.id = config_.id;
  s.state = state_;
  if (program_) s.pid = program_->pid();
  const auto now = clock_.now();
  for (auto t : crashes_) {
    if (now - t <= config_.crash_window) ++s.crashes;
  }
  s.reason = reason_;
  return s;
}

void Supervisor::set_state(State s, std::string reason) {
  // A reason may quote the plugin (its error to initialize): it reaches the app through the
  // masker, as the journal does.
  journal_.mask(reason);
  const bool changed = s != state_ || reason != reason_;
  state_ = s;
  reason_ = std::move(reason);
  if (changed && on_status_) on_status_(status());
}

int Supervisor::recent_crashes(Clock::TimePoint now) {
  while (!crashes_.empty() && now - crashes_.front() > config_.crash_window)
    crashes_.pop_front();
  return static_cast<int>(crashes_.size());
}

// --- messages to the plugin -------------------------------------------------------------

bool Supervisor::notify(rpc::Outgoing message, bool start_it) {
  return accept_notification(Queued{std::move(message), nullptr}, start_it);
}

bool Supervisor::activate() {
  if (state_ != State::idle || !config_.runnable) return false;
  return start();
}

bool Supervisor::accept_notification(Queued q, bool start_it) {
  if (state_ == State::running && session_) {
    send_queued(std::move(q));
    return true;
  }
  const bool waiting = state_ == State::starting || state_ == State::restarting;
  if (!waiting && !(start_it && state_ == State::idle && config_.runnable)) return false;
  enqueue(std::move(q));
  if (state_ == State::idle) start();
  return true;
}

void Supervisor::call(rpc::Outgoing message, std::chrono::milliseconds timeout,
                      rpc::CallDone done) {
  call_queued(Queued{std::move(message), nullptr}, timeout, std::move(done));
}

void Supervisor::call_queued(Queued q, std::chrono::milliseconds timeout, rpc::CallDone done) {
  if (config_.runnable && state_ == State::running && session_ &&
      timeout > std::chrono::milliseconds(0)) {
    send_now(std::move(q), timeout, timeout, std::move(done));
    return;
  }
  auto c = std::make_shared<CallState>(CallState{q.message, {}, {}, {}, {}, false, false});
  c->timeout = timeout;
  c->start = clock_.now();
  c->done = std::move(done);
  if (!config_.runnable || state_ == State::stopped || state_ == State::disabled) {
    // It does not run and will not start by itself: the default answer applies at once.
    asio::post(executor_, lifeline_.guard([this, c] {
      finish(c, CallOutcome{CallOutcome::Kind::closed, {}, {}, {}, {}});
    }));
    return;
  }
  q.call = c;
  if (state_ == State::running && session_) {
    send_queued(std::move(q));
    return;
  }
  // Its delay runs while it waits for the program to start.
  c->deadline = clock_.make_timer(executor_);
  c->deadline->wait_until(c->start + timeout, lifeline_.guard([this, c](bool fired) {
    if (!fired || c->sent || c->finished) return;
    journal_.warn(std::string(c->message.method()) + ": no answer within " +
                  std::to_string(c->timeout.count()) + " ms");
    finish(c, CallOutcome{CallOutcome::Kind::timeout, {}, {}, clock_.now() - c->start, {}});
  }));
  enqueue(std::move(q));
  if (state_ == State::idle) start();
}

void Supervisor::attach(const std::string& agent, rpc::Outgoing message, rpc::CallDone done) {
  // Remembered first: a new process gets it again (handshake_done) before anything else.
  attachments_.insert_or_assign(agent, message);
  const auto delay = message.default_delay();
  call(std::move(message), delay, std::move(done));
}

void Supervisor::finish(const std::shared_ptr<CallState>& c, CallOutcome outcome) {
  if (c->finished) return;
  c->finished = true;
  c->stop_waiting();
  if (c->done) c->done(std::move(outcome));
}

void Supervisor::enqueue(Queued q) {
  if (queue_.size() >= config_.queue_limit) {
    Queued oldest = std::move(queue_.front());
    queue_.pop_front();
    if (lost_ == 0) {
      journal_.warn("the queue of " + std::to_string(config_.queue_limit) +
                    " messages is full while it starts: the oldest (" +
                    std::string(oldest.message.method()) + ") was lost");
    }
    ++lost_;
    if (oldest.call) finish(oldest.call, CallOutcome{CallOutcome::Kind::closed, {}, {}, {}, {}});
  }
  queue_.push_back(std::move(q));
}

void Supervisor::send_queued(Queued q) {
  if (!q.call) {
    session_->notify(std::move(q.message));
    return;
  }
  auto c = q.call;
  if (c->finished) return;  // its delay ran out while it waited
  c->sent = true;
  c->stop_waiting();
  const auto left =
      c->timeout - std::chrono::duration_cast<std::chrono::milliseconds>(clock_.now() - c->start);
  if (left <= std::chrono::milliseconds(0)) {
    journal_.warn(std::string(c->message.method()) + ": no answer within " +
                  std::to_string(c->timeout.count()) + " ms");
    finish(c, CallOutcome{CallOutcome::Kind::timeout, {}, {}, clock_.now() - c->start, {}});
    return;
  }
  send_now(std::move(q), left, c->timeout, [this, c](CallOutcome o) { finish(c, std::move(o)); });
}

// Hands a call to the session with `left` of its delay `named`. The usual call comes here
// from call_queued directly: it runs, so nothing waits and no delay runs before the session's
// own, and the call state a queued call shares with its delay is not made (callgrind,
// bench_host call: an allocation, its shared count and a clock reading a call).
void Supervisor::send_now(Queued q, std::chrono::milliseconds left, std::chrono::milliseconds named,
                          rpc::CallDone done) {
  // A sandboxed instance holding a decision gets the shorter turn: it is told how many it holds.
  // A process is told nothing, so nothing is counted for it.
  const bool decision = q.message.method() == proto::method::PermissionsDecide::kName && program_ &&
                        program_->counts_decisions();
  if (!decision) {
    // Nothing of the supervisor's to do at its end: the caller's completion goes to the session
    // as it is, without a guarded one around it (callgrind, bench_host call: an allocation and
    // a call through one more std::function a call; bench_host decide 100, 56 bytes and about
    // 400 instructions a plugin asked). The session is the supervisor's, and closing it
    // completes its calls before either goes.
    session_->call(std::move(q.message), left, std::move(done), named);
    return;
  }
  held_decisions(+1);
  auto then = lifeline_.guard([this, done = std::move(done)](CallOutcome o) {
    held_decisions(-1);
    if (done) done(std::move(o));
  });
  session_->call(std::move(q.message), left, std::move(then), named);
}

void Supervisor::held_decisions(int change) {
  if (change < 0 && decisions_held_ == 0) return;  // its program ended: the count restarted
  decisions_held_ = change < 0 ? decisions_held_ - 1 : decisions_held_ + 1;
  if (program_) program_->decisions_held(decisions_held_);
}

void Supervisor::fail_queue(CallOutcome::Kind kind) {
  auto queue = std::move(queue_);
  queue_.clear();
  for (auto& q : queue) {
    if (q.call) finish(q.call, CallOutcome{kind, {}, {}, clock_.now() - q.call->start, {}});
  }
  report_lost();
}

void Supervisor::report_lost() {
  if (lost_ == 0) return;
  journal_.warn(std::to_string(lost_) + " message" + (lost_ == 1 ? " was" : "s were") +
                " lost from a full queue (" + std::to_string(config_.queue_limit) +
                " at most) while it started");
  lost_ = 0;
}

// --- starting and the handshake --------------------------------------------------------------

bool Supervisor::start() {
  intent_ = Intent::none;
  set_state(state_ == State::restarting ? State::restarting : State::starting, reason_);
  program_ = programs_.make(config_.program);
  if (!program_) {
    // Not runnable ones never get here (config_.runnable); a factory that refuses is a refusal.
    journal_.error("could not start: no program runs " +
                   std::string(runtime::to_string(config_.program.kind)) + " plugins here");
    asio::post(executor_, lifeline_.guard([this] {
      program_exited(runtime::ProgramEnd{
          runtime::ProgramEnd::Kind::refusal, "this host cannot run its kind of program", {}, {}});
    }));
    return false;
  }
  // Guarded as every event is: a reply finished on a worker may write after the supervisor went.
  runtime::LineTap traced;
  if (config_.trace) {
    traced = lifeline_.guard([this](std::string_view line) {
      config_.trace->write(config_.id, TraceFile::Direction::to_plugin, line,
                           [this](std::string& text) { journal_.mask(text); });
    });
  }
  session_ = runtime::session_for(
      program_.get(), executor_,
      lifeline_.guard([this](std::string_view sentence) { journal_.warn(sentence); }), clock_,
      std::move(traced));
  session_->set_redactor(lifeline_.guard([this](std::string& text) { journal_.mask(text); }));
  session_->set_notice(lifeline_.guard([this](std::string_view s) { journal_.info(s); }));
  session_->set_max_in_flight(kCallsInFlight);
  run_ = std::make_unique<services::RunScope>(*session_);
  run_->set_input_backlog([program = program_.get()] { return program->input_backlog(); });
  if (binder_) binder_(*session_, *run_);

  runtime::ProgramEvents events;
  runtime::feed_session(events, *session_);
  if (config_.trace) {
    events.output_line =
        lifeline_.guard([this, feed = std::move(events.output_line)](std::string_view line) {
          config_.trace->write(config_.id, TraceFile::Direction::from_plugin, line,
                               [this](std::string& text) { journal_.mask(text); });
          feed(line);
        });
  }
  events.error_piece = lifeline_.guard([this](std::string_view piece) { stderr_.piece(piece); });
  events.error_line = lifeline_.guard([this](std::string_view end) { stderr_.line(end); });
  events.exited = lifeline_.guard([this](const runtime::ProgramEnd& end) { program_exited(end); });
  events.input_full = lifeline_.guard([this](std::size_t backlog) {
    journal_.warn("its input is full (" + std::to_string(backlog) +
                  " bytes it has not read): notifications are dropped, the oldest first, and "
                  "what it writes is not read until it reads");
  });
  events.input_drained = lifeline_.guard([this](std::size_t dropped) {
    if (dropped == 0) {
      journal_.info("it read its input again: nothing was dropped meanwhile");
      return;
    }
    journal_.warn(std::to_string(dropped) + " notification" + (dropped == 1 ? " was" : "s were") +
                  " dropped while its input was full");
  });
  stderr_.new_run();
  auto started = program_->start(std::move(events));
  if (!started) {
    if (started.error().code == platform::Errc::exhausted) {
      journal_.warn("could not start: " + started.error().message);
      asio::post(executor_, lifeline_.guard([this, why = started.error().message] {
        program_exited(runtime::ProgramEnd{runtime::ProgramEnd::Kind::no_room, why, {}, {}});
      }));
      return false;
    }
    journal_.error("could not start: " + started.error().message);
    // Counted as a crash: it restarts, and after too many it stops.
    asio::post(executor_, lifeline_.guard([this] {
      program_exited(runtime::ProgramEnd::of_process(runtime::ExitStatus{127, std::nullopt}));
    }));
    return false;
  }
  journal_.info("started: " + program_->describe());
  arm_memory_timer();
  begin_handshake();
  return true;
}

void Supervisor::begin_handshake() {
  HandshakeParties parties{config_.id, config_.version, config_.escouade_version, config_.lang};
  // By name: its params carry the settings capability, which the schema's struct does not name.
  auto message =
      rpc::Outgoing::request_value(proto::method::Initialize::kName, initialize_params(parties));
  if (!message) {
    // Only text that is not UTF-8 in the manifest could do it, and the manifest check refuses it.
    stop_program(Intent::stop, "could not write initialize: " + message.error().message);
    return;
  }
  session_->call(*message, message->default_delay(),
                 lifeline_.guard([this](CallOutcome o) { handshake_done(std::move(o)); }));
}

void Supervisor::handshake_done(CallOutcome o) {
  if (o.kind == CallOutcome::Kind::closed) return;  // it ended first: program_exited tells
  const HandshakeVerdict verdict =
      judge_initialize(o, std::chrono::milliseconds(proto::method::Initialize::kTimeoutMs));
  if (verdict.stop) {
    stop_program(Intent::stop, *verdict.stop);
    return;
  }
  journal_.info(
      "answered initialize: protocol " + std::to_string(verdict.result->protocol_version) +
      ", capabilities " +
      (verdict.fault ? std::string("none") : json::serialize(verdict.result->capabilities)));
  if (verdict.fault) journal_.warn(*verdict.fault);
  if (run_) run_->mark_ready();
  retry_delay_ = std::chrono::seconds(0);
  set_state(State::running);
  // What each agent attached goes first, then what waited, in order. No answer is read as its
  // request is written until all of it is (runtime::RequestBurst): a completion run meanwhile
  // could send a new call ahead of the queued ones.
  const runtime::RequestBurst burst;
  for (const auto& [agent, message] : attachments_) {
    bool queued = false;
    for (const auto& q : queue_) {
      queued = queued || (q.call && q.message.same_as(message));
    }
    if (queued) continue;  // its own call is in the queue and goes below
    session_->call(
        message, message.default_delay(), lifeline_.guard([this, agent = agent](CallOutcome r) {
          if (!r.ok()) {
            journal_.warn("agent/attach of " + agent + " was not taken again after the restart");
          }
        }));
  }
  std::deque<Queued> queue;
  queue.swap(queue_);
  // Attachments first among the queued ones too.
  std::stable_partition(queue.begin(), queue.end(),
                        [](const Queued& q) { return q.message.method() == kAttachMethod; });
  for (auto& q : queue) {
    if (state_ != State::running || !session_) {
      queue_.push_back(std::move(q));
      continue;
    }
    send_queued(std::move(q));
  }
  report_lost();
}

// --- ends ------------------------------------------------------------------------------------

void Supervisor::stop_program(Intent intent, std::string reason) {
  intent_ = intent;
  intent_reason_ = std::move(reason);
  if (program_) {
    program_->stop();
    return;
  }
  // Nothing runs: the end applies now.
  program_exited(runtime::ProgramEnd::of_process(runtime::ExitStatus{}));
}

void Supervisor::program_exited(const runtime::ProgramEnd& end) {
  stderr_.program_ended();
  memory_timer_->cancel();
  shutdown_timer_->cancel();
  if (session_) session_->close();  // calls under way: their default answers apply
  run_.reset();                     // what the plugin opened goes with it
  // The program is destroyed after this event returns, never inside its own callback.
  if (program_)
    asio::post(executor_, [p = std::shared_ptr<runtime::Program>(std::move(program_))] {});
  if (session_) asio::post(executor_, [s = std::shared_ptr<rpc::Session>(std::move(session_))] {});

  const Intent intent = std::exchange(intent_, Intent::none);
  const bool ran = end.ran();
  decisions_held_ = 0;
  switch (intent) {
    case Intent::stop:
      journal_.error(intent_reason_.rfind("stopped", 0) == 0 ? intent_reason_
                                                             : "stopped: " + intent_reason_);
      fail_queue(CallOutcome::Kind::closed);
      set_state(State::stopped, intent_reason_);
      return;
    case Intent::disable:
      if (ran) journal_.info("stopped: switched off");
      fail_queue(CallOutcome::Kind::closed);
      set_state(State::disabled, "switched off");
      return;
    case Intent::shutdown: {
      if (ran) journal_.info("ended: " + end.reason + ", Escouade closing");
      fail_queue(CallOutcome::Kind::closed);
      set_state(State::stopped, "Escouade closed");
      if (auto done = std::move(shutdown_done_)) done();
      return;
    }
    case Intent::recycle:
      if (ran) journal_.info("stopped: " + intent_reason_);
      fail_queue(CallOutcome::Kind::closed);
      set_state(State::idle);
      return;
    case Intent::restart:
      crashes_.clear();
      if (ran) journal_.info("ended for a restart: " + end.reason);
      set_state(State::starting);
      start();
      return;
    case Intent::none:
      break;
  }

  if (end.kind == runtime::ProgramEnd::Kind::no_room) {
    // Not its fault, so not a crash; tried again with a growing delay, the queue kept (each
    // call still has its own delay).
    retry_delay_ =
        std::min(kLongestRetry, retry_delay_ == std::chrono::seconds(0) ? std::chrono::seconds(1)
                                                                        : retry_delay_ * 2);
    journal_.warn("the system has no room to start it now: trying again in " +
                  std::to_string(retry_delay_.count()) + " s (not counted as a crash)");
    set_state(State::restarting, "could not start: " + end.reason);
    retry_timer_->wait_until(clock_.now() + retry_delay_, lifeline_.guard([this](bool fired) {
      if (fired && state_ == State::restarting && !program_) start();
    }));
    return;
  }

  if (end.kind == runtime::ProgramEnd::Kind::refusal) {
    // It cannot run as it is: stopped, not restarted by itself (a new manifest or the app's
    // restart tries again).
    journal_.error("stopped: " + end.reason);
    fail_queue(CallOutcome::Kind::closed);
    set_state(State::stopped, end.reason);
    return;
  }

  // A crash.
  const auto now = clock_.now();
  crashes_.push_back(now);
  const int crashes = recent_crashes(now);
  journal_.error("crashed: " + end.reason + "; last lines of stderr: " + stderr_.last_lines());
  // A sandboxed instance stopped past its turn's budget: which message it was handling.
  if (!end.turn.empty()) journal_.error("the turn it was stopped in handled: " + end.turn);
  if (crashes > config_.restarts_allowed) {
    const auto minutes = std::chrono::duration_cast<std::chrono::minutes>(config_.crash_window);
    const std::string reason = "stopped after " + std::to_string(crashes) + " crashes within " +
                               std::to_string(minutes.count()) + " minute" +
                               (minutes.count() == 1 ? "" : "s");
    journal_.error(reason);
    fail_queue(CallOutcome::Kind::closed);
    set_state(State::stopped, reason);
    return;
  }
  set_state(State::restarting, "crashed: " + end.reason);
  asio::post(executor_, lifeline_.guard([this] {
    if (state_ == State::restarting && !program_) start();
  }));
}

void Supervisor::restart() {
  journal_.info("restart asked: crashes forgotten");
  crashes_.clear();
  retry_timer_->cancel();
  if (program_) {
    if (state_ == State::running && session_) {
      intent_ = Intent::restart;
      intent_reason_ = "restart";
      const auto deadline = clock_.now() + kEndGrace;
      end_at(deadline,
             "did not end within a second of shutdown for its restart: its processes were ended");
      send_shutdown(deadline);
      return;
    }
    stop_program(Intent::restart, "restart");
    return;
  }
  if (!config_.runnable) {
    journal_.warn("not restarted: it has nothing to run (no run or no activation)");
    return;
  }
  set_state(State::starting);
  start();
}

void Supervisor::set_enabled(bool enabled) {
  if (!enabled) {
    if (state_ == State::disabled) return;
    if (program_) {
      stop_program(Intent::disable, "switched off");
    } else {
      fail_queue(CallOutcome::Kind::closed);
      set_state(State::disabled, "switched off");
    }
    return;
  }
  if (state_ == State::disabled) set_state(State::idle);
}

void Supervisor::recycle(std::string reason) {
  if (program_) stop_program(Intent::recycle, std::move(reason));
}

void Supervisor::shutdown(Clock::TimePoint deadline, std::function<void()> done) {
  retry_timer_->cancel();
  if (!program_) {
    if (state_ == State::restarting) set_state(State::stopped, "Escouade closed");
    fail_queue(CallOutcome::Kind::closed);
    if (done) done();
    return;
  }
  intent_ = Intent::shutdown;
  shutdown_done_ = std::move(done);
  end_at(deadline, "did not end within the second given at closing: its processes were ended");
  if (state_ != State::running || !session_) {
    program_->stop();  // still in its handshake: nothing but initialize may reach it
    return;
  }
  send_shutdown(deadline);
}

void Supervisor::end_at(Clock::TimePoint deadline, std::string late) {
  shutdown_timer_->wait_until(deadline, lifeline_.guard([this, late = std::move(late)](bool fired) {
    if (!fired || !program_) return;
    journal_.warn(late);
    program_->stop();
  }));
}

void Supervisor::send_shutdown(Clock::TimePoint deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_.now());
  static const rpc::Outgoing kShutdown = *rpc::Outgoing::request<proto::method::Shutdown>(nullptr);
  session_->call(kShutdown, std::max(left, std::chrono::milliseconds(1)),
                 lifeline_.guard([this](CallOutcome o) {
                   if (o.ok()) journal_.info("answered shutdown");
                 }));
}

// --- memory ----------------------------------------------------------------------------------

void Supervisor::arm_memory_timer() {
  memory_timer_->wait_until(clock_.now() + config_.memory_period,
                            lifeline_.guard([this](bool fired) {
                              if (!fired || !program_) return;
                              check_memory();
                              if (program_ && intent_ == Intent::none) arm_memory_timer();
                            }));
}

void Supervisor::check_memory() {
  auto bytes = program_->memory_bytes();
  if (!bytes || *bytes <= config_.memory_limit_bytes) return;
  constexpr std::uint64_t kMB = 1024 * 1024;
  // Whole megabytes rounded up: a plugin a few kilobytes past a limit of 100 MB is said to hold
  // 101, never "100 MB of memory, past the limit of 100 MB".
  stop_program(Intent::stop, "stopped: " + std::to_string((*bytes + kMB - 1) / kMB) +
                                 " MB of memory, past the limit of " +
                                 std::to_string(config_.memory_limit_bytes / kMB) + " MB");
}

}  // namespace escouade::supervisor
