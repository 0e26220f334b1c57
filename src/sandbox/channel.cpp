#include "sandbox/channel.hpp"

#include <pthread.h>

#include <algorithm>
#include <boost/asio/post.hpp>

#include "sandbox/watchdog.hpp"

namespace escouade::sandbox {

namespace {

long long elapsed_ms(const timespec& from, const timespec& to) {
  return (to.tv_sec - from.tv_sec) * 1000LL + (to.tv_nsec - from.tv_nsec) / 1000000LL;
}

}  // namespace

Channel::Channel(boost::asio::any_io_executor executor, runtime::ProgramEvents events,
                 Lifeline::Token owner, runtime::ProgramLimits limits,
                 std::shared_ptr<Watchdog> watchdog)
    : executor_(std::move(executor)),
      events_(std::move(events)),
      owner_(std::move(owner)),
      limits_(limits),
      watchdog_(std::move(watchdog)) {}

template <class F>
void Channel::post(F f, std::size_t bytes) {
  if (bytes) {
    std::lock_guard lock(mutex_);
    posted_bytes_ += bytes;
  }
  // Each event holds the channel: the program may be gone, the channel is not, and the owner's
  // token is checked on the host's thread, where the owner is destroyed.
  boost::asio::post(executor_, [self = shared_from_this(), f = std::move(f), bytes]() mutable {
    if (self->owner_) f(self->events_);
    if (!bytes) return;
    {
      std::lock_guard lock(self->mutex_);
      self->posted_bytes_ -= bytes;
    }
    self->output_room_.notify_all();
  });
}

void Channel::wait_for_room() {
  // The host holds a bounded amount of what one instance wrote (as a pipe does for a process):
  // past it, the instance waits, which costs its turn no CPU time; a stop ends the wait.
  std::unique_lock lock(mutex_);
  output_room_.wait(
      lock, [&] { return posted_bytes_ <= kOutputBacklog || cause_.load() != StopCause::none; });
}

void Channel::push(std::string line, bool droppable) {
  std::size_t full_at = 0;
  {
    std::lock_guard lock(mutex_);
    if (input_closed_ || cause_.load() != StopCause::none) return;
    if (droppable && input_bytes_ + line.size() > kInputBacklog) {
      for (auto it = input_.begin();
           it != input_.end() && input_bytes_ + line.size() > kInputBacklog;) {
        if (!it->droppable) {
          ++it;
          continue;
        }
        input_bytes_ -= it->line.size();
        it = input_.erase(it);
        ++dropped_;
      }
      if (input_bytes_ + line.size() > kInputBacklog) {
        ++dropped_;  // the newest is the one that cannot fit
        line.clear();
      }
    }
    if (!line.empty()) {
      input_bytes_ += line.size();
      input_.push_back({std::move(line), droppable, ++pushed_});
    }
    // Full once a notification had to go, or once answers alone passed the bound.
    if ((dropped_ > 0 || input_bytes_ > kInputBacklog) && !input_full_) {
      input_full_ = true;
      full_at = input_bytes_;
    }
  }
  input_ready_.notify_one();
  if (full_at)
    post([full_at](runtime::ProgramEvents& e) {
      if (e.input_full) e.input_full(full_at);
    });
}

void Channel::close_input() {
  {
    std::lock_guard lock(mutex_);
    input_closed_ = true;
  }
  input_ready_.notify_one();
}

void Channel::stop(StopCause cause) {
  {
    std::lock_guard lock(mutex_);
    StopCause none = StopCause::none;
    cause_.compare_exchange_strong(none, cause);
    input_closed_ = true;
    interrupt_locked();
  }
  input_ready_.notify_one();
  output_room_.notify_all();
}

void Channel::interrupt_locked() {
  if (interrupter_) interrupter_();
}

std::optional<std::size_t> Channel::take_locked(std::size_t at, std::string& line) {
  line = std::move(input_[at].line);
  input_.erase(input_.begin() + static_cast<std::ptrdiff_t>(at));
  input_bytes_ -= line.size();
  if (!input_full_ || input_bytes_ > kInputBacklog / 2) return std::nullopt;
  input_full_ = false;
  return std::exchange(dropped_, 0);
}

std::optional<std::string> Channel::next_input() {
  std::optional<std::size_t> drained;
  std::string line;
  {
    std::unique_lock lock(mutex_);
    input_ready_.wait(
        lock, [&] { return !input_.empty() || input_closed_ || cause_.load() != StopCause::none; });
    if (cause_.load() != StopCause::none || input_.empty()) return std::nullopt;
    drained = take_locked(0, line);
  }
  if (drained)
    post([n = *drained](runtime::ProgramEvents& e) {
      if (e.input_drained) e.input_drained(n);
    });
  return line;
}

std::optional<std::string> Channel::next_input_where(
    const std::function<bool(std::string_view)>& wanted) {
  std::optional<std::size_t> drained;
  std::string line;
  {
    std::unique_lock lock(mutex_);
    std::uint64_t looked = 0;  // the seq of the last line `wanted` saw
    std::optional<std::size_t> found;
    input_ready_.wait(lock, [&] {
      if (cause_.load() != StopCause::none) return true;
      // Lines are queued in the order of their seq (dropping some keeps it): the first one not
      // yet seen is found by bisection, and each line is looked at once.
      auto it = std::partition_point(input_.begin(), input_.end(),
                                     [&](const Queued& q) { return q.seq <= looked; });
      for (; it != input_.end(); ++it) {
        looked = it->seq;
        if (wanted(it->line)) {
          found = static_cast<std::size_t>(it - input_.begin());
          return true;
        }
      }
      return input_closed_;
    });
    if (cause_.load() != StopCause::none || !found) return std::nullopt;
    drained = take_locked(*found, line);
  }
  if (drained)
    post([n = *drained](runtime::ProgramEvents& e) {
      if (e.input_drained) e.input_drained(n);
    });
  return line;
}

bool Channel::sleep_for(std::chrono::nanoseconds duration) {
  // Bounded so that the deadline cannot overflow the clock: a year is forever to a plugin.
  const auto bounded = std::min<std::chrono::nanoseconds>(duration, std::chrono::hours(24 * 365));
  const auto deadline = std::chrono::steady_clock::now() + bounded;
  std::unique_lock lock(mutex_);
  // Only the instance's thread waits on input_ready_, and a stop notifies it.
  return !input_ready_.wait_until(lock, deadline, [&] { return cause_.load() != StopCause::none; });
}

void Channel::write_out(std::string_view bytes) {
  out_lines_.feed(
      bytes,
      [&](std::string_view line) {
        post(
            [l = std::string(line)](runtime::ProgramEvents& e) {
              if (e.output_line) e.output_line(l);
            },
            line.size() + 1);
        wait_for_room();
      },
      [&](std::size_t limit) {
        post([limit](runtime::ProgramEvents& e) {
          if (e.output_too_long) e.output_too_long(limit);
        });
      });
}

void Channel::write_err(std::string_view bytes, bool at_end) {
  err_lines_.feed(
      bytes, at_end,
      [&](std::string_view line) {
        post(
            [l = std::string(line)](runtime::ProgramEvents& e) {
              if (e.error_line) e.error_line(l);
            },
            line.size() + 1);
        wait_for_room();
      },
      [&](std::string_view piece) {
        post(
            [p = std::string(piece)](runtime::ProgramEvents& e) {
              if (e.error_piece)
                e.error_piece(p);
              else if (e.error_line)
                e.error_line(p);
            },
            piece.size());
        wait_for_room();
      });
}

void Channel::flush() {
  if (std::string rest = out_lines_.finish(); !rest.empty()) {
    const std::size_t size = rest.size() + 1;
    post(
        [l = std::move(rest)](runtime::ProgramEvents& e) {
          if (e.output_line) e.output_line(l);
        },
        size);
  }
  write_err({}, true);
}

void Channel::turn_begins() {
  {
    std::lock_guard lock(mutex_);
    if (!has_clock_) {
      has_clock_ = pthread_getcpuclockid(pthread_self(), &clock_) == 0;
      if (!has_clock_) clock_ = CLOCK_THREAD_CPUTIME_ID;
    }
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &turn_start_);
    in_turn_ = true;
  }
  watchdog_->turn_began();
}

