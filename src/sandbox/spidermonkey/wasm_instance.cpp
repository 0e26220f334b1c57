// A run.wasm instance on the engine: its checks before anything runs, its compilation (once a
// factory, sandbox/spidermonkey/engine.hpp's CompiledModules), its instantiation with the
// natives of wasi.cpp and escouade_call.cpp, its _start, and how each way of ending is told.

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

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "sandbox/channel.hpp"
#include "sandbox/spidermonkey/compat.hpp"
#include "sandbox/spidermonkey/context.hpp"
#include "sandbox/spidermonkey/engine.hpp"
#include "sandbox/spidermonkey/wasm_guest.hpp"

namespace escouade::sandbox::spidermonkey {

class CompiledModules {
 public:
  struct Found {
    RefPtr<JS::WasmModule> module;  // compiled before
    bool claimed = false;           // none: the caller compiles it, then keep() or give_up()
  };
  // The module compiled from `bytes` (counted as reused when `reuse`); while another thread
  // compiles the same bytes, waits for it, until `stop` holds (then neither).
  Found find_or_claim(const std::string& bytes, bool reuse, const std::function<bool()>& stop) {
    std::unique_lock lock(mutex_);
    for (;;) {
      if (auto it = modules_.find(bytes); it != modules_.end()) {
        if (reuse) ++counts_.reused;
        return Found{it->second, false};
      }
      if (!compiling_.contains(bytes)) {
        compiling_.insert(bytes);
        return Found{nullptr, true};
      }
      if (stop && stop()) return Found{};
      ready_.wait_for(lock, std::chrono::milliseconds(20));
    }
  }
  void keep(const std::string& bytes, RefPtr<JS::WasmModule> module) {
    {
      std::lock_guard lock(mutex_);
      ++counts_.compiled;
      modules_.emplace(bytes, std::move(module));
      compiling_.erase(bytes);
    }
    ready_.notify_all();
  }
  void give_up(const std::string& bytes) {
    {
      std::lock_guard lock(mutex_);
      compiling_.erase(bytes);
    }
    ready_.notify_all();
  }
  CompiledCounts counts() const {
    std::lock_guard lock(mutex_);
    return counts_;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  // Keyed by the very bytes compiled (their hash picks the bucket; equality is exact). The
  // engine's modules are reference-counted atomically and may be released on any thread.
  std::unordered_map<std::string, RefPtr<JS::WasmModule>> modules_;
  // The bytes some thread is compiling now (a precompile at load, or a first instance).
  std::unordered_set<std::string_view> compiling_;
  CompiledCounts counts_;
};

std::shared_ptr<CompiledModules> make_compiled_modules() {
  return std::make_shared<CompiledModules>();
}

CompiledCounts counts_of(const CompiledModules& modules) {
  return modules.counts();
}

namespace {

using runtime::ProgramEnd;

ProgramEnd crash(std::string reason) {
  return ProgramEnd{ProgramEnd::Kind::crash, std::move(reason), {}};
}
ProgramEnd refusal(std::string reason) {
  return ProgramEnd{ProgramEnd::Kind::refusal, std::move(reason), {}};
}

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
  if (!JS::Construct(cx, ctor_value, args, &module)) return nullptr;
  return module;
}

// The compiled module: made again from the factory's (waiting for it while a precompile makes
// it), or compiled now and kept there. Null when it does not compile, or when it must stop
// (`stop`) while it waits.
JSObject* module_of(JSContext* cx, JS::HandleObject webassembly, const std::string& bytes,
                    CompiledModules& compiled, bool reuse, const std::function<bool()>& stop) {
  auto found = compiled.find_or_claim(bytes, reuse, stop);
  if (found.module) return found.module->createObject(cx);
  if (!found.claimed) return nullptr;
  JS::RootedObject module(cx, compile(cx, webassembly, bytes));
  if (module) {
    compiled.keep(bytes, JS::GetWasmModule(module));
  } else {
    compiled.give_up(bytes);
  }
  return module;
}

ProgramEnd run_in_realm(WasmGuest& g, const std::string& bytes, CompiledModules& compiled) {
  JSContext* cx = g.cx;
  JS::RootedObject global(cx, JS::CurrentGlobalOrNull(cx));
  JS::RootedObject webassembly(cx);
  if (!property(cx, global, "WebAssembly", &webassembly) || !webassembly)
    return crash("its instance could not start: the engine has no WebAssembly");

  // Nothing of the module has run yet: a refusal here leaves nothing behind.
  JS::RootedObject module(cx, module_of(cx, webassembly, bytes, compiled, true,
                                        [&] { return g.channel.stop_cause() != StopCause::none; }));
  if (!module) {
    if (g.channel.stop_cause() != StopCause::none) return failed(g);
    return refusal("its module does not compile: " + describe_pending(cx, false));
  }

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

// wasm compiled once, by Ion, in full: with the baseline compiler too, the engine compiles fast
// and then again with Ion on a helper thread, which on a busy core took ~1 ms slices from the
// instance's turns for as long as it ran (the pinned p99 of a decision was 0.9 ms).
void use_wasm_ion(JSContext* cx) {
  JS::ContextOptionsRef(cx).setWasm(true).setWasmBaseline(false).setWasmIon(true);
}

}  // namespace

void precompile_wasm(const std::string& bytes, CompiledModules& compiled, std::size_t stack_bytes) {
  InstanceContext context(0, stack_bytes);  // not an instance's: no account, the default heap
  JSContext* cx = context.get();
  if (!cx) return;
  use_wasm_ion(cx);
  if (!js::UseInternalJobQueues(cx) || !JS::InitSelfHostedCode(cx)) return;
  JS::RootedObject global(cx, new_sandbox_global(cx));
  if (!global) return;
  JSAutoRealm realm(cx, global);
  JS::RootedObject webassembly(cx);
  if (property(cx, global, "WebAssembly", &webassembly) && webassembly)
    (void)module_of(cx, webassembly, bytes, compiled, false, nullptr);
  JS_ClearPendingException(cx);
}

ProgramEnd run_wasm(const WasmPlugin& plugin, Channel& channel, std::size_t stack_bytes,
                    CompiledModules& compiled) {
  InstanceContext context(channel.limits().memory_bytes, stack_bytes);
  if (!context.engine()) return crash("its instance could not start: no JS engine");
  JSContext* cx = context.get();
  if (!cx) return crash("its instance could not start: no room for its context");
  channel.account(context.account());
  use_wasm_ion(cx);

  ProgramEnd end;
  {
    WasmGuest guest(cx, channel, plugin.name);
    JS_SetContextPrivate(cx, &guest);
    if (!js::UseInternalJobQueues(cx) || !JS::InitSelfHostedCode(cx)) {
      end = crash("its instance could not start: the engine's own code did not load");
    } else {
      JS_AddInterruptCallback(cx, on_interrupt);
      JS::SetOutOfMemoryCallback(cx, on_out_of_memory, nullptr);
      channel.set_interrupter([cx] { JS_RequestInterruptCallback(cx); });
      JS::RootedObject global(cx, new_sandbox_global(cx));
      if (!global) {
        end = channel.stop_cause() != StopCause::none
                  ? failed(guest)
                  : crash("its instance could not start: no room for its global");
      } else {
        JSAutoRealm realm(cx, global);
        end = run_in_realm(guest, plugin.bytes, compiled);
        JS_ClearPendingException(cx);
      }
      channel.set_interrupter(nullptr);
    }
    guest.memory.reset();
    JS_SetContextPrivate(cx, nullptr);
  }
  return end;
}

}  // namespace escouade::sandbox::spidermonkey
