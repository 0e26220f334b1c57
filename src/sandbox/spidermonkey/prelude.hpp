#pragma once

// The JS prelude of a run.js instance: what the spec promises a bundle (process.stdin,
// process.stdout/stderr.write, console.*, process.env, node:readline, node:fs's readFileSync,
// queueMicrotask, globalThis._importMeta_.url) and no more, made of the few natives
// js_instance.cpp gives it. Sources only: no engine header here.

#include <string_view>

namespace escouade::sandbox::spidermonkey {

// A script whose value is a function of the natives' object (write, wantInput, exit, readFile,
// url, folder); called once, it sets the globals up and returns the function the host calls with
// each line of input ('\n' included), and with null at the end of the input.
extern const std::string_view kPrelude;

// The sources of the two modules a bundle may import; they take what the prelude made.
extern const std::string_view kReadlineModule;
extern const std::string_view kFsModule;

}  // namespace escouade::sandbox::spidermonkey
