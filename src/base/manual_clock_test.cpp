#include "base/manual_clock.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <vector>

namespace escouade {
namespace {

using std::chrono::milliseconds;

TEST(ManualClock, TimeMovesOnlyWhenTold) {
  ManualClock clock;
  const auto start = clock.now();
  EXPECT_EQ(clock.now(), start);
  clock.advance(milliseconds(1500));
  EXPECT_EQ(clock.now() - start, milliseconds(1500));
}

TEST(ManualClock, ATimerFiresOnceItsTimeHasComeAndNeverInline) {
  boost::asio::io_context io;
  ManualClock clock;
  auto timer = clock.make_timer(io.get_executor());
  std::vector<bool> got;
  timer->wait_until(clock.now() + milliseconds(500), [&](bool fired) { got.push_back(fired); });
  clock.advance(milliseconds(499));
  io.poll();
  EXPECT_TRUE(got.empty());
  clock.advance(milliseconds(1));
  EXPECT_TRUE(got.empty());  // posted, not called
  io.restart();
  io.poll();
  EXPECT_EQ(got, std::vector<bool>{true});
  EXPECT_EQ(clock.waiting(), 0u);
}

TEST(ManualClock, TimersFireInTheOrderOfTheirDeadlines) {
  boost::asio::io_context io;
  ManualClock clock;
  auto late = clock.make_timer(io.get_executor());
  auto early = clock.make_timer(io.get_executor());
  std::vector<int> order;
  late->wait_until(clock.now() + milliseconds(20), [&](bool) { order.push_back(2); });
  early->wait_until(clock.now() + milliseconds(10), [&](bool) { order.push_back(1); });
  EXPECT_EQ(clock.next_due(), clock.now() + milliseconds(10));
  clock.advance(milliseconds(30));
  io.poll();
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
}

TEST(ManualClock, CancelledReplacedOrDestroyedWaitsEndAsNotFired) {
  boost::asio::io_context io;
  ManualClock clock;
  std::vector<bool> got;
  auto timer = clock.make_timer(io.get_executor());
  timer->wait_until(clock.now() + milliseconds(5), [&](bool fired) { got.push_back(fired); });
  timer->cancel();
  timer->wait_until(clock.now() + milliseconds(5), [&](bool fired) { got.push_back(fired); });
  timer->wait_until(clock.now() + milliseconds(5), [&](bool fired) { got.push_back(fired); });
  timer.reset();
  clock.advance(milliseconds(10));
  io.poll();
  EXPECT_EQ(got, (std::vector<bool>{false, false, false}));
}

TEST(ManualClock, ATimerMayOutliveItsClock) {
  boost::asio::io_context io;
  auto clock = std::make_unique<ManualClock>();
  auto timer = clock->make_timer(io.get_executor());
  clock.reset();
  bool called = false;
  timer->wait_until(Timer::TimePoint{}, [&](bool) { called = true; });
  timer.reset();
  io.poll();
  EXPECT_FALSE(called);
}

}  // namespace
}  // namespace escouade
