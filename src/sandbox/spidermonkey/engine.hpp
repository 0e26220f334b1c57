#pragma once

// SpiderMonkey behind one interface (STYLE.md, habit 9), as a sandbox helper (escouade-sandbox)
// uses it: this folder is the only one that includes jsapi.h. Nothing here names an engine type.
// A helper runs one instance in a process of its own: the engine starts once there, the
// instance's context is made on the instance's thread, and the process ends with the instance.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "runtime/program.hpp"
#include "sandbox/wasm_module.hpp"
#include "sandbox/wire.hpp"

namespace escouade::sandbox {
class Channel;
struct StatusPage;
}  // namespace escouade::sandbox

namespace escouade::sandbox::spidermonkey {

// Starts the engine in this process (JS_Init, and what must precede it) and its helper threads
// (helper_threads.hpp). It reads /proc and /sys once, and the threads lower their priority: call
// it before the lockdown, from one thread, before any other. False when the engine cannot start.
bool start_engine();

// The engine's helper threads (its compilations, its GC's background work), made by the helper
// before the lockdown, each named kHelperThreadName, at kHelperThreadNice; and kWaitedThreads
// more at the instance's priority, named kWaitedThreadName, which take the tasks while the
// instance's thread blocks on them (a run.wasm module's compile at its start).
//
// Two each: the engine's own pool had as many as the processors (two at least), and a run.wasm
// module's tier-2 compile needs two (its generator holds one while the other compiles; with one
// it would never start). A helper runs one plugin among others: more would only let one plugin's
// compilations take more of the machine at once.
inline constexpr int kHelperThreads = 2;
inline constexpr int kWaitedThreads = 2;
// Nice 10: below the instance's thread, which a compilation then no longer delays on a shared
// core, yet not so low that a busy core starves the compilations its plugin needs. Measured
// pinned to one core, three rounds each, against the engine's own threads: a run.wasm decision
// while Ion compiled the module, p99 400-597 us -> 129-227 us (nice 19: 61-108 us); a run.js
// call and decision p50 unchanged (nice 19: 3-8 % slower: its Ion compilations, starved by the
// rounds' busy core, kept the plugin's code in the baseline tier longer). What the instance's
// thread waits for on them without a WaitedTasks runs late only while every core is busy with
// work of a higher priority: a GC task already running (one not yet started is run by the
// instance's thread itself), an Ion compile cancelled by a GC (it stops at its next check).
inline constexpr int kHelperThreadNice = 10;
inline constexpr std::string_view kHelperThreadName = "js-helper";
inline constexpr std::string_view kWaitedThreadName = "js-helper-sync";

// What compiled code is keyed by: "escouade <version> JavaScript-C102.15.1". A stencil encoded by
// another build does not decode.
std::string engine_build();

// The instance's context, made on the calling thread (its own, whose stack has `stack_bytes`), in
// a runtime of its own, its memory charged to an account of `memory_limit` opened first (every
// thread of the process charges to it, its figures published in `page`), the engine's own code
// loaded. Lives as long as the process: a helper ends with its instance. Null, with the reason in
// `why`, when it cannot be made.
struct Instance;
Instance* make_instance(std::uint64_t memory_limit, std::size_t stack_bytes, StatusPage* page,
                        std::string& why);
// The start said the instance's limit: its account and its heap follow it.
void set_memory_limit(Instance& instance, std::uint64_t memory_limit);

// Runs what `start` says to its end on the instance's thread: a run.js bundle (its module from
// the start's stencil when that decodes, else compiled), a run.wasm module, or only the bundle's
// compile (Start::Kind::compile_js: the stencil goes to the host as a record, and nothing of the
// bundle runs), or only a module's check and compile (compile_wasm: a mark goes to the host). Its
// input comes from the channel, its output goes there. Returns how it ended; nullopt for a compile
// that succeeded.
std::optional<runtime::ProgramEnd> run(Instance& instance, const wire::Start& start,
                                       Channel& channel);
// What a compile_wasm sends the host when the module compiled: the cache keeps it in place of a
// stencil, as the verdict for that module, that engine and that Escouade.
inline constexpr std::string_view kWasmCompiledMark = "escouade: this module compiled";

// The type a run.wasm instance gets this imported function with: wasi.cpp's WASI subset and
// ("escouade", "call"); nullopt for any other. A module that imports anything else, or one of
// these with another type, is refused before it is compiled.
std::optional<FunctionType> serves_wasm_import(std::string_view module, std::string_view name);

}  // namespace escouade::sandbox::spidermonkey