void Channel::turn_ends() {
  std::lock_guard lock(mutex_);
  in_turn_ = false;
}

void Channel::gc_bytes(std::uint64_t bytes) noexcept {
  gc_bytes_.store(bytes);
  memory::engine_heap(account_.load(), bytes);
}

std::uint64_t Channel::memory_bytes() const noexcept {
  return gc_bytes_.load() + wasm_bytes_.load() + memory::bytes(account_.load());
}

std::optional<std::string> Channel::stop_reason() const {
  switch (cause_.load()) {
    case StopCause::turn_too_long:
      return "a turn ran past " + std::to_string(over_budget_ms()) +
             " ms: Escouade stopped its instance";
    case StopCause::out_of_memory:
      return "its instance ran past " + std::to_string(limits_.memory_bytes / (1024 * 1024)) +
             " MB of memory: Escouade stopped it";
    case StopCause::stopped:
      return "stopped by Escouade";
    case StopCause::none:
      break;
  }
  return std::nullopt;
}

bool Channel::check_memory() {
  // A wasm instance's linear memory is mapped by the engine, not malloc'd: it is counted here
  // with the account's blocks and the GC heap, against the same limit.
  const memory::Account account = account_.load();
  const std::uint64_t linear = wasm_bytes_.load();
  const bool over =
      memory::over(account) ||
      (linear > 0 && linear + gc_bytes_.load() + memory::bytes(account) > limits_.memory_bytes);
  if (!over) return false;
  stop(StopCause::out_of_memory);
  return true;
}

bool Channel::check_turn() {
  {
    std::lock_guard lock(mutex_);
    if (!in_turn_) return false;
  }
  if (check_memory()) return true;
  std::lock_guard lock(mutex_);
  // Under the lock: the instance's thread leaves its turn (and then exits) only through it, so
  // its clock is read while the thread exists.
  if (!in_turn_ || !has_clock_) return false;
  timespec now{};
  if (clock_gettime(clock_, &now) != 0) return false;
  const long long budget = (decisions_.load() > 0 ? limits_.turn_deciding : limits_.turn).count();
  if (elapsed_ms(turn_start_, now) <= budget) return true;
  StopCause none = StopCause::none;
  if (cause_.compare_exchange_strong(none, StopCause::turn_too_long)) {
    over_budget_ms_.store(budget);
    input_closed_ = true;
  }
  interrupt_locked();
  return true;
}

void Channel::set_interrupter(std::function<void()> interrupter) {
  std::lock_guard lock(mutex_);
  interrupter_ = std::move(interrupter);
  // A stop asked before the context existed reaches it now.
  if (interrupter_ && cause_.load() != StopCause::none) interrupt_locked();
}

void Channel::ended(runtime::ProgramEnd end) {
  {
    std::lock_guard lock(mutex_);
    in_turn_ = false;
  }
  flush();
  post([end = std::move(end)](runtime::ProgramEvents& e) {
    if (e.exited) e.exited(end);
  });
}

}  // namespace escouade::sandbox
