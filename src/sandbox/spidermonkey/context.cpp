// The engine's process-wide start and the instances' child contexts (context.hpp).

#include "sandbox/spidermonkey/context.hpp"

#include <js/Initialization.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>

#include "sandbox/spidermonkey/engine.hpp"

namespace escouade::sandbox::spidermonkey {

namespace {

JSContext* g_parent = nullptr;
pthread_t g_parent_thread;
// Contexts of instances alive now: the engine is shut down at the process's exit only when none
// is (an instance thread still ending past the factory's bounded wait keeps it up).
std::atomic<int> g_instances{0};

// At exit, before the engine's own static locks are destroyed: its helper threads wait on one
// of them, and destroying it under them crashes the process on its way out.
void shut_down_engine() {
  if (g_instances.load() != 0 || !g_parent || !pthread_equal(g_parent_thread, pthread_self()))
    return;
  JS_DestroyContext(g_parent);
  g_parent = nullptr;
  JS_ShutDown();
}

}  // namespace

bool start_engine() {
  static std::once_flag once;
  static bool started = false;
  std::call_once(once, [] {
    // A wasm memory would otherwise reserve 8 GiB of address space; a run.wasm memory is 64 MB
    // at most, and AddressSanitizer wants no such reservation either.
    (void)JS::DisableWasmHugeMemory();
    if (!JS_Init()) return;
    g_parent = JS_NewContext(JS::DefaultHeapMaxBytes);
    if (!g_parent || !JS::InitSelfHostedCode(g_parent)) return;
    g_parent_thread = pthread_self();
    std::atexit(shut_down_engine);
    started = true;
  });
  return started;
}

InstanceContext::InstanceContext(std::uint64_t heap_max_bytes, std::size_t stack_bytes) {
  engine_ = start_engine() && g_parent;
  if (!engine_) return;
  ++g_instances;
  cx_ = JS_NewContext(heap_max_bytes, JS_GetRuntime(g_parent));
  if (!cx_) {
    --g_instances;
    return;
  }
  // The engine stops deep recursion ("too much recursion") well before the thread's stack ends.
  JS_SetNativeStackQuota(cx_, stack_bytes - std::min<std::size_t>(stack_bytes / 4, 1024 * 1024));
}

InstanceContext::~InstanceContext() {
  if (!cx_) return;
  JS_DestroyContext(cx_);
  --g_instances;
}

}  // namespace escouade::sandbox::spidermonkey
