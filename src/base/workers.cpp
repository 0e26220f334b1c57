#include "base/workers.hpp"

namespace escouade {

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
  shared_->per_owner = threads > 1 ? threads - 1 : 1;
  shared_->exited.assign(threads, false);
  threads_.reserve(threads);
  for (std::size_t i = 0; i < threads; ++i)
    threads_.emplace_back([shared = shared_, i] { loop(shared, i); });
}

Workers::~Workers() {
  close(kCloseBound);
}

std::size_t Workers::pending(std::string_view owner) const {
  std::lock_guard lock(shared_->m);
  auto it = shared_->owners.find(owner);
  return it == shared_->owners.end() ? 0 : it->second.queue.size() + it->second.running;
}

void Workers::submit(std::string_view owner, std::unique_ptr<Task> task) {
  {
    std::lock_guard lock(shared_->m);
    if (!shared_->closed) {
      auto it = shared_->owners.find(owner);
      if (it == shared_->owners.end())
        it = shared_->owners.emplace(std::string(owner), Owner{}).first;
      it->second.queue.push_back(std::move(task));
      shared_->wake.notify_one();
      return;
    }
  }
  // Closed: `task` (and the completion it holds) is destroyed here, on the host's thread.
}

Workers::Owner* Workers::Shared::next(std::string& name) {
  if (owners.empty()) return nullptr;
  // In turn: the owners after the last one served, then from the start up to it.
  auto start = owners.upper_bound(last_served);
  for (int round = 0; round < 2; ++round) {
    for (auto it = round == 0 ? start : owners.begin(); it != (round == 0 ? owners.end() : start);
         ++it) {
      if (!it->second.queue.empty() && it->second.running < per_owner) {
        name = it->first;
        return &it->second;
      }
    }
  }
  return nullptr;
}

void Workers::loop(const std::shared_ptr<Shared>& shared, std::size_t index) {
  std::unique_lock lock(shared->m);
  for (;;) {
    std::string name;
    Owner* owner = nullptr;
    shared->wake.wait(lock, [&] {
      return (owner = shared->next(name)) != nullptr || (shared->closed && !shared->finishing) ||
             (shared->closed && shared->finishing && shared->nothing_left());
    });
    if (!owner) break;
    std::unique_ptr<Task> task = std::move(owner->queue.front());
    owner->queue.pop_front();
    ++owner->running;
    shared->last_served = name;
    lock.unlock();
    const bool delivered = task->run(shared->host, shared->m, shared->closed);
    if (!delivered) {
      auto& a = abandoned();
      std::lock_guard keep(a.m);
      a.kept.emplace_back(std::shared_ptr<Task>(task.release()));
    }
    lock.lock();
    // The owner is found again: the map may have changed while the lock was released.
    if (auto it = shared->owners.find(name); it != shared->owners.end()) {
      --it->second.running;
      if (it->second.running == 0 && it->second.queue.empty()) shared->owners.erase(it);
    }
    shared->wake.notify_all();  // a task of an owner at its limit may go now
    shared->idle.notify_all();
  }
  shared->exited[index] = true;
  shared->idle.notify_all();
}

bool Workers::Shared::nothing_left() const {
  for (const auto& [name, owner] : owners) {
    if (!owner.queue.empty()) return false;
  }
  return true;
}

std::size_t Workers::close(std::chrono::milliseconds bound, bool finish_queued) {
  if (threads_.empty()) return 0;
  std::map<std::string, Owner, std::less<>> dropped;
  std::size_t stuck = 0;
  std::vector<bool> exited;
  {
    std::unique_lock lock(shared_->m);
    shared_->closed = true;
    shared_->finishing = finish_queued;
    if (!finish_queued) {
      for (auto& [name, owner] : shared_->owners)
        dropped[name].queue.swap(owner.queue);
    }
    shared_->wake.notify_all();
    const auto all_out = [&] {
      for (bool e : shared_->exited)
        if (!e) return false;
      return true;
    };
    shared_->idle.wait_for(lock, bound, all_out);
    stuck = 0;
    for (auto& [name, owner] : shared_->owners) {
      stuck += owner.running + owner.queue.size();
      dropped[name].queue.swap(owner.queue);  // what a finishing close had no time for
    }
    shared_->finishing = false;
    shared_->wake.notify_all();
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

}  // namespace escouade
