#pragma once

// The time the host keeps (spec: every delay, the crash window, the memory period): now(), and
// timers that call back on the host's loop. Passed in, so that tests run the supervisor and the
// sessions on a ManualClock (base/manual_clock.hpp) without sleeping; steady_clock() is the one
// place that reads the system's clock.
//
// Thread: now() anywhere; a Timer on the thread that runs its executor.

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <functional>
#include <memory>

namespace escouade {

// One timer: one wait at a time.
class Timer {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  // Its wait, if any, ends as cancelled; its handler still runs (unless guarded) or is dropped
  // with the loop, never inline.
  virtual ~Timer() = default;
  // Calls `done(true)` once `at` has come, or `done(false)` when the wait is cancelled or
  // replaced by another first; always later on the timer's executor, never inline.
  virtual void wait_until(TimePoint at, std::function<void(bool fired)> done) = 0;
  virtual void cancel() = 0;
};

class Clock {
 public:
  using TimePoint = Timer::TimePoint;
  using Duration = std::chrono::steady_clock::duration;
  virtual ~Clock() = default;
  virtual TimePoint now() const = 0;
  // A timer whose handlers run on `executor`.
  virtual std::unique_ptr<Timer> make_timer(boost::asio::any_io_executor executor) = 0;
};

// The system's steady clock, with Asio's timers. Stateless: one for the whole program.
Clock& steady_clock();

}  // namespace escouade
