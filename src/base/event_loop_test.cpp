#include "base/event_loop.hpp"

#include <gtest/gtest.h>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <functional>
#include <stdexcept>

namespace escouade {
namespace {

namespace asio = boost::asio;
using std::chrono::milliseconds;

// The harness's hang (docs/lifetimes.md): a timer that re-arms itself keeps io_context::run()
// from ever returning. The loop ends with its main task instead.
TEST(EventLoop, EndsWithItsMainTaskWhateverStillWaits) {
  EventLoop loop;
  asio::steady_timer ticker(loop.io());
  int ticks = 0;
  std::function<void()> tick = [&] {
    ticker.expires_after(milliseconds(1));
    ticker.async_wait([&](boost::system::error_code) {
      ++ticks;
      tick();  // never stops by itself, even when cancelled
    });
  };
  tick();
  bool done = false;
  auto failure = loop.run([&]() -> asio::awaitable<void> {
    asio::steady_timer t(co_await asio::this_coro::executor, milliseconds(5));
    co_await t.async_wait(asio::use_awaitable);
    done = true;
  }());
  EXPECT_TRUE(done);
  EXPECT_FALSE(failure);
}

TEST(EventLoop, GivesBackTheExceptionItsMainTaskEndedWith) {
  EventLoop loop;
  auto failure = loop.run([]() -> asio::awaitable<void> {
    throw std::runtime_error("broken");
    co_return;
  }());
  ASSERT_TRUE(failure);
  EXPECT_THROW(std::rethrow_exception(failure), std::runtime_error);
}

TEST(EventLoop, DrainRunsWhatIsQueuedAndWhatThatQueuesButWaitsForNoTimer) {
  EventLoop loop;
  int ran = 0;
  asio::post(loop.io(), [&] {
    ++ran;
    asio::post(loop.io(), [&] { ++ran; });
  });
  asio::steady_timer later(loop.io(), std::chrono::hours(1));
  bool fired = false;
  later.async_wait([&](boost::system::error_code ec) { fired = !ec; });
  EXPECT_EQ(loop.drain(), 2u);
  EXPECT_EQ(ran, 2);
  EXPECT_FALSE(fired);
}

TEST(EventLoop, DrainIsBoundedWhenHandlersKeepQueueingMore) {
  EventLoop loop;
  std::function<void()> again = [&] { asio::post(loop.io(), again); };
  again();
  EXPECT_GT(loop.drain(milliseconds(20)), 0u);  // it returns
}

}  // namespace
}  // namespace escouade
