// The engine's start in a helper, the instance's context, and how an exception is told
// (context.hpp).

#include "sandbox/spidermonkey/context.hpp"

#include <js/BuildId.h>
#include <js/ContextOptions.h>
#include <js/ErrorReport.h>
#include <js/Initialization.h>
#include <js/RealmOptions.h>

#include <algorithm>
#include <string>

#include "sandbox/channel.hpp"
#include "sandbox/spidermonkey/bundle_code.hpp"
#include "sandbox/spidermonkey/compat.hpp"
#include "sandbox/spidermonkey/helper_threads.hpp"

namespace escouade::sandbox::spidermonkey {

bool start_engine() {
  // A wasm memory would otherwise reserve 8 GiB of address space; a run.wasm memory is 64 MB
  // at most, and AddressSanitizer wants no such reservation either.
  (void)JS::DisableWasmHugeMemory();
  // Stencils are encoded with the build they were made by: one of another build fails to decode.
  JS::SetProcessBuildIdOp([](JS::BuildIdCharVector* id) {
    const std::string build = engine_build();
    return id->append(build.data(), build.size());
  });
  // The engine's tasks go to threads of the helper's own from the first context on.
  return JS_Init() && start_helper_threads();
}

std::string engine_build() {
  static const std::string build =
      std::string("escouade ") + ESCOUADE_HOST_VERSION + " " + JS_GetImplementationVersion();
  return build;
}

Instance* make_instance(std::uint64_t memory_limit, std::size_t stack_bytes, StatusPage* page,
                        std::string& why) {
  auto* instance = new Instance;
  instance->memory_limit = memory_limit;
  // Everything the process allocates from here on is the instance's: its context included, and
  // the engine's threads' work for it.
  instance->account = memory::open(memory_limit);
  memory::charge_all_threads(instance->account);
  memory::publish(instance->account, page);
  // The engine's own GC cap only bounds what the heap takes before the limit is seen at a
  // collection's end (Channel::check_memory, with the account's blocks when there is one): near
  // its cap the engine collects again and again before it gives up, which made a growing heap a
  // CPU end rather than a memory one.
  const std::uint64_t heap = 2 * memory_limit;
  instance->cx = JS_NewContext(heap);
  if (!instance->cx) {
    why = "no room for its context";
    return nullptr;
  }
  // No stack is captured for each promise made and each job queued, as Firefox does while its
  // devtools are closed: an instance has no debugger, and the captures were the costliest part
  // of a fetch's promises (callgrind, bench_net --only host). An error keeps the stack of where
  // it was made; only the frames of the async calls that led there are left out.
  JS::ContextOptionsRef(instance->cx).setAsyncStackCaptureDebuggeeOnly(true);
  // The engine stops deep recursion ("too much recursion") well before the thread's stack ends.
  JS_SetNativeStackQuota(instance->cx,
                         stack_bytes - std::min<std::size_t>(stack_bytes / 4, 1024 * 1024));
  if (!JS::InitSelfHostedCode(instance->cx)) {
    why = "the engine's own code did not load";
    return nullptr;
  }
  instance->prelude = compile_prelude(instance->cx);
  return instance;
}

void set_memory_limit(Instance& instance, std::uint64_t memory_limit) {
  instance.memory_limit = memory_limit;
  memory::set_limit(instance.account, memory_limit);
  JS_SetGCParameter(
      instance.cx, JSGC_MAX_BYTES,
      static_cast<std::uint32_t>(std::min<std::uint64_t>(2 * memory_limit, UINT32_MAX)));
  // The engine's first collections would wait for 27 MB of GC heap and 38 MB of malloc'd
  // buffers, then grow those thresholds up to threefold: made for a browser's gigabytes, they let
  // a plugin that makes garbage quickly (a streamed body read in 64 KiB arrays: 64 MB of it for
  // 32 MiB) pass its 64 MB of account before anything is collected, though it holds little; and
  // the GC heap's size is only judged at a collection's end. An eighth of the limit each (8 MB
  // for 64), in MB as the engine takes them.
  const auto eighth = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, memory_limit >> 23));
  JS_SetGCParameter(instance.cx, JSGC_ALLOCATION_THRESHOLD, eighth);
  JS_SetGCParameter(instance.cx, JSGC_MALLOC_THRESHOLD_BASE, eighth);
}

std::optional<runtime::ProgramEnd> run(Instance& instance, const wire::Start& start,
                                       Channel& channel) {
  channel.account(instance.account);
  switch (start.kind) {
    case wire::Start::Kind::js:
      return run_js(instance, start, channel);
    case wire::Start::Kind::wasm:
      return run_wasm(instance, start, channel);
    case wire::Start::Kind::compile_js:
      return compile_js(instance, start, channel);
    case wire::Start::Kind::compile_wasm:
      return compile_wasm(instance, start, channel);
  }
  return crash("its instance could not start: an unknown kind of module");
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
