#pragma once

// What a run.js and a run.wasm instance share of the engine: the process-wide start (JS_Init,
// the parent context), an instance's own child context, and how an exception is told.
// Engine-internal: included by this folder's files only, after jsapi.h.

#include <js/Exception.h>
#include <jsapi.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "sandbox/memory_account.hpp"

namespace escouade::sandbox::spidermonkey {

// A child context of the engine's parent runtime, made on the calling thread (the instance's,
// whose stack has `stack_bytes`), counted among the live instances (the engine is shut down at
// exit only when none is), destroyed on the same thread by the destructor. Empty when the engine
// did not start or had no room for it.
//
// With a `memory_limit`, the calling thread's allocations are charged to a memory account of
// that limit from before the context is made until after it is destroyed (memory_account.hpp);
// the account counts the GC heap with the rest, so the engine's own GC cap is then twice the
// limit, where it only bounds what the heap takes before the account sees it (near its cap the
// engine collects again and again before it gives up, which made a growing heap a CPU end rather
// than a memory one). Without an account (0, or none to be had) the GC cap is the limit itself;
// 0 means the engine's default heap, for work that is not an instance's (a precompile).
class InstanceContext {
 public:
  InstanceContext(std::uint64_t memory_limit, std::size_t stack_bytes);
  ~InstanceContext();
  InstanceContext(const InstanceContext&) = delete;
  InstanceContext& operator=(const InstanceContext&) = delete;

  JSContext* get() const noexcept { return cx_; }
  // Whether the engine had started at all (an empty context with it started had no room).
  bool engine() const noexcept { return engine_; }
  // The account its thread's allocations are charged to; 0 for none.
  memory::Account account() const noexcept { return account_; }

 private:
  JSContext* cx_ = nullptr;
  bool engine_ = false;
  memory::Account account_ = 0;
};

// A global for an instance (and for a precompile): no shared memory, no atomics, so that a
// shared wasm memory cannot even be made. nullptr when there is no room for it.
JSObject* new_sandbox_global(JSContext* cx);

// The engine's words for an exception: "Error: boom", then " (dist/plugin.mjs:3)" when
// `with_place` and the report names a file (run.js; a wasm trap is told without it).
std::string describe(JSContext* cx, const JS::ExceptionStack& stack, bool with_place);
// The pending exception, taken and described so; "an error that cannot be told" without one.
std::string describe_pending(JSContext* cx, bool with_place);

}  // namespace escouade::sandbox::spidermonkey
