#pragma once

// A run.js bundle's compiled code: its module decoded from the stencil the host gave (a cache
// entry), or compiled in a compile's turn; and what a compile helper sends the host. The prelude's
// script, compiled once a helper, before its start. Engine-internal: included by this folder's
// files only.

#include <js/experimental/JSStencil.h>
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

// The bundle compiled in a compile's turn, encoded for the host's cache into `encoded`, and its
// module instantiated in cx's realm from that same stencil (nothing decoded again: a compile
// helper's memory holds the stencil once), for the checks of its imports and exports. nullptr,
// with `end` set as bundle_module sets it, when it does not compile.
JSObject* encoded_bundle(JSContext* cx, const wire::Start& start, Channel& channel,
                         std::string& encoded, std::optional<runtime::ProgramEnd>& end);

// A global script compiled in cx's realm (the run.js prelude); nullptr with the engine's exception
// pending when it does not compile.
JSScript* compile_script(JSContext* cx, std::string_view source, const char* name);

// The prelude compiled to a stencil outside any realm, while a helper waits for its start: a
// reference the caller holds, or null (no exception left pending) when it did not compile. Its
// script is then made in a realm by prelude_script, a fraction of a compile (~4 ms of a run.js
// cold start of ~9 ms on this machine).
JS::Stencil* compile_prelude(JSContext* cx);
// The prelude's script in cx's realm: from `stencil` when there is one, else compiled.
JSScript* prelude_script(JSContext* cx, JS::Stencil* stencil);

}  // namespace escouade::sandbox::spidermonkey
