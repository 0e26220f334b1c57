#pragma once

// The services' blocking work (the keychain, a plugin's files, settings on disk), run on a few
// threads of their own so that the host's thread never waits, each result handed back to the
// host's thread. Closing is bounded (docs/lifetimes.md): work not yet started is dropped, work
// under way is waited for up to a bound, and what still runs after it is abandoned: its thread
// is left to finish alone and its completion is never delivered, so that no program of the
// project waits on a stuck keychain or disk to end.
//
// Thread: run() and close() on the host's thread; `work` on a worker; `then` on the host's
// thread, or destroyed there unrun when the pool closed first.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace escouade::services {

class Workers {
 public:
  // How long closing waits for work under way: a keychain or disk read takes milliseconds;
  // one that takes longer than this is stuck, and the program ends without it.
  static constexpr std::chrono::milliseconds kCloseBound{2000};

  Workers(boost::asio::any_io_executor host, std::size_t threads);
  // close(kCloseBound).
  ~Workers();
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;

  // Runs `work()` on a worker, then `then(result)` on the host's thread. Once the pool is closed,
  // or when it closes before `work` ran, neither runs and `then` is destroyed on the host's
  // thread (a Reply it holds answers as dropped, to a session that is closed by then).
  template <class Work, class Then>
  void run(Work work, Then then);

  // Takes no more work, drops what has not started, waits up to `bound` for what runs, and
  // abandons the rest (each abandoned task is kept, never destroyed, and its thread detached).
  // Returns how many tasks were abandoned. Idempotent.
  std::size_t close(std::chrono::milliseconds bound);

  // Threads that run work or wait for it (the pool's size until it closes).
  std::size_t threads() const noexcept { return threads_.size(); }

 private:
  struct Task {
    virtual ~Task() = default;
    // On a worker: does the work and, unless `closed` meanwhile, posts the completion. Returns
    // false when the pool closed first and the completion was not posted.
    virtual bool run(const boost::asio::any_io_executor& host, std::mutex& m,
                     const bool& closed) = 0;
  };
  template <class Work, class Then>
  struct TaskOf;
  struct Shared {
    boost::asio::any_io_executor host;
    std::mutex m;
    std::condition_variable wake;  // a task came, or the pool closed
    std::condition_variable idle;  // a task ended
    std::deque<std::unique_ptr<Task>> queue;
    std::size_t running = 0;
    std::vector<bool> exited;  // by thread: its loop has returned
    bool closed = false;
  };

  void submit(std::unique_ptr<Task> task);
  static void loop(const std::shared_ptr<Shared>& shared, std::size_t index);

  std::shared_ptr<Shared> shared_;
  std::vector<std::thread> threads_;
};

template <class Work, class Then>
struct Workers::TaskOf final : Workers::Task {
  TaskOf(Work w, Then t) : work(std::move(w)), then(std::move(t)) {}
  bool run(const boost::asio::any_io_executor& host, std::mutex& m, const bool& closed) override {
    auto result = work();
    std::lock_guard lock(m);
    if (closed) return false;
    boost::asio::post(host, [then = std::move(then), result = std::move(result)]() mutable {
      then(std::move(result));
    });
    return true;
  }
  Work work;
  Then then;
};

template <class Work, class Then>
void Workers::run(Work work, Then then) {
  submit(std::make_unique<TaskOf<Work, Then>>(std::move(work), std::move(then)));
}

}  // namespace escouade::services
