#include "base/clock.hpp"

#include <boost/asio/steady_timer.hpp>

namespace escouade {

namespace {

class AsioTimer final : public Timer {
 public:
  explicit AsioTimer(boost::asio::any_io_executor executor) : timer_(std::move(executor)) {}
  void wait_until(TimePoint at, std::function<void(bool)> done) override {
    timer_.expires_at(at);  // a wait already there ends as cancelled
    timer_.async_wait([done = std::move(done)](const boost::system::error_code& ec) { done(!ec); });
  }
  void cancel() override { timer_.cancel(); }

 private:
  boost::asio::steady_timer timer_;
};

class SteadyClock final : public Clock {
 public:
  TimePoint now() const override { return std::chrono::steady_clock::now(); }
  std::unique_ptr<Timer> make_timer(boost::asio::any_io_executor executor) override {
    return std::make_unique<AsioTimer>(std::move(executor));
  }
};

}  // namespace

Clock& steady_clock() {
  static SteadyClock clock;
  return clock;
}

}  // namespace escouade
