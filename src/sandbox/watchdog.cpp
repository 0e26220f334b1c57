#include "sandbox/watchdog.hpp"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "sandbox/channel.hpp"

namespace escouade::sandbox {

// How often a turn's CPU time is read while some instance is in one: a turn is stopped within
// about this much of its budget.
constexpr auto kPeriod = std::chrono::milliseconds(10);

struct Watchdog::Shared {
  std::mutex mutex;
  std::condition_variable wake;
  std::vector<std::weak_ptr<Channel>> watched;
  bool woken = false;
  bool ending = false;

  void run() {
    std::unique_lock lock(mutex);
    bool busy = false;
    while (!ending) {
      if (busy)
        wake.wait_for(lock, kPeriod, [&] { return ending; });
      else
        wake.wait(lock, [&] { return ending || woken; });
      woken = false;
      if (ending) break;
      std::vector<std::shared_ptr<Channel>> now;
      for (auto it = watched.begin(); it != watched.end();) {
        if (auto c = it->lock()) {
          now.push_back(std::move(c));
          ++it;
        } else {
          it = watched.erase(it);
        }
      }
      lock.unlock();
      busy = false;
      for (auto& c : now)
        busy = c->check_turn() || busy;
      // The last reference to a channel may be this one: it goes here, off the lock.
      now.clear();
      lock.lock();
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
  {
    std::lock_guard lock(shared_->mutex);
    shared_->woken = true;
  }
  shared_->wake.notify_all();
}

}  // namespace escouade::sandbox
