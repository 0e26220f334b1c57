#pragma once

// A run.js bundle's compiled code: its module decoded from the stencil the host gave (a cache
// entry), or compiled in a compile's turn; and what a compile helper sends the host. The prelude's
// script, compiled in each instance. Engine-internal: included by this folder's files only.

#include <jsapi.h>

#include <optional>
#include <string>
#include <string_view>

#include "runtime/program.hpp"
#include "sandbox/wire.hpp"

namespace escouade::sandbox {
class Channel;
}

namespace escouade::sandbox::spidermonkey {

// The bundle's module in cx's realm: instantiated from start.stencil when it decodes (when it
// does not, the host hears it is stale), else compiled in a compile's turn (Channel::
// kCompileBudget of CPU, the instance's memory). nullptr, and `end` set, when it does not
// compile: a refusal with the engine's message, or the stop that ended the compile.
JSObject* bundle_module(JSContext* cx, const wire::Start& start, Channel& channel,
                        std::optional<runtime::ProgramEnd>& end);

// The bundle compiled and encoded for the host's cache, in a compile's turn: the bytes, or
// nullopt with `end` set as bundle_module sets it.
std::optional<std::string> encoded_bundle(JSContext* cx, const wire::Start& start, Channel& channel,
                                          std::optional<runtime::ProgramEnd>& end);

// A global script compiled in cx's realm (the run.js prelude); nullptr with the engine's exception
// pending when it does not compile.
JSScript* compile_script(JSContext* cx, std::string_view source, const char* name);

}  // namespace escouade::sandbox::spidermonkey
