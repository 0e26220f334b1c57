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

}  // namespace escouade::sandbox::spidermonkey
