#pragma once

// The watchdog of the sandbox's CPU limits: one thread that looks, every 10 ms while some
// instance is in a turn of work (up to 80 ms apart while turns only begin and end between its
// looks), at the CPU time that instance's thread spent in its turn, and stops the instance past
// its budget (2000 ms, 500 ms while it holds a decision). At its first look at a turn it charges
// the thread's CPU time since its look before (Channel::check_turn). Time an instance spends
// waiting for input costs nothing: it is measured on the thread's own CPU clock
// (pthread_getcpuclockid), not on the wall clock.
//
// Thread: watch() from any thread. The watchdog's thread holds only weak references to what it
// watches, and its state is shared with it: destroying the Watchdog asks the thread to end and
// never waits for it, so no thread ever joins another here.

#include <memory>

namespace escouade::sandbox {

class Channel;

class Watchdog {
 public:
  Watchdog();
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Watches this instance's turns until it is gone.
  void watch(const std::shared_ptr<Channel>& channel);
  // A turn began: the watchdog looks at it within 80 ms (woken now when it was asleep).
  void turn_began();

  struct Shared;

 private:
  std::shared_ptr<Shared> shared_;
};

}  // namespace escouade::sandbox
