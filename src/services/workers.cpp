#include "services/workers.hpp"

namespace escouade::services {

namespace {

// Tasks whose work ended after their pool closed. Their completion may hold what only the
// host's thread may touch (a Reply, a journal), and the host may be gone: they are kept here,
// reachable and never destroyed. Only a stuck task ends here, so this stays small.
struct Abandoned {
  std::mutex m;
  std::vector<std::shared_ptr<void>> kept;
};

Abandoned& abandoned() {
  static auto* kept = new Abandoned();  // never destroyed: a late worker may reach it at exit
  return *kept;
}

}  // namespace

Workers::Workers(boost::asio::any_io_executor host, std::size_t threads)
    : shared_(std::make_shared<Shared>()) {
  shared_->host = std::move(host);
  if (threads == 0) threads = 1;
  shared_->exited.assign(threads, false);
  threads_.reserve(threads);
  for (std::size_t i = 0; i < threads; ++i)
    threads_.emplace_back([shared = shared_, i] { loop(shared, i); });
}

Workers::~Workers() {
  close(kCloseBound);
}

void Workers::submit(std::unique_ptr<Task> task) {
  {
    std::lock_guard lock(shared_->m);
    if (!shared_->closed) {
      shared_->queue.push_back(std::move(task));
      shared_->wake.notify_one();
      return;
    }
  }
  // Closed: `task` (and the completion it holds) is destroyed here, on the host's thread.
}

void Workers::loop(const std::shared_ptr<Shared>& shared, std::size_t index) {
  std::unique_lock lock(shared->m);
  for (;;) {
    shared->wake.wait(lock, [&] { return shared->closed || !shared->queue.empty(); });
    if (shared->closed) break;
    std::unique_ptr<Task> task = std::move(shared->queue.front());
    shared->queue.pop_front();
    ++shared->running;
    lock.unlock();
    const bool delivered = task->run(shared->host, shared->m, shared->closed);
    if (!delivered) {
      auto& a = abandoned();
      std::lock_guard keep(a.m);
      a.kept.emplace_back(std::shared_ptr<Task>(task.release()));
    }
    lock.lock();
    --shared->running;
    shared->idle.notify_all();
  }
  shared->exited[index] = true;
  shared->idle.notify_all();
}

std::size_t Workers::close(std::chrono::milliseconds bound) {
  if (threads_.empty()) return 0;
  std::deque<std::unique_ptr<Task>> dropped;
  std::size_t stuck = 0;
  std::vector<bool> exited;
  {
    std::unique_lock lock(shared_->m);
    shared_->closed = true;
    dropped.swap(shared_->queue);
    shared_->wake.notify_all();
    const auto all_out = [&] {
      for (bool e : shared_->exited)
        if (!e) return false;
      return true;
    };
    shared_->idle.wait_for(lock, bound, all_out);
    stuck = shared_->running;
    exited = shared_->exited;
  }
  dropped.clear();  // their completions are destroyed here, on the host's thread
  for (std::size_t i = 0; i < threads_.size(); ++i) {
    if (exited[i]) {
      threads_[i].join();
    } else {
      threads_[i].detach();  // still in its work: it ends alone, its completion kept unrun
    }
  }
  threads_.clear();
  return stuck;
}

}  // namespace escouade::services
