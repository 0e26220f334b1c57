#pragma once

// SpiderMonkey behind one interface (STYLE.md, habit 9): this folder is the only one that
// includes jsapi.h (context.cpp, js_instance.cpp, compile_cache.cpp, and run.wasm's
// wasm_instance.cpp, wasi.cpp, escouade_call.cpp). Nothing here names an engine type.

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "runtime/program.hpp"
#include "sandbox/bundle.hpp"
#include "sandbox/wasm_module.hpp"

namespace escouade::sandbox {
class Channel;
}

namespace escouade::sandbox::spidermonkey {

// Starts the engine once in the process (JS_Init and the parent context every instance's
// context hangs from). Thread-safe; the first call makes the parent context on its thread, which
// must outlive every instance (the host's thread does). False when the engine cannot start.
bool start_engine();

// What one run.js instance runs.
struct JsBundle {
  std::string source;    // the bundle's text (UTF-8)
  std::string name;      // how messages name it: "dist/plugin.mjs"
  std::string url;       // globalThis._importMeta_.url: "file:///…/dist/plugin.mjs"
  std::string folder;    // the plugin's folder, absolute, for readFileSync's paths
  RootFiles root_files;  // what node:fs's readFileSync may read
};

// Compiled bundles (the engine's stencils), shared by every instance of one factory and kept on
// disk under `folder` (empty: in memory only), so that a restart and the next run of the host
// compile nothing. An entry is the bundle's module name and text, the engine's build and the
// host's version: a change of any compiles again (an update of the host, of the engine, of the
// bundle). A file is trusted only once its own copy of the name, the text and the build match
// the bundle's byte for byte. Thread-safe.
class CompileCache {
 public:
  explicit CompileCache(std::filesystem::path folder);
  ~CompileCache();
  CompileCache(const CompileCache&) = delete;
  CompileCache& operator=(const CompileCache&) = delete;

  // How each module the instances asked for was found.
  struct Counts {
    std::size_t compiled = 0;     // compiled from its text
    std::size_t from_memory = 0;  // a stencil this process already held
    std::size_t from_disk = 0;    // decoded from the folder
    std::size_t written = 0;      // files written to the folder
  };
  Counts counts() const;

  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// What the cache's files are named by: "escouade-host <version> JavaScript-C102.15.1".
std::string engine_build();

// Compiles the bundle into `cache` on the calling thread (a context of its own, then gone),
// unless the cache holds it already: what loading a plugin does, on a thread of its own whose
// stack has `stack_bytes`. Nothing of it reaches the plugin: a bundle that does not compile is
// refused when an instance starts, with the engine's message.
void precompile(const std::string& source, const std::string& name, CompileCache& cache,
                std::size_t stack_bytes);

// Runs the bundle to its end on the calling thread, which is the instance's own and whose
// stack has `stack_bytes`: a child context of its own (capped at the channel's memory limit),
// its realm, its job queue; destroyed on this thread before it returns. Its input comes from
// the channel, its output goes there; the channel's stop ends it. Returns how it ended.
// Its module comes from `cache` when it holds it, and goes there once compiled.
runtime::ProgramEnd run_js(const JsBundle& bundle, Channel& channel, std::size_t stack_bytes,
                           CompileCache& cache);

// What one run.wasm instance runs.
struct WasmPlugin {
  std::string bytes;  // plugin.wasm, checked and ready to compile (sandbox/wasm_module.hpp)
  std::string name;   // how messages name it, and its argv[0]: "plugin.wasm"
};

// The type a run.wasm instance gets this imported function with: wasi.cpp's WASI subset and
// ("escouade", "call"); nullopt for any other. A module that imports anything else, or one of
// these with another type, is refused before it is compiled.
std::optional<FunctionType> serves_wasm_import(std::string_view module, std::string_view name);

// The wasm modules one factory compiled, kept in memory for its instances (a restart, another
// plugin with the same module): keyed by the exact bytes compiled, each is compiled once and
// made again in a new context in a fraction of a millisecond. SpiderMonkey 102 cannot write a
// compiled module to disk, so nothing of it outlives the process. Thread-safe.
class CompiledModules;
std::shared_ptr<CompiledModules> make_compiled_modules();
// How its instances' modules were found: compiled, or made again from one compiled before.
struct CompiledCounts {
  std::size_t compiled = 0;
  std::size_t reused = 0;
};
CompiledCounts counts_of(const CompiledModules& modules);

// Compiles the checked module into `compiled` on the calling thread (a context of its own, then
// gone), unless it holds it already: what loading a run.wasm plugin does, on a thread of its own
// whose stack has `stack_bytes`. A module that does not compile is left to its first instance,
// which is refused with the engine's message.
void precompile_wasm(const std::string& bytes, CompiledModules& compiled, std::size_t stack_bytes);

// Runs the module to its end on the calling thread, which is the instance's own and whose stack
// has `stack_bytes`: compiled or taken from `compiled`, instantiated with the WASI subset of
// wasi.cpp and escouade.call, then its `_start` runs. Its fd 0 comes from the channel, fd 1 and
// 2 go there; the channel's stop ends it. Returns how it ended.
runtime::ProgramEnd run_wasm(const WasmPlugin& plugin, Channel& channel, std::size_t stack_bytes,
                             CompiledModules& compiled);

}  // namespace escouade::sandbox::spidermonkey
