#pragma once

// Blocking work (the keychain, a plugin's files, settings on disk, ending process trees), run on
// a few threads of their own so that the host's thread never waits, each result handed back to
// the host's thread.
//
// Fair: work is given with its owner (a plugin's id), each owner's work waits in its own queue,
// the queues are served in turn, and one owner never has more than `threads - 1` of its tasks
// running (all of them with a single thread): a plugin whose reads are stuck on a slow disk
// leaves a worker to the others.
//
// Closing is bounded (docs/lifetimes.md): work not yet started is dropped, work under way is
// waited for up to a bound, and what still runs after it is abandoned: its thread is left to
// finish alone and its completion is never delivered, so that no program of the project waits
// on a stuck keychain or disk to end.
//
// Thread: run() and close() on the host's thread; `work` on a worker; `then` on the host's
// thread, or destroyed there unrun when the pool closed first.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace escouade {

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

  // Runs `work()` on a worker, in `owner`'s turn, then `then(result)` on the host's thread. Once
  // the pool is closed, or when it closes before `work` ran, neither runs and `then` is
  // destroyed on the host's thread (a Reply it holds answers as dropped, to a session that is
  // closed by then).
  template <class Work, class Then>
  void run(std::string_view owner, Work work, Then then);

  // Takes no more work, drops what has not started (or, with `finish_queued`, lets it run, as
  // ending process trees must), waits up to `bound` for what runs, and abandons the rest (each
  // abandoned task is kept, never destroyed, and its thread detached). Returns how many tasks
  // were abandoned or dropped unrun. Idempotent.
  std::size_t close(std::chrono::milliseconds bound, bool finish_queued = false);

  // Threads that run work or wait for it (the pool's size until it closes).
  std::size_t threads() const noexcept { return threads_.size(); }
  // Tasks of `owner` waiting or running.
  std::size_t pending(std::string_view owner) const;

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
  struct Owner {
    std::deque<std::unique_ptr<Task>> queue;
    std::size_t running = 0;
  };
  struct Shared {
    boost::asio::any_io_executor host;
    mutable std::mutex m;
    std::condition_variable wake;  // a task came, a task ended, or the pool closed
    std::condition_variable idle;  // a task ended, or a thread left
    std::map<std::string, Owner, std::less<>> owners;
    std::string last_served;  // the turn goes on after it
    std::size_t per_owner = 1;
    std::vector<bool> exited;  // by thread: its loop has returned
    bool closed = false;
    bool finishing = false;  // closed, but what is queued still runs

    // The next owner whose turn it is and who may run one more task, under `m`; null if none.
    Owner* next(std::string& name);
    bool nothing_left() const;
  };

  void submit(std::string_view owner, std::unique_ptr<Task> task);
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
void Workers::run(std::string_view owner, Work work, Then then) {
  submit(owner, std::make_unique<TaskOf<Work, Then>>(std::move(work), std::move(then)));
}

}  // namespace escouade
