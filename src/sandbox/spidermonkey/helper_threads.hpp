#pragma once

// The engine's helper threads, made by the helper itself (JS::SetHelperThreadTaskCallback) rather
// than by the engine's own pool at the first context: the engine's pool ran its compilations (Ion
// of run.js code, a run.wasm module's tier-2 code after its start) at the priority of the
// instance's turns, on whatever core, and a decision that shared its core with them waited. So
// its tasks run on threads that lower their own priority (engine.hpp, kHelperThreadNice) when
// they start: a thread's nice cannot be raised back by an unprivileged process, and `setpriority`
// is not in the filter, so it is done before the lockdown, and the filter is then synchronized to
// them (lockdown::install_filter).
//
// Tasks the instance's thread waits for would then wait for whatever else the machine runs (with
// a build running beside it, a run.wasm start, whose compile the instance's thread waits for,
// took 100-170 ms instead of 60-85, pinned). While it blocks on them (WaitedTasks), they go to
// threads of its own priority instead, kept for that.
//
// Engine-internal: context.cpp starts them, wasm_instance.cpp marks its waits.

namespace escouade::sandbox::spidermonkey {

// After JS_Init and before the first JS_NewContext, from the main thread, before the lockdown:
// hands the engine's tasks to the threads engine.hpp counts, started here, each named and (the
// helper threads) lowered before this returns. False when a thread could not be made. The
// threads live as long as the process (it ends with _exit, and they hold nothing to flush).
bool start_helper_threads();

// While one lives, the engine's tasks that start go to the threads at the instance's priority:
// the instance's thread waits for them (a run.wasm module's compile: the baseline code of its
// functions is made on the helper threads while it waits). On the instance's thread, one at a
// time; nothing without start_helper_threads.
class WaitedTasks {
 public:
  WaitedTasks();
  ~WaitedTasks();
  WaitedTasks(const WaitedTasks&) = delete;
  WaitedTasks& operator=(const WaitedTasks&) = delete;
};

}  // namespace escouade::sandbox::spidermonkey
