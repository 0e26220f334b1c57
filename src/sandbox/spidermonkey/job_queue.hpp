#pragma once

// The job queue of an instance's context: the sandbox's own, so that a turn's boundaries are
// ours. Engine-internal: included by this folder's files only, after jsapi.h.

#include <js/GCVector.h>
#include <js/Promise.h>
#include <jsapi.h>
#include <jsfriendapi.h>

#include <utility>

namespace escouade::sandbox::spidermonkey {

// A job queue of our own: the turn's boundaries are ours, and a job stopped by the interrupt
// callback ends the drain at once (the engine's internal queue, once stopped, stays stopped).
class JobQueue final : public JS::JobQueue {
 public:
  explicit JobQueue(JSContext* cx) : jobs_(cx) {}

  JSObject* getIncumbentGlobal(JSContext* cx) override { return JS::CurrentGlobalOrNull(cx); }
  bool enqueuePromiseJob(JSContext* cx, JS::HandleObject, JS::HandleObject job, JS::HandleObject,
                         JS::HandleObject) override {
    if (!jobs_.append(job)) {
      JS_ReportOutOfMemory(cx);
      return false;
    }
    return true;
  }
  // Used by the debugger only, which the sandbox does not have.
  void runJobs(JSContext* cx) override { (void)drain(cx); }
  bool empty() const override { return next_ >= jobs_.length(); }

  // Runs every job, those they queue included. False when one failed without an exception
  // handled by the promise machinery: an interrupt, an uncatchable error, exit(), or a pending
  // exception left for the caller.
  bool drain(JSContext* cx) {
    JS::RootedObject job(cx);
    JS::RootedValue ignored(cx);
    while (next_ < jobs_.length()) {
      job = jobs_[next_++];
      if (!JS::Call(cx, JS::UndefinedHandleValue, job, JS::HandleValueArray::empty(), &ignored))
        return false;
      if (next_ > 1024 && next_ * 2 > jobs_.length()) compact();
    }
    jobs_.clear();
    next_ = 0;
    return true;
  }
  // Before the context is destroyed: the queue's roots go first.
  void reset() {
    jobs_.clear();
    next_ = 0;
    jobs_.reset();
  }

 private:
  void compact() {
    jobs_.erase(jobs_.begin(), jobs_.begin() + next_);
    next_ = 0;
  }

  class Saved final : public SavedJobQueue {
   public:
    Saved(JSContext* cx, JobQueue& q) : queue_(q), saved_(cx), next_(q.next_) {
      std::swap(saved_.get(), q.jobs_.get());
      q.next_ = 0;
    }
    ~Saved() override {
      std::swap(saved_.get(), queue_.jobs_.get());
      queue_.next_ = next_;
    }

   private:
    JobQueue& queue_;
    JS::PersistentRooted<JS::GCVector<JSObject*, 0, js::SystemAllocPolicy>> saved_;
    std::size_t next_;
  };

 public:
  js::UniquePtr<SavedJobQueue> saveJobQueue(JSContext* cx) override {
    auto saved = js::MakeUnique<Saved>(cx, *this);
    if (!saved) JS_ReportOutOfMemory(cx);
    return saved;
  }

 private:
  JS::PersistentRooted<JS::GCVector<JSObject*, 0, js::SystemAllocPolicy>> jobs_;
  std::size_t next_ = 0;
};

}  // namespace escouade::sandbox::spidermonkey
