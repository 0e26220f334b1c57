#pragma once

// The twin of steady_clock() for tests (base/clock.hpp): time moves only when the test says, so
// a 10 s handshake delay, a 5-minute crash window or a 500 ms decision is tested without waiting.
// advance() posts the handlers of the timers that come due, in the order of their deadlines, to
// their executors; the test then runs its loop (io.poll()) to deliver them.
//
// Thread: the test's, which runs the loop.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>

#include "base/clock.hpp"

namespace escouade {

class ManualClock final : public Clock {
 public:
  explicit ManualClock(TimePoint start = TimePoint{} + std::chrono::hours(1)) : now_(start) {}
  ~ManualClock() override;
  ManualClock(const ManualClock&) = delete;
  ManualClock& operator=(const ManualClock&) = delete;

  TimePoint now() const override { return now_; }
  std::unique_ptr<Timer> make_timer(boost::asio::any_io_executor executor) override;

  // Moves time on by `d`; every wait due by then fires, earliest first.
  void advance(Duration d);
  // Waits that have not fired nor been cancelled.
  std::size_t waiting() const noexcept { return waits_.size(); }
  // When the earliest of them comes due, if any.
  std::optional<TimePoint> next_due() const;

 private:
  class ManualTimer;
  struct Wait {
    boost::asio::any_io_executor executor;
    std::function<void(bool)> done;
    std::uint64_t timer;  // which ManualTimer
  };
  void add(TimePoint at, Wait w);
  void cancel(std::uint64_t timer);

  TimePoint now_;
  std::uint64_t next_timer_ = 1;
  std::multimap<TimePoint, Wait> waits_;
  std::shared_ptr<ManualClock*> self_ = std::make_shared<ManualClock*>(this);
};

}  // namespace escouade
