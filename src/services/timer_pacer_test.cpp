// The timer pacer on a manual clock: a run within its rate fires at once; past it, it waits for
// its turn; runs past the rate of all take turns; an ended run's firings are dropped.

#include "services/timer_pacer.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <map>

#include "base/manual_clock.hpp"

namespace escouade::services {
namespace {

using namespace std::chrono_literals;

class Pacer : public ::testing::Test {
 protected:
  void make(TimerPacer::Rates rates) { pacer_.emplace(io_.get_executor(), clock_, rates); }
  // Time passes in steps of a millisecond, as the pacer's timer sees it on a real clock.
  void advance(Clock::Duration d) {
    for (Clock::Duration step = 1ms; d > Clock::Duration::zero(); d -= step) {
      clock_.advance(std::min(step, d));
      io_.restart();
      io_.poll();
    }
  }
  // `run` asks for `n` firings, each counted in fired_[run] when it goes out.
  void ask(int run, int n) {
    for (int i = 0; i < n; ++i)
      pacer_->deliver(&runs_[run], [this, run] { ++fired_[run]; });
  }

  boost::asio::io_context io_;
  ManualClock clock_;
  std::optional<TimerPacer> pacer_;
  char runs_[4] = {};
  std::map<int, int> fired_;
};

TEST_F(Pacer, WithinItsBurstARunFiresAtOnceThenAtItsRate) {
  make({.per_run = 100, .per_run_burst = 10, .all = 1000, .all_burst = 100});
  ask(0, 50);
  EXPECT_EQ(fired_[0], 10) << "its burst, at once";
  EXPECT_EQ(pacer_->waiting(), 40u);
  advance(100ms);
  EXPECT_NEAR(fired_[0], 20, 1) << "100 a second";
  advance(300ms);
  EXPECT_EQ(fired_[0], 50);
  EXPECT_EQ(pacer_->waiting(), 0u);
}

TEST_F(Pacer, RunsPastTheRateOfAllTakeTurns) {
  make({.per_run = 1000, .per_run_burst = 10, .all = 100, .all_burst = 10});
  ask(0, 200);
  ask(1, 200);
  ask(2, 5);    // a quiet run waits its turn, not behind the others' floods
  advance(1s);  // 100 firings of all, plus its burst
  EXPECT_EQ(fired_[2], 5);
  // The burst of all went to the first to ask, at once; then they alternate.
  EXPECT_NEAR(fired_[0] - 10, fired_[1], 2) << fired_[0] << " and " << fired_[1];
  EXPECT_LE(fired_[0] + fired_[1] + fired_[2], 100 + 10 + 1);
}

TEST_F(Pacer, EachRunKeepsItsOrder) {
  make({.per_run = 10, .per_run_burst = 1, .all = 1000, .all_burst = 100});
  std::vector<int> order;
  for (int i = 0; i < 5; ++i)
    pacer_->deliver(&runs_[0], [&order, i] { order.push_back(i); });
  advance(1s);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
}

TEST_F(Pacer, AnEndedRunsFiringsAreDropped) {
  make({.per_run = 10, .per_run_burst = 1, .all = 1000, .all_burst = 100});
  ask(0, 5);
  EXPECT_EQ(fired_[0], 1);
  pacer_->forget(&runs_[0]);
  EXPECT_EQ(pacer_->waiting(), 0u);
  advance(1s);
  EXPECT_EQ(fired_[0], 1);
}

}  // namespace
}  // namespace escouade::services
