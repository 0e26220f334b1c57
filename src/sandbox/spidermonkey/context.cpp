// The engine's process-wide start and the instances' child contexts (context.hpp).

#include "sandbox/spidermonkey/context.hpp"

#include <js/BuildId.h>
#include <js/ErrorReport.h>
#include <js/Initialization.h>
#include <js/RealmOptions.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>

#include "sandbox/spidermonkey/compat.hpp"
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
    // The compile cache's stencils are encoded with the build they were made by.
    JS::SetProcessBuildIdOp([](JS::BuildIdCharVector* id) {
      const std::string build = engine_build();
      return id->append(build.data(), build.size());
    });
    if (!JS_Init()) return;
    g_parent = JS_NewContext(JS::DefaultHeapMaxBytes);
    if (!g_parent || !JS::InitSelfHostedCode(g_parent)) return;
    g_parent_thread = pthread_self();
    std::atexit(shut_down_engine);
    started = true;
  });
  return started;
}

InstanceContext::InstanceContext(std::uint64_t memory_limit, std::size_t stack_bytes) {
  engine_ = start_engine() && g_parent;
  if (!engine_) return;
  ++g_instances;
  // Everything this thread allocates from here on is the instance's: its context included.
  if (memory_limit > 0) account_ = memory::open(memory_limit);
  const std::uint64_t heap = memory_limit == 0 ? JS::DefaultHeapMaxBytes
                             : account_        ? 2 * memory_limit
                                               : memory_limit;
  cx_ = JS_NewContext(heap, JS_GetRuntime(g_parent));
  if (!cx_) {
    memory::close(account_);
    account_ = 0;
    --g_instances;
    return;
  }
  // The engine stops deep recursion ("too much recursion") well before the thread's stack ends.
  JS_SetNativeStackQuota(cx_, stack_bytes - std::min<std::size_t>(stack_bytes / 4, 1024 * 1024));
}

InstanceContext::~InstanceContext() {
  if (!cx_) return;
  JS_DestroyContext(cx_);
  memory::close(account_);
  --g_instances;
}

JSObject* new_sandbox_global(JSContext* cx) {
  static const JSClass global_class = {
      "global", JSCLASS_GLOBAL_FLAGS, &JS::DefaultGlobalClassOps, nullptr, nullptr, nullptr};
  JS::RealmOptions options;
  options.creationOptions()
      .setSharedMemoryAndAtomicsEnabled(false)
      .setDefineSharedArrayBufferConstructor(false);
  return JS_NewGlobalObject(cx, &global_class, nullptr, JS::FireOnNewGlobalHook, options);
}

std::string describe(JSContext* cx, const JS::ExceptionStack& stack, bool with_place) {
  JS::ErrorReportBuilder report(cx);
  if (!report.init(cx, stack, JS::ErrorReportBuilder::WithSideEffects)) {
    JS_ClearPendingException(cx);
    return "an error that cannot be told";
  }
  std::string out = report.toStringResult() ? report.toStringResult().c_str() : "an error";
  const JSErrorReport* r = report.report();
  if (with_place && r && compat::file_of(r) && *compat::file_of(r))
    out += std::string(" (") + compat::file_of(r) + ":" + std::to_string(r->lineno) + ")";
  return out;
}

std::string describe_pending(JSContext* cx, bool with_place) {
  JS::ExceptionStack stack(cx);
  if (!JS_IsExceptionPending(cx) || !JS::StealPendingExceptionStack(cx, &stack))
    return "an error that cannot be told";
  return describe(cx, stack, with_place);
}

}  // namespace escouade::sandbox::spidermonkey
