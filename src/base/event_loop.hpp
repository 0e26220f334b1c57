#pragma once

// How every program of the project runs its one event loop, and ends it (docs/lifetimes.md).
//
// A program's loop ends when its work is done, never when the loop runs out of work: a timer
// that re-arms itself, a read on a pipe that stays open or a wait on a stuck child would keep
// io_context::run() from returning forever. So a program runs its main task with run(main), or
// calls stop() itself when it is done; then it ends its parts in one order:
//   1. close what reaches the outside (sessions closed, programs stopped);
//   2. close the workers (services/workers.hpp: bounded, a stuck task is left behind);
//   3. drain(): run the completions already queued, within a bound, while the objects they
//      point to still exist (they meet closed sessions and do nothing);
//   4. destroy those objects, then this loop (declared first, destroyed last): whatever is
//      still queued is destroyed unrun, and every handler that could outlive its owner is
//      guarded (base/lifeline.hpp).
//
// Thread: the thread that calls run() is the loop's thread (the host's thread).

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstddef>
#include <exception>

namespace escouade {

class EventLoop {
 public:
  // How long a program drains what is queued after its work: completions run in microseconds.
  static constexpr std::chrono::milliseconds kDrainBound{1000};

  EventLoop() = default;
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  boost::asio::io_context& io() noexcept { return io_; }
  boost::asio::any_io_executor executor() { return io_.get_executor(); }

  // Runs `main` until it completes, then stops the loop, whatever is still queued or waited for.
  // Returns the exception `main` ended with, if any.
  std::exception_ptr run(boost::asio::awaitable<void> main);
  // Runs the loop until stop() is called: for a program driven by callbacks.
  void run();
  void stop() { io_.stop(); }

  // After the loop stopped: runs the handlers ready now, and those they make ready, for `bound`
  // at most; never waits for a timer or an I/O. Returns how many ran.
  std::size_t drain(std::chrono::milliseconds bound = kDrainBound);

 private:
  boost::asio::io_context io_;
  std::exception_ptr failure_;  // of the main task, once it ended
};

}  // namespace escouade
