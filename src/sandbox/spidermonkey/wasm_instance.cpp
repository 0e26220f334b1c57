// A run.wasm instance on the engine, in its helper: its checks before anything runs
// (sandbox/wasm_module.hpp), its compile, its instantiation with the natives of wasi.cpp and
// escouade_call.cpp, its _start, and how each way of ending is told.

#include <js/ArrayBuffer.h>
#include <js/ContextOptions.h>
#include <js/ErrorReport.h>
#include <js/Exception.h>
#include <js/Initialization.h>
#include <js/Interrupt.h>
#include <js/MemoryCallbacks.h>
#include <js/PropertyAndElement.h>
#include <js/RealmOptions.h>
#include <js/WasmModule.h>
#include <jsapi.h>
#include <jsfriendapi.h>
#include <mozilla/RefPtr.h>

#include <cstring>
#include <string>

#include "sandbox/channel.hpp"
#include "sandbox/spidermonkey/compat.hpp"
#include "sandbox/spidermonkey/context.hpp"
#include "sandbox/spidermonkey/engine.hpp"
#include "sandbox/spidermonkey/helper_threads.hpp"
#include "sandbox/spidermonkey/job_queue.hpp"
#include "sandbox/spidermonkey/wasm_guest.hpp"

namespace escouade::sandbox::spidermonkey {

namespace {

using runtime::ProgramEnd;

// How a call into the guest that returned false ends the instance.
ProgramEnd failed(WasmGuest& g) {
  JSContext* cx = g.cx;
  if (auto why = g.channel.stop_reason()) {
    JS_ClearPendingException(cx);
    return crash(std::move(*why));
  }
  if (g.exit_code) {
    JS_ClearPendingException(cx);
    return crash("its instance exited with code " + std::to_string(*g.exit_code));
  }
  if (!JS_IsExceptionPending(cx)) return crash("its instance crashed: an uncatchable error");
  return crash("its instance crashed: " + describe_pending(cx, false));
}

bool on_interrupt(JSContext* cx) {
  // The engine calls it for its own reasons too: only the channel's stop ends the instance.
  auto* g = static_cast<WasmGuest*>(JS_GetContextPrivate(cx));
  return !g || g->channel.stop_cause() == StopCause::none;
}

void on_out_of_memory(JSContext* cx, void*) {
  if (auto* g = static_cast<WasmGuest*>(JS_GetContextPrivate(cx)))
    g->channel.stop(StopCause::out_of_memory);
}

bool property(JSContext* cx, JS::HandleObject of, const char* name, JS::MutableHandleObject out) {
  JS::RootedValue v(cx);
  if (!JS_GetProperty(cx, of, name, &v)) return false;
  out.set(v.isObject() ? &v.toObject() : nullptr);
  return true;
}

// `bytes` compiled, in cx; null with the engine's exception pending when it does not compile.
// The engine compiles its functions on the helper threads while this thread waits: at the
// instance's priority (WaitedTasks). Ion's compile of a tiered module, which starts as this
// returns, goes to the lowered ones (its generator, which mostly waits for them, starts before).
JSObject* compile(JSContext* cx, JS::HandleObject webassembly, const std::string& bytes) {
  JS::RootedObject buffer(cx, JS::NewArrayBuffer(cx, bytes.size()));
  if (!buffer) return nullptr;
  {
    JS::AutoCheckCannotGC nogc;
    bool shared = false;
    std::memcpy(JS::GetArrayBufferData(buffer, &shared, nogc), bytes.data(), bytes.size());
  }
  JS::RootedObject ctor(cx);
  if (!property(cx, webassembly, "Module", &ctor) || !ctor) return nullptr;
  JS::RootedValue ctor_value(cx, JS::ObjectValue(*ctor));
  JS::RootedValueArray<1> args(cx);
  args[0].setObject(*buffer);
  JS::RootedObject module(cx);
  const WaitedTasks waited;
  if (!JS::Construct(cx, ctor_value, args, &module)) return nullptr;
  return module;
}

// Why a compile that returned nothing failed: the stop that ended it (its CPU budget; its memory,
// which no compile of this module would fit in either), or the engine's validation.
ProgramEnd compile_failed(WasmGuest& g) {
  if (auto why = g.channel.stop_reason()) {
    JS_ClearPendingException(g.cx);
    return refusal(std::move(*why));
  }
  return refusal("its module does not compile: " + describe_pending(g.cx, false));
}

ProgramEnd run_in_realm(WasmGuest& g, const std::string& bytes) {
  JSContext* cx = g.cx;
  JS::RootedObject global(cx, JS::CurrentGlobalOrNull(cx));
  JS::RootedObject webassembly(cx);
  if (!property(cx, global, "WebAssembly", &webassembly) || !webassembly)
    return crash("its instance could not start: the engine has no WebAssembly");

  // Nothing of the module has run yet: a refusal here leaves nothing behind.
  g.channel.turn_begins(/*compile=*/true);
  JS::RootedObject module(cx, compile(cx, webassembly, bytes));
  g.channel.turn_ends();
  if (!module) return compile_failed(g);
  g.channel.ready();

  JS::RootedObject imports(cx, JS_NewPlainObject(cx));
  if (!imports || !define_imports(cx, imports)) return failed(g);
  JS::RootedObject instance_ctor(cx);
  if (!property(cx, webassembly, "Instance", &instance_ctor) || !instance_ctor) return failed(g);
  JS::RootedValue instance_ctor_value(cx, JS::ObjectValue(*instance_ctor));
  JS::RootedValueArray<2> args(cx);
  args[0].setObject(*module);
  args[1].setObject(*imports);
  JS::RootedObject instance(cx);
  // Its start function, if it has one, runs here: the first turn begins.
  g.turn_resumes();
  const bool made = JS::Construct(cx, instance_ctor_value, args, &instance);
  g.channel.turn_ends();
  if (!made) return failed(g);

  JS::RootedObject exports(cx);
  JS::RootedObject memory(cx);
  JS::RootedObject start(cx);
  if (!property(cx, instance, "exports", &exports) || !exports ||
      !property(cx, exports, "memory", &memory) || !memory ||
      !property(cx, exports, "_start", &start) || !start)
    return failed(g);  // prepare_module checked both exports: not expected
  g.memory = memory;

  JS::RootedValue start_value(cx, JS::ObjectValue(*start));
  JS::RootedValue ignored(cx);
  g.turn_resumes();
  const bool returned =
      JS::Call(cx, JS::UndefinedHandleValue, start_value, JS::HandleValueArray::empty(), &ignored);
  g.channel.turn_ends();
  if (!returned) return failed(g);
  if (g.channel.stop_cause() != StopCause::none) return failed(g);
  // A WASI command whose main returned 0 returns from _start.
  return crash("its instance exited with code 0");
}

// The module compiled fast by the baseline compiler, so that it starts at once, then by Ion on
// the engine's helper threads, whose code replaces the baseline's when it is ready: compiled
// code cannot be kept across processes (SpiderMonkey 102 does not serialize it), so each
// instance compiles its module, and Ion alone would make each start wait for it (the guard,
// 509 KB then: 17 ms with the baseline compiler, 82 ms with Ion). The helper threads' work is
// charged to the instance's memory, not to its turns.
void use_tiered_wasm(JSContext* cx) {
  JS::ContextOptionsRef(cx).setWasm(true).setWasmBaseline(true).setWasmIon(true);
}

// The context's callbacks for `guest`: its stops, its memory, and a job queue (a run.wasm
// instance runs no promise job; the engine wants a queue all the same).
void attach_guest(WasmGuest& guest, JobQueue& jobs) {
  JSContext* cx = guest.cx;
  JS_SetContextPrivate(cx, &guest);
  JS::SetJobQueue(cx, &jobs);
  JS_AddInterruptCallback(cx, on_interrupt);
  JS::SetOutOfMemoryCallback(cx, on_out_of_memory, nullptr);
  guest.channel.set_interrupter([cx] { JS_RequestInterruptCallback(cx); });
}

}  // namespace

std::optional<ProgramEnd> compile_wasm(Instance& instance, const wire::Start& start,
                                       Channel& channel) {
  JSContext* cx = instance.cx;
  auto prepared = prepare_module(start.source, linear_memory_pages(channel.limits().memory_bytes),
                                 serves_wasm_import);
  if (!prepared) return refusal(prepared.error().message);
  // The baseline compiler validates all a module's code, as Ion would, and sooner.
  JS::ContextOptionsRef(cx).setWasm(true).setWasmBaseline(true).setWasmIon(false);
  WasmGuest guest(cx, channel, start.name);
  JobQueue jobs(cx);
  attach_guest(guest, jobs);
  std::optional<ProgramEnd> end;
  JS::RootedObject global(cx, new_sandbox_global(cx));
  if (!global) {
    end = crash("its compile could not start: no room for its global");
  } else {
    JSAutoRealm realm(cx, global);
    JS::RootedObject webassembly(cx);
    JS::RootedObject module(cx);
    if (!property(cx, global, "WebAssembly", &webassembly) || !webassembly) {
      end = crash("its compile could not start: the engine has no WebAssembly");
    } else {
      channel.turn_begins(/*compile=*/true);
      module = compile(cx, webassembly, prepared->bytes);
      channel.turn_ends();
      if (!module) end = compile_failed(guest);
    }
    JS_ClearPendingException(cx);
  }
  channel.set_interrupter(nullptr);
  if (end) return end;
  channel.send(wire::ToHost::stencil, kWasmCompiledMark);
  return std::nullopt;
}

ProgramEnd run_wasm(Instance& instance, const wire::Start& start, Channel& channel) {
  JSContext* cx = instance.cx;
  auto prepared = prepare_module(start.source, linear_memory_pages(channel.limits().memory_bytes),
                                 serves_wasm_import);
  if (!prepared) return refusal(prepared.error().message);
  use_tiered_wasm(cx);

  ProgramEnd end;
  WasmGuest guest(cx, channel, start.name);
  JobQueue jobs(cx);
  attach_guest(guest, jobs);
  JS::RootedObject global(cx, new_sandbox_global(cx));
  if (!global) {
    end = channel.stop_cause() != StopCause::none
              ? failed(guest)
              : crash("its instance could not start: no room for its global");
  } else {
    JSAutoRealm realm(cx, global);
    end = run_in_realm(guest, prepared->bytes);
    JS_ClearPendingException(cx);
  }
  // The process ends with the instance: nothing is torn down, only the interrupts stop.
  channel.set_interrupter(nullptr);
  guest.memory.reset();
  guest.buffer.reset();
  return end;
}

}  // namespace escouade::sandbox::spidermonkey
