#pragma once

// The run.js prelude's parts (prelude.hpp), each a file of spidermonkey/prelude/ embedded at build
// time (cmake/EscouadeEmbed.cmake). prelude.cpp joins the beginning, the parts and the end into
// one script: the parts run inside the beginning's function, use the names it defines and define
// those the end gives the bundle. Constant-initialized, so that prelude.cpp may join them while
// the program starts.

#include <string_view>

#include "sandbox/spidermonkey/prelude.hpp"

namespace escouade::sandbox::spidermonkey {

// (function (host) { ... the natives' names, process, console, readline, readFileSync.
extern const std::string_view kPreludeBeginning;

// setTimeout, clearTimeout, setInterval, clearInterval over timer/set, timer/cancel and
// timer/fired; sets ownInput and keptAlive (docs/sandbox.md, "Timers").
extern const std::string_view kTimersPart;

// TextEncoder and TextDecoder (UTF-8 only); encodeUtf8 and decodeUtf8 for the parts after it.
extern const std::string_view kTextPart;

// URL and URLSearchParams, WHATWG-like for file:, http(s):, ws(s): and ftp: URLs.
extern const std::string_view kUrlPart;

// fetch, Headers, Request, Response, AbortController, AbortSignal and WebSocket over net/stream,
// net/credit, net/cancel and ws/*; adds to ownInputs and keepers (docs/network.md, "In run.js").
extern const std::string_view kNetPart;

// escouade.fs and escouade.proc over fs/* and proc/*; adds to ownInputs and keepers
// (docs/files-and-programs.md, "In run.js").
extern const std::string_view kEscouadePart;

// The globals given to the bundle, and the function the host calls with each line. })
extern const std::string_view kPreludeEnd;

}  // namespace escouade::sandbox::spidermonkey
