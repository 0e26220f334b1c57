// The engine's helper threads, the helper's own (helper_threads.hpp).

#include "sandbox/spidermonkey/helper_threads.hpp"

// clang-format off
#include <jstypes.h>  // JS_PUBLIC_API, which js/HelperThreadAPI.h uses without including it
#include <js/HelperThreadAPI.h>
// clang-format on
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>

#include "sandbox/spidermonkey/engine.hpp"

namespace escouade::sandbox::spidermonkey {

namespace {

// Each thread's stack: the engine's own pool gives its threads 2 MiB, and Ion's passes over a
// large function recurse deeply. The engine keeps a tenth of it below its own limit.
constexpr std::size_t kStackBytes = 2 * 1024 * 1024;

// The tasks the engine handed over and no thread took yet. The engine calls dispatch() with its
// own lock held, from the thread that made a task (the instance's) or from one of these threads
// as it finishes one (DispatchReason::FinishedTask, when more wait): it only counts and wakes,
// and no thread holds this mutex while it calls the engine, so the two locks never cross.
// Never destroyed: the threads wait on it until the process ends.
struct Pool {
  std::mutex mutex;
  std::condition_variable lowered_work;  // for the helper threads
  std::condition_variable waited_work;   // for the threads at the instance's priority
  std::condition_variable started;
  std::size_t dispatched = 0;
  bool waited = false;  // the instance's thread waits for the tasks (WaitedTasks)
  int ready = 0;
};
Pool* pool = nullptr;

void dispatch(JS::DispatchReason) {
  bool waited = false;
  {
    std::lock_guard lock(pool->mutex);
    ++pool->dispatched;
    waited = pool->waited;
  }
  (waited ? pool->waited_work : pool->lowered_work).notify_one();
}

// A thread of the pool: `lowered` (a helper thread) takes the tasks while the instance's thread
// does not wait for them, the others while it does. A task keeps the thread it started on.
void serve(bool lowered) {
  std::unique_lock lock(pool->mutex);
  ++pool->ready;
  pool->started.notify_one();
  std::condition_variable& work = lowered ? pool->lowered_work : pool->waited_work;
  for (;;) {
    work.wait(lock, [&] { return pool->dispatched > 0 && pool->waited != lowered; });
    --pool->dispatched;
    lock.unlock();
    // The engine picks the task itself, the most urgent first (the GC's, then Ion's, ...).
    JS::RunHelperThreadTask();
    lock.lock();
  }
}

void* helper_main(void*) {
  pthread_setname_np(pthread_self(), std::string(kHelperThreadName).c_str());
  // Below the instance's thread: its turns run first on a shared core, and the compilations use
  // what they leave. On Linux PRIO_PROCESS with a thread's id is that thread alone. Were it
  // refused, the thread still runs the engine's tasks, at the instance's priority.
  (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), kHelperThreadNice);
  serve(/*lowered=*/true);
  return nullptr;
}

void* waited_main(void*) {
  pthread_setname_np(pthread_self(), std::string(kWaitedThreadName).c_str());
  serve(/*lowered=*/false);
  return nullptr;
}

}  // namespace

bool start_helper_threads() {
  pool = new Pool;
  // The engine runs as many tasks at once as it is told there are threads.
  JS::SetHelperThreadTaskCallback(dispatch, kHelperThreads + kWaitedThreads, kStackBytes);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, kStackBytes);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  int made = 0;
  for (int i = 0; i < kHelperThreads + kWaitedThreads; ++i) {
    pthread_t thread;
    if (pthread_create(&thread, &attr, i < kHelperThreads ? helper_main : waited_main, nullptr) !=
        0)
      break;
    ++made;
  }
  pthread_attr_destroy(&attr);
  // Each has named (and lowered) itself before the filter forbids both.
  std::unique_lock lock(pool->mutex);
  pool->started.wait(lock, [&] { return pool->ready == made; });
  return made == kHelperThreads + kWaitedThreads;
}

WaitedTasks::WaitedTasks() {
  if (!pool) return;
  {
    std::lock_guard lock(pool->mutex);
    pool->waited = true;
  }
  pool->waited_work.notify_all();
}

WaitedTasks::~WaitedTasks() {
  if (!pool) return;
  {
    std::lock_guard lock(pool->mutex);
    pool->waited = false;
  }
  pool->lowered_work.notify_all();
}

}  // namespace escouade::sandbox::spidermonkey
