#pragma once

// Inside a sandbox helper: whether a line of input may be one of the run.js prelude's own
// (issue 32). The prelude's filters (spidermonkey/prelude/, ownInputs) take only lines that hold
// one of these marks, as text:
//
//   escouade-        the start of the id of each request the prelude makes (net/*, timer/*...)
//   "net/  "ws/  "proc/  "timer/fired"   the notifications of its streams, sockets, programs
//                                        and timers
//
// A line holding none of them goes to the bundle without those filters each scanning it.

#include <string_view>

namespace escouade::sandbox {

// True when `line` holds one of the marks above anywhere. The same answer as looking for each
// mark in turn, found from the line's dashes and slashes, which few lines hold many of: looking
// for "escouade-" with string_view::find stopped at every 'e' of the line (callgrind: the five
// finds took about a fifth of a run.js decision's instructions in the helper).
bool may_be_the_preludes(std::string_view line);

}  // namespace escouade::sandbox
