#pragma once

// What a run.js and a run.wasm instance share of the engine: the process-wide start (JS_Init,
// the parent context) and an instance's own child context. Engine-internal: included by this
// folder's files only, after jsapi.h.

#include <jsapi.h>

#include <cstddef>
#include <cstdint>

namespace escouade::sandbox::spidermonkey {

// A child context of the engine's parent runtime, made on the calling thread (the instance's,
// whose stack has `stack_bytes`), its GC heap capped at `heap_max_bytes`. Counted among the
// live instances (the engine is shut down at exit only when none is), destroyed on the same
// thread by the destructor. Empty when the engine did not start or had no room for it.
class InstanceContext {
 public:
  InstanceContext(std::uint64_t heap_max_bytes, std::size_t stack_bytes);
  ~InstanceContext();
  InstanceContext(const InstanceContext&) = delete;
  InstanceContext& operator=(const InstanceContext&) = delete;

  JSContext* get() const noexcept { return cx_; }
  // Whether the engine had started at all (an empty context with it started had no room).
  bool engine() const noexcept { return engine_; }

 private:
  JSContext* cx_ = nullptr;
  bool engine_ = false;
};

}  // namespace escouade::sandbox::spidermonkey
