#include "sandbox/channel.hpp"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "base/utf8.hpp"
#include "sandbox/watchdog.hpp"

namespace escouade::sandbox {

namespace {

long long ns_of(const timespec& t) {
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}

// Writes all of `bytes`, waiting while the pipe is full. A host that is gone makes the write fail
// (or SIGPIPE end the helper): nothing more can be said to it then.
void write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace

Channel::Channel(HelperFds fds, StatusPage* status, runtime::ProgramLimits limits,
                 std::shared_ptr<Watchdog> watchdog)
    : fds_(fds), status_(status), limits_(limits), watchdog_(std::move(watchdog)) {}

// --- its input

bool Channel::read_more() {
  if (input_ended_) return false;
  char buf[64 * 1024];
  for (;;) {
    const ssize_t n = ::read(fds_.in, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      input_ended_ = true;
      return false;
    }
    const bool ok = records_.feed(std::string_view(buf, static_cast<std::size_t>(n)),
                                  [&](char kind, std::string_view bytes) {
                                    switch (static_cast<wire::ToHelper>(kind)) {
                                      case wire::ToHelper::start:  // once, read first
                                        break;
                                      case wire::ToHelper::line:
                                        queue(std::string(bytes), proto::Delivery::kept);
                                        break;
                                      case wire::ToHelper::droppable:
                                        queue(std::string(bytes), proto::Delivery::droppable);
                                        break;
                                      case wire::ToHelper::decisions:
                                        decisions_.store(wire::count_of(bytes).value_or(0));
                                        break;
                                    }
                                  });
    if (!ok) {
      input_ended_ = true;  // not the host's writing: nothing more is believed
      return false;
    }
    return true;
  }
}

std::optional<wire::Start> Channel::read_start() {
  // Read whole into a buffer of its size, once: it may weigh megabytes, and every copy of it in a
  // new process is pages touched for the first time. Nothing is read past it.
  const auto read_exactly = [&](char* to, std::size_t size) {
    while (size > 0) {
      const ssize_t n = ::read(fds_.in, to, size);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      to += n;
      size -= static_cast<std::size_t>(n);
    }
    return true;
  };
  char header[wire::kHeaderBytes];
  if (input_ended_ || !read_exactly(header, sizeof header)) {
    input_ended_ = true;
    return std::nullopt;
  }
  std::uint32_t length = 0;
  for (int i = 4; i >= 1; --i)
    length = (length << 8) | static_cast<unsigned char>(header[i]);
  if (header[0] != static_cast<char>(wire::ToHelper::start) || length > kMaxStartBytes) {
    input_ended_ = true;
    return std::nullopt;
  }
  auto body = std::make_shared<std::string>(length, '\0');
  if (!read_exactly(body->data(), body->size())) {
    input_ended_ = true;
    return std::nullopt;
  }
  return wire::decode_start(std::move(body));
}

void Channel::queue(std::string line, proto::Delivery delivery) {
  input_.push(std::move(line), delivery);
  // Full once a notification had to go, or once kept lines alone passed the bound.
  if ((input_.dropped() > 0 || input_.bytes() > kInputBacklog) && !input_full_) {
    input_full_ = true;
    send(wire::ToHost::input_full, wire::count(input_.bytes()));
  }
}

std::string Channel::take(std::size_t at) {
  std::string line = input_.take(at);
  if (input_full_ && input_.bytes() <= kInputBacklog / 2) {
    input_full_ = false;
    send(wire::ToHost::input_drained, wire::count(input_.take_dropped()));
  }
  return line;
}

std::optional<std::string> Channel::next_input() {
  if (cause_.load() != StopCause::none) return std::nullopt;
  while (input_.empty()) {
    if (!read_more()) return std::nullopt;
  }
  return take(0);
}

std::optional<std::string> Channel::next_input_where(
    const std::function<bool(std::string_view)>& wanted) {
  std::size_t looked = 0;  // the lines before this one were looked at (dropping keeps order)
  for (;;) {
    if (cause_.load() != StopCause::none) return std::nullopt;
    for (std::size_t i = looked; i < input_.size(); ++i) {
      if (wanted(input_[i].view())) return take(i);
    }
    looked = input_.size();
    const std::size_t before = input_.size();
    if (!read_more()) return std::nullopt;
    // Dropping notifications may have taken some of those looked at: look again from where the
    // queue now holds as many as before, never past its end.
    if (input_.size() < before) looked = std::min(looked, input_.size());
  }
}

bool Channel::sleep_for(std::chrono::nanoseconds duration) {
  // Bounded so that the deadline cannot overflow the clock: a year is forever to a plugin.
  const auto bounded = std::min<std::chrono::nanoseconds>(duration, std::chrono::hours(24 * 365));
  const auto deadline = std::chrono::steady_clock::now() + bounded;
  std::unique_lock lock(mutex_);
  return !stopped_.wait_until(lock, deadline, [&] { return cause_.load() != StopCause::none; });
}

// --- its output

void Channel::write_out(std::string_view bytes) {
  write_all(fds_.out, bytes);
}

void Channel::write_err(std::string_view bytes, bool) {
  write_all(fds_.err, bytes);
}

void Channel::send(wire::ToHost kind, std::string_view bytes) {
  const std::string record = wire::record(kind, bytes);
  std::lock_guard lock(control_mutex_);
  write_all(fds_.control, record);
}

void Channel::ready() {
  send(wire::ToHost::ready, {});
}

void Channel::ended(const runtime::ProgramEnd& end) {
  std::string turn;
  {
    std::lock_guard lock(mutex_);
    in_turn_ = false;
    if (cause_.load() == StopCause::turn_too_long) turn = turn_message_;
  }
  send(wire::ToHost::ended,
       wire::encode(wire::Ended{end.kind == runtime::ProgramEnd::Kind::refusal, end.reason, turn}));
}

// --- its turns and limits

void Channel::turn_begins(bool compile, std::optional<std::string_view> message) {
  {
    std::lock_guard lock(mutex_);
    if (!has_clock_) {
      has_clock_ = pthread_getcpuclockid(pthread_self(), &clock_) == 0;
      if (!has_clock_) clock_ = CLOCK_THREAD_CPUTIME_ID;
    }
    turn_start_read_ = false;
    compiling_ = compile;
    budget_ms_ = compile                 ? kCompileBudget.count()
                 : decisions_.load() > 0 ? limits_.turn_deciding.count()
                                         : limits_.turn.count();
    in_turn_ = true;
    if (message) {
      std::string_view line = *message;
      while (!line.empty() && (line.back() == '\n' || line.back() == '\r'))
        line.remove_suffix(1);
      const std::string_view cut = line.substr(0, kTurnMessageBytes);
      turn_message_.assign(cut.substr(0, utf8_complete_prefix(cut)));
    }
  }
  watchdog_->turn_began();
}

void Channel::turn_ends() {
  std::lock_guard lock(mutex_);
  in_turn_ = false;
}

void Channel::stop(StopCause cause) {
  {
    std::lock_guard lock(mutex_);
    StopCause none = StopCause::none;
    if (cause_.compare_exchange_strong(none, cause)) {
      stop_at_ = std::chrono::steady_clock::now();
      stopped_compiling_.store(in_turn_ && compiling_);
    }
    if (cause == StopCause::out_of_memory && status_) status_->over_memory.store(1);
    interrupt_locked();
  }
  stopped_.notify_all();
  watchdog_->turn_began();  // it watches the stop's grace
}

void Channel::interrupt_locked() {
  if (interrupter_) interrupter_();
}

void Channel::set_interrupter(std::function<void()> interrupter) {
  std::lock_guard lock(mutex_);
  interrupter_ = std::move(interrupter);
  // A stop asked before the context existed reaches it now.
  if (interrupter_ && cause_.load() != StopCause::none) interrupt_locked();
}

std::optional<std::string> Channel::stop_reason() const {
  switch (cause_.load()) {
    case StopCause::turn_too_long:
      return "a turn ran past " + std::to_string(over_budget_ms()) +
             " ms: Escouade stopped its instance";
    case StopCause::out_of_memory:
      if (stopped_compiling_.load())
        return "its module does not compile within " +
               std::to_string(limits_.memory_bytes / (1024 * 1024)) + " MB of memory";
      return "its instance ran past " + std::to_string(limits_.memory_bytes / (1024 * 1024)) +
             " MB of memory: Escouade stopped it";
    case StopCause::compile_too_long:
      return "its module took more than " + std::to_string(kCompileBudget.count() / 1000) +
             " s of CPU to compile: Escouade stopped it";
    case StopCause::none:
      break;
  }
  return std::nullopt;
}

void Channel::gc_bytes(std::uint64_t bytes) noexcept {
  gc_bytes_.store(bytes);
  memory::engine_heap(account_.load(), bytes);
  if (status_) status_->gc_bytes.store(bytes, std::memory_order_relaxed);
}

void Channel::wasm_memory_bytes(std::uint64_t bytes) noexcept {
  wasm_bytes_.store(bytes);
  if (status_) status_->wasm_bytes.store(bytes, std::memory_order_relaxed);
}

std::uint64_t Channel::memory_bytes() const noexcept {
  return gc_bytes_.load() + wasm_bytes_.load() + memory::bytes(account_.load());
}

bool Channel::check_memory() {
  // The account judges its blocks with the GC heap it was told of. The sum adds what it cannot
  // see: a wasm instance's linear memory, mapped by the engine rather than malloc'd; and, in a
  // build without the account (AddressSanitizer's), it is the GC heap against the limit alone.
  const bool over = memory::over(account_.load()) || memory_bytes() > limits_.memory_bytes;
  if (!over) return false;
  stop(StopCause::out_of_memory);
  return true;
}

bool Channel::check_turn() {
  if (cause_.load() != StopCause::none) {
    std::chrono::steady_clock::time_point since;
    {
      std::lock_guard lock(mutex_);
      since = stop_at_;
      interrupt_locked();  // again: the engine may have been where it does not look
    }
    if (std::chrono::steady_clock::now() - since > kStopGrace) end_helper();
    return true;
  }
  {
    std::lock_guard lock(mutex_);
    if (!in_turn_) {
      // Between turns too: the next turn began after this reading, so it ran at most the
      // thread's CPU time from here to its first look.
      timespec now{};
      if (has_clock_ && clock_gettime(clock_, &now) == 0) last_look_ns_ = ns_of(now);
      return false;
    }
  }
  if (check_memory()) return true;
  std::lock_guard lock(mutex_);
  if (!in_turn_ || !has_clock_) return false;
  timespec read{};
  if (clock_gettime(clock_, &read) != 0) return false;
  const long long now = ns_of(read);
  const std::optional<long long> last = std::exchange(last_look_ns_, now);
  if (!turn_start_read_) {
    // Its first look, up to the watchdog's longest period after its start (watchdog.cpp). It
    // began after the last look, so it is charged with the thread's CPU time since then: never
    // less than it ran, so its budget holds within a period once it is seen; more only by what
    // the thread ran between that look and the turn's start. The thread's CPU clock is not read
    // at each turn's start (a system call through the seccomp filter on every call and
    // decision, docs/PERFORMANCE.md), nor the wall clock (1 % of a run.js instance's thread in
    // a decision of 100 plugins, perf).
    turn_start_ns_ = last ? std::min(*last, now) : now;
    turn_start_read_ = true;
  }
  if ((now - turn_start_ns_) / 1000000LL <= budget_ms_) return true;
  StopCause none = StopCause::none;
  const StopCause cause = compiling_ ? StopCause::compile_too_long : StopCause::turn_too_long;
  if (cause_.compare_exchange_strong(none, cause)) {
    over_budget_ms_.store(budget_ms_);
    stop_at_ = std::chrono::steady_clock::now();
    stopped_compiling_.store(compiling_);
  }
  interrupt_locked();
  return true;
}

void Channel::end_helper() {
  const runtime::ProgramEnd end{
      stop_is_refusal() ? runtime::ProgramEnd::Kind::refusal : runtime::ProgramEnd::Kind::crash,
      stop_reason().value_or("its instance did not end when it was stopped"),
      {},
      {}};
  std::string turn;
  if (cause_.load() == StopCause::turn_too_long) {
    std::lock_guard lock(mutex_);
    turn = turn_message_;
  }
  send(wire::ToHost::ended,
       wire::encode(wire::Ended{end.kind == runtime::ProgramEnd::Kind::refusal, end.reason, turn}));
  ::_exit(0);
}

}  // namespace escouade::sandbox
