#pragma once

// SpiderMonkey behind one interface (STYLE.md, habit 9): this folder is the only one that
// includes jsapi.h, and only js_instance.cpp does. Nothing here names an engine type.

#include <filesystem>
#include <string>

#include "runtime/program.hpp"
#include "sandbox/bundle.hpp"

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

// Runs the bundle to its end on the calling thread, which is the instance's own and whose
// stack has `stack_bytes`: a child context of its own (capped at the channel's memory limit),
// its realm, its job queue; destroyed on this thread before it returns. Its input comes from
// the channel, its output goes there; the channel's stop ends it. Returns how it ended.
runtime::ProgramEnd run_js(const JsBundle& bundle, Channel& channel, std::size_t stack_bytes);

}  // namespace escouade::sandbox::spidermonkey
