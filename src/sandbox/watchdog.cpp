#include "sandbox/watchdog.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "sandbox/channel.hpp"

namespace escouade::sandbox {

// How often a turn's CPU time is read while some instance is in one: a turn is stopped within
// about this much of its budget.
constexpr auto kPeriod = std::chrono::milliseconds(10);
// While turns only come and go (a look finds none in progress, but some began since the last),
// the looks space out, doubling up to this: a decision asked of many plugins gave each helper's
// watchdog a turn every few milliseconds, so a look every 10 ms, each a wake-up of this thread
// that found nothing (perf, a decision of 100 plugins with 25 sandboxed, pinned: the watchdogs'
// threads 6 % of the core; a 50 ms period made the decision about 12 % faster). A turn first
// seen up to this long after its start is charged with the thread's CPU time since the look
// before (Channel::check_turn), so its budget holds as closely as with looks every 10 ms.
constexpr auto kLongestPeriod = std::chrono::milliseconds(80);

struct Watchdog::Shared {
  std::mutex mutex;
  std::condition_variable wake;
  std::vector<std::weak_ptr<Channel>> watched;
  bool began = false;     // a turn began since the last look
  bool sleeping = false;  // waiting for a turn, not ticking: a turn's start must wake it
  bool ending = false;
  std::vector<std::shared_ptr<Channel>> now;  // the channels of one tick, off the lock

  // Ticks every kPeriod while a turn runs, spaced out up to kLongestPeriod while turns only
  // begin and end between looks, and sleeps once a whole period passed with neither: a plugin
  // answering call after call keeps it ticking, and its turns' starts cost no wake-up of this
  // thread (a wake-up a turn was ~4 us of each call on this 2-core machine).
  void run() {
    std::unique_lock lock(mutex);
    bool active = false;
    auto period = kPeriod;
    while (!ending) {
      if (active) {
        wake.wait_for(lock, period, [&] { return ending; });
      } else {
        sleeping = true;
        wake.wait(lock, [&] { return ending || began; });
        sleeping = false;
      }
      if (ending) break;
      const bool began_since = std::exchange(began, false);
      // Its storage kept from tick to tick: past twice its limit the instance's account refuses
      // this thread's allocations too (memory_account.hpp), and a tick that allocated then
      // ended the process on std::bad_alloc instead of stopping the instance.
      for (auto it = watched.begin(); it != watched.end();) {
        if (auto c = it->lock()) {
          now.push_back(std::move(c));
          ++it;
        } else {
          it = watched.erase(it);
        }
      }
      lock.unlock();
      bool busy = false;
      for (auto& c : now)
        busy = c->check_turn() || busy;
      // The last reference to a channel may be this one: it goes here, off the lock.
      now.clear();
      lock.lock();
      active = busy || began_since;
      period = busy ? kPeriod : std::min(period * 2, kLongestPeriod);
    }
  }
};

Watchdog::Watchdog() : shared_(std::make_shared<Shared>()) {
  std::thread([s = shared_] { s->run(); }).detach();
}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(shared_->mutex);
    shared_->ending = true;
  }
  shared_->wake.notify_all();
}

void Watchdog::watch(const std::shared_ptr<Channel>& channel) {
  std::lock_guard lock(shared_->mutex);
  shared_->watched.push_back(channel);
}

void Watchdog::turn_began() {
  bool wake = false;
  {
    std::lock_guard lock(shared_->mutex);
    shared_->began = true;
    wake = shared_->sleeping;
  }
  if (wake) shared_->wake.notify_all();
}

}  // namespace escouade::sandbox
