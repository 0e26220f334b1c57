#include "base/workers.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace escouade {
namespace {

namespace asio = boost::asio;
using std::chrono::milliseconds;

// What a completion holds, telling when it is destroyed and on which thread.
struct Witness {
  std::thread::id* destroyed_on;
  explicit Witness(std::thread::id* on) : destroyed_on(on) {}
  ~Witness() { *destroyed_on = std::this_thread::get_id(); }
};

// Runs the loop until `done` holds; the deadline is only a safety net.
template <class P>
void run_until(asio::io_context& io, P done) {
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done() && std::chrono::steady_clock::now() < limit) {
    io.restart();
    io.run_one_for(milliseconds(20));
  }
}

TEST(Workers, WorkRunsOffTheHostThreadAndItsResultComesBackOnIt) {
  asio::io_context io;
  Workers workers(io.get_executor(), 2);
  const auto host = std::this_thread::get_id();
  std::thread::id worked_on, completed_on;
  std::string got;
  workers.run(
      "test",
      [&] {
        worked_on = std::this_thread::get_id();
        return std::string("read");
      },
      [&](std::string r) {
        completed_on = std::this_thread::get_id();
        got = std::move(r);
      });
  run_until(io, [&] { return !got.empty(); });
  EXPECT_EQ(got, "read");
  EXPECT_NE(worked_on, host);
  EXPECT_EQ(completed_on, host);
  EXPECT_EQ(workers.close(milliseconds(1000)), 0u);
}

TEST(Workers, CloseDropsWhatHasNotStartedOnTheClosingThread) {
  asio::io_context io;
  Workers workers(io.get_executor(), 1);
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::atomic<bool> first_started{false};
  workers.run(
      "test",
      [&, gate] {
        first_started = true;
        gate.wait();
        return 1;
      },
      [](int) {});
  std::thread::id destroyed_on;
  bool second_ran = false;
  workers.run(
      "test", [&] { return second_ran = true; },
      [w = std::make_shared<Witness>(&destroyed_on)](bool) {});
  while (!first_started)
    std::this_thread::yield();
  std::thread closer([&] {
    std::this_thread::sleep_for(milliseconds(20));
    release.set_value();
  });
  EXPECT_EQ(workers.close(milliseconds(5000)), 0u);  // the first ends once released
  closer.join();
  EXPECT_FALSE(second_ran);
  EXPECT_EQ(destroyed_on, std::this_thread::get_id());
}

// A keychain call that never returns must not keep a program from ending: close() gives up on
// it after its bound, and its completion never runs, even once the work ends later.
TEST(Workers, AStuckTaskIsAbandonedAtTheBoundAndItsCompletionNeverRuns) {
  asio::io_context io;
  auto workers = std::make_unique<Workers>(io.get_executor(), 2);
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::atomic<bool> started{false};
  std::atomic<bool> finished{false};
  bool completed = false;
  workers->run(
      "test",
      [&, gate] {
        started = true;
        gate.wait();
        finished = true;
        return 0;
      },
      [&](int) { completed = true; });
  while (!started)
    std::this_thread::yield();
  EXPECT_EQ(workers->close(milliseconds(50)), 1u);
  workers.reset();
  release.set_value();
  while (!finished)
    std::this_thread::yield();
  io.restart();
  io.poll();
  EXPECT_FALSE(completed);
}

TEST(Workers, WorkGivenAfterCloseNeverRunsAndIsDestroyedAtOnce) {
  asio::io_context io;
  Workers workers(io.get_executor(), 1);
  EXPECT_EQ(workers.close(milliseconds(1000)), 0u);
  EXPECT_EQ(workers.close(milliseconds(1000)), 0u);  // idempotent
  std::thread::id destroyed_on;
  bool ran = false;
  workers.run(
      "test", [&] { return ran = true; }, [w = std::make_shared<Witness>(&destroyed_on)](bool) {});
  EXPECT_EQ(destroyed_on, std::this_thread::get_id());
  io.restart();
  io.poll();
  EXPECT_FALSE(ran);
}

// A plugin whose blocking work is stuck takes at most all the threads but one: the others'
// work still runs.
TEST(Workers, OneOwnersStuckWorkLeavesAWorkerToTheOthers) {
  asio::io_context io;
  Workers workers(io.get_executor(), 2);
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::atomic<int> stuck_started{0};
  for (int i = 0; i < 3; ++i) {
    workers.run(
        "dev.stuck",
        [&, gate] {
          ++stuck_started;
          gate.wait();
          return 0;
        },
        [](int) {});
  }
  bool other_done = false;
  workers.run(
      "dev.innocent", [] { return 1; }, [&](int) { other_done = true; });
  // Were both threads taken by the stuck owner, the innocent's work would never run.
  run_until(io, [&] { return other_done && stuck_started.load() >= 1; });
  EXPECT_TRUE(other_done);
  EXPECT_EQ(stuck_started.load(), 1);
  EXPECT_EQ(workers.pending("dev.stuck"), 3u);
  release.set_value();
  EXPECT_EQ(workers.close(milliseconds(5000)), 0u);
}

TEST(Workers, OwnersAreServedInTurn) {
  asio::io_context io;
  Workers workers(io.get_executor(), 1);
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::vector<std::string> order;
  std::mutex m;
  // The first task holds the only thread while the others queue up.
  workers.run(
      "a",
      [gate] {
        gate.wait();
        return 0;
      },
      [](int) {});
  for (const char* owner : {"a", "a", "a", "b"}) {
    workers.run(
        owner,
        [&, owner] {
          std::lock_guard lock(m);
          order.emplace_back(owner);
          return 0;
        },
        [](int) {});
  }
  release.set_value();
  run_until(io, [&] {
    std::lock_guard lock(m);
    return order.size() == 4;
  });
  EXPECT_EQ(order, (std::vector<std::string>{"b", "a", "a", "a"}));  // b's turn after a's
  workers.close(milliseconds(1000));
}

}  // namespace
}  // namespace escouade
