#pragma once

// What a run.js and a run.wasm instance share of the engine: the instance's context and how an
// exception is told. Engine-internal: included by this folder's files only, after jsapi.h.

#include <js/Exception.h>
#include <js/experimental/JSStencil.h>
#include <jsapi.h>

#include <cstdint>
#include <optional>
#include <string>

#include "runtime/program.hpp"
#include "sandbox/memory_account.hpp"
#include "sandbox/spidermonkey/engine.hpp"
#include "sandbox/wire.hpp"

namespace escouade::sandbox::spidermonkey {

struct Instance {
  JSContext* cx = nullptr;
  memory::Account account = 0;
  std::uint64_t memory_limit = 0;
  // The run.js prelude compiled while the helper waits for its start (a reference held for the
  // process's life); null when it did not compile then, and a run.js start compiles it.
  JS::Stencil* prelude = nullptr;
};

// A global for an instance: no shared memory, no atomics, so that a shared wasm memory cannot
// even be made. nullptr when there is no room for it.
JSObject* new_sandbox_global(JSContext* cx);

// The engine's words for an exception: "Error: boom", then " (dist/plugin.mjs:3)" when
// `with_place` and the report names a file (run.js; a wasm trap is told without it). It may run
// the bundle's code (a thrown object's toString): call it inside a turn.
std::string describe(JSContext* cx, const JS::ExceptionStack& stack, bool with_place);
// The pending exception, taken and described so; "an error that cannot be told" without one.
std::string describe_pending(JSContext* cx, bool with_place);

// How each kind runs (js_instance.cpp, wasm_instance.cpp).
runtime::ProgramEnd run_js(Instance& instance, const wire::Start& start, Channel& channel);
std::optional<runtime::ProgramEnd> compile_wasm(Instance& instance, const wire::Start& start,
                                                Channel& channel);
std::optional<runtime::ProgramEnd> compile_js(Instance& instance, const wire::Start& start,
                                              Channel& channel);
runtime::ProgramEnd run_wasm(Instance& instance, const wire::Start& start, Channel& channel);

inline runtime::ProgramEnd crash(std::string reason) {
  return runtime::ProgramEnd{runtime::ProgramEnd::Kind::crash, std::move(reason), {}, {}};
}
inline runtime::ProgramEnd refusal(std::string reason) {
  return runtime::ProgramEnd{runtime::ProgramEnd::Kind::refusal, std::move(reason), {}, {}};
}

}  // namespace escouade::sandbox::spidermonkey
