#pragma once

// The parts of the run.js prelude (prelude.hpp) kept in files of their own. Each is JS run inside
// the prelude's function, after its beginning (prelude.cpp): it uses the names defined there and
// defines those its end gives the bundle. Constant-initialized, so that prelude.cpp may join
// them while the program starts.

#include <string_view>

namespace escouade::sandbox::spidermonkey {

// setTimeout, clearTimeout, setInterval, clearInterval over timer/set, timer/cancel and
// timer/fired; sets ownInput and keptAlive (docs/sandbox.md, "Timers").
extern const std::string_view kTimersPart;

// TextEncoder and TextDecoder (UTF-8 only); encodeUtf8 and decodeUtf8 for the parts after it.
extern const std::string_view kTextPart;

// URL and URLSearchParams, WHATWG-like for file:, http(s):, ws(s): and ftp: URLs.
extern const std::string_view kUrlPart;

}  // namespace escouade::sandbox::spidermonkey
