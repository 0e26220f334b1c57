#pragma once

// The engine's side of the compile cache (engine.hpp): internal to this folder.

#include <jsapi.h>

#include <string>
#include <string_view>

#include "sandbox/spidermonkey/engine.hpp"

namespace escouade::sandbox::spidermonkey {

// The bundle's module in cx's realm: instantiated from the cache's stencil when it holds one (in
// memory, else on disk), else compiled, kept and written. nullptr with the engine's exception
// pending when it does not compile.
JSObject* cached_module(JSContext* cx, CompileCache& cache, std::string_view source,
                        const std::string& name);

// Only compiles it into the cache, unless it is there: true when it is there at the end.
bool compile_into(JSContext* cx, CompileCache& cache, std::string_view source,
                  const std::string& name);

// A global script (the run.js prelude, whose text never changes in a process) instantiated in
// cx's realm from a stencil compiled once a process and kept encoded, so that each instance
// decodes it instead of parsing it again; compiled here when that fails. nullptr with the
// engine's exception pending when it does not compile.
JSScript* script_compiled_once(JSContext* cx, std::string_view source, const char* name);

}  // namespace escouade::sandbox::spidermonkey
