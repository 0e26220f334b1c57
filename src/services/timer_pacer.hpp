#pragma once

// How often timers may fire for sandboxed plugins, each and all together: the host's share of its
// own thread (issue 26: one plugin's 64 timers of 10 ms, each set again as it fired, took a fifth
// of the host's thread, and nothing bounded many plugins doing it). A timer fires "at least" its
// delay after it was set (spec: "10 ms at least"): past its plugin's rate, or past the rate of
// all, its timer/fired waits for its turn rather than going out at once. A plugin with a few
// timers never waits; one that asks for thousands of firings a second gets its rate, and plugins
// that all do take turns, each keeping the order of its own.
//
// A token bucket per plugin's run and one for all: each firing takes a token of both; they refill
// at their rate, up to their burst. Thread: the host's; its timer runs on the host's executor.

#include <boost/asio/any_io_executor.hpp>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <memory>

#include "base/clock.hpp"
#include "base/lifeline.hpp"

namespace escouade::services {

class TimerPacer {
 public:
  struct Rates {
    double per_run = 200;  // firings a second for one plugin's run
    double per_run_burst = 20;
    double all = 1000;  // firings a second for every sandboxed plugin together
    double all_burst = 100;
  };

  TimerPacer(boost::asio::any_io_executor executor, Clock& clock, Rates rates);
  TimerPacer(boost::asio::any_io_executor executor, Clock& clock)
      : TimerPacer(std::move(executor), clock, Rates{}) {}
  ~TimerPacer();
  TimerPacer(const TimerPacer&) = delete;
  TimerPacer& operator=(const TimerPacer&) = delete;

  // Runs `fire` now when `run` and everyone are within their rates and nothing of `run` waits,
  // else when their turn comes (never inline then: from the pacer's timer).
  void deliver(const void* run, std::function<void()> fire);
  // The run ended: what it had waiting is dropped, its bucket forgotten.
  void forget(const void* run);
  // Firings waiting for their turn now (for tests).
  std::size_t waiting() const;

 private:
  struct Bucket {
    double tokens;
    Clock::TimePoint at;
  };
  struct Run {
    Bucket bucket;
    std::deque<std::function<void()>> waiting;
  };
  void refill(Bucket& b, double rate, double burst, Clock::TimePoint now) const;
  void serve();
  void arm(Clock::TimePoint now);

  Clock& clock_;
  Rates rates_;
  Bucket all_;
  std::map<const void*, Run> runs_;
  std::list<const void*> turns_;  // the runs with firings waiting, whose turn comes first first
  std::unique_ptr<Timer> timer_;
  bool armed_ = false;
  Lifeline lifeline_;
};

}  // namespace escouade::services
