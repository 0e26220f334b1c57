#include "base/manual_clock.hpp"

#include <boost/asio/post.hpp>
#include <vector>

namespace escouade {

// A timer of a ManualClock. It reaches its clock through a pointer the clock clears when it
// goes, so a timer may outlive its clock (it then never fires).
class ManualClock::ManualTimer final : public Timer {
 public:
  ManualTimer(std::weak_ptr<ManualClock*> clock, std::uint64_t id,
              boost::asio::any_io_executor executor)
      : clock_(std::move(clock)), id_(id), executor_(std::move(executor)) {}
  ~ManualTimer() override { cancel(); }

  void wait_until(TimePoint at, std::function<void(bool)> done) override {
    cancel();
    if (auto c = clock_.lock(); c && *c) (*c)->add(at, Wait{executor_, std::move(done), id_});
  }
  void cancel() override {
    if (auto c = clock_.lock(); c && *c) (*c)->cancel(id_);
  }

 private:
  std::weak_ptr<ManualClock*> clock_;
  std::uint64_t id_;
  boost::asio::any_io_executor executor_;
};

ManualClock::~ManualClock() {
  *self_ = nullptr;
}

std::unique_ptr<Timer> ManualClock::make_timer(boost::asio::any_io_executor executor) {
  return std::make_unique<ManualTimer>(self_, next_timer_++, std::move(executor));
}

void ManualClock::add(TimePoint at, Wait w) {
  waits_.emplace(at, std::move(w));
}

void ManualClock::cancel(std::uint64_t timer) {
  for (auto it = waits_.begin(); it != waits_.end();) {
    if (it->second.timer != timer) {
      ++it;
      continue;
    }
    boost::asio::post(it->second.executor, [done = std::move(it->second.done)] { done(false); });
    it = waits_.erase(it);
  }
}

void ManualClock::advance(Duration d) {
  now_ += d;
  while (!waits_.empty() && waits_.begin()->first <= now_) {
    Wait w = std::move(waits_.begin()->second);
    waits_.erase(waits_.begin());
    boost::asio::post(w.executor, [done = std::move(w.done)] { done(true); });
  }
}

std::optional<ManualClock::TimePoint> ManualClock::next_due() const {
  if (waits_.empty()) return std::nullopt;
  return waits_.begin()->first;
}

}  // namespace escouade
